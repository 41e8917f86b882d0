package runner_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sort"
	"syscall"
	"testing"
	"time"

	redis "github.com/fathom-lab/fathom/internal/db/redis/target"
	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/runner"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
	"github.com/fathom-lab/fathom/internal/workload/kv"
)

// Issue 33: 10,000 connections from one process, with 100 ms intervals that stay
// honest, against a throwaway Redis whose maxclients is raised (the shared test
// server's 10,000 is shared with every other test).

// throwawayRedis starts a Redis instance that accepts maxclients connections, removed
// after the test, and returns its target. Skipped when redis-server is not installed
// (failed under FATHOM_TEST_REQUIRE=1).
func throwawayRedis(t *testing.T, name string, maxclients int) target.Target {
	t.Helper()
	if _, err := instance.Version(instance.Redis, ""); err != nil {
		if dbtest.Required() {
			t.Fatalf("%v (FATHOM_TEST_REQUIRE=1)", err)
		}
		t.Skip(err)
	}
	// This process holds a socket per client, the server as many: both inherit this
	// limit (Go raises the soft limit to the hard one at start).
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err == nil && rl.Cur < uint64(maxclients)+200 {
		t.Fatalf("this test opens %d connections but the open-files limit is %d: raise it (`ulimit -n %d` as root, or LimitNOFILE=)", maxclients, rl.Cur, maxclients+200)
	}
	dir, err := os.MkdirTemp("", "fr-")
	if err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(dir, 0o755)
	t.Cleanup(func() { os.RemoveAll(dir) })
	ctx := context.Background()
	inst, err := instance.Create(ctx, instance.Options{Kind: instance.Redis, Name: name, Dir: dir, StartTimeout: time.Minute, Owner: "runner tests",
		Settings: []instance.Setting{{Name: "maxclients", Value: fmt.Sprint(maxclients + 100)}, {Name: "save", Value: `""`}, {Name: "appendonly", Value: "no"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Remove(context.Background()) })
	if err := inst.Start(ctx); err != nil {
		t.Fatal(err)
	}
	tg, err := redis.Open(inst.DSN(), target.Config{ConnectTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	// Redis lowers maxclients to what its own open-files limit allows, and says so only
	// in its log: read back what it took.
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got, err := c.(*redis.Conn).ConfigGet(ctx, "maxclients")
	if err != nil {
		t.Fatal(err)
	}
	if got["maxclients"] != fmt.Sprint(maxclients+100) {
		t.Fatalf("the throwaway Redis accepts %s clients, not the %d asked (its open-files limit; see its log)", got["maxclients"], maxclients+100)
	}
	return tg
}

// redisBench is redis-bench's SET/GET mix on keys keys (it runs on any data).
func redisBench(t testing.TB, keys int) workload.Workload {
	t.Helper()
	wl, err := kv.BenchSpec().New(workload.Params{"keys": fmt.Sprint(keys), "tests": "set,get", "prefix": "fathom:t:c10k:"})
	if err != nil {
		t.Fatal(err)
	}
	return wl
}

// txnStamps is a TxnLog keeping, per client, when each transaction ended (the time
// the runner recorded it by) and when the runner had finished recording it: each
// client appends to its own slice, from its own goroutine or worker thread.
type txnStamps struct {
	ends, logged [][]time.Time
	skipped      []int64
}

func newTxnStamps(clients int) *txnStamps {
	return &txnStamps{ends: make([][]time.Time, clients), logged: make([][]time.Time, clients), skipped: make([]int64, clients)}
}

func (l *txnStamps) Txn(client, _ int, _, _, end time.Time, _ int64, failed bool, _ target.Class) {
	if failed {
		return
	}
	l.logged[client] = append(l.logged[client], time.Now())
	l.ends[client] = append(l.ends[client], end)
}

func (l *txnStamps) Skipped(client, _ int, n int64, _ time.Time) { l.skipped[client] += n }

// The check of TestIntervalsAreWhatTheySay, at 10,000 clients with 100 ms intervals,
// closed loop (the clients multiplexed on a thread per CPU) and open loop (a
// goroutine per client on Go's network poller): the intervals are numbered in order
// and contiguous, together they hold every transaction the clients ended (and, open
// loop, every start they dropped), and each holds exactly the transactions recorded
// within it. A transaction belongs to the interval before a cut when the runner had
// finished recording it before the cut began, and to the one after when it ended
// after the cut ended (every recorder exchanged); one recorded while a cut was being
// taken may be in either. Unlike the 64-client check, no slack of a transaction per
// client is allowed: at 10,000 clients that would be more than an interval holds.
func TestIntervalsHonestAt10000Clients(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 connections: not with -short")
	}
	const clients = 10000
	tg := throwawayRedis(t, "c10k", clients)
	wl := redisBench(t, 1000)
	for _, tc := range []struct {
		name string
		rate float64
		path string // what Tuning must say
	}{
		{"closed", 0, "epoll"},
		{"open", 2000, "Go network poller"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkIntervalsAt(t, tg, wl, clients, tc.rate, tc.path)
		})
	}
}

func checkIntervalsAt(t *testing.T, tg target.Target, wl workload.Workload, clients int, rate float64, path string) {
	const (
		interval = 100 * time.Millisecond
		duration = 3 * time.Second
	)
	ctx := context.Background()
	began := time.Now()
	r, err := runner.Connect(ctx, tg, wl, runner.Config{Clients: clients, Rate: rate, Duration: duration, Interval: interval, MaxTries: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	t.Logf("%d clients connected in %s; %s", clients, time.Since(began).Round(time.Millisecond), r.Tuning())
	if tun := r.Tuning(); len(tun) < len(path) || tun[:len(path)] != path {
		t.Fatalf("clients run on %q, want %s", tun, path)
	}
	log := newTxnStamps(clients)
	r.SetTxnLog(log)
	var spans [][2]time.Duration
	var cutBegan time.Duration
	r.BeforeCut(func(time.Duration) { cutBegan = time.Since(r.Start()) })
	r.OnCut(func(int) { spans = append(spans, [2]time.Duration{cutBegan, time.Since(r.Start())}) })
	var ivs []*measure.Interval
	res := r.Run(ctx, func(iv *measure.Interval) error { ivs = append(ivs, iv); return nil })
	if res.Status != runner.StatusComplete {
		t.Fatalf("run %s: %s", res.Status, res.Reason)
	}
	for _, w := range res.Warnings {
		t.Logf("warning: %s", w.Text)
	}
	if len(spans) != len(ivs) {
		t.Fatalf("%d cuts for %d intervals", len(spans), len(ivs))
	}

	// Every transaction by when it ended and when its recording was done, both
	// sorted: counting those before a time is then a binary search in each.
	var ends, logged []time.Duration
	var skipped int64
	for c := range log.ends {
		for k := range log.ends[c] {
			ends = append(ends, log.ends[c][k].Sub(r.Start()))
			logged = append(logged, log.logged[c][k].Sub(r.Start()))
		}
		skipped += log.skipped[c]
	}
	sort.Slice(ends, func(i, j int) bool { return ends[i] < ends[j] })
	sort.Slice(logged, func(i, j int) bool { return logged[i] < logged[j] })
	before := func(s []time.Duration, d time.Duration) int64 {
		return int64(sort.Search(len(s), func(k int) bool { return s[k] >= d }))
	}
	var total, dropped, either int64
	prev := time.Duration(0)
	assertContiguous(t, ivs)
	for i, iv := range ivs {
		prev = iv.End
		tot := iv.Total()
		total += tot.OK
		dropped += tot.Dropped
		var from [2]time.Duration // the previous cut's span (none for the first interval)
		if i > 0 {
			from = spans[i-1]
		}
		to := spans[i]
		if i == len(ivs)-1 {
			to = [2]time.Duration{1 << 62, 1 << 62} // the last holds everything after
		}
		// Surely here: recorded after the previous cut ended and done before this one
		// began. At most: recorded after the previous cut began and ended before this
		// one ended.
		surely := before(logged, to[0]) - before(ends, from[1])
		most := before(ends, to[1]) - before(logged, from[0])
		if tot.OK < surely || tot.OK > most {
			t.Errorf("interval %d (%s–%s, cuts %v and %v) holds %d transactions; the clients recorded %d to %d within it", i, iv.Start, iv.End, from, to, tot.OK, surely, most)
		}
		if i < len(ivs)-1 {
			either += before(logged, to[1]) - before(ends, to[0])
		}
	}
	if total != int64(len(ends)) {
		t.Errorf("intervals hold %d transactions, the clients ended %d", total, len(ends))
	}
	if dropped != skipped {
		t.Errorf("intervals hold %d dropped starts, the clients dropped %d", dropped, skipped)
	}
	if total == 0 {
		t.Fatalf("no transaction ran")
	}
	if prev < duration {
		t.Errorf("the intervals end at %s, before the run's end at %s", prev, duration)
	}
	t.Logf("%d intervals, %d transactions (%d recorded while a cut was taken), %d dropped, %d clients", len(ivs), total, either, dropped, clients)
}

// heapAndStacks is the Go heap in use plus the goroutine stacks, after a collection.
func heapAndStacks() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc + m.StackInuse
}

// idleConnBound is the most memory one idle client may take in this process: its
// connection (rueidis's pipe with its 4 KB read and write buffers and a ring of 2
// slots), its worker and its first recorder. Measured: see docs/speed.md.
const idleConnBound = 16 << 10

// Memory per idle connection is bounded: N clients connected to Redis and not yet
// running take less than idleConnBound each. Measured as the growth of the Go heap
// plus goroutine stacks after a collection from 2,000 to 4,000 clients (the marginal
// cost, without what any run holds once), not as resident memory: RSS also holds
// what the GC's pacing lets the heap grow to (at GC percent 400 during a run, up to
// five times the live heap) and memory freed but not yet returned to the system, so
// it measures the collector's settings, not what a connection keeps. The kernel's
// socket buffers are in neither; they are not this process's memory.
func TestIdleConnectionMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("4,000 connections: not with -short")
	}
	tg := throwawayRedis(t, "idle", 4000)
	wl := redisBench(t, 1000)
	ctx := context.Background()
	base := heapAndStacks()
	per := map[int]uint64{}
	for _, n := range []int{2000, 4000} {
		r, err := runner.Connect(ctx, tg, wl, runner.Config{Clients: n, Duration: time.Second, Interval: time.Second, MaxTries: 1, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		per[n] = heapAndStacks() - base
		r.Close()
		// Closed, the clients' memory is freed (so that the next count starts from the
		// same base): all but a tenth of it, once the connections' goroutines are gone.
		dbtest.WaitFor(t, 30*time.Second, 100*time.Millisecond, fmt.Sprintf("the memory of %d closed clients to be freed", n), func() bool {
			return heapAndStacks() < base+per[n]/10
		})
		t.Logf("%d idle clients: %d KB of Go heap and stacks, %.1f KB each", n, per[n]>>10, float64(per[n])/float64(n)/1024)
	}
	marginal := float64(per[4000]-per[2000]) / 2000
	t.Logf("each idle client beyond 2,000: %.1f KB (bound %d KB)", marginal/1024, idleConnBound>>10)
	if per[4000] <= per[2000] {
		t.Fatalf("4,000 clients took no more memory than 2,000 (%d against %d bytes): the measurement is broken", per[4000], per[2000])
	}
	if marginal > idleConnBound {
		t.Errorf("an idle client takes %.1f KB of Go heap and stacks, more than the bound of %d KB", marginal/1024, idleConnBound>>10)
	}
}
