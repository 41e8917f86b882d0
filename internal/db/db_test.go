package db

import (
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/instance"
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
		{"redis://h", "redis"},
		{"rediss://:pw@h:6380/1", "redis"},
		{"unix:///run/redis.sock?db=2", "redis"},
	} {
		tg, err := Open(c.dsn, target.Config{})
		if err != nil {
			t.Errorf("Open(%q): %v", c.dsn, err)
			continue
		}
		if tg.Kind() != c.kind || KindOf(c.dsn) != c.kind {
			t.Errorf("Open(%q).Kind() = %q, Kind() = %q, want %q", c.dsn, tg.Kind(), KindOf(c.dsn), c.kind)
		}
		tg.Close()
	}
	for _, dsn := range []string{"", "mongodb://h", "oracle://u:Secret-1@h/x", "fathom.db", "user:Secret-1@tcp(h)/db"} {
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

// TestRegistry: each kind is registered under its own name, with at least one scheme,
// and no two kinds claim the same scheme or name their dialects alike; target and
// instance find each kind's dialect and driver in the registry.
func TestRegistry(t *testing.T) {
	seen, dialects := map[string]string{}, map[string]string{}
	for name, k := range registry {
		if d := k.Dialect(); d != nil {
			if prev, dup := dialects[d.Name]; dup {
				t.Errorf("dialect %q of %s and %s", d.Name, prev, name)
			}
			dialects[d.Name] = name
			if got := target.DialectNamed(d.Name); got == nil || got.Name != d.Name {
				t.Errorf("target does not find kind %s's dialect %q", name, d.Name)
			}
		}
		if i, ok := k.(Instances); ok {
			if got, err := instance.ParseKind(string(i.InstanceDriver().Kind())); err != nil || ForInstance(got) != k {
				t.Errorf("kind %s's instance driver: %q, %v", name, got, err)
			}
		}
	}
	for name, k := range registry {
		if k.Name() != name {
			t.Errorf("registry[%q] is kind %q", name, k.Name())
		}
		if len(k.Schemes()) == 0 || k.Dialect() == nil {
			t.Errorf("kind %s: no scheme or no dialect", name)
		}
		for _, s := range k.Schemes() {
			if prev, dup := seen[s]; dup {
				t.Errorf("scheme %q claimed by %s and %s", s, prev, name)
			}
			seen[s] = name
		}
	}
}

// TestKindsDeclare: every registered kind's charts, watch columns and key metrics
// name metrics its collectors (or the host's) declare, and the declarations agree.
func TestKindsDeclare(t *testing.T) {
	if _, err := Vocabulary(); err != nil {
		t.Fatal(err)
	}
	for _, n := range Names() {
		if err := Undeclared(n); err != nil {
			t.Error(err)
		}
	}
}
