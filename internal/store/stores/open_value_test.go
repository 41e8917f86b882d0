package stores

import (
	"errors"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/sqlite"
	"path/filepath"
	"strings"
	"testing"
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
		if err := Check(v); !errors.Is(err, store.ErrUnsupported) {
			t.Errorf("Check(%q): %v, want store.ErrUnsupported", v, err)
		}
	}
	// PostgreSQL URLs name a PostgreSQL store: checked without connecting; a server that
	// is not there is a failure that names the store without its password.
	for _, v := range []string{"postgres://fathom:s3cret@127.0.0.1:1/results?connect_timeout=2", "PostgreSQL://u:s3cret@127.0.0.1:1/db"} {
		if err := Check(v); err != nil {
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
