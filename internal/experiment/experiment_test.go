package experiment

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fathom-lab/fathom/internal/errkind"
	"github.com/fathom-lab/fathom/internal/plan"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/stores"
)

// recorder is a Listener that keeps the events, and calls onEvent with each.
type recorder struct {
	mu      sync.Mutex
	events  []Event
	onEvent func(Event)
}

func (r *recorder) Event(e Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	f := r.onEvent
	r.mu.Unlock()
	if f != nil {
		f(e)
	}
}

// count is how many events of e's type were heard.
func count[E Event](r *recorder) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range r.events {
		if _, ok := e.(E); ok {
			n++
		}
	}
	return n
}

func smallPlan(t *testing.T, name string) (*plan.Plan, string) {
	t.Helper()
	dir := t.TempDir()
	text := fmt.Sprintf(`experiment: %s
target: sqlite:%s?busy_timeout=5000
workload: oltp_point_select
options: {tables: 1, table_size: 100}
transactions: 50
report_interval: 50ms
repetitions: 2
order: sequential
seed: 3
matrix:
  clients: [1, 2]
`, name, filepath.Join(dir, "t.db"))
	path := filepath.Join(dir, "plan.yaml")
	p, err := plan.Read(path, dir, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return p, path
}

func openStore(t *testing.T) store.Store {
	t.Helper()
	st, err := stores.Open(filepath.Join(t.TempDir(), "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// An experiment driven as a library call, without any command framework: every
// slot runs, each run is stored and linked to its cell, the outcome says complete.
func TestStartSQLite(t *testing.T) {
	st := openStore(t)
	p, path := smallPlan(t, "lib")
	rec := &recorder{}
	ctx := context.Background()
	oc, err := Start(ctx, st, p, path, Options{Listener: rec, ToolVersion: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if oc == nil || oc.Status != "complete" || oc.Experiment.Name != "lib" {
		t.Fatalf("outcome %+v", oc)
	}
	exp, err := st.Experiment(ctx, oc.Experiment.ID)
	if err != nil {
		t.Fatal(err)
	}
	if exp.Status != "complete" || exp.Complete != 4 || exp.Slots != 4 {
		t.Errorf("stored experiment %+v", exp)
	}
	runs, err := st.ExperimentRuns(ctx, exp.ID)
	if err != nil || len(runs) != 4 {
		t.Fatalf("runs %v %v", runs, err)
	}
	for _, er := range runs {
		r, err := st.Run(ctx, er.RunID)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != "complete" || r.Labels["experiment"] != "lib" || r.ToolVersion != "test" {
			t.Errorf("run %d: %+v", er.RunID, r)
		}
	}
	// Each run's live events come through, as the run's own listener hears them.
	if n := count[LiveStarted](rec); n != 4 {
		t.Errorf("%d runs started live, want 4", n)
	}
	if count[LiveInterval](rec) < 4 || count[LiveFinished](rec) != 4 {
		t.Errorf("%d live intervals, %d live ends", count[LiveInterval](rec), count[LiveFinished](rec))
	}
	// A complete experiment has nothing to resume, and says so.
	rec2 := &recorder{}
	oc, err = Resume(ctx, st, exp, Options{Listener: rec2})
	if err != nil || oc != nil {
		t.Errorf("resume of a complete experiment: %+v %v", oc, err)
	}
	if len(rec2.events) != 1 || rec2.events[0] != (NothingToResume{ID: exp.ID, Name: "lib"}) {
		t.Errorf("resume of a complete experiment told %#v", rec2.events)
	}
}

// Cancelling the context interrupts the experiment after the run going on; Resume
// runs only what is left.
func TestInterruptAndResume(t *testing.T) {
	st := openStore(t)
	p, path := smallPlan(t, "resumable")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &recorder{onEvent: func(e Event) {
		if rs, ok := e.(RunStarted); ok && rs.Seq == 2 {
			cancel() // as the second run starts: the first one is finished
		}
	}}
	oc, err := Start(ctx, st, p, path, Options{Listener: rec})
	if errkind.KindOf(err) != errkind.Interrupted || oc == nil || oc.Status != "interrupted" {
		t.Fatalf("outcome %+v, err %v", oc, err)
	}
	exp, err := st.Experiment(context.Background(), oc.Experiment.ID)
	if err != nil {
		t.Fatal(err)
	}
	done := exp.Complete
	if exp.Status != "interrupted" || done < 1 || done >= 4 {
		t.Fatalf("stored after interrupt: %+v", exp)
	}
	rec2 := &recorder{}
	oc, err = Resume(context.Background(), st, exp, Options{Listener: rec2})
	if err != nil || oc == nil || oc.Status != "complete" {
		t.Fatalf("resume: %+v %v", oc, err)
	}
	if s, ok := rec2.events[0].(Started); !ok || !s.Resumed || s.ToRun != 4-done {
		t.Errorf("resume started with %#v, want %d to run", rec2.events[0], 4-done)
	}
	exp, _ = st.Experiment(context.Background(), exp.ID)
	if exp.Complete != 4 {
		t.Errorf("after resume: %+v", exp)
	}
}

// A plan's mistakes and an unknown experiment are usage errors, found before any
// server is touched.
func TestRefusals(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"bad target":        "experiment: bad\ntarget: nosuch://x\nworkload: tpcb\ntransactions: 5\nmatrix: {clients: [1, 2]}\n",
		"unknown collector": "experiment: bad\ntarget: sqlite:x.db\nworkload: tpcb\ntransactions: 5\ncollect: [os, nosuchcollector]\nmatrix: {clients: [1, 2]}\n",
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".yaml")
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		p, err := ReadPlan(path)
		if errkind.KindOf(err) != errkind.Usage || p != nil {
			t.Errorf("%s: plan %v, err %v (kind %d)", name, p, err, errkind.KindOf(err))
		}
	}
	st := openStore(t)
	if _, err := Find(context.Background(), st, "no-such-experiment"); errkind.KindOf(err) != errkind.Usage {
		t.Errorf("unknown experiment: %v (kind %d)", err, errkind.KindOf(err))
	}
}

// The engine tells its progress as typed events, without any command framework: the
// experiment starts, each run starts, is prepared (once), finishes with its summary
// and is done, and the experiment ends with its outcome.
func TestListenerEvents(t *testing.T) {
	st := openStore(t)
	p, path := smallPlan(t, "events")
	rec := &recorder{}
	oc, err := Start(context.Background(), st, p, path, Options{Listener: rec})
	if err != nil {
		t.Fatal(err)
	}
	ev := rec.events
	if len(ev) < 2 {
		t.Fatalf("events %#v", ev)
	}
	if s, ok := ev[0].(Started); !ok || s.Runs != 4 || s.ToRun != 4 || s.Cells != 2 || s.Name != "events" {
		t.Errorf("first event %#v", ev[0])
	}
	if d, ok := ev[len(ev)-1].(done); !ok || d.Outcome != oc || d.Outcome.Status != "complete" {
		t.Errorf("last event %#v", ev[len(ev)-1])
	}
	var started, finished, done, prepared int
	running := false
	for _, e := range ev {
		switch e := e.(type) {
		case RunStarted:
			if running || e.Seq != started+1 || e.Runs != 4 || e.Repetitions != 2 {
				t.Errorf("run started out of order: %#v", e)
			}
			started++
			running = true
		case Prepared:
			prepared++
		case RunFinished:
			if !running || e.Summary == nil || e.Summary.RunID == 0 || e.Summary.Status != "complete" {
				t.Errorf("run finished: %#v", e)
			}
			finished++
		case RunDone:
			if !running || e.Status != "complete" || e.Seq != started {
				t.Errorf("run done: %#v", e)
			}
			done++
			running = false
		}
	}
	if started != 4 || finished != 4 || done != 4 || prepared != 1 {
		t.Errorf("started %d, finished %d, done %d, prepared %d; want 4, 4, 4, 1", started, finished, done, prepared)
	}
}

// A cell whose run fails by its transactions' errors (none succeeded) is marked failed
// with the first error in its reason, the run keeps its errors, and the experiment
// goes on with the next cell although on_error is stop (the default): such a run went
// its course and is a result.
func TestFailedByErrorsGoesOn(t *testing.T) {
	st := openStore(t)
	dir := t.TempDir()
	wl := `name: overflow
transactions:
  - name: abs
    autocommit: true
    steps:
      - sql: SELECT abs(:v - 9223372036854775807 - 1)
        values:
          v: {uniform: [0, 0]}
`
	if err := os.WriteFile(filepath.Join(dir, "ovf.yaml"), []byte(wl), 0o644); err != nil {
		t.Fatal(err)
	}
	text := fmt.Sprintf(`experiment: errs
target: sqlite:%s
workload: ovf.yaml
transactions: 5
report_interval: 50ms
order: sequential
matrix:
  clients: [1, 2]
`, filepath.Join(dir, "t.db"))
	path := filepath.Join(dir, "plan.yaml")
	p, err := plan.Read(path, dir, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if p.OnError != "stop" {
		t.Fatalf("on_error %q, want the default stop", p.OnError)
	}
	rec := &recorder{}
	ctx := context.Background()
	oc, err := Start(ctx, st, p, path, Options{Listener: rec, ToolVersion: "test"})
	if errkind.KindOf(err) != errkind.Failed || oc == nil || oc.Status != "failed" {
		t.Fatalf("outcome %+v, error %v (kind %v); want a failed experiment", oc, err, errkind.KindOf(err))
	}
	slots, err := st.ExperimentSlots(ctx, oc.Experiment.ID)
	if err != nil || len(slots) != 2 {
		t.Fatalf("slots %+v %v", slots, err)
	}
	for _, s := range slots {
		if s.Status != "failed" || !strings.Contains(s.Reason, "no transaction succeeded") || !strings.Contains(s.Reason, "integer overflow") {
			t.Errorf("slot %d: %s (%s); want failed naming the first error", s.Seq, s.Status, s.Reason)
		}
	}
	runs, err := st.ExperimentRuns(ctx, oc.Experiment.ID)
	if err != nil || len(runs) != 2 {
		t.Fatalf("runs %+v %v: both cells must have run", runs, err)
	}
	for _, er := range runs {
		errs, err := st.RunErrors(ctx, er.RunID)
		if err != nil || len(errs) != 1 || !strings.Contains(errs[0].Message, "integer overflow") || errs[0].Count == 0 {
			t.Errorf("run %d's errors: %+v %v", er.RunID, errs, err)
		}
	}
	if n := count[GoesOn](rec); n != 2 {
		t.Errorf("%d events say the experiment goes on after a run failed by its errors, want 2", n)
	}
}
