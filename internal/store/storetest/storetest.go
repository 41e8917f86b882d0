// Package storetest holds what the results store tests share: the records they write
// (the suite itself, run on every store implementation, is in this package's tests).
package storetest

import (
	"time"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/sample"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/target"
)

// Run is a run with every field set.
func Run() *store.Run {
	return &store.Run{
		ToolVersion: "v0.test", Command: "fathom run -c 2", Workload: "tpcb",
		Options: map[string]string{"scale": "3"}, Seed: 1<<63 + 5, TargetKind: "postgres", Target: "postgres://u:xxxxx@h/d",
		ServerVersion: "15.20", Settings: map[string]string{"shared_buffers": "128MB"},
		Host:    store.Host{Hostname: "h", OS: "linux/amd64", CPUs: 2, MemoryBytes: 1 << 34, GoVersion: "go1.26"},
		Labels:  map[string]string{"variant": "on", "rep": "1"},
		Clients: 2, Duration: 10 * time.Second, Interval: time.Second, TxnTypes: []string{"a", "b"},
		StartedAt: time.Unix(1700000000, 123).UTC(),
	}
}

// Interval is interval idx of Run with n successes of type a and one failure of b.
func Interval(idx int, n int) *measure.Interval {
	rec := measure.NewRecorder(2)
	for i := 1; i <= n; i++ {
		rec.Success(0, int64(i)*1000_000, int64(i)*900_000)
	}
	rec.Failure(1, 3_000_000)
	rec.Counts[1].Errors[target.ClassSerialization] = 2
	rec.Counts[1].Retries = 1
	rec.Reconnects = 1
	iv := measure.NewInterval(idx, []string{"a", "b"})
	iv.Start, iv.End = time.Duration(idx)*time.Second, time.Duration(idx+1)*time.Second
	iv.Warmup = idx == 0
	iv.AddRecorder(rec)
	return iv
}

// Sample is a sample with a counter, a gauge and three collectors (one timed out).
func Sample(idx int, at time.Time, commits float64, reset bool) *sample.Sample {
	return &sample.Sample{
		Index: idx, At: at,
		Results: []sample.Result{
			{Collector: "pg_stat_database", Source: "postgres", Status: sample.StatusOK, At: at.Add(time.Millisecond), Took: 2 * time.Millisecond, Reset: reset},
			{Collector: "pg_locks", Source: "postgres", Status: sample.StatusTimeout, Error: "no answer within 2s", At: at, Took: 2 * time.Second},
			{Collector: "os_meminfo", Source: "os", Status: sample.StatusOK, At: at.Add(2 * time.Millisecond), Took: time.Millisecond},
		},
		Readings: []sample.Reading{
			{Name: "pg.xact_commit", Collector: "pg_stat_database", Kind: sample.Counter, Unit: "transactions", Value: commits,
				Rate: 100, HasRate: idx >= 0 && !reset, Reset: reset},
			{Name: "os.mem.dirty_bytes", Collector: "os_meminfo", Kind: sample.Gauge, Unit: "bytes", Value: float64(1000 * (idx + 2))},
		},
	}
}
