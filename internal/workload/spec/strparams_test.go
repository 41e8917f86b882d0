package spec_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/db"
	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
	"github.com/fathom-lab/fathom/internal/workload/builtin"
)

// strParamsFile takes its storage engine and a tag as string parameters: ENGINE=$engine
// in its MySQL table, $tag as a value its transaction inserts.
const strParamsFile = `name: engines
params:
  engine: {default: InnoDB, help: the storage engine of the table (MySQL)}
  tag: {default: plain, help: written into every row}
tables:
  - name: strp_row
    columns:
      - {name: id, type: bigint, auto_increment: true}
      - {name: tag, type: varchar(20), not_null: true}
    primary_key: [id]
    ddl:
      mysql: CREATE TABLE strp_row (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, tag VARCHAR(20) NOT NULL) ENGINE=$engine
transactions:
  - name: add
    steps:
      - sql: INSERT INTO strp_row (tag) VALUES (:tag)
        values:
          tag: $tag
`

// TestStringParams: parameters may be strings where the file allows them: in a
// table's own DDL (ENGINE=$engine, one word only) and as a constant value. Prepared on
// MariaDB with engine=Aria the table is Aria, and a run writes the tag given.
func TestStringParams(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "engines.yaml")
	if err := os.WriteFile(path, []byte(strParamsFile), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := builtin.Lookup(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.New(workload.Params{"engine": "Aria; DROP TABLE x"}); err == nil || !strings.Contains(err.Error(), "must be one word") {
		t.Errorf("an engine with SQL in it: %v, want refused", err)
	}
	w, err := s.New(workload.Params{"engine": "Aria", "tag": "hello world"})
	if err != nil {
		t.Fatal(err)
	}
	tgt, err := db.Open(dbtest.MySQLDatabase(t, "strparams"), target.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer tgt.Close()
	ctx := context.Background()
	if err := w.Prepare(ctx, tgt, nil); err != nil {
		t.Fatal(err)
	}
	conn := connect(t, ctx, tgt)
	rows, err := conn.Query(ctx, "SELECT engine FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'strp_row'")
	if err != nil || len(rows) != 1 || rows[0][0] != "Aria" {
		t.Fatalf("strp_row's engine: %v %v, want Aria", rows, err)
	}
	if n := runClients(t, ctx, tgt, w, 1, 5); n != 5 {
		t.Errorf("%d transactions, want 5", n)
	}
	rows, err = conn.Query(ctx, "SELECT DISTINCT tag FROM strp_row")
	if err != nil || len(rows) != 1 || rows[0][0] != "hello world" {
		t.Errorf("tags written: %v %v, want only \"hello world\"", rows, err)
	}
}
