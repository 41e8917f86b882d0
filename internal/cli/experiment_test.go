package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/db"
	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/measure"
	planpkg "github.com/fathom-lab/fathom/internal/plan"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/stores"
	"github.com/fathom-lab/fathom/internal/target"
)

// needServer skips (or fails under FATHOM_TEST_REQUIRE=1) without kind's programs.
func needServer(t *testing.T, k instance.Kind) {
	t.Helper()
	if _, err := instance.Version(k, ""); err != nil {
		if dbtest.Required() {
			t.Fatalf("%v (FATHOM_TEST_REQUIRE=1)", err)
		}
		t.Skip(err)
	}
}

// expEnv is a private store and a short instance directory every server account can
// reach (unix socket paths must stay short).
func expEnv(t *testing.T) (map[string]string, string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "fx-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Nothing may be left running: every instance must have been removed.
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if inst, err := instance.Open(filepath.Join(dir, e.Name())); err == nil {
				t.Errorf("instance %s left behind (running: %v)", inst.Name, inst.Running())
				inst.Remove(context.Background())
			}
		}
		os.RemoveAll(dir)
	})
	env := storeEnv(t)
	env["FATHOM_INSTANCE_DIR"] = dir
	return env, dir
}

func writePlan(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func openTestStore(t *testing.T, env map[string]string) store.Store {
	t.Helper()
	st, err := stores.Open(env["FATHOM_STORE"])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// slotsOf returns the experiment's slots by status.
func slotsOf(t *testing.T, st store.Store, id int64) ([]store.ExperimentSlot, map[string]int) {
	t.Helper()
	slots, err := st.ExperimentSlots(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, s := range slots {
		n[s.Status]++
	}
	return slots, n
}

func runSummary(t *testing.T, st store.Store, id int64) (*store.Run, measure.Summary) {
	t.Helper()
	r, err := st.Run(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var s measure.Summary
	if err := json.Unmarshal(r.Summary, &s); err != nil {
		t.Fatalf("run %d summary: %v", id, err)
	}
	return r, s
}

// A bad plan lists every problem with its line and exits 2 before touching anything;
// --check passes a good one.
func TestExperimentPlanProblems(t *testing.T) {
	env := storeEnv(t)
	bad := writePlan(t, `experiment: bad
target: sqlite:x.db
workload: tpcbb
clients: many
matrix:
  clientz: [1, 2]
hooks:
  before_run:
    - {sql: VACUUM, shell: "true"}
`)
	r := fathom(t, env, nil, "experiment", bad)
	if r.code != exitUsage {
		t.Fatalf("exit %d, want 2\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"plan.yaml:3: unknown workload \"tpcbb\"", "plan.yaml:4: clients must be", "plan.yaml:6: matrix: unknown parameter \"clientz\"", "plan.yaml:9:"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if _, err := os.Stat(env["FATHOM_STORE"]); err == nil {
		st := openTestStore(t, env)
		if exps, _ := st.Experiments(context.Background(), 0); len(exps) > 0 {
			t.Error("a bad plan was recorded")
		}
	}
	secret := writePlan(t, "experiment: s\ntarget: postgres://bob:hunter2@[::1/x\nworkload: tpcb\n")
	r = fathom(t, env, nil, "experiment", "--check", secret)
	if r.code != exitUsage || strings.Contains(r.stderr, "hunter2") || !strings.Contains(r.stderr, "plan.yaml:2: target") {
		t.Errorf("bad DSN: exit %d: %s", r.code, r.stderr)
	}
	nocoll := writePlan(t, "experiment: c\ntarget: sqlite:x.db\nworkload: tpcb\ncollect: [os, nosuchcollector]\n")
	r = fathom(t, env, nil, "experiment", "--check", nocoll)
	if r.code != exitUsage || !strings.Contains(r.stderr, "plan.yaml:4: collect:") || !strings.Contains(r.stderr, "nosuchcollector") {
		t.Errorf("unknown collector: exit %d: %s", r.code, r.stderr)
	}
	good := writePlan(t, "experiment: good\ntarget: sqlite:x.db\nworkload: tpcb\ntransactions: 10\nrepetitions: 3\nmatrix: {clients: [1, 2]}\n")
	r = fathom(t, env, nil, "experiment", "--check", good)
	if r.code != 0 || !strings.Contains(r.stdout, "2 cells × 3 repetitions = 6 runs") {
		t.Errorf("check: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = fathom(t, env, nil, "experiment", "--resume", "nosuch")
	oneLine(t, r, exitUsage, "nosuch")
	r = fathom(t, env, nil, "experiment")
	oneLine(t, r, exitUsage, "needs a plan file")
}

// An experiment on SQLite: a 2-cell matrix repeated, sequential order, SQL and shell
// hooks with the cell in their environment, every run stored with its cell.
func TestExperimentSQLite(t *testing.T) {
	env := storeEnv(t)
	dir := t.TempDir()
	hookOut := filepath.Join(dir, "hooks.log")
	plan := writePlan(t, fmt.Sprintf(`experiment: lite
target: sqlite:%s?busy_timeout=5000
workload: tpcb
options: {scale: 1}
transactions: 20
report_interval: 100ms
repetitions: 2
order: sequential
seed: 7
labels: {purpose: test}
matrix:
  clients: [1, 2]
hooks:
  before_experiment:
    - shell: echo start >> %s
  before_run:
    - sql: SELECT count(*) FROM pgbench_branches
  after_run:
    - shell: echo "$FATHOM_CELL rep=$FATHOM_REPETITION runs=$FATHOM_RUN_IDS $FATHOM_RUN_STATUS $FATHOM_AXIS_CLIENTS" >> %s
`, filepath.Join(dir, "t.db"), hookOut, hookOut))
	r := fathom(t, env, nil, "experiment", "-q", plan)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	st := openTestStore(t, env)
	ctx := context.Background()
	exp, err := st.ExperimentByName(ctx, "lite")
	if err != nil {
		t.Fatal(err)
	}
	if exp.Status != "complete" || exp.Complete != 4 || exp.Order != "sequential" || len(exp.Axes) != 1 || exp.Axes[0].Name != "clients" {
		t.Errorf("experiment: %+v", exp)
	}
	runs, err := st.ExperimentRuns(ctx, exp.ID)
	if err != nil || len(runs) != 4 {
		t.Fatalf("runs: %v %v", runs, err)
	}
	// Sequential: both repetitions of clients=1 first.
	wantOrder := []string{"1/1", "1/2", "2/1", "2/2"}
	for i, er := range runs {
		got := fmt.Sprintf("%s/%d", er.Coords[0].Value, er.Repetition)
		if got != wantOrder[i] || !er.Current || er.Instance != 0 {
			t.Errorf("run %d: %+v, want %s", i, er, wantOrder[i])
		}
		run, s := runSummary(t, st, er.RunID)
		if run.Clients != int(er.Coords[0].Value[0]-'0') || run.Transactions != 20 || s.Transactions != 20*int64(run.Clients) {
			t.Errorf("run %d: clients %d transactions %d, measured %d", run.ID, run.Clients, run.Transactions, s.Transactions)
		}
		if run.Labels["experiment"] != "lite" || run.Labels["clients"] != er.Coords[0].Value || run.Labels["rep"] != fmt.Sprint(er.Repetition) || run.Labels["purpose"] != "test" {
			t.Errorf("labels: %v", run.Labels)
		}
	}
	b, _ := os.ReadFile(hookOut)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 5 || lines[0] != "start" || !strings.HasPrefix(lines[1], "clients=1 rep=1 runs=") || !strings.HasSuffix(lines[4], "complete 2") {
		t.Errorf("hook log:\n%s", b)
	}
	hooks, _ := st.ExperimentHooks(ctx, exp.ID)
	if len(hooks) != 9 || !strings.Contains(hooks[1].Output, "SELECT count(*)") || !strings.Contains(hooks[1].Output, "1") {
		t.Errorf("%d hooks stored: %+v", len(hooks), hooks)
	}
	// The cell table, by name and by fathom show.
	for _, args := range [][]string{{"experiments", "lite"}, {"experiments", fmt.Sprint(exp.ID), "--json"}, {"experiments"}} {
		r := fathom(t, env, nil, args...)
		if r.code != 0 || !strings.Contains(r.stdout, "lite") {
			t.Errorf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	r = fathom(t, env, nil, "experiments", "lite")
	if !strings.Contains(r.stdout, "CLIENTS") || !strings.Contains(r.stdout, "2/2") {
		t.Errorf("cell table:\n%s", r.stdout)
	}
}

// PostgreSQL on a managed instance: a 2×2 matrix of a setting that needs a restart and
// one that a reload changes, repeated; every run carries the values read back.
func TestExperimentPostgresMatrix(t *testing.T) {
	needServer(t, instance.Postgres)
	t.Parallel()
	env, _ := expEnv(t)
	plan := writePlan(t, `experiment: pgmatrix
instance: {kind: postgres}
workload: tpcb-simple-update
options: {scale: 1}
clients: 2
transactions: 25
report_interval: 100ms
repetitions: 2
matrix:
  settings.shared_buffers: [16MB, 24MB]
  settings.synchronous_commit: ["on", "off"]
hooks:
  before_run:
    - sql: VACUUM pgbench_accounts
`)
	r := fathom(t, env, nil, "experiment", "-q", plan)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	st := openTestStore(t, env)
	ctx := context.Background()
	exp, err := st.ExperimentByName(ctx, "pgmatrix")
	if err != nil {
		t.Fatal(err)
	}
	slots, n := slotsOf(t, st, exp.ID)
	if n["complete"] != 8 {
		t.Fatalf("slots: %v", n)
	}
	cells, _ := st.ExperimentCells(ctx, exp.ID)
	restarts, reloads := 0, 0
	for _, sl := range slots {
		switch {
		case strings.Contains(sl.Change, "restarted (shared_buffers needs a restart)"):
			restarts++
		case strings.Contains(sl.Change, "reloaded"):
			reloads++
		}
		var effs []struct{ Name, Value string }
		json.Unmarshal(sl.Effective, &effs)
		run, _ := runSummary(t, st, sl.RunID)
		for _, c := range cells[sl.Cell].Coords {
			if run.Settings[c.Axis] != c.Value {
				t.Errorf("run %d (%s): %s is %q in its settings", run.ID, cells[sl.Cell].Key, c.Axis, run.Settings[c.Axis])
			}
			if run.Labels[c.Axis] != c.Value {
				t.Errorf("run %d: label %s = %q", run.ID, c.Axis, run.Labels[c.Axis])
			}
		}
		if len(effs) != 2 {
			t.Errorf("slot %d: effective %s", sl.Seq, sl.Effective)
		}
	}
	// Interleaved: shared_buffers changes at every other run.
	if restarts < 3 || reloads < 3 {
		t.Errorf("%d restarts and %d reloads:\n%s", restarts, reloads, r.stdout)
	}
	if !strings.Contains(r.stdout, "SHARED_BUFFERS") || !strings.Contains(r.stdout, "2/2") {
		t.Errorf("no cell table:\n%s", r.stdout)
	}
}

// Failures: a setting the server rejects fails its cell with the server's log, a
// failing hook fails its cell with its output, and on_error: continue goes on.
func TestExperimentFailures(t *testing.T) {
	needServer(t, instance.Postgres)
	t.Parallel()
	env, _ := expEnv(t)
	plan := writePlan(t, `experiment: pgfail
instance: {kind: postgres, start_timeout: 20s}
workload: tpcb-select
options: {scale: 1}
transactions: 10
report_interval: 100ms
on_error: continue
matrix:
  settings.wal_level: [replica, bogus]
  variant:
    plain: {clients: 1}
    hooked: {clients: 2}
    typo: {settings: {synchronous_commit: sometimes}}
hooks:
  before_run:
    - shell: 'if [ "$FATHOM_AXIS_VARIANT" = hooked ]; then echo boom from the hook; exit 3; fi'
`)
	r := fathom(t, env, nil, "experiment", "-q", plan)
	if r.code != exitFailure {
		t.Fatalf("exit %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"boom from the hook", "exit status 3", "invalid value for parameter \"wal_level\"", "did not start"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, "5 runs failed") {
		t.Errorf("stderr: %s", r.stderr)
	}
	st := openTestStore(t, env)
	ctx := context.Background()
	exp, _ := st.ExperimentByName(ctx, "pgfail")
	slots, n := slotsOf(t, st, exp.ID)
	if n["complete"] != 1 || n["failed"] != 5 || exp.Status != "failed" {
		t.Fatalf("slots %v, experiment %s", n, exp.Status)
	}
	cells, _ := st.ExperimentCells(ctx, exp.ID)
	for _, sl := range slots {
		key := cells[sl.Cell].Key
		switch {
		case key == "wal_level=replica variant=plain":
			if sl.Status != "complete" {
				t.Errorf("%s: %s %s", key, sl.Status, sl.Reason)
			}
		case strings.Contains(key, "bogus"):
			if !strings.Contains(sl.Reason, "wal_level") || sl.RunID != 0 {
				t.Errorf("%s: %s", key, sl.Reason)
			}
		case strings.Contains(key, "typo"):
			// A reload that did not take: the value read back is not the one asked for.
			if !strings.Contains(sl.Reason, `synchronous_commit requested "sometimes" but the server uses "on"`) ||
				!strings.Contains(sl.Reason, "invalid value for parameter") || sl.RunID != 0 {
				t.Errorf("%s: %s", key, sl.Reason)
			}
		default:
			if !strings.Contains(sl.Reason, "boom from the hook") || sl.RunID != 0 {
				t.Errorf("%s: %s", key, sl.Reason)
			}
		}
	}
	hooks, _ := st.ExperimentHooks(ctx, exp.ID)
	failed := 0
	for _, h := range hooks {
		if !h.OK {
			failed++
			if h.ExitCode != 3 || !strings.Contains(h.Output, "boom") {
				t.Errorf("hook: %+v", h)
			}
		}
	}
	if failed != 1 {
		t.Errorf("%d failed hooks stored, want 1 (the bogus cell never reached its hooks)", failed)
	}
	// The cell table: ERRORS and FAILED RUNS are separate columns ("01 failed" was the
	// errors 0 against the note "1 failed").
	r = fathom(t, env, nil, "experiments", "pgfail")
	lines := strings.Split(r.stdout, "\n")
	head := -1
	for i, l := range lines {
		if strings.Contains(l, "ERRORS") {
			head = i
		}
	}
	if head < 0 || !strings.HasSuffix(strings.TrimRight(lines[head], " "), "ERRORS  FAILED RUNS") {
		t.Fatalf("cell table header:\n%s", r.stdout)
	}
	for _, l := range lines[head+1 : head+7] {
		f := strings.Fields(l)
		if len(f) < 2 || (f[len(f)-1] != "0" && f[len(f)-1] != "1") || strings.Contains(l, "failed") {
			t.Errorf("cell row %q: want the errors and the failed runs as the last two numbers", l)
		}
	}
}

// An interrupted experiment keeps what finished; --resume reruns the interrupted run
// and the rest, nothing twice; the instances are removed both times.
func TestExperimentInterruptResume(t *testing.T) {
	needServer(t, instance.Postgres)
	t.Parallel()
	env, _ := expEnv(t)
	plan := writePlan(t, `experiment: pgresume
instance: {kind: postgres}
workload: tpcb-select
options: {scale: 1}
duration: 1500ms
report_interval: 250ms
matrix:
  clients: [1, 2, 3]
`)
	var out syncBuffer
	stop := make(chan struct{})
	go func() {
		for !strings.Contains(out.String(), "run 2/3") {
			time.Sleep(20 * time.Millisecond)
		}
		// Two live lines into run 2 (interval ends are the times they were taken,
		// so not exactly 0.25s and 0.5s).
		for {
			o := out.String()
			if strings.Count(o[strings.Index(o, "run 2/3"):], "thds:") >= 2 {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		close(stop)
	}()
	r := fathomTee(t, env, stop, &out, "experiment", plan)
	if r.code != exitInterrupted || !strings.Contains(r.stderr, "--resume") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	st := openTestStore(t, env)
	ctx := context.Background()
	exp, _ := st.ExperimentByName(ctx, "pgresume")
	slots, n := slotsOf(t, st, exp.ID)
	if exp.Status != "interrupted" || n["complete"] != 1 || n["interrupted"] != 1 || n["planned"] != 1 {
		t.Fatalf("after the interrupt: %s %v", exp.Status, n)
	}
	first := slots[0].RunID
	interrupted, _ := st.ExperimentRuns(ctx, exp.ID)
	if len(interrupted) != 2 {
		t.Fatalf("runs after the interrupt: %+v", interrupted)
	}
	ir, _ := st.Run(ctx, interrupted[1].RunID)
	if ir.Status != "interrupted" {
		t.Errorf("the interrupted run is %s: %s", ir.Status, ir.Reason)
	}

	r = fathom(t, env, nil, "experiment", "-q", "--resume", "pgresume")
	if r.code != 0 {
		t.Fatalf("resume: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "2 to run") {
		t.Errorf("resume output:\n%s", r.stdout)
	}
	exp, _ = st.Experiment(ctx, exp.ID)
	slots, n = slotsOf(t, st, exp.ID)
	if exp.Status != "complete" || n["complete"] != 3 {
		t.Fatalf("after resume: %s %v", exp.Status, n)
	}
	if slots[0].RunID != first || slots[0].Attempts != 1 || slots[1].Attempts != 2 || slots[2].Attempts != 1 {
		t.Errorf("slots ran again: %+v", slots)
	}
	runs, _ := st.ExperimentRuns(ctx, exp.ID)
	current := 0
	for _, er := range runs {
		if er.Current {
			current++
		}
	}
	if len(runs) != 4 || current != 3 {
		t.Errorf("%d runs (%d current), want 4 (3 current)", len(runs), current)
	}
	if r := fathom(t, env, nil, "experiment", "--resume", fmt.Sprint(exp.ID)); r.code != 0 || !strings.Contains(r.stdout, "nothing to resume") {
		t.Errorf("resume of a complete experiment: %d %s %s", r.code, r.stdout, r.stderr)
	}
}

// fathomTee is fathom with stdout also copied to tee as it is written.
func fathomTee(t *testing.T, env map[string]string, interrupt <-chan struct{}, tee *syncBuffer, args ...string) result {
	t.Helper()
	var errb syncBuffer
	e := &Env{
		Args: args, Stdout: tee, Stderr: &errb, Getenv: func(k string) string { return env[k] }, Environ: os.Environ(), Now: time.Now,
		Interrupts: func(ctx context.Context) (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(ctx)
			go func() {
				select {
				case <-interrupt:
					cancel()
				case <-ctx.Done():
				}
			}()
			return ctx, cancel
		},
	}
	code := Run(context.Background(), e)
	return result{code, tee.String(), errb.String()}
}

// MariaDB: durability variants as named values (one restarts the server for
// innodb_flush_method), on one and on two instances at once with their aggregate.
func TestExperimentMariaDB(t *testing.T) {
	needServer(t, instance.MariaDB)
	t.Parallel()
	env, _ := expEnv(t)
	plan := writePlan(t, `experiment: mydur
instance: {kind: mariadb}
workload: oltp_update_index
options: {tables: 1, table_size: 500}
settings:
  innodb_buffer_pool_size: 32M
  log_bin: binlog
clients: 2
transactions: 30
report_interval: 100ms
matrix:
  instances: [1, 2]
  durability:
    relaxed: {settings: {innodb_flush_log_at_trx_commit: 0, sync_binlog: 0, innodb_flush_method: fsync}}
    durable: {settings: {innodb_flush_log_at_trx_commit: 1, sync_binlog: 1, innodb_flush_method: O_DIRECT}}
`)
	r := fathom(t, env, nil, "experiment", "-q", plan)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "restarted (innodb_flush_method needs a restart)") || !strings.Contains(r.stdout, "aggregate of 2 instances") {
		t.Errorf("output:\n%s", r.stdout)
	}
	st := openTestStore(t, env)
	ctx := context.Background()
	exp, _ := st.ExperimentByName(ctx, "mydur")
	slots, n := slotsOf(t, st, exp.ID)
	if n["complete"] != 4 {
		t.Fatalf("slots %v", n)
	}
	cells, _ := st.ExperimentCells(ctx, exp.ID)
	for _, sl := range slots {
		c := cells[sl.Cell]
		run, s := runSummary(t, st, sl.RunID)
		durable := c.Coords[1].Value == "durable"
		if want := map[bool]string{true: "1", false: "0"}[durable]; run.Settings["innodb_flush_log_at_trx_commit"] != want || run.Settings["sync_binlog"] != want {
			t.Errorf("%s: settings %v", c.Key, run.Settings)
		}
		if c.Coords[0].Value == "2" {
			if len(sl.Parts) != 2 || run.Clients != 4 || !strings.Contains(run.Target, "aggregate of 2") {
				t.Errorf("%s: parts %v clients %d target %s", c.Key, sl.Parts, run.Clients, run.Target)
			}
			var sum int64
			for _, p := range sl.Parts {
				_, ps := runSummary(t, st, p)
				sum += ps.Transactions
			}
			if s.Transactions != sum || sum != 2*2*30 {
				t.Errorf("%s: aggregate %d transactions, parts %d", c.Key, s.Transactions, sum)
			}
		} else if len(sl.Parts) != 0 {
			t.Errorf("%s: one instance has parts %v", c.Key, sl.Parts)
		}
	}
}

// pgCtlRestart is a restart command for a PostgreSQL instance used as an external server.
func pgCtlRestart(t *testing.T, inst *instance.Instance) string {
	cmd := fmt.Sprintf("%s -D %s -w -m fast restart", filepath.Join(inst.Bin, "pg_ctl"), inst.DataDir())
	if os.Geteuid() == 0 {
		if _, err := user.Lookup("postgres"); err == nil {
			cmd = "runuser -u postgres -- " + cmd
		}
	}
	return cmd + " >/dev/null"
}

func query(t *testing.T, dsn, sql string) string {
	t.Helper()
	tg, err := db.Open(dsn, target.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	c, err := tg.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rows, err := c.Query(context.Background(), sql)
	if err != nil || len(rows) != 1 {
		t.Fatalf("%s: %v %v", sql, rows, err)
	}
	return rows[0][0]
}

// An external server (here an instance fathom did not start for the plan): settings
// go through ALTER SYSTEM / SET GLOBAL, one needing a restart through the plan's
// restart command, and everything is put back at the end.
func TestExperimentExternalServer(t *testing.T) {
	for _, k := range []instance.Kind{instance.Postgres, instance.MariaDB} {
		t.Run(string(k), func(t *testing.T) {
			needServer(t, k)
			t.Parallel()
			env, dir := expEnv(t)
			ctx := context.Background()
			inst, err := instance.Create(ctx, instance.Options{Kind: k, Name: "ext", Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			defer inst.Remove(ctx)
			if err := inst.Start(ctx); err != nil {
				t.Fatal(err)
			}
			dsn := inst.DSN()
			var text string
			if k == instance.Postgres {
				text = fmt.Sprintf(`experiment: ext
target: %s
restart_command: %s
workload: tpcb-select
options: {scale: 1}
transactions: 10
report_interval: 100ms
matrix:
  settings.synchronous_commit: ["off", local]
  memory:
    small: {settings: {shared_buffers: 16MB}}
    large: {settings: {shared_buffers: 24MB}}
`, dsn, pgCtlRestart(t, inst))
			} else {
				text = fmt.Sprintf(`experiment: ext
target: %s
workload: oltp_point_select
options: {tables: 1, table_size: 200}
transactions: 10
report_interval: 100ms
matrix:
  settings.sync_binlog: [1, 7]
  settings.max_connections: [90, 120]
`, dsn)
			}
			// A setting the server does not have stops the plan before anything runs.
			typo := fmt.Sprintf("experiment: typo\ntarget: %s\nworkload: tpcb\nsettings: {shared_bufers: 1MB}\n", dsn)
			if r := fathom(t, env, nil, "experiment", writePlan(t, typo)); r.code != exitUsage || !strings.Contains(r.stderr, "plan.yaml:4: setting shared_bufers") {
				t.Errorf("unknown setting: exit %d: %s", r.code, r.stderr)
			}
			before := map[bool]string{}
			probe := "SHOW synchronous_commit"
			if k == instance.MariaDB {
				probe = "SELECT @@GLOBAL.sync_binlog"
			}
			before[true] = query(t, dsn, probe)

			r := fathom(t, env, nil, "experiment", "-q", writePlan(t, text))
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			st := openTestStore(t, env)
			exp, _ := st.ExperimentByName(ctx, "ext")
			slots, n := slotsOf(t, st, exp.ID)
			if n["complete"] != 4 {
				t.Fatalf("slots %v\n%s", n, r.stdout)
			}
			cells, _ := st.ExperimentCells(ctx, exp.ID)
			for _, sl := range slots {
				run, _ := runSummary(t, st, sl.RunID)
				c := cells[sl.Cell]
				if run.Settings[c.Coords[0].Axis] != c.Coords[0].Value {
					t.Errorf("%s: %v", c.Key, run.Settings)
				}
			}
			if k == instance.Postgres && !strings.Contains(r.stdout, "restarted (shared_buffers needs a restart)") {
				t.Errorf("no restart through the restart command:\n%s", r.stdout)
			}
			if got := query(t, dsn, probe); got != before[true] {
				t.Errorf("%s is %q after the experiment, was %q", probe, got, before[true])
			}
			if k == instance.Postgres {
				auto, _ := os.ReadFile(filepath.Join(inst.DataDir(), "postgresql.auto.conf"))
				if strings.Contains(string(auto), "synchronous_commit") || strings.Contains(string(auto), "shared_buffers") {
					t.Errorf("ALTER SYSTEM settings left behind:\n%s", auto)
				}
			} else if got := query(t, dsn, "SELECT @@GLOBAL.max_connections"); got != "151" {
				t.Errorf("max_connections is %s after the experiment", got)
			}
		})
	}
}

// A setting that acts at shutdown takes effect for its own cell: with
// innodb_buffer_pool_dump_at_shutdown OFF then ON, the server is restarted twice before
// the ON cell is measured, so that the log shows a buffer pool dump made under ON
// before that cell's run, and none before the OFF cell's. A before_run hook copies the
// server's log as it stands when the measurement starts.
func TestExperimentShutdownSetting(t *testing.T) {
	needServer(t, instance.MariaDB)
	t.Parallel()
	env, _ := expEnv(t)
	logs := t.TempDir()
	plan := writePlan(t, `experiment: dump
instance: {kind: mariadb}
workload: oltp_point_select
options: {tables: 1, table_size: 200}
settings: {innodb_buffer_pool_size: 32M, innodb_buffer_pool_load_at_startup: "ON"}
clients: 1
transactions: 20
order: sequential
matrix:
  settings.innodb_buffer_pool_dump_at_shutdown: ["OFF", "ON"]
hooks:
  before_run:
    - shell: cp "$FATHOM_INSTANCE_DIR/server.log" "`+logs+`/log-$FATHOM_AXIS_INNODB_BUFFER_POOL_DUMP_AT_SHUTDOWN.txt"
`)
	chk := fathom(t, env, nil, "experiment", "--check", plan)
	if chk.code != 0 || !strings.Contains(chk.stdout, "innodb_buffer_pool_dump_at_shutdown acts at shutdown") ||
		!strings.Contains(chk.stdout, "restarted once more") {
		t.Errorf("--check does not warn about the shutdown-time setting: %d\n%s%s", chk.code, chk.stdout, chk.stderr)
	}
	r := fathom(t, env, nil, "experiment", "-q", plan)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "restarted twice (innodb_buffer_pool_dump_at_shutdown acts at shutdown)") {
		t.Errorf("output:\n%s", r.stdout)
	}
	dumps := func(v string) int {
		b, err := os.ReadFile(filepath.Join(logs, "log-"+v+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, "Buffer pool(s) dump completed") {
				n++
			}
		}
		return n
	}
	off, on := dumps("OFF"), dumps("ON")
	t.Logf("buffer pool dumps in the log before the OFF cell: %d, before the ON cell: %d", off, on)
	if off != 0 || on < 1 {
		t.Errorf("dumps before the OFF cell %d (want 0), before the ON cell %d (want at least 1: the shutdown under the cell's own ON)", off, on)
	}
}

// A plan whose values are listed out of order: the report sorts the numeric axis,
// keeps the named one in plan order, starts comparisons from the plan's baseline, and
// stores query mode and max tries with each run.
func TestExperimentReportOrderAndBaseline(t *testing.T) {
	env := storeEnv(t)
	dir := t.TempDir()
	plan := writePlan(t, fmt.Sprintf(`experiment: order
target: sqlite:%s?busy_timeout=5000
workload: tpcb
options: {scale: 1}
transactions: 10
report_interval: 100ms
repetitions: 1
max_tries: 3
matrix:
  clients: [4, 1, 2]
  mode:
    zeta: {query_mode: simple}
    alpha: {query_mode: prepared}
baseline: {mode: alpha}
`, filepath.Join(dir, "t.db")))
	chk := fathom(t, env, nil, "experiment", "--check", plan)
	if !strings.Contains(chk.stdout, "warning: repetitions: 1 with order: interleaved") {
		t.Errorf("--check: %s", chk.stdout)
	}
	if r := fathom(t, env, nil, "experiment", "-q", plan); r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// The cell table in the charts' order: each axis's baseline first (mode=alpha,
	// though the plan lists zeta first), then the values as listed.
	var order []string
	for _, line := range strings.Split(fathom(t, env, nil, "experiments", "order").stdout, "\n") {
		if f := strings.Fields(line); len(f) > 2 && (f[1] == "alpha" || f[1] == "zeta") {
			order = append(order, f[0]+" "+f[1])
		}
	}
	if got := strings.Join(order, ", "); got != "4 alpha, 4 zeta, 1 alpha, 1 zeta, 2 alpha, 2 zeta" {
		t.Errorf("experiments order: cells %s", got)
	}
	out := filepath.Join(dir, "rep")
	r := fathom(t, env, nil, "report", "exp:order", "-o", out)
	if r.code != 0 {
		t.Fatalf("report: %d %s", r.code, r.stderr)
	}
	md, _ := os.ReadFile(filepath.Join(out, "summary.md"))
	page, _ := os.ReadFile(filepath.Join(out, "index.html"))
	s := string(md)
	// Each axis's baseline first (clients: the first listed, 4; mode: alpha, the
	// plan's), the other values by quantity or as listed.
	if !strings.Contains(s, "Axes: clients (4, 1, 2); mode (alpha, zeta)") || !strings.Contains(s, "Baseline (side A of every comparison): clients=4, mode=alpha") {
		t.Errorf("summary.md axes:\n%s", grepLines(s, "Axes"))
	}
	if !strings.Contains(s, "- **A**: mode=alpha") || !strings.Contains(s, "| query mode | prepared | simple |") {
		t.Errorf("comparison does not start from alpha or does not show the query mode:\n%s", grepLines(s, "**A**", "query mode"))
	}
	if strings.Contains(string(page), "∞") || !strings.Contains(string(page), "Throughput against clients") {
		t.Error("report page: ∞ or no scaling curve")
	}
	c := fathom(t, env, nil, "compare", "exp:order:clients=1,mode=alpha", "exp:order:clients=1,mode=zeta")
	if c.code != 0 || !strings.Contains(c.stdout, "cannot tell with n=1+1") || !strings.Contains(c.stdout, "query mode") {
		t.Errorf("compare: %d\n%s%s", c.code, c.stdout, c.stderr)
	}
	if c := fathom(t, env, nil, "compare", "exp:order:clients=1,mode=alpha", "exp:order:clients=1,mode=zeta", "--judge", "nope"); c.code != exitUsage ||
		!strings.Contains(c.stderr, `judge "nope"`) {
		t.Errorf("compare --judge nope: %d %s", c.code, c.stderr)
	}
}

// OS settings are plan settings: written through /proc/sys before each run, read back,
// recorded with the run, and put back afterwards, also when the experiment fails. The
// test uses kernel.msgmax (System V message size limit, per IPC namespace, which no
// part of fathom or its servers uses) and skips where /proc/sys is not writable (fails
// there under FATHOM_TEST_REQUIRE=1).
func TestExperimentOSSetting(t *testing.T) {
	const key = "kernel.msgmax"
	if err := planpkg.CheckOSSetting(planpkg.ProcSys, key); err != nil {
		if dbtest.Required() {
			t.Fatalf("cannot test OS settings here (FATHOM_TEST_REQUIRE=1: CI runs as root with a writable /proc/sys): %v", err)
		}
		t.Skipf("cannot test OS settings here (not a test failure: fathom refuses them the same way): %v", err)
	}
	orig, err := os.ReadFile("/proc/sys/kernel/msgmax")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.WriteFile("/proc/sys/kernel/msgmax", orig, 0) })
	base := strings.TrimSpace(string(orig))
	env := storeEnv(t)
	dir := t.TempDir()
	write := func(name, extra string) string {
		return writePlan(t, fmt.Sprintf(`experiment: %s
target: sqlite:%s?busy_timeout=5000
workload: tpcb
options: {scale: 1}
transactions: 10
report_interval: 100ms
order: sequential
repetitions: 1
matrix:
  settings.os.kernel.msgmax: [8191, 8190]
%s`, name, filepath.Join(dir, name+".db"), extra))
	}
	r := fathom(t, env, nil, "experiment", "-q", write("os", ""))
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if now, _ := os.ReadFile("/proc/sys/kernel/msgmax"); strings.TrimSpace(string(now)) != base {
		t.Errorf("msgmax is %s after the experiment, want %s restored", now, base)
	}
	if !strings.Contains(r.stdout, "restored OS settings: os.kernel.msgmax="+base) {
		t.Errorf("output:\n%s", r.stdout)
	}
	st := openTestStore(t, env)
	exp, _ := st.ExperimentByName(context.Background(), "os")
	slots, _ := slotsOf(t, st, exp.ID)
	cells, _ := st.ExperimentCells(context.Background(), exp.ID)
	for _, sl := range slots {
		run, _ := runSummary(t, st, sl.RunID)
		if want := cells[sl.Cell].Coords[0].Value; run.Settings["os.kernel.msgmax"] != want {
			t.Errorf("run %d of %s: recorded os.kernel.msgmax=%q", run.ID, cells[sl.Cell].Key, run.Settings["os.kernel.msgmax"])
		}
	}
	// A failing run still puts the setting back.
	r = fathom(t, env, nil, "experiment", "-q", write("osfail", `hooks:
  after_run:
    - shell: exit 3
`))
	if r.code == 0 {
		t.Fatalf("the failing plan succeeded:\n%s", r.stdout)
	}
	if now, _ := os.ReadFile("/proc/sys/kernel/msgmax"); strings.TrimSpace(string(now)) != base {
		t.Errorf("msgmax is %s after a failed experiment, want %s restored", now, base)
	}
}
