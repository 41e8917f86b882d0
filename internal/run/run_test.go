package run

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/errkind"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/runner"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/stores"
	"github.com/fathom-lab/fathom/internal/workload"
)

// events records what a run reported, in order.
type events struct {
	mu        sync.Mutex
	order     []string
	started   *Started
	intervals []int
	warnings  []string
	onIv      func(*measure.Interval)
}

func (e *events) Started(s *Started) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.order = append(e.order, "started")
	e.started = s
}

func (e *events) Interval(iv *measure.Interval) {
	e.mu.Lock()
	e.order = append(e.order, "interval")
	e.intervals = append(e.intervals, iv.Index)
	f := e.onIv
	e.mu.Unlock()
	if f != nil {
		f(iv)
	}
}

func (e *events) Finished() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.order = append(e.order, "finished")
}

func (e *events) Warning(msg string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.warnings = append(e.warnings, msg)
}

// openStore opens a results store of the test's own, closed when the test ends.
func openStore(t *testing.T) store.Store {
	t.Helper()
	st, err := stores.Open(filepath.Join(t.TempDir(), "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

var smallOLTP = workload.Params{"tables": "1", "table_size": "100"}

// preparedSQLite is a SQLite target with a small sbtest table loaded.
func preparedSQLite(t *testing.T) Target {
	t.Helper()
	tg := Target{DSN: "sqlite:" + filepath.Join(t.TempDir(), "t.db") + "?busy_timeout=5000", ConnectTimeout: 5 * time.Second}
	_, wl, err := OpenWorkload("oltp_point_select", smallOLTP)
	if err != nil {
		t.Fatal(err)
	}
	tgt, err := tg.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer tgt.Close()
	if err := wl.Prepare(context.Background(), tgt, func(string, int64, int64) {}); err != nil {
		t.Fatal(err)
	}
	return tg
}

func smallRun(t *testing.T, tg Target) Options {
	return Options{
		Target: tg, Workload: "oltp_point_select", Params: smallOLTP,
		Clients: 2, Transactions: 200, Interval: 50 * time.Millisecond, MaxTries: 1,
		ReconnectTimeout: 5 * time.Second, Seed: 42, HasSeed: true,
		Labels: map[string]string{"via": "library"}, ToolVersion: "test", Command: "run_test",
	}
}

// A run driven as a library call, without any command framework: events arrive in
// order, and what the Result says is what the store keeps.
func TestExecuteSQLite(t *testing.T) {
	o := smallRun(t, preparedSQLite(t))
	ev := &events{}
	st := openStore(t)
	res, err := Execute(context.Background(), st, o, ev)
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary.Status != runner.StatusComplete {
		t.Fatalf("status %q (%s)", res.Summary.Status, res.Summary.Reason)
	}
	if ev.order[0] != "started" || ev.order[len(ev.order)-1] != "finished" || len(ev.intervals) == 0 {
		t.Fatalf("events %v", ev.order)
	}
	for i, idx := range ev.intervals {
		if i > 0 && idx <= ev.intervals[i-1] {
			t.Fatalf("interval indexes not increasing: %v", ev.intervals)
		}
	}
	if ev.started.RunID != res.Summary.RunID || ev.started.Config.Seed != 42 || ev.started.Config.Clients != 2 {
		t.Errorf("started %+v, run %d", ev.started, res.Summary.RunID)
	}
	if want := int64(2 * 200); res.Summary.Transactions != want {
		t.Errorf("summary counts %d transactions, want %d", res.Summary.Transactions, want)
	}
	if res.Sampling == nil {
		t.Error("sampling was on but there is no sampling result")
	}

	ctx := context.Background()
	run, err := st.Run(ctx, res.Summary.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != runner.StatusComplete || run.Seed != 42 || run.Labels["via"] != "library" || run.Command != "run_test" || run.ToolVersion != "test" {
		t.Errorf("stored run %+v", run)
	}
	// The runtime settings in effect are recorded with the run.
	if !strings.Contains(run.Host.Runtime, "GOMAXPROCS") || !strings.Contains(run.Host.Runtime, "in-process SQLite") {
		t.Errorf("runtime tuning recorded as %q", run.Host.Runtime)
	}
	ivs, err := st.Intervals(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(ivs) != len(ev.intervals) {
		t.Errorf("%d intervals stored, %d reported live", len(ivs), len(ev.intervals))
	}
}

// Cancelling the context stops the run gracefully: it is stored as interrupted with
// what it measured, and the error says so.
func TestExecuteInterrupted(t *testing.T) {
	o := smallRun(t, preparedSQLite(t))
	o.Transactions, o.Duration = 0, time.Hour
	o.Sampling.Off = true
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ev := &events{onIv: func(*measure.Interval) { cancel() }}
	st := openStore(t)
	res, err := Execute(ctx, st, o, ev)
	if errkind.KindOf(err) != errkind.Interrupted || res == nil {
		t.Fatalf("err %v (kind %d), result %v", err, errkind.KindOf(err), res)
	}
	run, err := st.Run(context.Background(), res.Summary.RunID)
	if err != nil {
		t.Fatal(err)
	}
	ivs, _ := st.Intervals(context.Background(), run.ID)
	if run.Status != runner.StatusInterrupted || len(ivs) == 0 {
		t.Errorf("stored status %q with %d intervals", run.Status, len(ivs))
	}
}

// Mistakes are usage errors found by Check, before the front end opens the store;
// Execute finds the same and records nothing.
func TestExecuteRefusals(t *testing.T) {
	tg := Target{DSN: "sqlite:" + filepath.Join(t.TempDir(), "empty.db")}
	for _, tc := range []struct {
		name string
		edit func(*Options)
		kind errkind.Kind
	}{
		{"unknown workload", func(o *Options) { o.Workload = "no-such-workload" }, errkind.Usage},
		{"zero max tries", func(o *Options) { o.MaxTries = 0 }, errkind.Usage},
		{"negative rate", func(o *Options) { o.Rate = -1 }, errkind.Usage},
		{"bad query mode", func(o *Options) { o.QueryMode = "telepathic" }, errkind.Usage},
		{"unknown collector", func(o *Options) { o.Sampling.Only = []string{"nosuchcollector"} }, errkind.Usage},
		{"not prepared", func(o *Options) {}, errkind.Failed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := smallRun(t, tg)
			tc.edit(&o)
			cerr := o.Check()
			if tc.kind == errkind.Usage && errkind.KindOf(cerr) != errkind.Usage {
				t.Errorf("Check: %v (kind %d), want a usage error", cerr, errkind.KindOf(cerr))
			}
			if tc.kind != errkind.Usage && cerr != nil {
				t.Errorf("Check: %v; the options are right (the target is what is wrong)", cerr)
			}
			ev := &events{}
			st := openStore(t)
			res, err := Execute(context.Background(), st, o, ev)
			if err == nil || res != nil || errkind.KindOf(err) != tc.kind {
				t.Fatalf("err %v (kind %d), result %v", err, errkind.KindOf(err), res)
			}
			if len(ev.order) > 0 {
				t.Errorf("events before the refusal: %v", ev.order)
			}
			if runs, _ := st.Runs(context.Background(), store.RunFilter{}); len(runs) > 0 {
				t.Errorf("a refused run was recorded: %+v", runs)
			}
			var np *NotPreparedError
			if tc.name == "not prepared" && (!errors.As(err, &np) || !errors.Is(err, workload.ErrNotPrepared)) {
				t.Errorf("not prepared: %v is not a NotPreparedError", err)
			}
		})
	}
}
