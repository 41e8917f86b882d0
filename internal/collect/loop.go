package collect

import (
	"context"
	"github.com/fathom-lab/fathom/internal/sample"
	"sync"
	"sync/atomic"
	"time"
)

// Loop samples in the background when triggered, so that the caller (the runner's
// interval sink, off the clients' hot path) never waits for a collector. Samples are
// handed to the sink in order from the loop's goroutine.
type Loop struct {
	s       *Sampler
	ctx     context.Context
	cancel  context.CancelFunc
	trig    chan trigger
	sink    func(*sample.Sample)
	wg      sync.WaitGroup
	skipped atomic.Int64
	stopped atomic.Bool
	mu      sync.Mutex
}

type trigger struct {
	index int
	at    time.Time
}

// Loop starts the background goroutine. sink is called with each sample.
func (s *Sampler) Loop(ctx context.Context, sink func(*sample.Sample)) *Loop {
	l := &Loop{s: s, trig: make(chan trigger, 1), sink: sink}
	l.ctx, l.cancel = context.WithCancel(context.WithoutCancel(ctx))
	l.wg.Add(1)
	go l.run()
	return l
}

func (l *Loop) run() {
	defer l.wg.Done()
	for t := range l.trig {
		smp := l.s.Sample(l.ctx, t.index, t.at)
		l.sink(smp)
	}
}

// Trigger asks for a sample closing interval index. It never blocks: when the
// previous sample is still being taken and one is already queued, the request is
// dropped and counted (rates then span the longer time, which they measure).
func (l *Loop) Trigger(index int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped.Load() {
		return false
	}
	select {
	case l.trig <- trigger{index, time.Now()}:
		return true
	default:
		l.skipped.Add(1)
		return false
	}
}

// Skipped is how many triggers were dropped because sampling could not keep up.
func (l *Loop) Skipped() int64 { return l.skipped.Load() }

// Stop waits up to wait for queued samples to be taken and handed over, then
// cancels what is left; it does not close the sampler.
func (l *Loop) Stop(wait time.Duration) {
	l.mu.Lock()
	if !l.stopped.Swap(true) {
		close(l.trig)
	}
	l.mu.Unlock()
	done := make(chan struct{})
	go func() { l.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(wait):
		l.cancel()
		<-done
	}
	l.cancel()
}
