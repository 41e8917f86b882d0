package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/instance"
)

// Every example plan passes --check (the ones for instances where the server is installed).
func TestExamplePlansCheck(t *testing.T) {
	files, err := filepath.Glob("../../examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example plans: %v", err)
	}
	_, pgErr := instance.Version(instance.Postgres, "")
	_, myErr := instance.Version(instance.MariaDB, "")
	_, redisErr := instance.Version(instance.Redis, "")
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := fathom(t, storeEnv(t), nil, "experiment", "--check", f)
			if r.code != 0 {
				if ((strings.Contains(r.stderr, "PostgreSQL") && pgErr != nil) || (strings.Contains(r.stderr, "mariadbd") && myErr != nil) ||
					(strings.Contains(r.stderr, "redis-server") && redisErr != nil)) && !dbtest.Required() {
					t.Skip(r.stderr)
				}
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			if !strings.Contains(r.stdout, ": ok: experiment") {
				t.Errorf("output:\n%s", r.stdout)
			}
		})
	}
}
