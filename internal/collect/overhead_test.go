package collect

import (
	"context"
	"errors"
	"os"
	"runtime"
	"sort"
	"testing"
	"time"

	"github.com/prometheus/procfs"

	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/runner"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/target/postgres"
	"github.com/fathom-lab/fathom/internal/workload"
	"github.com/fathom-lab/fathom/internal/workload/builtin"
)

// BenchmarkSamplingOverhead measures what sampling every collector at every 1-second
// interval costs the workload: the same TPC-B run with and without sampling, in
// alternating pairs (with first, then without first) so that drift in the machine's
// load cancels out, and reports the median of the pairs' throughput differences.
//
//	FATHOM_TEST_POSTGRES_DSN=… go test -run XXX -bench SamplingOverhead -benchtime 1x ./internal/collect/
func BenchmarkSamplingOverhead(b *testing.B) {
	const (
		pairs   = 10
		runTime = 3 * time.Second
		clients = 4
	)
	dsn := dbtest.PostgresDatabase(b, "collect_bench")
	tg, err := postgres.Open(dsn, target.Config{})
	if err != nil {
		b.Fatal(err)
	}
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
		err = wl.Setup(ctx, conn)
		if err != nil {
			b.Fatal(err)
		}
	} else if err != nil {
		b.Fatal(err)
	}
	conn.Close()

	var sampleTime time.Duration
	var samples int
	run := func(sample bool) float64 {
		r, err := runner.Connect(ctx, tg, wl, runner.Config{Clients: clients, Duration: runTime, Interval: time.Second, MaxTries: 10, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		var loop *Loop
		if sample {
			s := NewSampler(tg, Options{})
			defer s.Close()
			s.Start(ctx)
			loop = s.Loop(ctx, func(smp *Sample) {
				for _, res := range smp.Results {
					sampleTime += res.Took
				}
				samples++
			})
			loop.Trigger(-1)
		}
		var ok int64
		var secs float64
		r.Run(ctx, func(iv *measure.Interval) error {
			t := iv.Total()
			ok += t.OK
			secs += iv.Seconds()
			if loop != nil {
				loop.Trigger(iv.Index)
			}
			return nil
		})
		if loop != nil {
			loop.Stop(5 * time.Second)
		}
		return float64(ok) / secs
	}
	for i := 0; i < b.N; i++ {
		var diffs []float64
		var with, without float64
		for p := 0; p < pairs; p++ {
			var a, n float64
			if p%2 == 0 {
				a, n = run(true), run(false)
			} else {
				n, a = run(false), run(true)
			}
			with += a
			without += n
			diffs = append(diffs, (n-a)/n*100)
		}
		sort.Float64s(diffs)
		med := (diffs[pairs/2-1] + diffs[pairs/2]) / 2
		b.ReportMetric(med, "overhead_%")
		b.ReportMetric(with/pairs, "tps_sampled")
		b.ReportMetric(without/pairs, "tps_plain")
		if samples > 0 {
			b.ReportMetric(float64(sampleTime.Microseconds())/float64(samples)/1000, "ms_per_sample")
		}
		b.Logf("pair differences (%% less throughput with sampling): %.2f", diffs)
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
	s := NewSampler(tg, Options{})
	defer s.Close()
	ctx := context.Background()
	srv := s.Start(ctx)
	if !srv.Local {
		b.Skip("the server's processes are not on this host")
	}
	backend := int(s.conn.ID())
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
