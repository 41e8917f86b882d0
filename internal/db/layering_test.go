package db

import (
	"os/exec"
	"strings"
	"testing"
)

// A kind's code reaches the rest of fathom through its bundle only (db.go): the
// packages that work on stored data (report, analyze) take data, never a kind, so
// they link no database driver; the workloads reach a server through the target
// contracts, never a kind's own types. go list -deps names every package each one
// links (directly or through another package), so a new import anywhere on the way
// fails here.
var layering = []struct {
	pkg       string
	forbidden []string // import path suffixes or prefixes (ending in "/")
	why       string
}{
	{"../report", []string{"/internal/db", "/internal/db/", "github.com/jackc/pgx/", "github.com/go-sql-driver/mysql", "github.com/redis/rueidis"},
		"reports are pure functions of stored data: kinds' figures come in as KindFigures"},
	{"../analyze", []string{"/internal/db", "/internal/db/", "github.com/jackc/pgx/", "github.com/go-sql-driver/mysql", "github.com/redis/rueidis"},
		"stall analysis takes the kind's rules as data (StallInput.Rules)"},
	{"../workload/kv", []string{"/internal/db", "/internal/db/", "github.com/redis/rueidis"},
		"key-value workloads send command batches through target.Batcher"},
	{"../workload/spec", []string{"/internal/db", "/internal/db/"},
		"workload files learn the dialects from the registry's data (Dialects)"},
	{"../target", []string{"/internal/db", "/internal/db/"}, "target holds the contracts kinds implement"},
	{"../plan", []string{"/internal/db", "/internal/db/"}, "plan takes the kinds' rules as data"},
	{"../instance", []string{"/internal/db", "/internal/db/"}, "instance takes the kinds' drivers as data"},
}

func TestLayering(t *testing.T) {
	for _, l := range layering {
		out, err := exec.Command("go", "list", "-deps", l.pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", l.pkg, err, out)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 3 || !strings.HasSuffix(deps[len(deps)-1], strings.TrimPrefix(l.pkg, "..")) {
			t.Fatalf("go list -deps %s listed too little or not the package last: %q", l.pkg, deps)
		}
		for _, d := range deps {
			for _, f := range l.forbidden {
				if strings.HasSuffix(d, f) || strings.HasSuffix(f, "/") && strings.Contains(d, f) {
					t.Errorf("%s links %s: %s", l.pkg, d, l.why)
				}
			}
		}
	}
}
