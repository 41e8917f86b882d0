package storetest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/storetest"
)

// On PostgreSQL a writer holds its experiment's lock: a second writer (another process
// or machine: another session) cannot resume it while the first lives, and can once
// the first is gone; a run or experiment whose writer's session ended reads as
// interrupted (process gone) whatever machine it ran on.
func TestPostgresWriterLocks(t *testing.T) {
	f := factories[1]
	ctx := context.Background()
	path := f.fresh(t)
	a, b := f.open(t, path), f.open(t, path)
	defer b.Close()
	e := &store.Experiment{Name: "x", PlanPath: "p.yaml", PlanDir: "/", Plan: "p", Repetitions: 1, Order: "sequential",
		Target: "t", ToolVersion: "test", Host: "elsewhere", PID: 1, CreatedAt: time.Unix(1700000000, 0)}
	cells := []store.ExperimentCell{{Cell: 0, Key: "k"}}
	id, err := a.CreateExperiment(ctx, e, cells, []store.ExperimentSlot{{Seq: 0, Cell: 0, Repetition: 1}})
	if err != nil {
		t.Fatal(err)
	}
	runID, err := a.CreateRun(ctx, storetest.Run())
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := b.Experiment(ctx, id); got.Status != "running" || got.Gone {
		t.Fatalf("a living writer's experiment reads %s (%s)", got.Status, got.Reason)
	}
	if r, _ := b.Run(ctx, runID); r.Status != "running" {
		t.Fatalf("a living writer's run reads %s", r.Status)
	}
	err = b.ResumeExperiment(ctx, id, "h2", 2)
	if err == nil || !strings.Contains(err.Error(), "another fathom") {
		t.Fatalf("resume while the writer lives: %v", err)
	}
	a.Close() // the writer dies: its session, and its locks, end
	if got, _ := b.Experiment(ctx, id); got.Status != "interrupted" || !got.Gone || got.Reason != store.ProcessGone {
		t.Fatalf("a dead writer's experiment reads %s (%s)", got.Status, got.Reason)
	}
	if r, _ := b.Run(ctx, runID); r.Status != "interrupted" || !r.Gone {
		t.Fatalf("a dead writer's run reads %s", r.Status)
	}
	if err := b.ResumeExperiment(ctx, id, "h2", 2); err != nil {
		t.Fatalf("resume after the writer died: %v", err)
	}
	if got, _ := b.Experiment(ctx, id); got.Status != "running" || got.Host != "h2" {
		t.Fatalf("resumed experiment reads %s on %s", got.Status, got.Host)
	}
	if err := b.FinishExperiment(ctx, id, "complete", "", time.Now()); err != nil {
		t.Fatal(err)
	}
	c := f.open(t, path)
	defer c.Close()
	if err := c.ResumeExperiment(ctx, id, "h3", 3); err != nil {
		t.Fatalf("resume after the lock was released: %v", err)
	}
}
