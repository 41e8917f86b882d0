package builtin

import (
	"testing"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/target/targets"
)

// openTarget opens a test target of any kind.
func openTarget(t *testing.T, dsn string) target.Target {
	t.Helper()
	tg, err := targets.Open(dsn, target.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	return tg
}
