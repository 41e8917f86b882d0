package storetest_test

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/fathom-lab/fathom/internal/sample"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/stores"
	"github.com/fathom-lab/fathom/internal/store/storetest"
	"github.com/fathom-lab/fathom/internal/target"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestRoundTrip(t *testing.T) {
	forEach(t, func(t *testing.T, f factory) {
		ctx := context.Background()
		s := f.open(t, f.fresh(t))
		defer s.Close()
		r := storetest.Run()
		id, err := s.CreateRun(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3; i++ {
			if err := s.AddInterval(ctx, id, storetest.Interval(i, 100*(i+1))); err != nil {
				t.Fatal(err)
			}
		}
		sum := json.RawMessage(`{"tps":1}`)
		end := time.Unix(1700000011, 0).UTC()
		if err := s.FinishRun(ctx, id, "complete", "", end, sum); err != nil {
			t.Fatal(err)
		}
		got, err := s.Run(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if got.UUID == "" || got.Seed != r.Seed || got.Options["scale"] != "3" || got.Settings["shared_buffers"] != "128MB" ||
			got.Host != r.Host || got.Labels["variant"] != "on" || len(got.Labels) != 2 || !got.StartedAt.Equal(r.StartedAt) ||
			!got.EndedAt.Equal(end) || got.Status != "complete" || string(got.Summary) != `{"tps":1}` || got.Interval != time.Second ||
			strings.Join(got.TxnTypes, ",") != "a,b" {
			t.Fatalf("round trip differs:\n got %+v\nwant %+v", got, r)
		}
		ivs, err := s.Intervals(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(ivs) != 3 {
			t.Fatalf("%d intervals", len(ivs))
		}
		for i, iv := range ivs {
			want := storetest.Interval(i, 100*(i+1))
			a, w := iv.Types[0], want.Types[0]
			if a.OK != w.OK || a.Latency.ValueAtQuantile(99) != w.Latency.ValueAtQuantile(99) || a.Service.TotalCount() != w.Service.TotalCount() {
				t.Fatalf("interval %d type a differs: ok %d/%d", i, a.OK, w.OK)
			}
			b := iv.Types[1]
			if b.Failed != 1 || b.Errors[target.ClassSerialization] != 2 || b.Retries != 1 || b.FailedLatency.TotalCount() != 1 {
				t.Fatalf("interval %d type b: %+v", i, b.Counts)
			}
			if iv.Warmup != (i == 0) || iv.Reconnects != 1 || iv.End-iv.Start != time.Second {
				t.Fatalf("interval %d header: %+v", i, iv)
			}
		}
		// A reader following a run in progress reads only what it has not seen (promexp).
		if ia, ok := s.(interface {
			EncodedIntervalsAfter(context.Context, *store.Run, int) ([]store.EncodedInterval, error)
		}); !ok {
			t.Errorf("%s store has no EncodedIntervalsAfter", f.name)
		} else {
			all, err := s.EncodedIntervals(ctx, got)
			if err != nil {
				t.Fatal(err)
			}
			tail, err := ia.EncodedIntervalsAfter(ctx, got, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(all) != 3 || len(tail) != 2 || tail[0].Index != 1 || tail[1].Index != 2 ||
				len(tail[1].Types) != 2 || string(tail[1].Types[0].Latency) != string(all[2].Types[0].Latency) {
				t.Errorf("EncodedIntervalsAfter(0): %d of %d intervals", len(tail), len(all))
			}
		}
		if _, err := s.Run(ctx, 999); !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "run 999") {
			t.Fatalf("missing run: %v", err)
		}
		if latest, err := s.LatestRunID(ctx); err != nil || latest != id {
			t.Fatalf("latest = %d, %v", latest, err)
		}
	})
}

func TestFiltersAndReopen(t *testing.T) {
	forEach(t, func(t *testing.T, f factory) {
		ctx := context.Background()
		path := f.fresh(t)
		s := f.open(t, path)
		if _, err := s.LatestRunID(ctx); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("empty store: %v", err)
		}
		for i := 0; i < 5; i++ {
			r := storetest.Run()
			r.Labels = map[string]string{"variant": []string{"on", "off"}[i%2]}
			if i == 4 {
				r.Workload = "oltp_read_write"
			}
			if _, err := s.CreateRun(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		// A second handle (migrations are idempotent) reads what the first wrote; the
		// first stays open, as its runs are still running.
		defer s.Close()
		s = f.open(t, path)
		defer s.Close()
		check := func(f store.RunFilter, want ...int64) {
			t.Helper()
			rs, err := s.Runs(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			var ids []int64
			for _, r := range rs {
				ids = append(ids, r.ID)
			}
			if len(ids) != len(want) {
				t.Fatalf("filter %+v: ids %v, want %v", f, ids, want)
			}
			for i := range ids {
				if ids[i] != want[i] {
					t.Fatalf("filter %+v: ids %v, want %v", f, ids, want)
				}
			}
		}
		check(store.RunFilter{}, 5, 4, 3, 2, 1)
		check(store.RunFilter{Limit: 2}, 5, 4)
		check(store.RunFilter{Labels: map[string]string{"variant": "on"}}, 5, 3, 1)
		check(store.RunFilter{Workload: "oltp_read_write"}, 5)
		check(store.RunFilter{Status: "running", Labels: map[string]string{"variant": "off"}}, 4, 2)
	})
}

// Two handles on one file (as two fathom processes) write concurrently without
// "database is locked".
func TestConcurrentWriters(t *testing.T) {
	forEach(t, func(t *testing.T, f factory) {
		ctx := context.Background()
		path := f.fresh(t)
		var wg sync.WaitGroup
		errs := make(chan error, 2)
		for w := 0; w < 2; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, err := stores.Open(path)
				if err != nil {
					errs <- err
					return
				}
				defer s.Close()
				id, err := s.CreateRun(ctx, storetest.Run())
				if err != nil {
					errs <- err
					return
				}
				for i := 0; i < 50; i++ {
					if err := s.AddInterval(ctx, id, storetest.Interval(i, 10)); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	})
}

// A process killed with SIGKILL keeps every interval whose AddInterval returned.
func TestKilledWriterLosesNothingCommitted(t *testing.T) {
	forEach(t, func(t *testing.T, f factory) {
		if p := os.Getenv("FATHOM_STORE_CHILD"); p != "" {
			ctx := context.Background()
			s, err := stores.Open(p)
			if err != nil {
				os.Exit(3)
			}
			id, _ := s.CreateRun(ctx, storetest.Run())
			for i := 0; i < 3; i++ {
				if err := s.AddInterval(ctx, id, storetest.Interval(i, 50)); err != nil {
					os.Exit(4)
				}
			}
			os.Stdout.WriteString("ready\n")
			time.Sleep(time.Minute)
			os.Exit(0)
		}
		path := f.fresh(t)
		cmd := exec.Command(os.Args[0], "-test.run=^TestKilledWriterLosesNothingCommitted$")
		cmd.Env = append(os.Environ(), "FATHOM_STORE_CHILD="+path)
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 64)
		n, _ := out.Read(buf)
		if !strings.Contains(string(buf[:n]), "ready") {
			cmd.Process.Kill()
			t.Fatalf("child did not get ready: %q", buf[:n])
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		s := f.open(t, path)
		defer s.Close()
		// The server notices a killed client's session end on its own time: wait for it.
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if r, err := s.Run(context.Background(), 1); err == nil && r.Gone {
				break
			}
		}
		ivs, err := s.Intervals(context.Background(), 1)
		if err != nil {
			t.Fatal(err)
		}
		run, _ := s.Run(context.Background(), 1)
		// The writer is gone: the run reads as interrupted (process gone), in store.Run and in
		// the status filters of Runs, and its intervals stay.
		if len(ivs) != 3 || ivs[2].Types[0].Latency.TotalCount() != 50 || run.Status != "interrupted" || run.Reason != store.ProcessGone || !run.Gone {
			t.Fatalf("after SIGKILL: %d intervals, status %s (%s)", len(ivs), run.Status, run.Reason)
		}
		for status, want := range map[string]int{"running": 0, "interrupted": 1} {
			runs, err := s.Runs(context.Background(), store.RunFilter{Status: status})
			if err != nil || len(runs) != want {
				t.Errorf("Runs(status %s) = %d runs, %v; want %d", status, len(runs), err, want)
			}
		}
		// A run of this process that is still open is not gone.
		id, err := s.CreateRun(context.Background(), storetest.Run())
		if err != nil {
			t.Fatal(err)
		}
		if r, _ := s.Run(context.Background(), id); r.Status != "running" || r.Gone {
			t.Errorf("this process's own run reads %s (%s)", r.Status, r.Reason)
		}
	})
}

func TestSamplesRoundTrip(t *testing.T) {
	forEach(t, func(t *testing.T, f factory) {
		ctx := context.Background()
		s := f.open(t, f.fresh(t))
		defer s.Close()
		id, err := s.CreateRun(ctx, storetest.Run())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.SampleSource(ctx, id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("unsampled run: %v", err)
		}
		origin := time.Now()
		srv := &sample.Server{Kind: "postgres", Local: true, Devices: []string{"vda"}, Settings: map[string]string{"max_wal_size": "1GB"}}
		w, err := s.SampleWriter(ctx, id, origin.Add(-time.Hour), srv, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		w.SetOrigin(origin)
		for i := -1; i < 3; i++ {
			if err := w.Add(ctx, storetest.Sample(i, origin.Add(time.Duration(i+1)*time.Second), float64(1000+100*(i+1)), i == 2)); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Skipped(ctx, 2); err != nil {
			t.Fatal(err)
		}
		// A writer opened again (a resumed run) continues the metric numbering.
		w2, err := s.SampleWriter(ctx, id, origin, srv, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		extra := storetest.Sample(3, origin.Add(4*time.Second), 2000, false)
		extra.Readings = append(extra.Readings, sample.Reading{Name: "os.mem.writeback_bytes", Collector: "os_meminfo", Kind: sample.Gauge, Unit: "bytes", Value: 7})
		if err := w2.Add(ctx, extra); err != nil {
			t.Fatal(err)
		}

		src, err := s.SampleSource(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if !src.Server.Local || src.Server.Devices[0] != "vda" || src.Interval != time.Second || src.Skipped != 2 || src.Server.Settings["max_wal_size"] != "1GB" {
			t.Errorf("source %+v", src)
		}
		ms, err := s.Metrics(ctx, id)
		if err != nil || len(ms) != 3 {
			t.Fatalf("metrics %+v %v", ms, err)
		}
		all, err := s.MetricSeries(ctx, id)
		if err != nil || len(all) != 3 {
			t.Fatalf("series %d %v", len(all), err)
		}
		sel, err := s.MetricSeries(ctx, id, "pg.xact_commit")
		if err != nil || len(sel) != 1 {
			t.Fatalf("one series: %+v %v", sel, err)
		}
		c := sel[0]
		if !c.IsCounter() || c.Unit != "transactions" || len(c.Points) != 5 {
			t.Fatalf("counter series %+v", c)
		}
		if p := c.Points[0]; p.Interval != -1 || p.HasRate || p.At != time.Millisecond {
			t.Errorf("baseline point %+v (at is relative to the origin: -1s+1s+1ms)", p)
		}
		if y, ok := c.Y(1); !ok || y != 100 || c.Points[1].At != time.Second+time.Millisecond {
			t.Errorf("point 1: %v %v %+v", y, ok, c.Points[1])
		}
		if _, ok := c.Y(3); ok || !c.Points[3].Reset {
			t.Errorf("reset point %+v", c.Points[3])
		}
		if by := c.ByInterval(); len(by) != 3 || by[0] != 100 {
			t.Errorf("by interval %v", by)
		}
		os, err := s.MetricSeries(ctx, id, "os.mem.*")
		if err != nil || len(os) != 2 || os[0].Name != "os.mem.dirty_bytes" || os[1].Name != "os.mem.writeback_bytes" {
			t.Fatalf("prefix: %+v %v", os, err)
		}
		if y, ok := os[0].Y(2); !ok || y != 3000 {
			t.Errorf("gauge value %v %v", y, ok)
		}
		crs, err := s.Collectors(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]store.CollectorRun{}
		for _, cr := range crs {
			byName[cr.Collector] = cr
		}
		if cr := byName["pg_locks"]; cr.Timeouts != 5 || cr.OK != 0 || cr.LastError != "no answer within 2s" {
			t.Errorf("pg_locks %+v", cr)
		}
		if cr := byName["pg_stat_database"]; cr.OK != 5 || cr.Resets != 1 || cr.MeanTook != 2*time.Millisecond {
			t.Errorf("pg_stat_database %+v", cr)
		}
		if crs[len(crs)-1].Source != "os" {
			t.Errorf("os collectors come last: %+v", crs)
		}
		if ok, _ := s.HasSamples(ctx, id); !ok {
			t.Error("HasSamples")
		}
	})
}

func TestStallsRoundTrip(t *testing.T) {
	forEach(t, func(t *testing.T, f factory) {
		ctx := context.Background()
		s := f.open(t, f.fresh(t))
		defer s.Close()
		id, _ := s.CreateRun(ctx, storetest.Run())
		if st, _, analyzed, err := s.Stalls(ctx, id); err != nil || analyzed || st != nil {
			t.Errorf("before analysis: %v %v %v", st, analyzed, err)
		}
		in := []store.Stall{{Number: 1, FirstInterval: 3, LastInterval: 4, Start: 3 * time.Second, End: 5 * time.Second, Throughput: "tps",
			Baseline: 1000, Mean: 200, Depth: 0.8, Cause: "checkpoint", Title: "PostgreSQL checkpoint",
			Settings: []store.StallSetting{{Name: "max_wal_size", Value: "32MB"}},
			Causes:   []store.StallCause{{Key: "checkpoint", Score: 3, Metrics: []string{"pg.checkpoints_req"}}},
			Evidence: []store.StallEvidence{{Metric: "pg.buffers_checkpoint", Kind: "counter", Baseline: 10, During: 5000, Score: 99}}}}
		if err := s.SaveStalls(ctx, id, map[string]float64{"threshold": 0.5}, in); err != nil {
			t.Fatal(err)
		}
		got, params, analyzed, err := s.Stalls(ctx, id)
		if err != nil || !analyzed || len(got) != 1 {
			t.Fatalf("%+v %v %v", got, analyzed, err)
		}
		a, _ := json.Marshal(in[0])
		b, _ := json.Marshal(got[0])
		if string(a) != string(b) {
			t.Errorf("stall changed:\n%s\n%s", a, b)
		}
		if string(params) != `{"threshold":0.5}` {
			t.Errorf("params %s", params)
		}
		// Re-analysis replaces; no stalls is a result too.
		if err := s.SaveStalls(ctx, id, map[string]float64{"threshold": 0.3}, nil); err != nil {
			t.Fatal(err)
		}
		if got, _, analyzed, _ := s.Stalls(ctx, id); len(got) != 0 || !analyzed {
			t.Errorf("after re-analysis: %+v %v", got, analyzed)
		}
	})
}

func TestExperimentLifecycle(t *testing.T) {
	forEach(t, func(t *testing.T, f factory) {
		ctx := context.Background()
		st := f.open(t, f.fresh(t))
		defer st.Close()
		now := time.Unix(1700000000, 0)
		e := &store.Experiment{Name: "sweep", PlanPath: "p.yaml", PlanDir: "/plans", Plan: "experiment: sweep\n", Repetitions: 2, Order: "interleaved",
			Target: "instance postgres 15", ToolVersion: "test", Host: "h", PID: 42, CreatedAt: now,
			Axes: []store.ExperimentAxis{{Name: "clients", Values: []string{"1", "2"}}}}
		cells := []store.ExperimentCell{
			{Cell: 0, Key: "clients=1", Coords: []store.Coord{{Axis: "clients", Value: "1"}}, Params: json.RawMessage(`{"clients":1}`)},
			{Cell: 1, Key: "clients=2", Coords: []store.Coord{{Axis: "clients", Value: "2"}}},
		}
		slots := []store.ExperimentSlot{{Seq: 0, Cell: 0, Repetition: 1}, {Seq: 1, Cell: 1, Repetition: 1}, {Seq: 2, Cell: 0, Repetition: 2}, {Seq: 3, Cell: 1, Repetition: 2}}
		id, err := st.CreateExperiment(ctx, e, cells, slots)
		if err != nil {
			t.Fatal(err)
		}
		newRun := func() int64 {
			r := &store.Run{Workload: "tpcb", TargetKind: "sqlite", Target: "sqlite:x", Clients: 1, Interval: time.Second, StartedAt: now}
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
		if err := st.AddHook(ctx, id, store.ExperimentHook{Seq: 1, Attempt: 2, Phase: "before_run", Index: 1, Kind: "sql", Command: "VACUUM", OK: true, Started: now}); err != nil {
			t.Fatal(err)
		}
		st.AddHook(ctx, id, store.ExperimentHook{Seq: -1, Phase: "before_experiment", Index: 1, Kind: "shell", Command: "false", ExitCode: 1, Output: "x", Started: now})
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
		if _, err := st.ExperimentByName(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("missing name: %v", err)
		}
		if _, err := st.Experiment(ctx, 99); !errors.Is(err, store.ErrNotFound) {
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
	})
}
