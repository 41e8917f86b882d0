// Package measure records transaction latencies and counts per worker without locks or
// allocation, and merges them into per-interval snapshots at interval boundaries.
package measure

import (
	"runtime"
	"sync/atomic"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/fathom-lab/fathom/internal/target"
)

// Histogram range: 1 µs to 1 h in nanoseconds, 3 significant figures.
const (
	minLatency = 1_000
	maxLatency = 3_600_000_000_000
	sigFigs    = 3
)

// NewHistogram returns an empty latency histogram with fathom's range.
func NewHistogram() *hdr.Histogram { return hdr.New(minLatency, maxLatency, sigFigs) }

// record clamps v into the histogram's range so that nothing is ever dropped.
func record(h *hdr.Histogram, v int64) {
	if v < minLatency {
		v = minLatency
	} else if v > maxLatency {
		v = maxLatency
	}
	_ = h.RecordValue(v)
}

// Counts are the per-transaction-type counters of one interval.
type Counts struct {
	OK     int64 `json:"ok"`
	Failed int64 `json:"failed"` // gave up: a non-retryable error or out of tries
	// Errors counts every failed attempt by class, including ones retried later.
	Errors     [target.NumClasses]int64 `json:"-"`
	Retries    int64                    `json:"retries"`
	Statements int64                    `json:"statements"`
	// Open loop only: started more than LateThreshold after the intended time, and
	// intended starts that never began (skipped by --latency-limit or at the end).
	Late    int64 `json:"late"`
	Dropped int64 `json:"dropped"`
}

// Add adds o to c.
func (c *Counts) Add(o *Counts) {
	c.OK += o.OK
	c.Failed += o.Failed
	for i := range c.Errors {
		c.Errors[i] += o.Errors[i]
	}
	c.Retries += o.Retries
	c.Statements += o.Statements
	c.Late += o.Late
	c.Dropped += o.Dropped
}

// ErrorTotal is the number of failed attempts of any class except canceled.
func (c *Counts) ErrorTotal() int64 {
	var n int64
	for i, v := range c.Errors {
		if target.Class(i) != target.ClassCanceled {
			n += v
		}
	}
	return n
}

// Recorder holds one worker's measurements for one interval. It is written by exactly
// one goroutine at a time (see Slot).
type Recorder struct {
	Counts     []Counts
	latency    []*dense // response time of successful transactions, by type
	service    []*dense // service time (open loop), by type
	failed     []*dense // time spent on transactions that gave up, by type
	commands   []*dense // each script command's time (pgbench's -r), by command index
	Reconnects int64
	// Warmup: the recorder serves a warm-up interval. The runner sets it when it
	// installs the recorder, so that a client knows which kind of interval each of its
	// transactions was counted in (with -t, only those in measured intervals count).
	Warmup bool
}

// NewRecorder returns a recorder for n transaction types. Histograms are allocated on
// first use so that rare outcomes cost no memory.
func NewRecorder(n int) *Recorder {
	return &Recorder{
		Counts:  make([]Counts, n),
		latency: make([]*dense, n),
		service: make([]*dense, n),
		failed:  make([]*dense, n),
	}
}

func lazy(hs []*dense, i int) *dense {
	h := hs[i]
	if h == nil {
		h = newDense()
		hs[i] = h
	}
	return h
}

// Success records a successful transaction of type typ. response is measured from the
// intended start (open loop) or the actual start (closed loop); service from the
// actual start, or 0 in closed loop where it equals response.
func (r *Recorder) Success(typ int, response, service int64) {
	r.Counts[typ].OK++
	lazy(r.latency, typ).record(response)
	if service > 0 {
		lazy(r.service, typ).record(service)
	}
}

// Failure records a transaction that gave up after its last try.
func (r *Recorder) Failure(typ int, elapsed int64) {
	r.Counts[typ].Failed++
	lazy(r.failed, typ).record(elapsed)
}

// Command records one run of command i (a statement or meta-command of a script,
// numbered by the workload) that took ns. The first use of a command index in a
// recorder allocates; recorders are reused, so a run's steady state does not.
func (r *Recorder) Command(i int, ns int64) {
	if i >= len(r.commands) {
		r.commands = append(r.commands, make([]*dense, i+1-len(r.commands))...)
	}
	lazy(r.commands, i).record(ns)
}

// Reset empties the recorder for reuse.
func (r *Recorder) Reset() {
	for _, d := range r.commands {
		if d != nil {
			d.reset()
		}
	}
	for i := range r.Counts {
		r.Counts[i] = Counts{}
		for _, hs := range [][]*dense{r.latency, r.service, r.failed} {
			if hs[i] != nil {
				hs[i].reset()
			}
		}
	}
	r.Reconnects = 0
}

// Slot is a worker's handle on its current Recorder. The worker brackets each write
// with Begin/End; the runner swaps in a fresh recorder at an interval boundary with
// Swap, which waits for a write in progress to end. No locks on the worker's path:
// two atomic stores and one load per transaction.
type Slot struct {
	active  atomic.Pointer[Recorder]
	writing atomic.Int32
	_       [48]byte // keep slots of different workers off one cache line
}

// NewSlot returns a slot with r active.
func NewSlot(r *Recorder) *Slot {
	s := &Slot{}
	s.active.Store(r)
	return s
}

// Begin returns the recorder to write to; call End when done.
func (s *Slot) Begin() *Recorder {
	s.writing.Store(1)
	return s.active.Load()
}

// End ends a write started by Begin.
func (s *Slot) End() { s.writing.Store(0) }

// Exchange installs next and returns the previous recorder at once; a write to it may
// still be in progress until Settle returns. Cutting many slots at one instant is
// Exchange on each, then Settle on each: with many clients on few cores, a client
// descheduled in the middle of a write would otherwise hold up the exchange of every
// slot after its own.
func (s *Slot) Exchange(next *Recorder) *Recorder { return s.active.Swap(next) }

// Settle waits until no write started before the last Exchange is in progress.
func (s *Slot) Settle() {
	for s.writing.Load() != 0 {
		runtime.Gosched()
	}
}

// swap installs next and returns the previous recorder once no write to it is in
// progress. Correct because Begin publishes writing before loading active and Swap
// replaces active before reading writing (Go atomics are sequentially consistent).
func (s *Slot) swap(next *Recorder) *Recorder {
	old := s.active.Swap(next)
	for s.writing.Load() != 0 {
		runtime.Gosched()
	}
	return old
}
