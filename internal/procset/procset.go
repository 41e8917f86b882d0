// Package procset changes the process-wide runtime settings that a run's network clients
// need: GOMAXPROCS and the GC percent. Libraries never change them themselves: the
// front end that owns the process (the CLI, in env.go) keeps one Process and hands
// the engine a Tuner for it, and each run records what was in effect.
package procset

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// RunGC is the GC percent while network clients run, unless the user set GOGC. A
// run's live heap is a few megabytes, so at the default of 100 the collector ran three
// or four times a second, and every cycle stops the world, which interrupts each
// client's raw receive with a signal. At 400 it runs about a fifth as often: measured
// on sysbench's point select with 4 clients, builds alternating, 4 rounds, client CPU
// per transaction went from a median of 17.2 µs to 15.4 µs and throughput rose by
// about a tenth (1000 was no better than 400). The heap peaks at five times the live
// heap instead of twice.
const RunGC = 400

// maxProcs caps the Ps asked for.
const maxProcs = 512

// Process is the runtime settings of one process, shared by every run in it (an
// experiment's cell on several instances runs several at once): GOMAXPROCS covers all
// their clients until the last one is done, then returns to what it was.
type Process struct {
	mu     sync.Mutex
	users  int // runs that acquired
	gcSet  int // of those, runs that raised the GC percent
	wanted int // Ps asked for together
	base   int // GOMAXPROCS before the first run raised it
	baseGC int // the GC percent before the first run raised it
}

// acquire is called as a run's network clients start: they want procs Ps of their
// own (0 when they use Go's network poller), and the GC percent raised to RunGC unless
// keepGC (the user chose GOGC).
func (p *Process) acquire(procs int, keepGC bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.users == 0 {
		p.base = runtime.GOMAXPROCS(0)
	}
	p.users++
	p.wanted += procs
	if !keepGC {
		if p.gcSet == 0 {
			p.baseGC = debug.SetGCPercent(RunGC)
		}
		p.gcSet++
	}
	p.setProcs()
}

// release gives back what Acquire asked for (with the same arguments).
func (p *Process) release(procs int, keepGC bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.users--
	p.wanted -= procs
	p.setProcs()
	if !keepGC {
		p.gcSet--
		if p.gcSet == 0 {
			debug.SetGCPercent(p.baseGC)
		}
	}
}

// setProcs sets GOMAXPROCS for the clients of all runs; mu is held.
func (p *Process) setProcs() {
	want := max(p.base, min(p.wanted+2, maxProcs))
	if p.wanted == 0 {
		want = p.base
	}
	if want > 0 && want != runtime.GOMAXPROCS(0) {
		runtime.GOMAXPROCS(want)
	}
}

// Tuner is a Process as one front end's request sees it: whether the user chose GOGC.
// It implements runner.Tuner.
type Tuner struct {
	Process *Process
	KeepGC  bool
}

// Acquire asks for procs Ps (see Process.Acquire).
func (t Tuner) Acquire(procs int) { t.Process.acquire(procs, t.KeepGC) }

// Release gives them back.
func (t Tuner) Release(procs int) { t.Process.release(procs, t.KeepGC) }

// GCPercent reads the GC percent in effect without changing it.
func GCPercent() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return -1
	}
	return int(s[0].Value.Uint64())
}
