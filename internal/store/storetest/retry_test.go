package storetest_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/storetest"
)

// A run or experiment created again with the same record (a first try committed, its
// acknowledgement lost: the durable store tries again) is the same one, not a second
// one nor a refusal, and on PostgreSQL its writer holds its lock (the first try's
// session is ended); another record that brings a UUID the store holds is refused. A
// warning written again is stored once.
func TestCreateTriedAgain(t *testing.T) {
	forEach(t, func(t *testing.T, f factory) {
		ctx := context.Background()
		path := f.fresh(t)
		st, other := f.open(t, path), f.open(t, path)
		defer st.Close()
		defer other.Close()
		r := storetest.Run()
		id, err := st.CreateRun(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		again, err := st.CreateRun(ctx, r)
		if err != nil || again != id {
			t.Fatalf("created again: run %d, %v; want run %d", again, err, id)
		}
		runs, err := other.Runs(ctx, store.RunFilter{})
		if err != nil || len(runs) != 1 {
			t.Fatalf("%d runs stored (%v), want 1", len(runs), err)
		}
		if runs[0].Status != "running" || runs[0].Gone || !reflect.DeepEqual(runs[0].Labels, r.Labels) {
			t.Errorf("the run reads %s (gone %v), labels %v", runs[0].Status, runs[0].Gone, runs[0].Labels)
		}
		taken := storetest.Run()
		taken.UUID, taken.StartedAt = r.UUID, r.StartedAt.Add(time.Second)
		if _, err := st.CreateRun(ctx, taken); err == nil || !strings.Contains(err.Error(), "already holds run") {
			t.Errorf("another run with a stored UUID: %v", err)
		}

		for _, w := range []string{"first", "second", "first"} {
			if err := st.AddRunWarning(ctx, id, w); err != nil {
				t.Fatal(err)
			}
		}
		if got, _ := other.Run(ctx, id); !reflect.DeepEqual(got.Warnings, []string{"first", "second"}) {
			t.Errorf("warnings %q, want [first second]", got.Warnings)
		}
		if err := st.FinishRun(ctx, id, "complete", "", time.Now(), nil); err != nil {
			t.Fatal(err)
		}

		e := &store.Experiment{Name: "x", PlanPath: "p.yaml", PlanDir: "/", Plan: "p", Repetitions: 1, Order: "sequential",
			Target: "t", ToolVersion: "test", Host: "h", PID: 1, CreatedAt: time.Unix(1700000000, 0)}
		cells := []store.ExperimentCell{{Cell: 0, Key: "k"}}
		slots := []store.ExperimentSlot{{Seq: 0, Cell: 0, Repetition: 1}}
		eid, err := st.CreateExperiment(ctx, e, cells, slots)
		if err != nil {
			t.Fatal(err)
		}
		eagain, err := st.CreateExperiment(ctx, e, cells, slots)
		if err != nil || eagain != eid {
			t.Fatalf("experiment created again: %d, %v; want %d", eagain, err, eid)
		}
		exps, err := other.Experiments(ctx, 10)
		if err != nil || len(exps) != 1 || exps[0].Status != "running" || exps[0].Gone {
			t.Fatalf("experiments %+v (%v): want one, running", exps, err)
		}
		if sl, _ := other.ExperimentSlots(ctx, eid); len(sl) != 1 {
			t.Errorf("%d slots, want 1", len(sl))
		}
	})
}

// An agent job created again with the same spec (its first try committed, the
// acknowledgement lost) is the same job; one of that name with another spec (another
// coordinator: another token) is refused as taken.
func TestAgentJobTriedAgain(t *testing.T) {
	f := factories[1]
	ctx := context.Background()
	st := f.open(t, f.fresh(t))
	defer st.Close()
	as, ok := st.(store.AgentStore)
	if !ok {
		t.Fatal("the PostgreSQL store coordinates no agents")
	}
	j := &store.AgentJob{Name: "job", Agents: 2, Spec: []byte(`{"token":"a"}`)}
	if err := as.CreateAgentJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	again := &store.AgentJob{Name: "job", Agents: 2, Spec: []byte(`{"token":"a"}`)}
	if err := as.CreateAgentJob(ctx, again); err != nil || again.ID != j.ID {
		t.Fatalf("created again: job %d, %v; want job %d", again.ID, err, j.ID)
	}
	other := &store.AgentJob{Name: "job", Agents: 2, Spec: []byte(`{"token":"b"}`)}
	if err := as.CreateAgentJob(ctx, other); !errors.Is(err, store.ErrTaken) {
		t.Errorf("another coordinator's job of that name: %v", err)
	}
}
