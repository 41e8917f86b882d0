package collect_test

import (
	"context"
	"errors"
	"github.com/fathom-lab/fathom/internal/collect"
	"os"
	"runtime"
	"sort"
	"testing"
	"time"

	"github.com/prometheus/procfs"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/runner"
	"github.com/fathom-lab/fathom/internal/sample"
	"github.com/fathom-lab/fathom/internal/workload"
	"github.com/fathom-lab/fathom/internal/workload/builtin"
)

// BenchmarkSamplingOverhead measures what sampling every collector costs the workload's
// throughput: one closed-loop TPC-B run of 1-second intervals in which a sample is
// taken at every other interval boundary, as a run would (in the background, on its
// own connection). Each sample's work falls in the interval after its boundary, so
// intervals alternate sampled and unsampled (the phase flips half way, so that nothing
// periodic on the machine lines up with it); adjacent pairs are compared, which cancels
// the slow drift of a busy machine, and the median of the pairs' differences is the
// overhead (overhead_%: how much less throughput a sampled interval had).
//
//	FATHOM_TEST_POSTGRES_DSN=… go test -run XXX -bench SamplingOverhead -benchtime 1x ./internal/collect/
func BenchmarkSamplingOverhead(b *testing.B) {
	const (
		intervals = 61
		clients   = 4
	)
	tg := pgTarget(b)
	spec, err := builtin.Lookup("tpcb")
	if err != nil {
		b.Fatal(err)
	}
	wl, err := spec.New(workload.Params{"scale": "1"})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	conn, err := tg.Connect(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if err := wl.Setup(ctx, conn); errors.Is(err, workload.ErrNotPrepared) {
		if err := wl.Prepare(ctx, tg, func(string, int64, int64) {}); err != nil {
			b.Fatal(err)
		}
		if err := wl.Setup(ctx, conn); err != nil {
			b.Fatal(err)
		}
	} else if err != nil {
		b.Fatal(err)
	}
	conn.Close()
	for i := 0; i < b.N; i++ {
		r, err := runner.Connect(ctx, tg, wl, runner.Config{Clients: clients, Duration: intervals * time.Second, Interval: time.Second, MaxTries: 10, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		s := collect.NewSampler(tg, collect.Options{Kind: dbOf(tg)})
		s.Start(ctx)
		var took time.Duration
		var samples int
		loop := s.Loop(ctx, func(smp *sample.Sample) {
			for _, res := range smp.Results {
				took += res.Took
			}
			samples++
		})
		loop.Trigger(-1)
		tps := map[int]float64{}
		sampled := map[int]bool{}
		r.Run(ctx, func(iv *measure.Interval) error {
			t := iv.Total()
			if iv.Seconds() > 0.9 {
				tps[iv.Index] = float64(t.OK) / iv.Seconds()
			}
			// Sample at the end of every other interval (even ones in the first half,
			// odd ones in the second, so that nothing periodic in the machine lines up
			// with it): the next interval carries the work.
			if (iv.Index%2 == 0) == (iv.Index < intervals/2) {
				loop.Trigger(iv.Index)
				sampled[iv.Index+1] = true
			}
			return nil
		})
		loop.Stop(5 * time.Second)
		s.Close()
		r.Close()
		var diffs []float64
		var with, without float64
		var n int
		for k := 1; k+1 < intervals; k++ {
			if sampled[k] == sampled[k+1] {
				continue
			}
			a, okA := tps[k]   // after a sample
			c, okC := tps[k+1] // after none
			if !sampled[k] {
				a, c = c, a
			}
			k++ // pairs do not overlap
			if !okA || !okC || c == 0 {
				continue
			}
			diffs = append(diffs, (c-a)/c*100)
			with += a
			without += c
			n++
		}
		if n < 5 {
			b.Fatalf("only %d interval pairs", n)
		}
		sort.Float64s(diffs)
		med := diffs[len(diffs)/2]
		if len(diffs)%2 == 0 {
			med = (diffs[len(diffs)/2-1] + diffs[len(diffs)/2]) / 2
		}
		b.ReportMetric(med, "overhead_%")
		b.ReportMetric((without-with)/without*100, "pooled_overhead_%")
		b.ReportMetric(with/float64(n), "tps_sampled")
		b.ReportMetric(without/float64(n), "tps_plain")
		if samples > 0 {
			b.ReportMetric(float64(took.Microseconds())/float64(samples)/1000, "collector_ms/sample")
		}
		q1, q3 := diffs[len(diffs)/4], diffs[len(diffs)*3/4]
		b.Logf("%d pairs; differences (%% less throughput in the sampled interval): quartiles %.2f / %.2f / %.2f", n, q1, med, q3)
	}
}

// cpuSeconds is a process's user+system CPU time.
func cpuSeconds(b *testing.B, pid int) float64 {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		b.Skip(err)
	}
	p, err := fs.Proc(pid)
	if err != nil {
		b.Fatal(err)
	}
	st, err := p.Stat()
	if err != nil {
		b.Fatal(err)
	}
	return st.CPUTime()
}

// BenchmarkSampleCost measures the CPU one sample of every PostgreSQL and OS collector
// costs: fathom's own process and the server process of the sampler's session. At one
// sample per second that is the share of the machine sampling takes
// (cpu_%_at_1s_interval, of all CPUs), the deterministic side of the throughput
// comparison above.
func BenchmarkSampleCost(b *testing.B) {
	tg := pgTarget(b)
	s := collect.NewSampler(tg, collect.Options{Kind: dbOf(tg)})
	defer s.Close()
	ctx := context.Background()
	srv := s.Start(ctx)
	if !srv.Local {
		b.Skip("the server's processes are not on this host")
	}
	backend := int(collect.SamplerConn(s).ID())
	s.Sample(ctx, -1, time.Now())
	self := os.Getpid()
	c0, s0 := cpuSeconds(b, self), cpuSeconds(b, backend)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.Sample(ctx, i, time.Now())
	}
	b.StopTimer()
	client := (cpuSeconds(b, self) - c0) / float64(b.N) * 1000
	server := (cpuSeconds(b, backend) - s0) / float64(b.N) * 1000
	b.ReportMetric(client, "client_cpu_ms/sample")
	b.ReportMetric(server, "server_cpu_ms/sample")
	b.ReportMetric((client+server)/10/float64(runtime.NumCPU()), "cpu_%_at_1s_interval")
}
