package cli

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/store/stores"
)

// docs/store-schema.md names every table of a new store, each with every column it
// has, and the PostgreSQL store's own tables.
func TestStoreSchemaDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "store-schema.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{} // table -> its row
	for _, l := range strings.Split(string(doc), "\n") {
		if m := regexp.MustCompile("^\\| `([a-z_]+)` \\|").FindStringSubmatch(l); m != nil {
			rows[m[1]] = l
		}
	}
	path := filepath.Join(t.TempDir(), "fathom.db")
	st, err := stores.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	tables, err := db.QueryContext(ctx, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for tables.Next() {
		var n string
		if err := tables.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	tables.Close()
	if len(names) < 10 {
		t.Fatalf("a new store has tables %v", names)
	}
	for _, n := range names {
		row, ok := rows[n]
		if !ok {
			t.Errorf("docs/store-schema.md has no row for the table %s", n)
			continue
		}
		cols, err := db.QueryContext(ctx, "SELECT name FROM pragma_table_info(?)", n)
		if err != nil {
			t.Fatal(err)
		}
		for cols.Next() {
			var c string
			if err := cols.Scan(&c); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(row, "`"+c+"`") {
				t.Errorf("docs/store-schema.md: the table %s has no column `%s`", n, c)
			}
		}
		cols.Close()
	}
	// The PostgreSQL store's tables, from its migrations.
	sqls, _ := filepath.Glob(filepath.Join("..", "store", "postgres", "migrations", "*.sql"))
	if len(sqls) == 0 {
		t.Fatal("no PostgreSQL migrations found")
	}
	for _, f := range sqls {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`CREATE TABLE (?:IF NOT EXISTS )?([a-z_]+)`).FindAllStringSubmatch(string(b), -1) {
			if _, ok := rows[m[1]]; !ok {
				t.Errorf("docs/store-schema.md has no row for the PostgreSQL store's table %s (%s)", m[1], filepath.Base(f))
			}
		}
	}
}
