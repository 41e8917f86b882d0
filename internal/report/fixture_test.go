package report

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/db"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/sample"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/stores"
	"github.com/fathom-lab/fathom/internal/target"
)

// fixtureRun describes a synthetic run: deterministic for a given seed.
type fixtureRun struct {
	labels    map[string]string
	clients   int
	types     []string
	intervals int
	warmup    int     // leading warm-up intervals
	tps       float64 // per second, all types
	latencyMs float64 // typical latency
	errEvery  int     // one serialization error every n transactions (0: none)
	failEvery int     // besides, one failed transaction every n (0: none)
	settings  map[string]string
	seed      uint64
	dip       [2]int // intervals [a, b) run at a third of the rate, like a flush stall
	service   bool   // open loop: record a service time too (80% of the response time)
	// samples: server and OS samples every interval, a counter reset at interval 5,
	// and a stored stall over dip attributed to a checkpoint.
	samples bool
	// seen: the run's first errors as stored; the first one is given the run's
	// serialization errors as its counts (measured and warm-up).
	seen []measure.SeenError
	// typeLatMs and typeWeight, when set, give each type its own typical latency and
	// share of the transactions (weights: of every sum(typeWeight) transactions, type
	// i does typeWeight[i]).
	typeLatMs  []float64
	typeWeight []int
	// serverTPM, when set, is stored in the run's summary as the server's TPM and
	// its source (tpcc's server-side count).
	serverTPM float64
	warnings  []string // stored with the run, as a run's start does
}

var epoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// newFixtureStore writes runs into a fresh store, each started one hour after the
// previous one, and returns it with the runs' ids.
func newFixtureStore(t testing.TB, runs []fixtureRun) (store.Store, []int64) {
	t.Helper()
	st, err := stores.Open(filepath.Join(t.TempDir(), "fathom.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var ids []int64
	for i, f := range runs {
		ids = append(ids, writeFixtureRun(t, st, i, f))
	}
	return st, ids
}

func writeFixtureRun(t testing.TB, st store.Store, i int, f fixtureRun) int64 {
	t.Helper()
	ctx := context.Background()
	if f.types == nil {
		f.types = []string{"tpcb"}
	}
	settings := map[string]string{"synchronous_commit": "on", "shared_buffers": "128MB"}
	for k, v := range f.settings {
		settings[k] = v
	}
	start := epoch.Add(time.Duration(i) * time.Hour)
	r := &store.Run{
		UUID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i+1), ToolVersion: "v0.4.0-test",
		Command:  fmt.Sprintf("fathom run -c %d -T %d --target postgres://bench:xxxxx@db1/bench", f.clients, f.intervals),
		Workload: "tpcb", Options: map[string]string{"scale": "10", "query_mode": "prepared"}, Seed: 42 + uint64(i),
		TargetKind: "postgres", Target: "postgres://bench:xxxxx@db1/bench", ServerVersion: "16.4",
		Settings: settings,
		Host: store.Host{Hostname: "bench1", OS: "linux/amd64", Kernel: "6.1.0", CPUModel: "Test CPU", CPUs: 8,
			MemoryBytes: 32 << 30, GoVersion: "go1.26"},
		Labels: f.labels, Clients: f.clients, Duration: time.Duration(f.intervals-f.warmup) * time.Second,
		Warmup: time.Duration(f.warmup) * time.Second, Interval: time.Second, TxnTypes: f.types, StartedAt: start,
		Warnings: f.warnings,
	}
	id, err := st.CreateRun(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(f.seed, uint64(i)))
	tot := measure.NewTotals(f.types)
	var warmErrs int64
	for k := 0; k < f.intervals; k++ {
		rec := measure.NewRecorder(len(f.types))
		n := int(f.tps)
		lat := f.latencyMs
		if k >= f.dip[0] && k < f.dip[1] {
			n /= 3
			lat *= 3
		}
		for j := 0; j < n; j++ {
			typ := j % len(f.types)
			if f.typeWeight != nil {
				sum := 0
				for _, w := range f.typeWeight {
					sum += w
				}
				k := j % sum
				for typ = 0; k >= f.typeWeight[typ]; typ++ {
					k -= f.typeWeight[typ]
				}
			}
			lat := lat
			if f.typeLatMs != nil {
				lat *= f.typeLatMs[typ] / f.latencyMs
			}
			v := int64((lat*0.5 + rng.ExpFloat64()*lat*0.5) * float64(time.Millisecond))
			var svc int64
			if f.service {
				svc = v * 4 / 5
			}
			rec.Success(typ, v, svc)
			if f.failEvery > 0 && j%f.failEvery == 0 {
				rec.Failure(typ, v)
			}
			rec.Counts[typ].Statements += 5
			if f.errEvery > 0 && j%f.errEvery == 0 {
				rec.Counts[typ].Errors[target.ClassSerialization]++
				rec.Counts[typ].Retries++
			}
		}
		if k == f.intervals/2 && f.errEvery > 0 {
			rec.Reconnects = 1
		}
		iv := measure.NewInterval(k, f.types)
		iv.Start, iv.End = time.Duration(k)*time.Second, time.Duration(k+1)*time.Second
		iv.Warmup = k < f.warmup
		iv.AddRecorder(rec)
		if iv.Warmup {
			t := iv.Total()
			warmErrs += t.ErrorTotal()
		}
		if err := st.AddInterval(ctx, id, iv); err != nil {
			t.Fatal(err)
		}
		tot.Add(iv)
	}
	if f.samples {
		writeFixtureSamples(t, st, id, start, f)
	}
	sum := tot.Summary()
	if len(f.seen) > 0 {
		seen := append([]measure.SeenError(nil), f.seen...)
		seen[0].Count, seen[0].Warmup = sum.Errors, warmErrs
		if err := st.SaveRunErrors(ctx, id, seen); err != nil {
			t.Fatal(err)
		}
	}
	var js []byte
	if f.serverTPM > 0 {
		sum.ServerTPM, sum.ServerTPMSource = f.serverTPM, "test counter"
		js, _ = json.Marshal(sum)
	}
	if err := st.FinishRun(ctx, id, "complete", "", start.Add(time.Duration(f.intervals)*time.Second), js); err != nil {
		t.Fatal(err)
	}
	_ = sum
	return id
}

// loadFixture reads runs back as a report would.
func loadFixture(t testing.TB, st store.Store, ids []int64) []*RunData {
	t.Helper()
	var runs []*store.Run
	for _, id := range ids {
		r, err := st.Run(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	data, err := LoadRuns(context.Background(), st, runs, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := LoadSamples(context.Background(), st, db.Figures(), data, true); err != nil {
		t.Fatal(err)
	}
	return data
}

// writeFixtureSamples writes what a sampler would have for a PostgreSQL run on this
// host: commits following throughput, checkpoint writes and dirty memory rising in
// the dip, a flat lock-wait gauge, a counter reset (pg_stat_reset) at interval 5, an
// evidence metric outside the default charts, and the stall analysis found.
func writeFixtureSamples(t testing.TB, st store.Store, id int64, start time.Time, f fixtureRun) {
	t.Helper()
	ctx := context.Background()
	srv := &sample.Server{Kind: "postgres", Flavor: "postgresql", Version: sample.Version{Major: 16, Minor: 4}, Local: true,
		Devices: []string{"nvme0n1"}, DiskScope: "data directory"}
	w, err := st.SampleWriter(ctx, id, start, srv, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	type fixtureMetric struct {
		name, collector, unit string
		counter               bool
		v                     func(k int, dip bool) float64 // the rate of a counter, the value of a gauge
	}
	pick := func(dip bool, a, b float64) float64 {
		if dip {
			return b
		}
		return a
	}
	ms := []fixtureMetric{
		{"pg.xact_commit", "pg_stat_database", "transactions", true, func(k int, dip bool) float64 { return pick(dip, f.tps, f.tps/3) }},
		{"pg.blks_read", "pg_stat_database", "blocks", true, func(k int, dip bool) float64 { return float64(40 + k%3) }},
		{"pg.buffers_checkpoint", "pg_stat_bgwriter", "buffers", true, func(k int, dip bool) float64 { return pick(dip, 10, 2400) }},
		{"pg.checkpoint_write_time", "pg_stat_bgwriter", "ms", true, func(k int, dip bool) float64 { return pick(dip, 0, 650) }},
		{"pg.sessions.active", "pg_stat_activity", "sessions", false, func(k int, dip bool) float64 { return float64(f.clients) }},
		{"pg.lock_waits", "pg_locks", "locks", false, func(k int, dip bool) float64 { return 0 }},
		{"os.mem.dirty_bytes", "os_meminfo", "bytes", false, func(k int, dip bool) float64 { return pick(dip, 8<<20, 310<<20) }},
		{"os.cpu.user_pct", "os_cpu", "%", true, func(k int, dip bool) float64 { return pick(dip, 42, 18) }},
	}
	totals := make([]float64, len(ms))
	for k := -1; k < f.intervals; k++ {
		dip := k >= f.dip[0] && k < f.dip[1]
		smp := &sample.Sample{Index: k, At: start.Add(time.Duration(k+1) * time.Second)}
		cols := map[string]bool{}
		for i, m := range ms {
			at := start.Add(time.Duration(k+1)*time.Second - 20*time.Millisecond)
			if !cols[m.collector] {
				cols[m.collector] = true
				src := "postgres"
				if strings.HasPrefix(m.collector, "os_") {
					src = "os"
				}
				smp.Results = append(smp.Results, sample.Result{Collector: m.collector, Source: src, Status: sample.StatusOK, At: at,
					Took: 3 * time.Millisecond, Reset: k == 5 && m.collector == "pg_stat_database"})
			}
			r := sample.Reading{Name: m.name, Collector: m.collector, Unit: m.unit, At: at}
			if m.counter {
				r.Kind = sample.Counter
				if k == 5 && m.collector == "pg_stat_database" {
					totals[i] = 0 // pg_stat_reset(): no rate for this reading
					r.Reset = true
				} else if k >= 0 {
					r.Rate, r.HasRate = m.v(k, dip), true
					totals[i] += r.Rate
				}
				r.Value = totals[i]
			} else {
				r.Value = m.v(k, dip)
			}
			smp.Readings = append(smp.Readings, r)
		}
		if err := w.Add(ctx, smp); err != nil {
			t.Fatal(err)
		}
	}
	if f.dip[1] <= f.dip[0] {
		if err := st.SaveStalls(ctx, id, map[string]float64{"threshold": 0.5}, nil); err != nil {
			t.Fatal(err)
		}
		return
	}
	stall := store.Stall{Number: 1, FirstInterval: f.dip[0], LastInterval: f.dip[1] - 1,
		Start: time.Duration(f.dip[0]) * time.Second, End: time.Duration(f.dip[1]) * time.Second, Throughput: "tps",
		Baseline: f.tps, Mean: float64(int(f.tps) / 3), Min: float64(int(f.tps) / 3), Depth: 0.667, Lost: f.tps * 2 / 3 * float64(f.dip[1]-f.dip[0]),
		Cause: "checkpoint", Title: "PostgreSQL checkpoint",
		Explanation: "A checkpoint wrote many buffers while throughput fell: the checkpointer's writes competed with the workload's.",
		Settings: []store.StallSetting{{Name: "max_wal_size", Value: "1GB"}, {Name: "checkpoint_timeout", Value: "5min"},
			{Name: "checkpoint_completion_target", Value: ""}},
		Evidence: []store.StallEvidence{
			{Metric: "pg.buffers_checkpoint", Kind: "counter", Unit: "buffers", Baseline: 10, During: 2400, Peak: 2400, Score: 41.2},
			{Metric: "pg.checkpoint_write_time", Kind: "counter", Unit: "ms", Baseline: 0, During: 650, Peak: 650, Score: 30.5},
			{Metric: "os.mem.dirty_bytes", Kind: "gauge", Unit: "bytes", Baseline: 8 << 20, During: 310 << 20, Peak: 310 << 20, Score: 25},
			{Metric: "os.cpu.user_pct", Kind: "counter", Unit: "%", Baseline: 42, During: 18, Peak: 18, Score: -6.1},
			{Metric: "pg.xact_commit", Kind: "counter", Unit: "transactions", Baseline: f.tps, During: f.tps / 3, Peak: f.tps / 3, Score: -5},
		}}
	if err := st.SaveStalls(ctx, id, map[string]float64{"threshold": 0.5}, []store.Stall{stall}); err != nil {
		t.Fatal(err)
	}
}
