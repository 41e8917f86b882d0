package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/fathom-lab/fathom/internal/sample"
	"math"
	"math/rand/v2"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/stores"
)

// fixture describes a synthetic run, deterministic for its index.
type fixture struct {
	workload, kind string
	labels         map[string]string
	clients        int
	intervals      int
	tps            float64 // transactions per interval (1 s)
	latencyMs      float64
	dip            [2]int // intervals [a, b) at a third of the rate, stored as a stall
	metrics        int    // server and OS metrics sampled every interval (0: none)
	running        bool   // leave it running (written by this process)
	wobble         bool   // vary the transactions per interval (so merged points differ from intervals)
	slowTail       bool   // one transaction of 3 s in interval 0 (a distribution worth a log axis)
}

var epoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func openStore(t testing.TB) store.Store {
	t.Helper()
	st, err := stores.Open(filepath.Join(t.TempDir(), "fathom.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func (f *fixture) defaults() {
	if f.workload == "" {
		f.workload = "tpcb"
	}
	if f.kind == "" {
		f.kind = "postgres"
	}
	if f.clients == 0 {
		f.clients = 4
	}
	if f.tps == 0 {
		f.tps = 200
	}
	if f.latencyMs == 0 {
		f.latencyMs = 2
	}
}

// createRun stores the run's record; intervals are added with addInterval.
func createRun(t testing.TB, st store.Store, i int, f *fixture) int64 {
	t.Helper()
	f.defaults()
	r := &store.Run{UUID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i+1), ToolVersion: "test", Command: "fathom run (fixture)",
		Workload: f.workload, Options: map[string]string{"scale": "10"}, Seed: uint64(i), TargetKind: f.kind,
		Target: "postgres://bench@db1/bench", ServerVersion: "16.4", Settings: map[string]string{"shared_buffers": "128MB"},
		Host: store.Host{Hostname: "bench1", OS: "linux/amd64", CPUs: 8, GoVersion: "go1.26"}, Labels: f.labels,
		Clients: f.clients, Duration: time.Duration(f.intervals) * time.Second, Interval: time.Second, TxnTypes: []string{"tpcb"},
		StartedAt: epoch.Add(time.Duration(i) * time.Minute)}
	id, err := st.CreateRun(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func addInterval(t testing.TB, st store.Store, id int64, k int, f *fixture, rng *rand.Rand) {
	t.Helper()
	rec := measure.NewRecorder(1)
	n, lat := int(f.tps), f.latencyMs
	if f.wobble {
		n += (k * 7919) % 13
	}
	if k >= f.dip[0] && k < f.dip[1] {
		n, lat = n/3, lat*3
	}
	for j := 0; j < n; j++ {
		rec.Success(0, int64((lat*0.5+rng.ExpFloat64()*lat*0.5)*float64(time.Millisecond)), 0)
		rec.Counts[0].Statements += 5
	}
	if f.slowTail && k == 0 {
		rec.Success(0, int64(3*time.Second), 0)
	}
	iv := measure.NewInterval(k, []string{"tpcb"})
	iv.Start, iv.End = time.Duration(k)*time.Second, time.Duration(k+1)*time.Second
	iv.AddRecorder(rec)
	if err := st.AddInterval(context.Background(), id, iv); err != nil {
		t.Fatal(err)
	}
}

// writeRun stores a whole run: intervals, samples and stall, finished unless running.
func writeRun(t testing.TB, st store.Store, i int, f fixture) int64 {
	t.Helper()
	ctx := context.Background()
	id := createRun(t, st, i, &f)
	rng := rand.New(rand.NewPCG(uint64(i), 7))
	for k := 0; k < f.intervals; k++ {
		addInterval(t, st, id, k, &f, rng)
	}
	if f.metrics > 0 {
		writeSamples(t, st, id, &f)
	}
	if f.running {
		return id
	}
	ivs, err := st.Intervals(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	sum, _ := json.Marshal(measure.Summarize([]string{"tpcb"}, ivs))
	start := epoch.Add(time.Duration(i) * time.Minute)
	if err := st.FinishRun(ctx, id, "complete", "", start.Add(time.Duration(f.intervals)*time.Second), sum); err != nil {
		t.Fatal(err)
	}
	return id
}

// writeSamples writes f.metrics metrics every interval (half counters, half gauges;
// the first follows throughput) and the stall over f.dip.
func writeSamples(t testing.TB, st store.Store, id int64, f *fixture) {
	t.Helper()
	ctx := context.Background()
	start := epoch
	srv := &sample.Server{Kind: "postgres", Flavor: "postgresql", Version: sample.Version{Major: 16, Minor: 4}, Local: true}
	w, err := st.SampleWriter(ctx, id, start, srv, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	totals := make([]float64, f.metrics)
	for k := -1; k < f.intervals; k++ {
		dip := k >= f.dip[0] && k < f.dip[1]
		at := start.Add(time.Duration(k+1)*time.Second - 20*time.Millisecond)
		smp := &sample.Sample{Index: k, At: at}
		cols := map[string]bool{}
		for m := 0; m < f.metrics; m++ {
			col := fmt.Sprintf("pg_stat_fixture_%d", m/8)
			if !cols[col] {
				cols[col] = true
				smp.Results = append(smp.Results, sample.Result{Collector: col, Source: "postgres", Status: sample.StatusOK, At: at, Took: time.Millisecond})
			}
			v := 50 + 40*math.Sin(float64(k+m)/7)
			if m == 0 {
				v = f.tps
				if dip {
					v = f.tps / 3
				}
			}
			r := sample.Reading{Name: fmt.Sprintf("pg.fixture_%02d", m), Collector: col, Unit: "blocks", At: at}
			if m%2 == 0 {
				r.Kind = sample.Counter
				if k >= 0 {
					r.Rate, r.HasRate = v, true
					totals[m] += v
				}
				r.Value = totals[m]
			} else {
				r.Value = v
			}
			smp.Readings = append(smp.Readings, r)
		}
		if err := w.Add(ctx, smp); err != nil {
			t.Fatal(err)
		}
	}
	var stalls []store.Stall
	if f.dip[1] > f.dip[0] {
		stalls = append(stalls, store.Stall{Number: 1, FirstInterval: f.dip[0], LastInterval: f.dip[1] - 1,
			Start: time.Duration(f.dip[0]) * time.Second, End: time.Duration(f.dip[1]) * time.Second, Throughput: "tps",
			Baseline: f.tps, Mean: f.tps / 3, Min: f.tps / 3, Depth: 0.667, Lost: f.tps * 2 / 3 * float64(f.dip[1]-f.dip[0]),
			Cause: "checkpoint", Title: "PostgreSQL checkpoint", Explanation: "A checkpoint wrote many buffers while throughput fell.",
			Evidence: []store.StallEvidence{{Metric: "pg.fixture_00", Kind: "counter", Unit: "blocks", Baseline: f.tps, During: f.tps / 3, Score: -5}}})
	}
	if err := st.SaveStalls(ctx, id, map[string]float64{"threshold": 0.5}, stalls); err != nil {
		t.Fatal(err)
	}
}

// writeExperiment stores an experiment over clients (1, 2, 4, 8), reps repetitions.
func writeExperiment(t testing.TB, st store.Store, first, reps int) int64 {
	t.Helper()
	ctx := context.Background()
	vals := []string{"1", "2", "4", "8"}
	e := &store.Experiment{Name: "sweep", PlanPath: "sweep.yaml", PlanDir: "/plans", Plan: "experiment: sweep\n", Repetitions: reps,
		Order: "interleaved", Target: "postgres://bench@db1/bench", ToolVersion: "test", Host: "bench1", CreatedAt: epoch,
		Axes: []store.ExperimentAxis{{Name: "clients", Values: vals}}}
	var cells []store.ExperimentCell
	var slots []store.ExperimentSlot
	for c, v := range vals {
		cells = append(cells, store.ExperimentCell{Cell: c, Key: "clients=" + v, Coords: []store.Coord{{Axis: "clients", Value: v}},
			Params: json.RawMessage(`{}`)})
	}
	for r := 0; r < reps; r++ {
		for c := range vals {
			slots = append(slots, store.ExperimentSlot{Seq: len(slots), Cell: c, Repetition: r + 1})
		}
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
		clients := 1 << s.Cell
		rid := writeRun(t, st, first+s.Seq, fixture{clients: clients, intervals: 20, tps: 100 * math.Sqrt(float64(clients)) * (1 + 0.05*float64(s.Repetition)),
			latencyMs: 1 + float64(clients)/2, labels: map[string]string{"clients": vals[s.Cell], "rep": fmt.Sprint(s.Repetition)}})
		if err := st.LinkRun(ctx, id, s.Seq, a, 0, rid); err != nil {
			t.Fatal(err)
		}
		if err := st.FinishSlot(ctx, id, s.Seq, "complete", "", epoch); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.FinishExperiment(ctx, id, "complete", "", epoch.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	return id
}

// newTestServer serves st on a loopback port for the test.
func newTestServer(t testing.TB, st store.Store, token string) (*server, *httptest.Server) {
	t.Helper()
	s, err := New(Options{Store: st, Token: token, Poll: 50 * time.Millisecond, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(func() { s.Close(); hs.Close() })
	return s, hs
}
