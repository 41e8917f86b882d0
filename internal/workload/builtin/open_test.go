package builtin

import (
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/target/mysql"
)

// openTarget opens a test target.
//
// TODO: use targets.Open(dsn, target.Config{}) once internal/target/targets exists;
// when these tests were written only the MySQL target had landed, so PostgreSQL and
// SQLite skip here.
func openTarget(t *testing.T, dsn string) target.Target {
	t.Helper()
	if !strings.HasPrefix(dsn, "mysql:") {
		t.Skipf("no target registry (internal/target/targets) yet for %s; only MySQL is tested", strings.SplitN(dsn, ":", 2)[0])
	}
	tg, err := mysql.Open(dsn, target.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	return tg
}
