// Package runner drives a workload against a target with one connection per client,
// closed loop by default or open loop on a Poisson schedule, and emits merged
// measurements at every report interval.
package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/target"
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
}

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
	slot   *measure.Slot
	done   atomic.Bool
}

// Runner is one run in progress.
type Runner struct {
	procs  int // clients counted in procsWanted, 0 if none
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
}

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
	r.threads(t.Kind())
	errs := make([]error, len(r.clients))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for _, c := range r.clients {
		c.slot = measure.NewSlot(measure.NewRecorder(r.nTypes))
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			conn, err := t.Connect(ctx)
			if err != nil {
				errs[c.id] = err
				return
			}
			c.conn = conn
			if err := c.worker.Bind(ctx, conn); err != nil {
				errs[c.id] = fmt.Errorf("preparing statements: %w", err)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			r.Close()
			return nil, err
		}
	}
	return r, nil
}

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
				cs = append(cs, c)
			}
		}
		cfg.Clients = len(cs)
		return cs
	}
	for i := 0; i < cfg.Clients; i++ {
		c := &client{id: i, txns: cfg.Transactions, worker: w.NewWorker(i, cfg.Seed)}
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
		if c != nil && c.conn != nil {
			_ = c.conn.Close()
			c.conn = nil
		}
	}
	if r.procs > 0 {
		releaseProcs(r.procs)
		r.procs = 0
	}
}

// maxProcs caps the Ps the runner asks for.
const maxProcs = 512

// Runners in one process (an experiment's cell on several instances runs several at
// once) share GOMAXPROCS: procsWanted is the Ps they ask for together, baseProcs what
// GOMAXPROCS was before the first of them raised it.
var (
	procsMu     sync.Mutex
	procsWanted int
	baseProcs   int
	baseGC      int // the GC percent before the first runner raised it
)

// runGC is the GC percent while network clients run, unless GOGC is set. A run's live
// heap is a few megabytes, so at the default of 100 the collector ran three or four
// times a second, and every cycle stops the world, which interrupts each client's
// raw receive with a signal. At 400 it runs about a fifth as often: measured on
// sysbench's point select with 4 clients, builds alternating, 4 rounds, client CPU
// per transaction went from a median of 17.2 µs to 15.4 µs and throughput rose by
// about a tenth (1000 was no better than 400). The heap peaks at five times the live
// heap instead of twice.
const runGC = 400

// threads gives every client of a network target a P of its own, plus two for the
// collectors and the rest, so that a client waiting for the server holds its thread
// and P as a C client's thread does, instead of handing them over at every statement
// (see package sock). Ps are not CPUs: a waiting client uses none. SQLite clients
// compute rather than wait, so they keep the default.
func (r *Runner) threads(kind string) {
	if kind == "sqlite" {
		return
	}
	r.procs = len(r.clients)
	procsMu.Lock()
	defer procsMu.Unlock()
	if procsWanted == 0 {
		baseProcs = runtime.GOMAXPROCS(0)
		if os.Getenv("GOGC") == "" {
			baseGC = debug.SetGCPercent(runGC)
		}
	}
	procsWanted += r.procs
	setProcs()
}

// releaseProcs gives back what threads asked for.
func releaseProcs(n int) {
	procsMu.Lock()
	defer procsMu.Unlock()
	procsWanted -= n
	setProcs()
	if procsWanted == 0 && baseGC != 0 {
		debug.SetGCPercent(baseGC)
		baseGC = 0
	}
}

// setProcs sets GOMAXPROCS for the clients of all runners; procsMu is held.
func setProcs() {
	want := max(baseProcs, min(procsWanted+2, maxProcs))
	if procsWanted == 0 {
		want = baseProcs
	}
	if want > 0 && want != runtime.GOMAXPROCS(0) {
		runtime.GOMAXPROCS(want)
	}
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

// Run runs the workload until the duration or transaction count is reached, ctx is
// cancelled (interrupted), or the target stays unreachable (failed). Every interval,
// including the last partial one, is passed to sink before Run returns.
func (r *Runner) Run(ctx context.Context, sink Sink) Result {
	r.hardCtx, r.hardStop = context.WithCancel(context.Background())
	defer r.hardStop()
	r.start = time.Now()
	r.measure = r.start.Add(r.cfg.Warmup)
	if r.cfg.Duration > 0 {
		r.end = r.measure.Add(r.cfg.Duration)
	}

	var wg sync.WaitGroup
	for _, c := range r.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.done.Store(true)
			r.client(c)
		}()
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

	sinkErr := r.collect(finished, sink)
	endAt := time.Now()
	res := Result{Status: StatusComplete, Start: r.start, End: endAt}
	switch {
	case sinkErr != nil:
		res.Status, res.Reason = StatusFailed, sinkErr.Error()
	case r.failErr != nil:
		res.Status, res.Reason = StatusFailed, r.failErr.Error()
	case interrupted.Load():
		res.Status, res.Reason = StatusInterrupted, "interrupted by signal"
	}
	return res
}

// collect swaps the clients' recorders at each boundary and merges them, until all
// clients have finished; then it emits the last, partial interval.
func (r *Runner) collect(finished <-chan struct{}, sink Sink) error {
	spare := make([]*measure.Recorder, len(r.clients))
	for i := range spare {
		spare[i] = measure.NewRecorder(r.nTypes)
	}
	var sinkErr error
	idx := 0
	prev := time.Duration(0)
	emit := func(at time.Duration) {
		iv := measure.NewInterval(idx, r.types)
		iv.Start, iv.End = prev, at
		iv.Warmup = prev < r.cfg.Warmup
		for i, c := range r.clients {
			old := c.slot.Swap(spare[i])
			iv.AddRecorder(old)
			old.Reset()
			spare[i] = old
		}
		idx++
		prev = at
		if sinkErr == nil {
			if err := sink(iv); err != nil {
				sinkErr = err
				r.fail(err)
			}
		}
	}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		next := r.nextBoundary(prev)
		if !r.end.IsZero() && r.start.Add(next).Equal(r.end) {
			// The last interval: wait for the clients to finish the transactions they
			// started before the deadline, so that they are counted in it.
			timer.Reset(time.Until(r.end))
			select {
			case <-timer.C:
				<-finished
				emit(next)
				return sinkErr
			case <-finished:
			}
		} else {
			timer.Reset(time.Until(r.start.Add(next)))
			select {
			case <-timer.C:
				emit(next)
				continue
			case <-finished:
			}
		}
		// Finished early: all transactions done (-t), interrupted, or failed.
		if at := time.Since(r.start); at > prev || idx == 0 {
			emit(at)
		}
		return sinkErr
	}
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
