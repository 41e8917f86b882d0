package stores

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/postgres"
	"github.com/fathom-lab/fathom/internal/store/sqlite"
)

// Open picks the store by the value's form: a path is a SQLite file, a URL a store
// server (PostgreSQL; others refused with the scheme named, never the password).
func TestOpenByForm(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "fathom.db")
	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := st.(*sqlite.Store); !ok || st.Path() != path {
		t.Errorf("Open(%q) = %T at %q, want the SQLite store there", path, st, st.Path())
	}
	st.Close()
	for _, v := range []string{"sqlite:///tmp/x.db", "MySQL+tcp://u:s3cret@h/db", "redis://:s3cret@h/0"} {
		_, err := Open(v)
		if !errors.Is(err, store.ErrUnsupported) {
			t.Errorf("Open(%q): %v, want store.ErrUnsupported", v, err)
			continue
		}
		if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "\n") {
			t.Errorf("Open(%q): %q shows the password or is not one line", v, err)
		}
		if err := check(v); !errors.Is(err, store.ErrUnsupported) {
			t.Errorf("Check(%q): %v, want store.ErrUnsupported", v, err)
		}
	}
	// PostgreSQL URLs name a PostgreSQL store: checked without connecting; a server that
	// is not there is a failure that names the store without its password.
	for _, v := range []string{"postgres://fathom:s3cret@127.0.0.1:1/results?connect_timeout=2", "PostgreSQL://u:s3cret@127.0.0.1:1/db"} {
		if err := check(v); err != nil {
			t.Errorf("Check(%q): %v", v, err)
		}
		_, err := Open(v)
		if err == nil || errors.Is(err, store.ErrUnsupported) || strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "\n") {
			t.Errorf("Open(%q): %v", v, err)
		}
	}
	// Paths that are not URLs: relative, Windows drive, a colon without "//".
	for _, v := range []string{"results.db", `C:\fathom\results.db`, "a:b.db", "./x://y", "1http://x"} {
		if _, ok := urlScheme(v); ok {
			t.Errorf("urlScheme(%q) takes a path for a URL", v)
		}
	}
	if s, ok := urlScheme("Postgres://h/db"); !ok || s != "postgres" {
		t.Errorf("urlScheme: %q %v", s, ok)
	}
}

// Every DSN form is taken as what it is, or refused in one line without its password:
// libpq key=value and service=NAME are PostgreSQL stores (never a SQLite file named
// after them), sqlite:PATH is the file PATH, MySQL and Redis URLs and option files are
// refused.
func TestDSNForms(t *testing.T) {
	const pw = "Pl4nted-S3cret-9q"
	dir := t.TempDir()
	for _, v := range []string{
		"host=127.0.0.1 port=1 password=" + pw + " dbname=results connect_timeout=2",
		"dbname=results password='" + pw + " x' host=127.0.0.1 port=1 connect_timeout=2",
		"user=u password=" + pw + " host=127.0.0.1 port=1 dbname=results connect_timeout=2",
	} {
		if !IsPostgres(v) {
			t.Errorf("%q is not taken for a PostgreSQL store", v)
		}
		if err := check(v); err != nil {
			t.Errorf("Check(%q): %v", v, err)
		}
		_, err := Open(filepath.Join(dir, v)) // under a directory: still key=value, never a file
		if err == nil || strings.Contains(err.Error(), pw) {
			t.Errorf("Open(dir/%q): %v", v, err)
		}
		_, err = Open(v)
		if err == nil || errors.Is(err, store.ErrPath) || strings.Contains(err.Error(), pw) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Open(%q): %v", v, err)
		}
		if s := Display(v); strings.Contains(s, pw) || strings.Contains(s, "S3cret") || !strings.Contains(s, "xxxxx") {
			t.Errorf("Display(%q) = %q", v, s)
		}
		if s := fmt.Sprintf("%v %s %q", DSN(v), DSN(v), DSN(v)); strings.Contains(s, "S3cret") {
			t.Errorf("DSN(%q) shows as %s", v, s)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "host=127.0.0.1 port=1 password="+pw+" dbname=results connect_timeout=2")); err == nil {
		t.Error("a key=value --store made a file")
	}
	// A service name is PostgreSQL's: pgx reads ~/.pg_service.conf (PGSERVICEFILE).
	svc := filepath.Join(dir, "pg_service.conf")
	if err := os.WriteFile(svc, []byte("[results]\nhost=127.0.0.1\nport=1\ndbname=results\nconnect_timeout=2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PGSERVICEFILE", svc)
	if err := check("service=results"); err != nil || !IsPostgres("service=results") {
		t.Errorf("service=results: %v", err)
	}
	if err := check("service=missing"); err == nil || !errors.Is(err, store.ErrPath) {
		t.Errorf("service=missing: %v, want a usage error", err)
	}
	// sqlite:PATH is the file PATH.
	p := filepath.Join(dir, "r.db")
	st, err := Open("sqlite:" + p)
	if err != nil {
		t.Fatal(err)
	}
	if st.Path() != p {
		t.Errorf("sqlite:%s opened %s", p, st.Path())
	}
	st.Close()
	for _, v := range []string{"mysql://root:" + pw + "@h/db", "mariadb://root:" + pw + "@h/db", "rediss://:" + pw + "@h/0", "redis://default:" + pw + "@h/0",
		filepath.Join(dir, "my.cnf"), "~/.my.cnf", "root:" + pw + "@h", "sqlite:", "sqlite://" + p} {
		err := check(v)
		if err == nil || strings.Contains(err.Error(), pw) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Check(%q): %v", v, err)
		}
		if _, err := Open(v); err == nil || strings.Contains(err.Error(), pw) {
			t.Errorf("Open(%q): %v", v, err)
		}
	}
	// Paths with '=' but no libpq keyword stay files.
	for _, v := range []string{filepath.Join(dir, "a=b.db"), filepath.Join(dir, "run=1", "x.db")} {
		if IsPostgres(v) {
			t.Errorf("%q taken for PostgreSQL", v)
		}
		if err := check(v); err != nil {
			t.Errorf("Check(%q): %v", v, err)
		}
	}
}

// A libpq key=value --store reaches the real PostgreSQL server and keeps runs there.
func TestKeyValueStoreOnServer(t *testing.T) {
	u, err := url.Parse(dbtest.PostgresDatabase(t, "kvstore"))
	if err != nil {
		t.Fatal(err)
	}
	kv := fmt.Sprintf("host=%s port=%s dbname=%s user=%s", u.Hostname(), u.Port(), strings.TrimPrefix(u.Path, "/"), u.User.Username())
	if p, ok := u.User.Password(); ok {
		kv += " password='" + strings.ReplaceAll(p, "'", `\'`) + "'"
	}
	if m := u.Query().Get("sslmode"); m != "" {
		kv += " sslmode=" + m
	}
	st, err := Open(kv)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, ok := st.(*postgres.Store); !ok {
		t.Fatalf("Open(key=value) = %T, want the PostgreSQL store", st)
	}
	if strings.Contains(st.Path(), "password=") && !strings.Contains(st.Path(), "password=xxxxx") {
		t.Errorf("store path %q", st.Path())
	}
}
