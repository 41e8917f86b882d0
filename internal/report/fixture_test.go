package report

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/store"
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
	settings  map[string]string
	seed      uint64
	dip       [2]int // intervals [a, b) run at a third of the rate, like a flush stall
	service   bool   // open loop: record a service time too (80% of the response time)
}

var epoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// newFixtureStore writes runs into a fresh store, each started one hour after the
// previous one, and returns it with the runs' ids.
func newFixtureStore(t testing.TB, runs []fixtureRun) (*store.Store, []int64) {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "fathom.db"))
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

func writeFixtureRun(t testing.TB, st *store.Store, i int, f fixtureRun) int64 {
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
	}
	id, err := st.CreateRun(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(f.seed, uint64(i)))
	tot := measure.NewTotals(f.types)
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
			v := int64((lat*0.5 + rng.ExpFloat64()*lat*0.5) * float64(time.Millisecond))
			var svc int64
			if f.service {
				svc = v * 4 / 5
			}
			rec.Success(typ, v, svc)
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
		if err := st.AddInterval(ctx, id, iv); err != nil {
			t.Fatal(err)
		}
		tot.Add(iv)
	}
	sum := tot.Summary()
	if err := st.FinishRun(ctx, id, "complete", "", start.Add(time.Duration(f.intervals)*time.Second), nil); err != nil {
		t.Fatal(err)
	}
	_ = sum
	return id
}

// loadFixture reads runs back as a report would.
func loadFixture(t testing.TB, st *store.Store, ids []int64) []*RunData {
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
	return data
}
