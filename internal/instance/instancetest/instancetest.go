// Package instancetest holds what tests of throwaway instances share: skipping when a
// kind's programs are missing, short base directories, and connecting. The test
// binary must link the kinds' drivers in (internal/db, or a driver package itself).
package instancetest

import (
	"context"
	"os"
	"testing"
	"time"

	mysql "github.com/fathom-lab/fathom/internal/db/mysql/target"
	postgres "github.com/fathom-lab/fathom/internal/db/postgres/target"
	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/target"
)

// NeedKind skips (or, under FATHOM_TEST_REQUIRE=1, fails) when kind's programs are
// not installed.
func NeedKind(t *testing.T, k instance.Kind) {
	t.Helper()
	if k == instance.MariaDB {
		dbtest.SkipMariaDBInPGMatrix(t)
	}
	var err error
	if bin := dbtest.PGBin(k == instance.Postgres); bin != "" {
		_, _, err = instance.FindIn(k, bin, "")
	} else {
		_, err = instance.Version(k, "")
	}
	if err != nil {
		if dbtest.Required() {
			t.Fatalf("%v (FATHOM_TEST_REQUIRE=1)", err)
		}
		t.Skip(err)
	}
}

// Options points PostgreSQL instances at FATHOM_TEST_PG_BIN when it is set (the
// version matrix of scripts/test-servers.sh), so that the same tests run on each version.
func Options(o instance.Options) instance.Options {
	if o.Kind == instance.Postgres {
		o.Bin = dbtest.PGBin(true)
	}
	return o
}

// Dir is a short base directory every server account can reach (socket paths must
// stay short; t.TempDir is under /tmp but long).
func Dir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "fi-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// Connect connects to a PostgreSQL or MariaDB instance with its DSN.
func Connect(t *testing.T, inst *instance.Instance) target.Conn {
	t.Helper()
	var tg target.Target
	var err error
	cfg := target.Config{ConnectTimeout: 5 * time.Second}
	if inst.Kind == instance.Postgres {
		tg, err = postgres.Open(inst.DSN(), cfg)
	} else {
		tg, err = mysql.Open(inst.DSN(), cfg)
	}
	if err != nil {
		t.Fatal(err)
	}
	c, err := tg.Connect(context.Background())
	if err != nil {
		t.Fatalf("connecting to %s: %v", inst.DSN(), err)
	}
	return c
}

// Value is a server setting's current value.
func Value(t *testing.T, c target.Conn, k instance.Kind, name string) string {
	t.Helper()
	q := "SELECT current_setting('" + name + "')"
	if k == instance.MariaDB {
		q = "SELECT @@GLOBAL." + name
	}
	rows, err := c.Query(context.Background(), q)
	if err != nil || len(rows) != 1 {
		t.Fatalf("%s: %v %v", q, rows, err)
	}
	return rows[0][0]
}
