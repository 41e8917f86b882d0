package store

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

func TestExperimentLifecycle(t *testing.T) {
	ctx := context.Background()
	st, err := Open(filepath.Join(t.TempDir(), "fathom.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Unix(1700000000, 0)
	e := &Experiment{Name: "sweep", PlanPath: "p.yaml", PlanDir: "/plans", Plan: "experiment: sweep\n", Repetitions: 2, Order: "interleaved",
		Target: "instance postgres 15", ToolVersion: "test", Host: "h", PID: 42, CreatedAt: now,
		Axes: []ExperimentAxis{{Name: "clients", Values: []string{"1", "2"}}}}
	cells := []ExperimentCell{
		{Cell: 0, Key: "clients=1", Coords: []Coord{{"clients", "1"}}, Params: json.RawMessage(`{"clients":1}`)},
		{Cell: 1, Key: "clients=2", Coords: []Coord{{"clients", "2"}}},
	}
	slots := []ExperimentSlot{{Seq: 0, Cell: 0, Repetition: 1}, {Seq: 1, Cell: 1, Repetition: 1}, {Seq: 2, Cell: 0, Repetition: 2}, {Seq: 3, Cell: 1, Repetition: 2}}
	id, err := st.CreateExperiment(ctx, e, cells, slots)
	if err != nil {
		t.Fatal(err)
	}
	newRun := func() int64 {
		r := &Run{Workload: "tpcb", TargetKind: "sqlite", Target: "sqlite:x", Clients: 1, Interval: time.Second, StartedAt: now}
		rid, err := st.CreateRun(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		return rid
	}
	// Slot 0 completes; slot 1 is interrupted, then completes on its second attempt
	// with two instances and their aggregate.
	a, err := st.StartSlot(ctx, id, 0, now)
	if err != nil || a != 1 {
		t.Fatalf("attempt %d %v", a, err)
	}
	r0 := newRun()
	if err := st.LinkRun(ctx, id, 0, a, 0, r0); err != nil {
		t.Fatal(err)
	}
	if err := st.SlotServer(ctx, id, 0, "started", json.RawMessage(`[{"name":"work_mem","value":"4MB"}]`)); err != nil {
		t.Fatal(err)
	}
	if err := st.FinishSlot(ctx, id, 0, "complete", "", now); err != nil {
		t.Fatal(err)
	}
	a, _ = st.StartSlot(ctx, id, 1, now)
	r1a := newRun()
	st.LinkRun(ctx, id, 1, a, 0, r1a)
	st.FinishSlot(ctx, id, 1, "interrupted", "Ctrl-C", now)
	a, _ = st.StartSlot(ctx, id, 1, now)
	if a != 2 {
		t.Fatalf("second attempt is %d", a)
	}
	p1, p2, agg := newRun(), newRun(), newRun()
	st.LinkRun(ctx, id, 1, a, 1, p1)
	st.LinkRun(ctx, id, 1, a, 2, p2)
	st.LinkRun(ctx, id, 1, a, 0, agg)
	st.FinishSlot(ctx, id, 1, "complete", "", now)
	if err := st.AddHook(ctx, id, ExperimentHook{Seq: 1, Attempt: 2, Phase: "before_run", Index: 1, Kind: "sql", Command: "VACUUM", OK: true, Started: now}); err != nil {
		t.Fatal(err)
	}
	st.AddHook(ctx, id, ExperimentHook{Seq: -1, Phase: "before_experiment", Index: 1, Kind: "shell", Command: "false", ExitCode: 1, Output: "x", Started: now})
	if err := st.FinishExperiment(ctx, id, "interrupted", "Ctrl-C", now); err != nil {
		t.Fatal(err)
	}

	got, err := st.Experiment(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "sweep" || got.Status != "interrupted" || got.Slots != 4 || got.Complete != 2 || got.PID != 0 || len(got.Axes) != 1 || got.Axes[0].Values[1] != "2" {
		t.Errorf("experiment: %+v", got)
	}
	byName, err := st.ExperimentByName(ctx, "sweep")
	if err != nil || byName.ID != id {
		t.Errorf("by name: %v %v", byName, err)
	}
	if _, err := st.ExperimentByName(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing name: %v", err)
	}
	if _, err := st.Experiment(ctx, 99); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing id: %v", err)
	}
	list, err := st.Experiments(ctx, 0)
	if err != nil || len(list) != 1 {
		t.Fatalf("list: %v %v", list, err)
	}
	sl, err := st.ExperimentSlots(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if sl[0].RunID != r0 || sl[0].Change != "started" || sl[1].RunID != agg || len(sl[1].Parts) != 2 || sl[1].Attempts != 2 || sl[2].Status != "planned" {
		t.Errorf("slots: %+v", sl)
	}
	runs, err := st.ExperimentRuns(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 5 {
		t.Fatalf("%d runs", len(runs))
	}
	current := 0
	for _, r := range runs {
		if r.Current {
			current++
		}
		if r.RunID == r1a && (r.Current || r.Attempt != 1) {
			t.Errorf("the interrupted attempt counts: %+v", r)
		}
		if r.RunID == agg && (!r.Current || r.Instance != 0 || r.Coords[0].Value != "2" || r.Repetition != 1) {
			t.Errorf("aggregate: %+v", r)
		}
	}
	if current != 4 {
		t.Errorf("%d current runs, want 4 (r0, two parts, aggregate)", current)
	}
	hooks, err := st.ExperimentHooks(ctx, id)
	if err != nil || len(hooks) != 2 || hooks[1].Seq != -1 || hooks[1].ExitCode != 1 || hooks[0].Command != "VACUUM" {
		t.Errorf("hooks: %+v %v", hooks, err)
	}
	if err := st.ResumeExperiment(ctx, id, "h", 43); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.Experiment(ctx, id); got.Status != "running" || got.PID != 43 {
		t.Errorf("resumed: %+v", got)
	}
}
