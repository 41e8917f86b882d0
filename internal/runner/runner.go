// Package runner drives a workload against a target with one connection per client,
// closed loop by default or open loop on a Poisson schedule, and emits merged
// measurements at every report interval.
package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/procset"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/target/sock"
	"github.com/fathom-lab/fathom/internal/workload"
)

// Status of a finished run.
const (
	StatusComplete    = "complete"
	StatusInterrupted = "interrupted"
	StatusFailed      = "failed"
)

// Config says how to run.
type Config struct {
	// Tuner changes GOMAXPROCS and the GC percent for network clients (nil: nothing
	// is changed; the front end that owns the process supplies one).
	Tuner        Tuner
	Clients      int
	Duration     time.Duration // measured time after warm-up; 0 when Transactions is set
	Transactions int64         // per client after warm-up; 0 when Duration is set
	Warmup       time.Duration
	// Rate is the total intended transactions per second; 0 runs closed loop.
	Rate float64
	// LatencyLimit (open loop): a transaction whose intended start is already this far
	// in the past is skipped and counted as dropped. 0 never skips.
	LatencyLimit time.Duration
	// LateThreshold (open loop): starting more than this after the intended time
	// counts as late. Default 1ms.
	LateThreshold time.Duration
	Interval      time.Duration // report interval
	MaxTries      int           // tries per transaction for retryable errors (>= 1)
	Seed          uint64
	// ReconnectTimeout: a client that cannot reconnect for this long fails the run.
	ReconnectTimeout time.Duration
	// StopGrace: after a stop is requested, in-flight statements get this long before
	// they are cancelled.
	StopGrace time.Duration
	// ConnectPerTxn opens a new connection for every transaction, as pgbench -C does:
	// the time to connect (and to prepare the statements again) is part of each
	// transaction's latency.
	ConnectPerTxn bool
}

// TxnLog hears about every transaction as it ends, from the goroutine of the client
// that ran it (client is the client's index, 0 to Clients()-1): it must not block,
// allocate or lock on its hot path, as a Recorder does not.
type TxnLog interface {
	// Txn is a transaction that finished (failed: it gave up after an error of the
	// class given). intended is zero in closed loop.
	Txn(client, typ int, intended, start, end time.Time, retries int64, failed bool, class target.Class)
	// Skipped counts n intended starts of type typ that were dropped (open loop).
	Skipped(client, typ int, n int64, now time.Time)
}

// MaxRate is the highest rate a run can have: intended starts are kept in whole
// nanoseconds, so a higher one could not be scheduled as asked.
const MaxRate = 1e9

// Validate reports the first nonsensical value with the fix.
func (c *Config) Validate() error {
	switch {
	case c.Clients < 1:
		return fmt.Errorf("clients must be at least 1 (got %d)", c.Clients)
	case c.Duration < 0:
		return fmt.Errorf("time must be positive (got %s)", c.Duration)
	case c.Transactions < 0:
		return fmt.Errorf("transactions must be positive (got %d)", c.Transactions)
	case c.Duration > 0 && c.Transactions > 0:
		return errors.New("give either --time or --transactions, not both")
	case c.Duration == 0 && c.Transactions == 0:
		return errors.New("give --time or --transactions")
	case c.Warmup < 0:
		return fmt.Errorf("warm-up must not be negative (got %s)", c.Warmup)
	case c.Rate < 0 || math.IsNaN(c.Rate) || math.IsInf(c.Rate, 0):
		return fmt.Errorf("rate must be a positive number of transactions per second (got %v)", c.Rate)
	case c.Rate > MaxRate:
		return fmt.Errorf("rate %g is more than fathom can schedule: at most %g transactions per second (intended starts are whole nanoseconds apart); to load the target as fast as it goes, leave out --rate", c.Rate, float64(MaxRate))
	case c.Interval < time.Millisecond:
		return fmt.Errorf("report interval must be at least 1ms (got %s)", c.Interval)
	case c.MaxTries < 1:
		return fmt.Errorf("max-tries must be at least 1 (got %d)", c.MaxTries)
	case c.LatencyLimit < 0:
		return fmt.Errorf("latency limit must not be negative (got %s)", c.LatencyLimit)
	}
	return nil
}

func (c *Config) defaults() {
	if c.LateThreshold == 0 {
		c.LateThreshold = time.Millisecond
	}
	if c.ReconnectTimeout == 0 {
		c.ReconnectTimeout = 30 * time.Second
	}
	if c.StopGrace == 0 {
		c.StopGrace = 1500 * time.Millisecond
	}
}

// Result is how a run ended.
type Result struct {
	Status string
	Reason string
	Start  time.Time
	End    time.Time
	// Warnings about the numbers, for the user and the store.
	Warnings []Warning
	// Aborted is how many clients stopped on a workload.AbortError (the others went
	// on); the run is then failed, with ByErrors set.
	Aborted int
	// ByErrors: the run failed because of its transactions' errors (clients
	// aborted), not because it could not go on (a store or the server gone).
	ByErrors bool
	// Errors are the run's first distinct errors with their counts, in the order first
	// met; ErrorsUnlisted counts the measured errors that are none of them.
	Errors         []measure.SeenError
	ErrorsUnlisted int64
}

// Sink receives each interval as soon as it is merged, in order, from one goroutine.
// An error from the sink fails the run (e.g. the store cannot be written).
type Sink func(iv *measure.Interval) error

type client struct {
	id     int
	group  int
	rate   float64 // this client's intended rate (open loop), 0 = closed loop
	txns   int64   // transactions to run after warm-up, 0 = until the end
	conn   target.Conn
	worker workload.Worker
	cmds   workload.CommandRecorder // the worker, when it times its commands (-r)
	retype workload.Retyper         // the worker, when a transaction's type is known after it ran
	slot   *measure.Slot
	done   atomic.Bool
	// measured: transactions this client recorded into measured (not warm-up)
	// intervals, the count -t is held to.
	measured int64
	drops    []int64 // dropUntil's counts by type
	// failClass is the class of the error a failed transaction gave up on (TxnLog).
	failClass target.Class
	// err is the last error the client met, for the run's list of errors (seen.go).
	err clientErr
	// aborted: the client stopped on a workload.AbortError.
	aborted bool
	// ended: the workload had no more work for the client (workload.ErrWorkerDone).
	ended bool
}

// Runner is one run in progress.
type Runner struct {
	procs  int  // Ps asked of the Tuner, 0 if none
	poller bool // connections use Go's network poller (see pollerClients)
	mux    bool // clients are multiplexed on a few threads (see muxClients)
	tuned  bool // the Tuner was asked
	cfg    Config
	tgt    target.Target
	wl     workload.Workload
	types  []string
	nTypes int

	clients []*client
	start   time.Time
	measure time.Time // start + warm-up
	end     time.Time // start + warm-up + duration (zero when by transactions)

	stop     atomic.Bool
	hardCtx  context.Context
	hardStop context.CancelFunc

	failOnce sync.Once
	failErr  error

	// book keeps the run's first distinct errors; aborted counts the clients stopped
	// by a workload.AbortError, firstAbort the first of those errors.
	book       errorBook
	aborted    atomic.Int32
	abortMu    sync.Mutex
	firstAbort error

	onCut func(index int)
	// onStart hears the run's clock origin (OnStart).
	onStart func(time.Time)
	// beforeCut, for tests: called as the cut for the boundary planned at plan begins.
	beforeCut func(plan time.Duration)
	log       TxnLog
}

// SetTxnLog sets l to hear about every transaction. Call it before Run.
func (r *Runner) SetTxnLog(l TxnLog) { r.log = l }

// OnCut sets f to be called right after each interval is cut, before it is merged
// and passed to the sink: what must happen at the boundary itself (a server sample)
// need not wait for the merge or for the sink's earlier intervals. f is called from
// the goroutine that cuts intervals and must not block. Call it before Run.
func (r *Runner) OnCut(f func(index int)) { r.onCut = f }

// OnStart sets f to be called with the run's start, the origin of its intervals'
// offsets, when Run begins and before any transaction. f must not block. Call it
// before Run.
func (r *Runner) OnStart(f func(start time.Time)) { r.onStart = f }

// Connect opens every client's connection and binds its worker. Errors here are user
// facing (wrong password, server down) and nothing has been measured yet.
func Connect(ctx context.Context, t target.Target, w workload.Workload, cfg Config) (*Runner, error) {
	cfg.defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r := &Runner{cfg: cfg, tgt: t, wl: w, types: w.TxnTypes()}
	r.nTypes = len(r.types)
	r.clients = newClients(w, &r.cfg)
	r.mux = r.muxable()
	r.poller = !r.mux && network(t) && (len(r.clients) > pollerClients || conversational(w))
	if r.poller {
		ctx = sock.WithPoller(ctx)
	}
	r.threads(network(t))
	errs := make([]error, len(r.clients))
	for _, c := range r.clients {
		first := measure.NewRecorder(r.nTypes)
		first.Warmup = r.cfg.Warmup > 0
		c.slot = measure.NewSlot(first)
	}
	// connectors goroutines connect the clients in turn: at most that many
	// connections are being opened at once (a burst of 10,000 would overflow the
	// server's listen backlog), and 10,000 clients do not wait as 10,000 goroutines.
	// After the first failure no more are started (with the server gone, 10,000
	// attempts of up to the connect timeout each would take hours).
	next := make(chan *client)
	var wg sync.WaitGroup
	var failed atomic.Bool
	for range min(connectors, len(r.clients)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range next {
				conn, err := t.Connect(ctx)
				if err != nil {
					errs[c.id] = err
					failed.Store(true)
					continue
				}
				c.conn = conn
				if err := c.worker.Bind(ctx, conn); err != nil {
					errs[c.id] = fmt.Errorf("preparing statements: %w", err)
					failed.Store(true)
				}
			}
		}()
	}
	for _, c := range r.clients {
		if failed.Load() {
			break
		}
		next <- c
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			r.Close()
			return nil, err
		}
	}
	if r.mux && !r.muxReady() {
		// Some statement cannot be driven on its socket after all: every client gets
		// its own goroutine, blocking socket and P, as below muxClients.
		if r.tuned {
			r.release()
		}
		r.mux = false
		r.threads(true)
	}
	return r, nil
}

// connectors is how many connections Connect opens at once.
const connectors = 16

// newClients creates the clients: cfg.Clients alike, or each group's clients for a
// workload with client groups (cfg.Clients is then set to their total).
func newClients(w workload.Workload, cfg *Config) []*client {
	var cs []*client
	if g, ok := w.(workload.Grouped); ok && len(g.Groups()) > 0 {
		for gi, grp := range g.Groups() {
			for j := 0; j < grp.Clients; j++ {
				c := &client{id: len(cs), group: gi, txns: cfg.Transactions, rate: 0}
				if grp.Transactions > 0 {
					c.txns = grp.Transactions
				}
				if grp.Rate > 0 {
					c.rate = grp.Rate / float64(grp.Clients)
				}
				c.worker = g.NewGroupWorker(gi, c.id, cfg.Seed)
				c.retype, _ = c.worker.(workload.Retyper)
				cs = append(cs, c)
			}
		}
		cfg.Clients = len(cs)
		return cs
	}
	for i := 0; i < cfg.Clients; i++ {
		c := &client{id: i, txns: cfg.Transactions, worker: w.NewWorker(i, cfg.Seed)}
		c.cmds, _ = c.worker.(workload.CommandRecorder)
		c.retype, _ = c.worker.(workload.Retyper)
		if cfg.Rate > 0 {
			c.rate = cfg.Rate / float64(cfg.Clients)
		}
		cs = append(cs, c)
	}
	return cs
}

// Close closes all connections.
func (r *Runner) Close() {
	for _, c := range r.clients {
		if c == nil {
			continue
		}
		if f, ok := c.worker.(workload.Finisher); ok {
			// e.g. a sysbench script's thread_done(), on the client's connection.
			_ = f.Finish(context.Background())
		}
		if c != nil && c.conn != nil {
			_ = c.conn.Close()
			c.conn = nil
		}
	}
	if r.tuned {
		r.release()
	}
}

// pollerClients: with more clients than this, a network target's connections stay
// with Go's network poller (sock.WithPoller) and GOMAXPROCS stays as it is, instead of
// a blocking socket and a P for every client.
//
// Measured against PostgreSQL (tpcb-select, 8 s runs, two rounds, a machine at load
// 40-50 from other work): at 90 clients the poller took 20.1-21.8 µs of client CPU per
// transaction against 24.9-26.7 µs for blocking sockets, with more throughput, and
// 34 MB resident against 48-52 MB; at 32 clients the two were level (13.1-15.2 µs
// against 12.9-13.5 µs).
var pollerClients = 64 // a variable for tests

// conversational reports whether w's transactions are many round trips each
// (workload.Conversational), whose clients stay with Go's network poller at any count.
//
// Measured with tpcc (about 15 round trips a transaction) against MariaDB, 4 clients,
// 15 s runs alternated, a 2-CPU machine at load 15 shared with the server: blocking
// sockets with a P per client took 1.44-1.69 ms of client CPU per New-Order and made
// 10,341-11,688 NOPM; the poller 0.52-0.62 ms and 18,594-24,129 NOPM. Each round trip
// on a blocking socket parks the client's thread in the kernel and has the runtime's
// monitor retake and hand back its P: cheap once a transaction, not fifteen times.
func conversational(w workload.Workload) bool {
	c, ok := w.(workload.Conversational)
	return ok && c.Conversational()
}

// Tuner changes the process's runtime settings for a runner's network clients (see
// package procset). The front end that owns the process supplies it; without one, the
// runner changes nothing.
type Tuner interface {
	// Acquire: procs clients are starting that each want a P of their own (0 with the
	// network poller), and the GC percent may be raised while they run.
	Acquire(procs int)
	// Release gives back what Acquire asked for.
	Release(procs int)
}

// threads gives every client of a network target a P of its own, plus two for the
// collectors and the rest, through the Tuner, so that a client waiting for the server
// holds its thread and P as a C client's thread does, instead of handing them over at
// every statement (see package sock). Ps are not CPUs: a waiting client uses none.
// SQLite clients compute rather than wait, so they keep the default. With more than
// pollerClients clients the connections use Go's network poller and need no Ps of
// their own; the GC percent is raised for network clients either way.
func (r *Runner) threads(network bool) {
	if !network || r.cfg.Tuner == nil {
		return
	}
	r.tuned = true
	switch {
	case r.mux:
		r.procs = muxThreads(len(r.clients))
	case !r.poller:
		r.procs = len(r.clients)
	}
	r.cfg.Tuner.Acquire(r.procs)
}

// release gives back what threads asked for.
func (r *Runner) release() {
	r.cfg.Tuner.Release(r.procs)
	r.procs, r.tuned = 0, false
}

// Tuning says how the process was set up for this run's clients, for the run's
// provenance: how the clients wait for replies, GOMAXPROCS and the GC percent.
func (r *Runner) Tuning() string {
	io := "blocking sockets, a P per client"
	switch {
	case r.mux:
		io = r.muxTuning()
	case r.cfg.Tuner == nil && (r.tgt == nil || network(r.tgt)) && !r.poller:
		io = "blocking sockets, GOMAXPROCS left as the caller set it"
	case r.tgt != nil && !network(r.tgt):
		io = "in-process " + r.tgt.Dialect().Title
	case r.poller && len(r.clients) <= pollerClients:
		io = "Go network poller (the workload's transactions are many round trips)"
	case r.poller:
		io = fmt.Sprintf("Go network poller (more than %d clients)", pollerClients)
	case pollerOnly(r.tgt):
		// The portable path (another system, or FATHOM_PORTABLE): the sockets went
		// through Go's poller although each client was given a P.
		io = "Go network poller (portable sockets), a P per client"
	}
	return fmt.Sprintf("%s; GOMAXPROCS %d; GC percent %d", io, runtime.GOMAXPROCS(0), gcPercent())
}

func gcPercent() int { return procset.GCPercent() }

// pollerOnly reports whether every connection t dialed so far stayed on Go's network
// poller (target.SocketsPoller).
func pollerOnly(t target.Target) bool {
	s, ok := t.(target.Socketer)
	return ok && s.Sockets() == target.SocketsPoller
}

// network reports whether t's clients talk to a server over sockets (a target with
// target.Socketer), rather than run the database in this process (SQLite).
func network(t target.Target) bool {
	_, ok := t.(target.Socketer)
	return ok
}

// Start is when the run started (valid once Run has begun).
func (r *Runner) Start() time.Time { return r.start }

// Clients is the number of clients: Config.Clients, or for a workload with client
// groups the total of its groups.
func (r *Runner) Clients() int { return len(r.clients) }

func (r *Runner) fail(err error) {
	r.failOnce.Do(func() { r.failErr = err })
	r.stop.Store(true)
}

// abort stops client c for the workload's mistake err, as pgbench aborts a client:
// the others go on, and the run ends at once when none is left.
func (r *Runner) abort(c *client, err error) {
	c.aborted = true
	r.abortMu.Lock()
	if r.firstAbort == nil {
		r.firstAbort = err
	}
	r.abortMu.Unlock()
	if int(r.aborted.Add(1)) == len(r.clients) {
		r.stop.Store(true)
	}
}

// Run runs the workload until the duration or transaction count is reached, ctx is
// cancelled (interrupted), or the target stays unreachable (failed). Every interval,
// including the last partial one, is passed to sink before Run returns.
func (r *Runner) Run(ctx context.Context, sink Sink) Result {
	base := context.Background()
	if r.poller {
		base = sock.WithPoller(base)
	}
	r.hardCtx, r.hardStop = context.WithCancel(base)
	defer r.hardStop()
	r.start = time.Now()
	r.measure = r.start.Add(r.cfg.Warmup)
	if r.cfg.Duration > 0 {
		r.end = r.measure.Add(r.cfg.Duration)
	}
	if r.onStart != nil {
		r.onStart(r.start)
	}

	var wg sync.WaitGroup
	if r.mux {
		r.runMux(&wg)
	} else {
		for _, c := range r.clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.done.Store(true)
				r.client(c)
			}()
		}
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()

	// Stop on interrupt: graceful first, then cancel statements in flight.
	interrupted := atomic.Bool{}
	go func() {
		select {
		case <-ctx.Done():
			interrupted.Store(true)
			r.stop.Store(true)
		case <-finished:
			return
		}
		select {
		case <-time.After(r.cfg.StopGrace):
			r.hardStop()
		case <-finished:
		}
	}()
	// With a deadline, cancel statements still running shortly after it.
	if !r.end.IsZero() {
		go func() {
			select {
			case <-time.After(time.Until(r.end) + r.cfg.StopGrace):
				r.stop.Store(true)
				r.hardStop()
			case <-finished:
			}
		}()
	}

	warnings, sinkErr := r.collect(finished, sink)
	endAt := time.Now()
	res := Result{Status: StatusComplete, Start: r.start, End: endAt, Warnings: warnings}
	res.Errors, res.ErrorsUnlisted = r.book.finish(r.clients)
	res.Aborted = int(r.aborted.Load())
	switch {
	case sinkErr != nil:
		res.Status, res.Reason = StatusFailed, sinkErr.Error()
	case r.failErr != nil:
		res.Status, res.Reason = StatusFailed, r.failErr.Error()
	case res.Aborted > 0:
		res.Status, res.ByErrors = StatusFailed, true
		res.Reason = abortReason(res.Aborted, len(r.clients), r.firstAbort)
		if interrupted.Load() && res.Aborted < len(r.clients) {
			res.Reason += "; then interrupted by signal"
		}
	case interrupted.Load():
		res.Status, res.Reason = StatusInterrupted, "interrupted by signal"
	}
	return res
}

// abortReason is the reason of a run whose clients aborted: how many, and the first
// client's error.
func abortReason(aborted, clients int, first error) string {
	s := fmt.Sprintf("clients aborted: %d of %d", aborted, clients)
	if first != nil {
		s += "; the first: " + first.Error()
	}
	return s
}

// collect cuts the run into intervals until all clients have finished, then cuts the
// last, partial one.
//
// A cut only swaps every client's recorder for an empty one and reads the clock: the
// interval's start and end are the times its counts were actually taken, on the run's
// monotonic clock. Merging the old recorders (the expensive part: one histogram per
// client and type) and writing the interval happen on two other goroutines, so that a
// slow merge or a slow store delays neither the next cut nor its timestamp. Measured
// before, with 64 clients at 100ms on 2 busy cores: merging and writing inside the cut
// took a median of 16ms and up to 630ms, the cuts fell behind the schedule by up to
// 690ms, and the intervals were labelled with the schedule anyway.
//
// If the machine cannot keep the requested interval, the intervals are as long as
// they really were and the run gets a warning (Result.Warnings).
func (r *Runner) collect(finished <-chan struct{}, sink Sink) ([]Warning, error) {
	n := len(r.clients)
	// Sets of recorders: the clients write to one while the merger empties another. A
	// third is made when a cut finds the merger still busy with the last two (each set
	// costs a histogram per client and type in use, so not beyond maxSetsClients
	// clients); after that a cut waits for the merger.
	sets := 2
	if n > maxSetsClients {
		sets = 1
	}
	sets++
	free := make(chan []*measure.Recorder, sets)
	made := 0
	newSet := func() []*measure.Recorder {
		made++
		set := make([]*measure.Recorder, n)
		for i := range set {
			set[i] = measure.NewRecorder(r.nTypes)
		}
		return set
	}
	free <- newSet()

	batches := make(chan batch, 1)
	ivs := make(chan *measure.Interval, 256)
	go r.merge(batches, free, ivs)
	var sinkErr error
	sunk := make(chan struct{})
	go func() {
		defer close(sunk)
		for iv := range ivs {
			if sinkErr != nil {
				continue
			}
			if err := sink(iv); err != nil {
				sinkErr = err
				r.fail(err)
			}
		}
	}()

	var (
		idx      int
		prevAt   time.Duration // when the previous cut was taken
		prevPlan time.Duration // the boundary the previous cut stood for
		lag      lagStats
	)
	// cut swaps in a free set of recorders for the interval that begins at the boundary
	// planned at plan, and passes the old ones on; it returns when it was taken.
	cut := func(plan time.Duration) time.Duration {
		var set []*measure.Recorder
		select {
		case set = <-free:
		default:
			if made < sets-1 {
				set = newSet()
			} else {
				set = <-free
			}
		}
		if r.beforeCut != nil {
			r.beforeCut(plan)
		}
		for _, rec := range set {
			rec.Warmup = plan < r.cfg.Warmup
		}
		t0 := time.Since(r.start)
		for i, c := range r.clients {
			set[i] = c.slot.Exchange(set[i])
		}
		t1 := time.Since(r.start)
		for _, c := range r.clients {
			c.slot.Settle()
		}
		at := t0 + (t1-t0)/2
		lag.spread(t1-t0, r.cfg.Interval)
		if r.onCut != nil {
			r.onCut(idx)
		}
		batches <- batch{recs: set, idx: idx, start: prevAt, end: at, warmup: prevPlan < r.cfg.Warmup}
		idx++
		prevAt = at
		return at
	}
	// With a P per client (r.procs > 0) the cutter sleeps raw on a P of its own; with
	// the poller, clients hold no Ps and a Go timer is served on time. So it is too
	// when multiplexed: the few worker threads leave Ps idle (Tuner adds two), and an
	// idle thread waits in the runtime's netpoller for the timer. There the raw sleep
	// cost the client CPU without a transaction to show for it: 200 wake-ups a second
	// (5ms slices) and sysmon's preemption signals, since the goroutine never passes
	// through the scheduler (#33: measured with the server stopped, fathom used about
	// 20ms of CPU a second, 1.2µs per transaction at 16,000 a second).
	raw := r.procs > 0 && !r.mux
	defer cutterThread(raw)()
	for {
		next := r.nextBoundary(prevPlan)
		last := r.isRunEnd(next)
		if sleepUntilOrDone(r.start.Add(next), finished, raw) {
			// Finished early: all transactions done (-t), interrupted, or failed;
			// or the cutter woke so late that the clients had finished meanwhile, in
			// which case the boundaries it slept through are counted as missed.
			if time.Since(r.start) > prevAt || idx == 0 {
				at := cut(next)
				r.countMissed(&lag, next, at, last)
			}
			return r.endCollect(batches, sunk, &sinkErr, lag)
		}
		if last {
			// Wait for the clients to finish the transactions they started before
			// the deadline, so that they are counted in the last interval.
			<-finished
			cut(next)
			return r.endCollect(batches, sunk, &sinkErr, lag)
		}
		at := cut(next)
		lag.add(at-next, next, r.cfg.Interval)
		// Late: skip the boundaries already past or too close (skipLate).
		prevPlan = r.skipLate(&lag, next, at)
	}
}

// merge turns each batch of recorders into an interval: it merges and empties the
// recorders, hands the set back to free and passes the interval on to ivs, which it
// closes when batches is closed.
func (r *Runner) merge(batches <-chan batch, free chan<- []*measure.Recorder, ivs chan<- *measure.Interval) {
	for b := range batches {
		iv := measure.NewInterval(b.idx, r.types)
		iv.Start, iv.End, iv.Warmup = b.start, b.end, b.warmup
		for _, rec := range b.recs {
			iv.AddRecorder(rec)
			rec.Reset()
		}
		free <- b.recs
		ivs <- iv
	}
	close(ivs)
}

// isRunEnd says whether the boundary b is the run's end (-T).
func (r *Runner) isRunEnd(b time.Duration) bool {
	return !r.end.IsZero() && r.start.Add(b).Equal(r.end)
}

// countMissed counts the boundaries from next up to the final cut taken at at, after
// the clients finished early: next's lag, and those after it as skipped (none when
// next is the run's last boundary, or from the run's end on).
func (r *Runner) countMissed(lag *lagStats, next, at time.Duration, last bool) {
	for b := next; b < at && !(last || r.isRunEnd(b)); b = r.nextBoundary(b) {
		if b == next {
			lag.add(at-b, b, r.cfg.Interval)
		} else {
			lag.skipped++
		}
	}
}

// skipLate skips, after a late cut taken at at for the boundary prevPlan, the
// boundaries already past, whose time the interval just cut covers, and one less than
// half an interval away, which would make a sliver too short to say much; never the
// end of warm-up or of the run. It returns the last boundary skipped (or prevPlan).
func (r *Runner) skipLate(lag *lagStats, prevPlan, at time.Duration) time.Duration {
	for {
		nb := r.nextBoundary(prevPlan)
		if nb > at+r.cfg.Interval/2 || nb == r.cfg.Warmup || r.isRunEnd(nb) {
			return prevPlan
		}
		prevPlan = nb
		lag.skipped++
	}
}

// maxSetsClients: up to this many clients, a third set of recorders lets the merger
// fall behind by an interval without delaying a cut. It was 256, when a recorder
// held whole HDR histograms (196 KB each); now a recorder's histograms are blocks made
// as latencies land in them. Measured at 10,000 clients in open loop against MariaDB
// (-R 3000, -P 100ms, load 35 on 2 CPUs), where the merger is a goroutine queued
// behind 10,000 clients' on 2 Ps: with two sets the cuts waited for it, interval ends
// came up to 3.7 s late and 13 intervals were stored for 10 s; with three, 0.6 s and
// 58, for 505 MB of RSS instead of 437 MB.
const maxSetsClients = 16384

// batch is one interval's recorders on their way to the merger.
type batch struct {
	recs       []*measure.Recorder
	idx        int
	start, end time.Duration
	warmup     bool
}

// endCollect waits for the last interval to be written and returns the warnings.
func (r *Runner) endCollect(batches chan<- batch, sunk <-chan struct{}, sinkErr *error, lag lagStats) ([]Warning, error) {
	close(batches)
	<-sunk
	return lag.warnings(r.cfg.Interval), *sinkErr
}

// lagStats tracks how far behind their scheduled boundaries the cuts were taken.
type lagStats struct {
	cuts, late int
	worst      time.Duration // the largest lag
	worstAt    time.Duration // the boundary it missed
	skipped    int           // boundaries skipped after a late cut
	maxSpread  time.Duration // the longest time one cut took to exchange the recorders
	wide       int           // cuts whose exchanges took longer than lateTolerance
	wideCuts   int           // cuts whose exchanges were timed
}

// lateTolerance is how late a cut may be before it counts as late: a tenth of the
// interval, at least a millisecond (a busy machine's scheduling delay).
func lateTolerance(interval time.Duration) time.Duration {
	return max(interval/10, time.Millisecond)
}

// spread notes how long one cut's exchanges took.
func (l *lagStats) spread(d, interval time.Duration) {
	l.maxSpread = max(l.maxSpread, d)
	l.wideCuts++
	if d > lateTolerance(interval) {
		l.wide++
	}
}

func (l *lagStats) add(lag, boundary, interval time.Duration) {
	l.cuts++
	if lag > lateTolerance(interval) {
		l.late++
	}
	if lag > l.worst {
		l.worst, l.worstAt = lag, boundary
	}
}

// warnings says what the user must know when the cuts did not keep the schedule.
func (l *lagStats) warnings(interval time.Duration) []Warning {
	var ws []Warning
	if l.wide > 0 {
		// The cutter exchanges the clients' recorders one after the other; when it is
		// descheduled in the middle, a transaction that ended meanwhile lands on
		// either side of the interval end (seen at load 17 on 2 cores: 1,972 and
		// 1,535 in two 100ms intervals of 64 clients whose transactions' own end
		// times put 2,546 and 961).
		ws = append(ws, Warning{Kind: warnWideCuts, Text: fmt.Sprintf(
			"the machine was too busy to end every %s interval at one instant: %d of %d interval ends took more than %s to take (worst %s), and a transaction that ended during one may be counted in the interval on either side of it",
			interval, l.wide, l.wideCuts, lateTolerance(interval), l.maxSpread.Round(100*time.Microsecond))})
	}
	if l.late == 0 && l.skipped == 0 {
		return ws
	}
	text := fmt.Sprintf("the machine could not keep the %s report interval: %d of %d interval ends came more than %s late (worst %s, at %s)",
		interval, l.late, l.cuts, lateTolerance(interval), l.worst.Round(time.Microsecond*100), l.worstAt)
	if l.skipped > 0 {
		text += fmt.Sprintf(", and %d scheduled ends were skipped (already past, or too close to a late one), their time falling into longer intervals", l.skipped)
	}
	text += "; every interval is stored with the times its counts were actually taken"
	return append([]Warning{{Kind: WarnLateIntervals, Text: text}}, ws...)
}

// Warning kinds.
const (
	// WarnLateIntervals: interval ends came late, so intervals are longer or
	// shorter than requested.
	WarnLateIntervals = "late-intervals"
	// warnWideCuts: some interval ends took long to take, so transactions that
	// ended meanwhile may be counted on either side of them.
	warnWideCuts = "wide-interval-ends"
)

// Warning is something about a run's numbers that its reader must know; it is stored
// with the run.
type Warning struct {
	Kind string // one of the Warn constants
	Text string // one line for people
}

// nextBoundary returns the interval boundary after prev: multiples of the interval
// during warm-up, a cut at the end of warm-up, then multiples of the interval from
// there, and a cut at the end of the run.
func (r *Runner) nextBoundary(prev time.Duration) time.Duration {
	p, w := r.cfg.Interval, r.cfg.Warmup
	var next time.Duration
	if prev < w {
		next = (prev/p + 1) * p
		if next > w {
			next = w
		}
	} else {
		next = w + ((prev-w)/p+1)*p
	}
	if !r.end.IsZero() {
		if e := r.end.Sub(r.start); next > e && prev < e {
			next = e
		}
	}
	return next
}
