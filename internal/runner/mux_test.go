package runner_test

import (
	"context"
	"math"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	mysql "github.com/fathom-lab/fathom/internal/db/mysql/target"
	redis "github.com/fathom-lab/fathom/internal/db/redis/target"
	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/procset"
	"github.com/fathom-lab/fathom/internal/runner"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
	"github.com/fathom-lab/fathom/internal/workload/builtin"
)

// txnTimes is a TxnLog that keeps every transaction's start and end, per client (each
// client's entries are written by one goroutine or thread at a time).
type txnTimes struct {
	start, end [][]time.Time
	failed     int
}

func newTxnTimes(clients int) *txnTimes {
	return &txnTimes{start: make([][]time.Time, clients), end: make([][]time.Time, clients)}
}

func (l *txnTimes) Txn(client, typ int, intended, start, end time.Time, retries int64, failed bool, class target.Class) {
	if failed {
		l.failed++
		return
	}
	l.start[client] = append(l.start[client], start)
	l.end[client] = append(l.end[client], end)
}

func (l *txnTimes) Skipped(client, typ int, n int64, now time.Time) {}

// pathRun is what one run on one path measured.
type pathRun struct {
	tuning string
	ivs    []*measure.Interval
	log    *txnTimes
	start  time.Time
	res    runner.Result
	spans  [][2]time.Duration // when each cut began and ended, since the start
}

// runPath runs the workload with the given client count, multiplexed or not.
func runPath(t *testing.T, tg target.Target, wl workload.Workload, mux bool, cfg runner.Config) pathRun {
	t.Helper()
	restore := runner.SetMuxClients(math.MaxInt)
	if mux {
		runner.SetMuxClients(0)
	}
	defer restore()
	r, err := runner.Connect(context.Background(), tg, wl, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p := pathRun{tuning: r.Tuning(), log: newTxnTimes(cfg.Clients)}
	r.SetTxnLog(p.log)
	var began time.Duration
	r.BeforeCut(func(time.Duration) { began = time.Since(r.Start()) })
	r.OnCut(func(int) { p.spans = append(p.spans, [2]time.Duration{began, time.Since(r.Start())}) })
	p.res = r.Run(context.Background(), func(iv *measure.Interval) error { p.ivs = append(p.ivs, iv); return nil })
	p.start = r.Start()
	return p
}

// The multiplexed path (epoll threads, a state machine per client) measures what the
// goroutine path measures, on the same workload: each run's intervals are in order
// and contiguous, each holds the transactions that ended within it by the
// transactions' own timestamps, its latency histogram holds one latency per
// transaction and agrees with the timestamps' durations, each client has one
// transaction in flight at a time, and a run by transaction count runs exactly that
// many on either path. On Redis the workload is redis-bench with four commands per
// transaction (a pipeline): statements are counted four to a transaction.
func TestMultiplexedAgreesWithGoroutines(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the multiplexed path is Linux only")
	}
	t.Run("postgres", func(t *testing.T) {
		tg := pgTarget(t, dbtest.PostgresDatabase(t, "runner"))
		agreeOnPaths(t, tg, tpcbSelect(t, tg), 1)
		tunedMuxIntervals(t, tg, tpcbSelect(t, tg))
	})
	t.Run("mysql", func(t *testing.T) {
		tg, err := mysql.Open(dbtest.MySQLDatabase(t, "runner"), target.Config{ConnectTimeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		agreeOnPaths(t, tg, tpcbSelect(t, tg), 1)
	})
	t.Run("redis", func(t *testing.T) {
		tg, err := redis.Open(dbtest.RedisURL(t), target.Config{ConnectTimeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tg.Close() })
		spec, err := builtin.Lookup("redis-bench")
		if err != nil {
			t.Fatal(err)
		}
		// Keys under this test's prefix; nothing to prepare (redis-bench runs on an
		// empty database, as redis-benchmark does), removed afterwards.
		pfx := dbtest.Prefix() + "mux:"
		wl, err := spec.New(workload.Params{"tests": "set,get,incr", "keys": "1000", "pipeline": "4", "prefix": pfx})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if c, err := tg.Connect(context.Background()); err == nil {
				_ = wl.Cleanup(context.Background(), c)
				c.Close()
			}
		})
		agreeOnPaths(t, tg, wl, 4)
	})
}

// tunedMuxIntervals: multiplexed with the runtime tuned as the CLI tunes it (the
// interval cutter then waits on a Go timer, served by the Ps the worker threads leave
// idle), the run measures as checkAgainstLog asks, and unless it warns that the
// machine could not keep the interval, every 100ms interval ends near its boundary.
func tunedMuxIntervals(t *testing.T, tg target.Target, wl workload.Workload) {
	const (
		clients  = 16
		interval = 100 * time.Millisecond
	)
	p := runPath(t, tg, wl, true, runner.Config{Clients: clients, Duration: 2 * time.Second, Interval: interval, MaxTries: 1, Seed: 1,
		Tuner: procset.Tuner{Process: &procset.Process{}}})
	if !strings.Contains(p.tuning, "epoll") || !strings.Contains(p.tuning, "GC percent 400") {
		t.Fatalf("tuned multiplexed: tuning %q", p.tuning)
	}
	if p.res.Status != runner.StatusComplete {
		t.Fatalf("tuned multiplexed: run %s: %s", p.res.Status, p.res.Reason)
	}
	checkAgainstLog(t, "tuned multiplexed", p, clients, 1)
	late := false
	for _, w := range p.res.Warnings {
		t.Logf("tuned multiplexed: warning: %s", w.Text)
		late = late || w.Kind == runner.WarnLateIntervals
	}
	for i, iv := range p.ivs[:len(p.ivs)-1] {
		if d := iv.End - time.Duration(i+1)*interval; !late && (d < -time.Millisecond || d > interval/10) {
			t.Errorf("tuned multiplexed: interval %d ends at %s, scheduled %s, and no warning says so", i, iv.End, time.Duration(i+1)*interval)
		}
	}
	if want := int(2 * time.Second / interval); !late && len(p.ivs) != want {
		t.Errorf("tuned multiplexed: %d intervals, want %d", len(p.ivs), want)
	}
}

func agreeOnPaths(t *testing.T, tg target.Target, wl workload.Workload, stmts int64) {
	const (
		clients  = 16
		interval = 100 * time.Millisecond
	)
	for _, mux := range []bool{false, true} {
		p := runPath(t, tg, wl, mux, runner.Config{Clients: clients, Duration: 2 * time.Second, Interval: interval, MaxTries: 1, Seed: 1})
		name := map[bool]string{false: "goroutines", true: "multiplexed"}[mux]
		if strings.Contains(p.tuning, "epoll") != mux {
			t.Fatalf("%s: tuning %q", name, p.tuning)
		}
		if p.res.Status != runner.StatusComplete {
			t.Fatalf("%s: run %s: %s", name, p.res.Status, p.res.Reason)
		}
		checkAgainstLog(t, name, p, clients, stmts)
	}
	// By transaction count: exactly clients × n, stmts statements each, on both paths.
	for _, mux := range []bool{false, true} {
		const n = 300
		p := runPath(t, tg, wl, mux, runner.Config{Clients: clients, Transactions: n, Interval: interval, MaxTries: 1, Seed: 1})
		tot := measure.NewTotals(wl.TxnTypes())
		for _, iv := range p.ivs {
			tot.Add(iv)
		}
		s := tot.Summary()
		if p.res.Status != runner.StatusComplete || s.Transactions != clients*n || s.Statements != stmts*clients*n || s.Errors != 0 {
			t.Errorf("multiplexed %v, -t %d: %s, %d transactions, %d statements, %d errors; want %d transactions of %d statements", mux, n, p.res.Status, s.Transactions, s.Statements, s.Errors, clients*n, stmts)
		}
	}
}

// checkAgainstLog checks a run's intervals against its transactions' own timestamps.
func checkAgainstLog(t *testing.T, name string, p pathRun, clients int, stmts int64) {
	t.Helper()
	var ends []time.Duration
	var logged time.Duration // the transactions' summed durations
	for c := range p.log.end {
		for k, e := range p.log.end[c] {
			s := p.log.start[c][k]
			if k > 0 && s.Before(p.log.end[c][k-1]) {
				t.Fatalf("%s: client %d started a transaction at %s before its last one ended at %s", name, c, s.Sub(p.start), p.log.end[c][k-1].Sub(p.start))
			}
			ends = append(ends, e.Sub(p.start))
			logged += e.Sub(s)
		}
	}
	sort.Slice(ends, func(i, j int) bool { return ends[i] < ends[j] })
	var total, count int64
	var recorded float64 // the histograms' summed latencies, ns
	prev := time.Duration(0)
	if len(p.spans) != len(p.ivs) {
		t.Fatalf("%s: %d cuts for %d intervals", name, len(p.spans), len(p.ivs))
	}
	for i, iv := range p.ivs {
		if iv.Index != i || iv.Start != prev || iv.End <= iv.Start {
			t.Fatalf("%s: interval %d (index %d) spans %s–%s after one ending at %s", name, i, iv.Index, iv.Start, iv.End, prev)
		}
		prev = iv.End
		tot := iv.Total()
		if tot.ErrorTotal() != 0 || tot.Statements != stmts*tot.OK {
			t.Errorf("%s: interval %d: %d errors, %d statements for %d transactions", name, i, tot.ErrorTotal(), tot.Statements, tot.OK)
		}
		if n := tot.Latency.TotalCount(); n != tot.OK {
			t.Errorf("%s: interval %d: %d latencies for %d transactions", name, i, n, tot.OK)
		}
		// Surely the transactions that ended between the cuts, at most those that ended
		// from the first cut's begin to the second's end (a cut exchanges the clients'
		// recorders one after the other, and a loaded machine can deschedule it half-way),
		// and one per client at each end, recorded just after a cut began.
		var from [2]time.Duration
		if i > 0 {
			from = p.spans[i-1]
		}
		to := p.spans[i]
		between := func(a, b time.Duration) int64 {
			return int64(sort.Search(len(ends), func(k int) bool { return ends[k] >= b }) - sort.Search(len(ends), func(k int) bool { return ends[k] >= a }))
		}
		if surely, most := between(from[1], to[0]), between(from[0], to[1]); tot.OK > most+int64(clients) || tot.OK < surely-int64(clients) {
			t.Errorf("%s: interval %d (%s–%s, cuts %v and %v) holds %d transactions; %d to %d ended within it", name, i, iv.Start, iv.End, from, to, tot.OK, surely, most)
		}
		total += tot.OK
		count += tot.Latency.TotalCount()
		recorded += tot.Latency.Mean() * float64(tot.Latency.TotalCount())
	}
	if total != int64(len(ends)) || total == 0 || p.log.failed != 0 {
		t.Fatalf("%s: intervals hold %d transactions, the log %d (%d failed)", name, total, len(ends), p.log.failed)
	}
	// HDR keeps 3 significant figures, and latencies under 1 µs count as 1 µs.
	if got, want := recorded, float64(logged.Nanoseconds()); math.Abs(got-want) > 0.002*want+float64(count)*1e3 {
		t.Errorf("%s: the histograms' latencies sum to %.0f ns, the transactions' durations to %.0f ns", name, got, want)
	}
	// Closed loop, one transaction in flight per client: together they cannot take
	// longer than the clients × the run.
	if span := time.Duration(clients) * prev; logged > span {
		t.Errorf("%s: transactions took %s in all, more than %d clients × %s", name, logged, clients, prev)
	}
	t.Logf("%s: %s; %d intervals, %d transactions, mean latency %s", name, p.tuning, len(p.ivs), total, time.Duration(recorded/float64(count)))
}
