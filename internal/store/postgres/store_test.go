package postgres

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/store"
)

// What fathom shows and records of a store URL never holds the password.
func TestDisplayDropsPassword(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://fathom:s3cret@db.example:5433/results?sslmode=require": "postgres://fathom@db.example:5433/results?sslmode=require",
		"postgresql://u@h/db?password=s3cret&sslmode=disable":              "postgresql://u@h/db?sslmode=disable",
		"postgres://h/db":             "postgres://h/db",
		"postgres://u:s3cret@h/db%zz": "postgres://…",
	} {
		if got := Display(in); got != want {
			t.Errorf("Display(%q) = %q, want %q", in, got, want)
		}
	}
}

// A URL that cannot work is refused before connecting, in one line without the
// password, as a usage error (store.ErrPath).
func TestCheckRefuses(t *testing.T) {
	for _, v := range []string{"postgres://u:s3cret@h:notaport/db", "postgres://u:s3cret@h", "postgres://u:s3@cret@h/db"} {
		err := Check(v)
		if err == nil || !errors.Is(err, store.ErrPath) || strings.Contains(err.Error(), "s3") || strings.Contains(err.Error(), "\n") {
			t.Errorf("Check(%q) = %v", v, err)
		}
	}
	if err := Check("postgres://u:s3cret@h/db?sslmode=disable"); err != nil {
		t.Errorf("a good URL: %v", err)
	}
}

// On the test server: a wrong password fails in one line without it; a database
// with tables of its own is refused; a store written by a newer fathom is refused.
func TestOpenRefuses(t *testing.T) {
	dsn := dbtest.PostgresDSN(t)
	ctx := context.Background()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	bad := *u
	bad.User = url.UserPassword("fathom_no_such_user", "s3cret-pw")
	if _, err := Open(bad.String()); err == nil || strings.Contains(err.Error(), "s3cret-pw") || strings.Contains(err.Error(), "\n") {
		t.Errorf("a wrong user: %v", err)
	}
	// The test database holds the other packages' tables: not a store.
	other, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	if _, err := other.Exec(ctx, `CREATE TABLE IF NOT EXISTS pgstore_not_fathom (x int)`); err != nil {
		t.Fatal(err)
	}
	defer other.Exec(ctx, `DROP TABLE IF EXISTS pgstore_not_fathom`)
	var hasStore bool
	other.QueryRow(ctx, `SELECT to_regclass('schema_version') IS NOT NULL`).Scan(&hasStore)
	if !hasStore {
		if _, err := Open(dsn); err == nil || !errors.Is(err, store.ErrPath) || !strings.Contains(err.Error(), "not a fathom results database") {
			t.Errorf("a database of other tables: %v", err)
		}
	}
	// A fresh store, then a newer schema in it.
	name := strings.ToLower(dbtest.Prefix() + "store_newer")
	fresh := *u
	fresh.Path = "/" + name
	other.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	defer other.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	s, err := Open(fresh.String())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec(`INSERT INTO schema_version (version, name) VALUES (999, 'future')`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Open(fresh.String()); err == nil || !strings.Contains(err.Error(), "newer fathom") {
		t.Errorf("a newer schema: %v", err)
	}
}
