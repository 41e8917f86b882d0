package storetest_test

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/sample"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/storecopy"
	"github.com/fathom-lab/fathom/internal/store/storetest"
)

// fill writes into s a finished run with intervals, samples and stalls, a run still
// running, and an experiment linking the first run, with a hook.
func fill(t *testing.T, s store.Store) (done, running int64) {
	ctx := context.Background()
	done, err := s.CreateRun(ctx, storetest.Run())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := s.AddInterval(ctx, done, storetest.Interval(i, 10*(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	origin := time.Unix(1700000000, 0)
	w, err := s.SampleWriter(ctx, done, origin, &sample.Server{Kind: "postgres", DataDir: "/home/me/pg"}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for i := -1; i < 3; i++ {
		if err := w.Add(ctx, storetest.Sample(i, origin.Add(time.Duration(i+1)*time.Second), float64(1000+100*i), i == 2)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SaveStalls(ctx, done, map[string]float64{"depth": 0.5}, []store.Stall{{Number: 1, FirstInterval: 1, LastInterval: 1, Throughput: "tps", Cause: "checkpoint"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddRunWarning(ctx, done, "a warning"); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveRunErrors(ctx, done, []measure.SeenError{{Class: "other", Code: "42601", Message: `syntax error at or near "SELEC"`,
		Txn: "bad.sql", Where: "bad.sql line 1: SELEC 1", Client: 2, AtNs: 1500, Count: 7, Warmup: 1, Aborted: true}}); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishRun(ctx, done, "complete", "", origin.Add(4*time.Second), json.RawMessage(`{"tps":5}`)); err != nil {
		t.Fatal(err)
	}
	running, err = s.CreateRun(ctx, storetest.Run())
	if err != nil {
		t.Fatal(err)
	}
	e := &store.Experiment{Name: "sweep", PlanPath: "/home/me/p.yaml", PlanDir: "/home/me", Plan: "target: postgres://me@db/x", Repetitions: 1,
		Order: "sequential", Target: "postgres://me@db/x", ToolVersion: "test", Host: "laptop", CreatedAt: origin,
		Axes: []store.ExperimentAxis{{Name: "clients", Values: []string{"1"}}}}
	id, err := s.CreateExperiment(ctx, e, []store.ExperimentCell{{Cell: 0, Key: "clients=1", Coords: []store.Coord{{Axis: "clients", Value: "1"}}}},
		[]store.ExperimentSlot{{Seq: 0, Cell: 0, Repetition: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.StartSlot(ctx, id, 0, origin); err != nil {
		t.Fatal(err)
	}
	if err := s.LinkRun(ctx, id, 0, 1, 0, done); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishSlot(ctx, id, 0, "complete", "", origin.Add(5*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := s.AddHook(ctx, id, store.ExperimentHook{Seq: 0, Attempt: 1, Phase: "before_run", Index: 1, Kind: "shell", Command: "echo hi", OK: true, Output: "hi\n", Started: origin}); err != nil {
		t.Fatal(err)
	}
	at := 1500 * time.Millisecond
	if err := s.AddHook(ctx, id, store.ExperimentHook{Seq: 0, Attempt: 1, Phase: "during_run", Index: 1, Kind: "redis", Command: "BGSAVE", OK: true, Started: origin.Add(at), At: &at}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddHook(ctx, id, store.ExperimentHook{Seq: 0, Attempt: 1, Phase: "restart", Index: 1, Kind: "rdb", Command: "restart from RDB", Server: "redis://h:1/0", OK: true,
		Output: `{"format":"rdb","seconds":0.5,"file_bytes":100,"keys":3,"used_memory":2000}`, Started: origin, Elapsed: 500 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishExperiment(ctx, id, "complete", "", origin.Add(6*time.Second)); err != nil {
		t.Fatal(err)
	}
	return done, running
}

// same reports whether two records are equal but for what differs between stores by
// design: the run's id and writer.
func sameRun(t *testing.T, a, b *store.RunRecord) {
	t.Helper()
	norm := func(r store.RunRecord) string {
		r.Run.ID, r.Run.PID = 0, 0
		j, _ := json.Marshal(r)
		return string(j)
	}
	if x, y := norm(*a), norm(*b); x != y {
		t.Errorf("copied run differs:\n%s\n%s", x, y)
	}
}

// Copies between every pair of store kinds carry everything, and copying again
// changes nothing.
func TestCopyBetweenStores(t *testing.T) {
	ctx := context.Background()
	for _, from := range factories {
		for _, to := range factories {
			t.Run(from.name+"_to_"+to.name, func(t *testing.T) {
				srcPath, dstPath := from.fresh(t), to.fresh(t)
				src := from.open(t, srcPath)
				defer src.Close()
				done, _ := fill(t, src)
				for round := range 2 {
					if err := storecopy.Between(ctx, srcPath, dstPath, nil, storecopy.Options{}, io.Discard, io.Discard); err != nil {
						t.Fatalf("copy %d: %v", round, err)
					}
				}
				dst := to.open(t, dstPath)
				defer dst.Close()
				runs, err := dst.Runs(ctx, store.RunFilter{})
				if err != nil || len(runs) != 1 {
					t.Fatalf("%d runs copied (%v), want the finished one only", len(runs), err)
				}
				want, err := src.ExportRun(ctx, done)
				if err != nil {
					t.Fatal(err)
				}
				got, err := dst.ExportRun(ctx, runs[0].ID)
				if err != nil {
					t.Fatal(err)
				}
				sameRun(t, want, got)
				if len(got.Intervals) != 3 || len(got.Points) == 0 || len(got.Samples) == 0 || len(got.Stalls) != 1 || got.Source == nil {
					t.Errorf("copied run lacks parts: %d intervals, %d points, %d samples, %d stalls", len(got.Intervals), len(got.Points), len(got.Samples), len(got.Stalls))
				}
				exps, err := dst.Experiments(ctx, 0)
				if err != nil || len(exps) != 1 {
					t.Fatalf("%d experiments (%v)", len(exps), err)
				}
				ers, err := dst.ExperimentRuns(ctx, exps[0].ID)
				if err != nil || len(ers) != 1 || ers[0].RunID != runs[0].ID || !ers[0].Current {
					t.Fatalf("experiment runs %+v (%v)", ers, err)
				}
				hooks, _ := dst.ExperimentHooks(ctx, exps[0].ID)
				if len(hooks) != 3 || hooks[0].Output != "hi\n" || hooks[0].At != nil || hooks[1].At == nil || *hooks[1].At != 1500*time.Millisecond ||
					hooks[2].Elapsed != 500*time.Millisecond || exps[0].Status != "complete" || exps[0].Complete != 1 {
					t.Errorf("experiment %+v hooks %+v", exps[0], hooks)
				}
			})
		}
	}
}

// --anonymize keeps the figures and the shape, and --drop-label drops the labels named.
func TestCopyAnonymized(t *testing.T) {
	forEach(t, func(t *testing.T, f factory) {
		ctx := context.Background()
		srcPath, dstPath := f.fresh(t), f.fresh(t)
		src := f.open(t, srcPath)
		defer src.Close() // its second run stays running, so is not copied
		fill(t, src)
		if err := storecopy.Between(ctx, srcPath, dstPath, nil, storecopy.Options{Anonymize: true, DropLabels: []string{"variant"}}, io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
		dst := f.open(t, dstPath)
		defer dst.Close()
		runs, _ := dst.Runs(ctx, store.RunFilter{})
		if len(runs) != 1 {
			t.Fatalf("%d runs", len(runs))
		}
		r := runs[0]
		if !strings.HasPrefix(r.Host.Hostname, "host-") || !strings.HasPrefix(r.Target, "postgres://user-") || r.Command != "fathom run -c 2" ||
			r.Labels["variant"] != "" || r.Labels["rep"] != "1" || r.TargetKind != "postgres" {
			t.Errorf("anonymized run: %+v", r)
		}
		if ss, _ := dst.SampleSource(ctx, r.ID); ss == nil || !strings.HasPrefix(ss.Server.DataDir, "path-") {
			t.Errorf("sample source %+v", ss)
		}
		exps, _ := dst.Experiments(ctx, 0)
		hooks, _ := dst.ExperimentHooks(ctx, exps[0].ID)
		if e := exps[0]; !strings.HasPrefix(e.Host, "host-") || !strings.HasPrefix(e.Target, "postgres://user-") || !strings.HasPrefix(e.Plan, "target: postgres://user-") ||
			e.PlanPath != "p.yaml" || hooks[0].Command != "echo hi" || hooks[0].Output != "hi\n" || hooks[1].Command != "BGSAVE" ||
			hooks[1].At == nil || !strings.HasPrefix(hooks[2].Server, "redis://") || strings.Contains(hooks[2].Server, "h:1") || !strings.Contains(hooks[2].Output, `"seconds":0.5`) {
			t.Errorf("anonymized experiment %+v, hooks %+v", e, hooks)
		}
	})
}
