package runner_test

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/procset"
	"github.com/fathom-lab/fathom/internal/runner"
	"github.com/fathom-lab/fathom/internal/target/targettest"
)

// BenchmarkRunPaths runs tpcb-select through the whole runner (drawing, the request,
// the reply, recording, interval cuts) on the goroutine path and the multiplexed path,
// with 1 and 16 clients and the runtime set up as the CLI sets it, and reports per transaction: allocations (the hot path's
// must be 0: what is left is the run's setup, spread over its transactions), the
// process's CPU time, and the wall time.
//
//	go test -run XXX -bench RunPaths -benchtime 20000x ./internal/runner/
func BenchmarkRunPaths(b *testing.B) {
	tg := pgTarget(b, dbtest.PostgresDatabase(b, "runner"))
	wl := tpcbSelect(b, tg)
	for _, clients := range []int{1, 16} {
		for _, mux := range []bool{false, true} {
			name := map[bool]string{false: "goroutines", true: "multiplexed"}[mux]
			b.Run(fmt.Sprintf("%s/clients=%d", name, clients), func(b *testing.B) {
				restore := runner.SetMuxClients(math.MaxInt)
				if mux {
					runner.SetMuxClients(0)
				}
				defer restore()
				per := max(1, b.N/clients)
				r, err := runner.Connect(context.Background(), tg, wl, runner.Config{Clients: clients, Transactions: int64(per), Interval: time.Second, MaxTries: 1, Seed: 1,
					Tuner: procset.Tuner{Process: &procset.Process{}}}) // as the CLI runs
				if err != nil {
					b.Fatal(err)
				}
				defer r.Close()
				var m0, m1 runtime.MemStats
				runtime.ReadMemStats(&m0)
				cpu0 := targettest.CPUTime()
				began := time.Now()
				b.ResetTimer()
				res := r.Run(context.Background(), func(*measure.Interval) error { return nil })
				b.StopTimer()
				took, cpu := time.Since(began), targettest.CPUTime()-cpu0
				runtime.ReadMemStats(&m1)
				if res.Status != runner.StatusComplete {
					b.Fatalf("run %s: %s", res.Status, res.Reason)
				}
				n := float64(per * clients)
				b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/n, "allocs/txn")
				b.ReportMetric(float64(cpu.Nanoseconds())/n, "cpu-ns/txn")
				b.ReportMetric(float64(took.Nanoseconds())/n, "ns/txn")
			})
		}
	}
}
