package builtin

import (
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/db/mysql/target"
	"github.com/fathom-lab/fathom/internal/db/postgres/target"
	"github.com/fathom-lab/fathom/internal/db/sqlite/target"
	"github.com/fathom-lab/fathom/internal/target"
)

// openTarget opens a test target of any kind (the target packages directly: the kinds
// registry, internal/db, sits above this package).
func openTarget(t testing.TB, dsn string) target.Target {
	t.Helper()
	var (
		tg  target.Target
		err error
	)
	switch {
	case strings.HasPrefix(dsn, "sqlite:"):
		tg, err = sqlite.Open(dsn, target.Config{})
	case strings.HasPrefix(dsn, "mysql://"), strings.HasPrefix(dsn, "mariadb://"):
		tg, err = mysql.Open(dsn, target.Config{})
	default:
		tg, err = postgres.Open(dsn, target.Config{})
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	return tg
}
