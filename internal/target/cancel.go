package target

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
)

// Canceler interrupts a connection's calls when their context ends, without a
// goroutine hand-off per call: one context.AfterFunc per distinct context (the runner
// passes the same one for the whole run), armed only while a call is in flight. Each
// target's Conn holds one and says what interrupting means (closing the socket,
// sqlite3_interrupt).
//
// state holds the generation of the armed registration, 0 when idle, or fired once
// the AfterFunc has interrupted the call.
type Canceler struct {
	// Mu, if set, is held while the interrupt is delivered, so that a caller that
	// takes Mu after Disarm reported the firing knows the interrupt is over and
	// cannot land on a later call (SQLite).
	Mu *sync.Mutex
	// Interrupt interrupts the call in flight; set when the connection is made.
	Interrupt func()

	watched <-chan struct{}
	stop    func() bool
	gen     uint64
	armed   uint64
	state   atomic.Uint64
}

const fired = math.MaxUint64

// Arm prepares a call made with ctx, registering Interrupt for ctx's Done channel if
// it is not registered yet. It returns false, arming nothing, if ctx is already done.
func (w *Canceler) Arm(ctx context.Context) bool {
	done := ctx.Done()
	if done == nil {
		w.armed = 0
		return true
	}
	select {
	case <-done:
		return false
	default:
	}
	if done != w.watched {
		w.watch(ctx, done)
	}
	w.armed = w.gen
	w.state.Store(w.gen)
	return true
}

func (w *Canceler) watch(ctx context.Context, done <-chan struct{}) {
	if w.stop != nil {
		w.stop()
	}
	w.gen++
	gen := w.gen
	w.watched = done
	w.stop = context.AfterFunc(ctx, func() {
		if w.Mu != nil {
			w.Mu.Lock()
			defer w.Mu.Unlock()
		}
		if w.state.CompareAndSwap(gen, fired) {
			w.Interrupt()
		}
	})
}

// Armed reports whether the current call was armed (its context can end).
func (w *Canceler) Armed() bool { return w.armed != 0 }

// Done is the Done channel of the armed call's context, or nil if the call is not
// armed (for waits inside a call, such as SQLite's busy handler).
func (w *Canceler) Done() <-chan struct{} {
	if w.armed == 0 {
		return nil
	}
	return w.watched
}

// Disarm ends the call and reports whether its context ended during it and the
// interrupt was (or is being) delivered.
func (w *Canceler) Disarm() bool {
	return w.armed != 0 && !w.state.CompareAndSwap(w.armed, 0)
}

// Stop removes the registration (when the connection closes).
func (w *Canceler) Stop() {
	if w.stop != nil {
		w.stop()
		w.stop, w.watched = nil, nil
	}
}
