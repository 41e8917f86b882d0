package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/store"
)

// TestRunThresholdAbort: a threshold with ;abort stops a real PostgreSQL run once it
// fails on enough evidence (here 2 s measured and 1,000 transactions), the run is
// stored aborted with the reason, every measured interval is kept, and fathom exits
// 7; a passing one lets the run go its course.
func TestRunThresholdAbort(t *testing.T) {
	env := storeEnv(t)
	base := []string{"--target", dbtest.PostgresDatabase(t, "thresholds"), "--workload", "tpcb", "--scale", "1"}
	if r := fathom(t, env, nil, append([]string{"prepare"}, base...)...); r.code != 0 {
		t.Fatalf("prepare: exit %d\n%s", r.code, r.stderr)
	}
	// No tpcb transaction takes under a microsecond: the bar fails from the start.
	r := fathom(t, env, nil, append([]string{"run", "-c", "2", "-T", "60s", "-q", "--threshold", "tps>0", "--threshold", "p99<1us;abort=2s"}, base...)...)
	if r.code != exitThresholds {
		t.Fatalf("exit %d, want %d\n%s\n%s", r.code, exitThresholds, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "stopping the run: threshold p99<1us;abort=2s failed: p99 ") || !strings.Contains(r.stderr, "aborted: threshold p99<1us;abort=2s failed") {
		t.Errorf("stderr does not say why the run stopped:\n%s", r.stderr)
	}
	if !strings.Contains(r.stdout, "✗ p99<1us;abort=2s: ") || !strings.Contains(r.stdout, "✓ tps>0: ") {
		t.Errorf("the summary lacks the thresholds:\n%s", r.stdout)
	}
	st := openTestStore(t, env)
	runs, err := st.Runs(context.Background(), store.RunFilter{})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs: %v, %d", err, len(runs))
	}
	run, sum := runSummary(t, st, runs[0].ID)
	if run.Status != "aborted" || !strings.HasPrefix(run.Reason, "threshold p99<1us;abort=2s failed: p99 ") {
		t.Errorf("stored %s: %q", run.Status, run.Reason)
	}
	// Stopped once the evidence was there, not at the run's end: at least 2 s and
	// 1,000 transactions measured, far less than 60 s.
	if sum.Seconds < 2 || sum.Transactions+sum.Failed < measure.AbortMinTransactions || sum.Seconds > 45 {
		t.Errorf("aborted after %.1f s and %d transactions", sum.Seconds, sum.Transactions+sum.Failed)
	}
	if len(sum.Thresholds) != 2 || sum.Thresholds[1].Pass || !sum.Thresholds[0].Pass {
		t.Errorf("stored thresholds %+v", sum.Thresholds)
	}
	ivs, err := st.Intervals(context.Background(), run.ID)
	if err != nil || len(ivs) != sum.Intervals {
		t.Errorf("%d intervals stored (%v), the summary counts %d", len(ivs), err, sum.Intervals)
	}
	// A bar the run passes never stops it.
	ok := fathom(t, env, nil, append([]string{"run", "-c", "1", "-T", "3s", "-q", "--threshold", "p99<60s;abort=1s"}, base...)...)
	if ok.code != 0 || !strings.Contains(ok.stdout, "✓ p99<60s;abort=1s") {
		t.Errorf("passing abort threshold: exit %d\n%s\n%s", ok.code, ok.stdout, ok.stderr)
	}
	oneLine(t, fathom(t, env, nil, append([]string{"run", "--threshold", "p99<20ms;halt"}, base...)...), exitUsage, `unknown option "halt"`)
}

// TestPlanThresholds: a plan's thresholds apply to each of its runs: checked and
// stored with every run, an aborting one stops each run it fails and the experiment
// goes on to the next, and the experiment exits 7 naming the runs.
func TestPlanThresholds(t *testing.T) {
	env := storeEnv(t)
	dsn := dbtest.PostgresDatabase(t, "thresholds_plan")
	if r := fathom(t, env, nil, "prepare", "--target", dsn, "--workload", "tpcb", "--scale", "1"); r.code != 0 {
		t.Fatalf("prepare: exit %d\n%s", r.code, r.stderr)
	}
	plan := writePlan(t, `experiment: bars
target: `+dsn+`
workload: tpcb
options: {scale: 1}
clients: 2
duration: 60s
repetitions: 2
thresholds: ["tps>0", "p99<1us;abort=1s"]
`)
	r := fathom(t, env, nil, "experiment", "-q", plan)
	if r.code != exitThresholds || !strings.Contains(r.stderr, "2 of 2 runs failed thresholds") || !strings.Contains(r.stderr, "(aborted): p99<1us;abort=1s: ") {
		t.Fatalf("exit %d, want %d\n%s\n%s", r.code, exitThresholds, r.stdout, r.stderr)
	}
	st := openTestStore(t, env)
	exp, err := st.ExperimentByName(context.Background(), "bars")
	if err != nil {
		t.Fatal(err)
	}
	slots, n := slotsOf(t, st, exp.ID)
	if n["aborted"] != 2 {
		t.Fatalf("slots: %v", n)
	}
	for _, sl := range slots {
		run, sum := runSummary(t, st, sl.RunID)
		if run.Status != "aborted" || len(sum.Thresholds) != 2 || sum.Seconds > 45 {
			t.Errorf("run %d: %s after %.1f s, thresholds %+v", run.ID, run.Status, sum.Seconds, sum.Thresholds)
		}
	}
	// A bad threshold is a plan problem with its line.
	bad := writePlan(t, "experiment: bad\ntarget: "+dsn+"\nworkload: tpcb\nthresholds: [\"p98<2ms\"]\n")
	if c := fathom(t, env, nil, "experiment", "--check", bad); c.code != exitUsage || !strings.Contains(c.stderr, "plan.yaml:4: ") || !strings.Contains(c.stderr, `unknown metric "p98"`) {
		t.Errorf("bad threshold in a plan: exit %d\n%s", c.code, c.stderr)
	}
}

// TestWorkloadFileThresholds: a workload file's thresholds are checked as
// --threshold's, with those given on the command line.
func TestWorkloadFileThresholds(t *testing.T) {
	env := storeEnv(t)
	dir := t.TempDir()
	wl := filepath.Join(dir, "kv.yaml")
	spec := `name: kv
thresholds: ["p99<1us", "tps>0"]
tables:
  - name: kv
    columns:
      - {name: id, type: bigint, not_null: true}
      - {name: v, type: bigint}
    primary_key: [id]
    rows: 100
    load:
      id: {sequence: {start: 1}}
      v: {uniform: {min: 1, max: 100}}
transactions:
  - name: get
    values:
      k: {uniform: {min: 1, max: 100}}
    steps:
      - sql: SELECT v FROM kv WHERE id = :k
`
	if err := os.WriteFile(wl, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"--target", dbtest.PostgresDatabase(t, "thresholds_wl"), "--workload", wl}
	if r := fathom(t, env, nil, append([]string{"prepare"}, base...)...); r.code != 0 {
		t.Fatalf("prepare: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := fathom(t, env, nil, append([]string{"run", "-T", "1s", "-q", "--threshold", "errors<1%"}, base...)...)
	oneLine(t, r, exitThresholds, "failed 1 of 3 thresholds: p99<1us: ")
	if !strings.Contains(r.stdout, "thresholds: 2 of 3 passed") || !strings.Contains(r.stdout, "✓ errors<1%") || !strings.Contains(r.stdout, "✓ tps>0") {
		t.Errorf("summary:\n%s", r.stdout)
	}
	badFile := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(badFile, []byte(strings.Replace(spec, `"p99<1us"`, `"p99<1parsec"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	c := fathom(t, env, nil, "workload", "check", badFile)
	if c.code == 0 || !strings.Contains(c.stdout+c.stderr, "bad.yaml:2: ") || !strings.Contains(c.stdout+c.stderr, "is not a value for p99") {
		t.Errorf("a bad threshold in a workload file: exit %d\n%s%s", c.code, c.stdout, c.stderr)
	}
}
