package spec_test

import (
	"testing"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/target/targets"
)

func openTarget(t testing.TB, dsn string) target.Target {
	t.Helper()
	tg, err := targets.Open(dsn, target.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	return tg
}
