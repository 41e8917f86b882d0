package report

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/store"
)

// The warnings an experiment's runs stored are in `fathom experiments NAME`, as text
// and in --json, each with the run and cell it came from (issue 30).
func TestExperimentWarnings(t *testing.T) {
	ctx := context.Background()
	const warn = "a prepare of tpcb started at 2026-11-28T13:04:06Z did not finish: pgbench_accounts may be incomplete"
	st, ids := newFixtureStore(t, []fixtureRun{
		{clients: 1, intervals: 5, tps: 50, latencyMs: 1, seed: 1},
		{clients: 2, intervals: 5, tps: 50, latencyMs: 1, seed: 2, warnings: []string{warn}},
	})
	e := &store.Experiment{Name: "w", PlanPath: "w.yaml", PlanDir: "/plans", Plan: "experiment: w\n", Repetitions: 1,
		Order: "sequential", Target: "postgres://bench@db1/bench", ToolVersion: "test", Host: "bench1", CreatedAt: epoch,
		Axes: []store.ExperimentAxis{{Name: "clients", Values: []string{"1", "2"}}}}
	var cells []store.ExperimentCell
	var slots []store.ExperimentSlot
	for c, v := range []string{"1", "2"} {
		cells = append(cells, store.ExperimentCell{Cell: c, Key: "clients=" + v, Coords: []store.Coord{{Axis: "clients", Value: v}}, Params: json.RawMessage(`{}`)})
		slots = append(slots, store.ExperimentSlot{Seq: c, Cell: c, Repetition: 1})
	}
	id, err := st.CreateExperiment(ctx, e, cells, slots)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range slots {
		a, err := st.StartSlot(ctx, id, s.Seq, epoch)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.LinkRun(ctx, id, s.Seq, a, 0, ids[s.Seq]); err != nil {
			t.Fatal(err)
		}
		if err := st.FinishSlot(ctx, id, s.Seq, "complete", "", epoch); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.FinishExperiment(ctx, id, "complete", "", epoch.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	exp, err := st.Experiment(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	want := "run 2 (clients=2, repetition 1): " + warn
	v, err := ExperimentJSON(ctx, st, exp)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	var doc struct {
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || len(doc.Warnings) != 1 || doc.Warnings[0] != want {
		t.Errorf("--json warnings %q (%v), want [%q]", doc.Warnings, err, want)
	}
	var text bytes.Buffer
	if err := WriteExperiment(ctx, &text, st, exp, "complete"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "warnings:\n  "+want+"\n") {
		t.Errorf("the text has no warning:\n%s", text.String())
	}
}
