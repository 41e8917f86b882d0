package targets

import (
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/target"
)

func TestOpen(t *testing.T) {
	for _, c := range []struct {
		dsn, kind string
	}{
		{"postgres://u@h/db", "postgres"},
		{"postgresql://u@h/db", "postgres"},
		{"host=/var/run/postgresql dbname=test", "postgres"},
		{"dbname=test", "postgres"},
		{"mysql://root@127.0.0.1:3306/test", "mysql"},
		{"mariadb://root@127.0.0.1:3306/test", "mysql"},
		{"mysql://root@/test?socket=/run/mysqld/mysqld.sock", "mysql"},
		{"sqlite:fathom-target.db", "sqlite"},
		{"sqlite:/tmp/x.db", "sqlite"},
	} {
		tg, err := Open(c.dsn, target.Config{})
		if err != nil {
			t.Errorf("Open(%q): %v", c.dsn, err)
			continue
		}
		if tg.Kind() != c.kind || Kind(c.dsn) != c.kind {
			t.Errorf("Open(%q).Kind() = %q, Kind() = %q, want %q", c.dsn, tg.Kind(), Kind(c.dsn), c.kind)
		}
		tg.Close()
	}
	for _, dsn := range []string{"", "redis://h", "oracle://u:Secret-1@h/x", "fathom.db", "user:Secret-1@tcp(h)/db"} {
		_, err := Open(dsn, target.Config{})
		if err == nil {
			t.Errorf("Open(%q) succeeded", dsn)
			continue
		}
		if !strings.HasPrefix(err.Error(), "unknown target") || strings.Contains(err.Error(), "Secret-1") {
			t.Errorf("Open(%q): %v", dsn, err)
		}
	}
}

func FuzzOpen(f *testing.F) {
	for _, s := range []string{"postgres://u:p@h/db", "mysql://root@h/db", "sqlite:x.db", "host=h dbname=d", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, dsn string) {
		tg, err := Open(dsn, target.Config{})
		if err == nil {
			tg.Close()
		}
	})
}
