package experiment

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fathom-lab/fathom/internal/fault"
	"github.com/fathom-lab/fathom/internal/plan"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/stores"
)

// syncBuffer is a Stdout that can be read while the experiment writes, and calls
// onLine for each line written.
type syncBuffer struct {
	mu     sync.Mutex
	b      bytes.Buffer
	onLine func(string)
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	s.b.Write(p)
	f := s.onLine
	s.mu.Unlock()
	if f != nil {
		for _, l := range strings.Split(string(p), "\n") {
			f(l)
		}
	}
	return len(p), nil
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
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
	out := &syncBuffer{}
	ctx := context.Background()
	oc, err := Start(ctx, st, p, path, Options{Stdout: out, Quiet: true, ToolVersion: "test"})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
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
	if strings.Contains(out.String(), "thds:") {
		t.Errorf("Quiet printed live interval lines:\n%s", out)
	}
	// A complete experiment has nothing to resume.
	oc, err = Resume(ctx, st, exp, Options{Stdout: out})
	if err != nil || oc != nil {
		t.Errorf("resume of a complete experiment: %+v %v", oc, err)
	}
}

// Cancelling the context interrupts the experiment after the run going on; Resume
// runs only what is left.
func TestInterruptAndResume(t *testing.T) {
	st := openStore(t)
	p, path := smallPlan(t, "resumable")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &syncBuffer{onLine: func(l string) {
		if strings.Contains(l, "] run 2/4 ") {
			cancel() // as the second run starts: the first one is finished
		}
	}}
	oc, err := Start(ctx, st, p, path, Options{Stdout: out, Quiet: true})
	if fault.KindOf(err) != fault.Interrupted || oc == nil || oc.Status != "interrupted" {
		t.Fatalf("outcome %+v, err %v\n%s", oc, err, out)
	}
	exp, err := st.Experiment(context.Background(), oc.Experiment.ID)
	if err != nil {
		t.Fatal(err)
	}
	done := exp.Complete
	if exp.Status != "interrupted" || done < 1 || done >= 4 {
		t.Fatalf("stored after interrupt: %+v", exp)
	}
	out2 := &syncBuffer{}
	oc, err = Resume(context.Background(), st, exp, Options{Stdout: out2, Quiet: true})
	if err != nil || oc == nil || oc.Status != "complete" {
		t.Fatalf("resume: %+v %v\n%s", oc, err, out2)
	}
	if want := fmt.Sprintf("%d to run", 4-done); !strings.Contains(out2.String(), want) {
		t.Errorf("resume output does not say %q:\n%s", want, out2)
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
		if fault.KindOf(err) != fault.Usage || p != nil {
			t.Errorf("%s: plan %v, err %v (kind %d)", name, p, err, fault.KindOf(err))
		}
	}
	st := openStore(t)
	if _, err := Find(context.Background(), st, "no-such-experiment"); fault.KindOf(err) != fault.Usage {
		t.Errorf("unknown experiment: %v (kind %d)", err, fault.KindOf(err))
	}
}

// recorder is a Listener that keeps the events.
type recorder struct {
	mu     sync.Mutex
	events []Event
}

func (r *recorder) Event(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

// The engine tells its progress as typed events, without any command framework: the
// experiment starts, each run starts, is prepared (once), finishes with its summary
// and is done, and the experiment ends with its outcome.
func TestListenerEvents(t *testing.T) {
	st := openStore(t)
	p, path := smallPlan(t, "events")
	rec := &recorder{}
	out := &syncBuffer{}
	oc, err := Start(context.Background(), st, p, path, Options{Stdout: out, Quiet: true, Listener: rec})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	ev := rec.events
	if len(ev) < 2 {
		t.Fatalf("events %#v", ev)
	}
	if s, ok := ev[0].(Started); !ok || s.Runs != 4 || s.ToRun != 4 || s.Cells != 2 || s.Name != "events" {
		t.Errorf("first event %#v", ev[0])
	}
	if d, ok := ev[len(ev)-1].(Done); !ok || d.Outcome != oc || d.Outcome.Status != "complete" {
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
	// The events printed by Lines are the experiment's text.
	var b bytes.Buffer
	for _, e := range ev {
		(&Lines{W: &b}).Event(e)
	}
	for _, want := range []string{`experiment 1 "events": 2 cells × 2 repetitions = 4 runs (sequential), 4 to run`, "run 4/4 · ", "  → run "} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("Lines printed no %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(out.String(), "cells × ") {
		t.Errorf("progress went to Stdout though a Listener was given:\n%s", out)
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
	out, errOut := &syncBuffer{}, &syncBuffer{}
	ctx := context.Background()
	oc, err := Start(ctx, st, p, path, Options{Stdout: out, Stderr: errOut, Quiet: true, ToolVersion: "test"})
	if fault.KindOf(err) != fault.Failed || oc == nil || oc.Status != "failed" {
		t.Fatalf("outcome %+v, error %v (kind %v); want a failed experiment", oc, err, fault.KindOf(err))
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
	if !strings.Contains(errOut.String(), "the experiment goes on") {
		t.Errorf("stderr does not say the experiment goes on:\n%s", errOut)
	}
}
