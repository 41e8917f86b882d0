package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/measure"
)

// Thresholds on a real (SQLite) run: checked at the end, shown in the summary, stored
// with the run, exit 6 and one line when one fails; a bad one is refused up front.
func TestRunThresholds(t *testing.T) {
	env := storeEnv(t)
	base := []string{"--target", dbtest.SQLiteDSN(t), "--workload", "tpcb", "--scale", "1"}
	if r := fathom(t, env, nil, append([]string{"prepare"}, base...)...); r.code != 0 {
		t.Fatalf("prepare: exit %d\n%s", r.code, r.stderr)
	}
	run := func(extra ...string) result {
		return fathom(t, env, nil, append(append([]string{"run", "-T", "1s", "-q"}, base...), extra...)...)
	}
	ok := run("--threshold", "tps>0", "--threshold", "p99<60s", "--threshold", "errors<=100%")
	if ok.code != 0 || !strings.Contains(ok.stdout, "thresholds: 3 of 3 passed") || !strings.Contains(ok.stdout, "✓ tps>0: ") {
		t.Fatalf("passing thresholds: exit %d\n%s%s", ok.code, ok.stdout, ok.stderr)
	}
	bad := run("--threshold", "tps>100000000", "--threshold", "p99<60s")
	oneLine(t, bad, exitThresholds, "failed 1 of 2 thresholds: tps>100000000: ")
	if !strings.Contains(bad.stdout, "✗ tps>100000000: ") || !strings.Contains(bad.stdout, "thresholds: 1 of 2 passed") {
		t.Errorf("the summary does not show the failed threshold:\n%s", bad.stdout)
	}
	show := fathom(t, env, nil, "show", "last", "--json")
	var v struct {
		Run struct {
			Status string `json:"status"`
		} `json:"run"`
		Summary measure.Summary `json:"summary"`
	}
	if err := json.Unmarshal([]byte(show.stdout), &v); err != nil {
		t.Fatalf("show --json: %v\n%s", err, show.stdout)
	}
	if v.Run.Status != "complete" || len(v.Summary.Thresholds) != 2 || v.Summary.Thresholds[0].Pass || !v.Summary.Thresholds[1].Pass ||
		v.Summary.Thresholds[0].Actual != v.Summary.TPS {
		t.Errorf("stored: status %s, thresholds %+v (tps %g)", v.Run.Status, v.Summary.Thresholds, v.Summary.TPS)
	}
	junit := fathom(t, env, nil, "show", "last", "-f", "junit")
	junitValid(t, junit.stdout)
	if !strings.Contains(junit.stdout, `<testcase name="threshold tps&gt;100000000"`) || !strings.Contains(junit.stdout, `type="threshold"`) {
		t.Errorf("JUnit of the run lacks the failed threshold:\n%s", junit.stdout)
	}
	oneLine(t, run("--threshold", "p98<2ms"), exitUsage, `unknown metric "p98"`)
	oneLine(t, run("--threshold", "tps"), exitUsage, "e.g. p99<20ms")
}
