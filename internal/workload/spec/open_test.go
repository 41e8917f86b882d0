package spec_test

import (
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/target/mysql"
)

func openTarget(t testing.TB, dsn string) target.Target {
	t.Helper()
	if !strings.HasPrefix(dsn, "mysql:") {
		t.Skipf("no target registry yet for %s", strings.SplitN(dsn, ":", 2)[0])
	}
	tg, err := mysql.Open(dsn, target.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	return tg
}
