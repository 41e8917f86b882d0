//go:build linux

package runner

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
)

// muxSupported: the multiplexed path uses epoll, Linux only.
const muxSupported = true

// muxWaitMs bounds one wait for replies, so that a thread notices a hard stop within
// that long even when its server has stopped answering.
const muxWaitMs = 5

// muxYield: a worker thread yields this often of its own accord (see sock's
// yieldEvery: the runtime would otherwise preempt it with a signal after 10ms).
const muxYield = 9 * time.Millisecond

// runMux starts the worker threads, each with its share of the clients. wg counts
// them, and every client that leaves a thread for a goroutine of its own.
func (r *Runner) runMux(wg *sync.WaitGroup) {
	n := muxThreads(len(r.clients))
	shares := make([][]*muxConn, n)
	for i, c := range r.clients {
		shares[i%n] = append(shares[i%n], &muxConn{c: c, in: make([]byte, 0, 2048), out: make([]byte, 0, 256)})
	}
	for _, s := range shares {
		wg.Add(1)
		go func() {
			defer wg.Done()
			(&muxWorker{r: r, wg: wg, conns: s}).run()
		}()
	}
}

// muxWorker is one worker thread and the clients it owns.
type muxWorker struct {
	r      *Runner
	wg     *sync.WaitGroup
	ep     int
	conns  []*muxConn
	live   []bool // conns[i] is in the epoll set
	out    []bool // conns[i] waits for its socket to take more of its request
	active int
	// sendq holds the clients whose next request is ready: they are written together
	// once every ready reply has been read (see flushAll).
	sendq []int
	raw   bool          // waits hold the P (there is one for each thread and more)
	yield time.Duration // when the thread last yielded, since muxEpoch
}

var muxEpoch = time.Now()

// run is the worker's loop. Its goroutine is not locked to its thread: it need not
// be (its waits hold the P), and a locked goroutine's every yield hands the P to
// another thread and puts its own to sleep (measured with perf's sched_switch at 32
// clients: a tenth of the worker threads' context switches were that).
func (w *muxWorker) run() {
	r := w.r
	w.raw = runtime.GOMAXPROCS(0) > muxThreads(len(r.clients))
	w.live, w.out = make([]bool, len(w.conns)), make([]bool, len(w.conns))
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		r.fail(fmt.Errorf("creating an epoll set: %v", err))
		for _, m := range w.conns {
			m.c.done.Store(true)
		}
		return
	}
	w.ep = ep
	defer unix.Close(ep)
	for i, m := range w.conns {
		ex, fd, ok := muxState(m.c)
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(i)}
		if !ok || unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, fd, &ev) != nil {
			w.handoff(i, nil)
			continue
		}
		m.ex, m.fd = ex, fd
		m.batch, _ = ex.(target.Batched)
		if ex == nil {
			m.step = m.c.worker.(workload.Stepper)
		}
		w.live[i] = true
		w.active++
	}
	for i, m := range w.conns {
		if w.live[i] {
			w.begin(i, m)
		}
	}
	w.flushAll()
	events := make([]unix.EpollEvent, len(w.conns))
	for w.active > 0 {
		if r.hardCtx.Err() != nil {
			w.cancel()
			return
		}
		for _, ev := range events[:w.wait(events)] {
			i := int(ev.Fd)
			if !w.live[i] {
				continue
			}
			m := w.conns[i]
			if ev.Events&unix.EPOLLOUT != 0 && w.out[i] {
				if err := w.flush(i, m); err != nil {
					w.complete(i, m, m.ex.Lost(err))
					continue
				}
			}
			if ev.Events&(unix.EPOLLIN|unix.EPOLLERR|unix.EPOLLHUP) != 0 {
				w.receive(i, m)
			}
		}
		w.flushAll()
	}
}

// flushAll writes the requests made ready since the last call. Writing them only
// after every ready reply has been read keeps the thread from being preempted in the
// middle of that work by the server process each write wakes (measured with perf on 2
// busy CPUs: a sixth of the client's time went to switching after a write).
func (w *muxWorker) flushAll() {
	for k := 0; k < len(w.sendq); k++ { // a failed write can queue a retry's request
		i := w.sendq[k]
		if m := w.conns[i]; w.live[i] {
			if err := w.flush(i, m); err != nil {
				w.complete(i, m, m.ex.Lost(err))
			}
		}
	}
	w.sendq = w.sendq[:0]
}

// wait waits up to muxWaitMs for ready connections and returns how many there are.
func (w *muxWorker) wait(events []unix.EpollEvent) int {
	if !w.raw {
		n, err := unix.EpollWait(w.ep, events, muxWaitMs)
		if err != nil {
			return 0
		}
		return n
	}
	// A raw wait holds the P, like the blocking sockets' raw receives (package sock):
	// no hand-off of the P and no busier sysmon per wait. A signal (the runtime's
	// preemption for a garbage collection) interrupts it, and the thread yields.
	if now := time.Since(muxEpoch); now-w.yield >= muxYield {
		w.yield = now
		runtime.Gosched()
	}
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(w.ep), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), muxWaitMs, 0, 0)
	if e != 0 {
		if e == unix.EINTR {
			runtime.Gosched()
			w.yield = time.Since(muxEpoch)
		}
		return 0
	}
	return int(n)
}

// begin starts the client's next transaction, or takes it out if it is done: the
// same checks, in the same order, as Runner.client.
func (w *muxWorker) begin(i int, m *muxConn) {
	if !w.draw(i, m) {
		return
	}
	if m.step != nil {
		w.stepTo(i, m, m.step.Start(w.r.hardCtx))
		return
	}
	r, c := w.r, m.c
	st, args := c.worker.(workload.Single).Statement()
	ex, ok := st.(target.Exchanger)
	if !ok {
		r.fail(fmt.Errorf("client %d: statement %T cannot be multiplexed", c.id, st))
		w.leave(i)
		return
	}
	if ex != m.ex {
		m.batch, _ = ex.(target.Batched)
	}
	m.ex, m.args = ex, args
	w.send(i, m)
}

// draw draws the client's next transaction, or takes the client out when its run is
// over (false).
func (w *muxWorker) draw(i int, m *muxConn) bool {
	r, c := w.r, m.c
	now := time.Now()
	if r.stop.Load() || (!r.end.IsZero() && !now.Before(r.end)) || (c.txns > 0 && c.measured >= c.txns) {
		w.leave(i)
		return false
	}
	m.typ = c.worker.Next()
	m.start = now
	m.stmts, m.tries, m.retry = 0, 0, 0
	if m.step != nil {
		m.tries = 1
	}
	return true
}

// stepTo sends a stepped transaction's next statement, or settles the transaction
// when the worker says it ended and starts the next: a loop, so that a script whose
// events send nothing, or whose statements fail before they are sent, runs here as
// it would in a goroutine of its own, without growing the stack.
func (w *muxWorker) stepTo(i int, m *muxConn, s workload.Step) {
	r, c := w.r, m.c
	for {
		if s.Ex != nil {
			m.ex, m.args = s.Ex, s.Args
			if err := w.request(m); err != nil {
				// The script's values do not fit its statement: the statement's
				// error, as its own Run would return it.
				s = m.step.Reply(err)
				continue
			}
			w.sendq = append(w.sendq, i)
			return
		}
		m.stmts += int64(s.Stmts)
		switch r.settle(c, &m.typ, m.start, time.Time{}, m.stmts, m.retry, m.tries, s.Err) {
		case verdictNext:
			if !w.draw(i, m) {
				return
			}
		case verdictRetry:
			m.retry++
			m.tries++
		case verdictReconnect:
			w.handoff(i, s.Err)
			return
		default:
			w.leave(i)
			return
		}
		s = m.step.Start(r.hardCtx)
	}
}

// request builds the request for the client's statement and values.
func (w *muxWorker) request(m *muxConn) error {
	out, err := m.ex.AppendRequest(m.out[:0], m.args)
	m.out = out
	m.sent = 0
	return err
}

// send writes the request for the drawn values (again, for a retry).
func (w *muxWorker) send(i int, m *muxConn) {
	if err := w.request(m); err != nil {
		// The workload's values do not fit its statement: its mistake, as a
		// workload.AbortError on the goroutine path, which aborts this client.
		abort := &workload.AbortError{Err: err}
		c := m.c
		rec := c.slot.Begin()
		rec.Counts[m.typ].Errors[target.ClassOther]++
		warm := rec.Warmup
		c.slot.End()
		c.failClass = target.ClassOther
		w.r.noteError(c, m.typ, abort, target.ClassOther, warm, true)
		w.r.finish(c, m.typ, m.start, time.Time{}, m.stmts, m.retry, true)
		w.r.abort(c, abort)
		w.leave(i)
		return
	}
	if m.batch != nil {
		m.stmts += int64(m.batch.Statements())
	} else {
		m.stmts++
	}
	m.tries++
	w.sendq = append(w.sendq, i)
}

// flush writes what the socket takes of the request; the rest waits for EPOLLOUT.
func (w *muxWorker) flush(i int, m *muxConn) error {
	for m.sent < len(m.out) {
		n, _, e := unix.RawSyscall6(unix.SYS_SENDTO, uintptr(m.fd), uintptr(unsafe.Pointer(&m.out[m.sent])), uintptr(len(m.out)-m.sent),
			unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL, 0, 0)
		switch e {
		case 0:
			m.sent += int(n)
		case unix.EINTR:
		case unix.EAGAIN:
			if !w.out[i] {
				w.out[i] = true
				return w.interest(i, m, unix.EPOLLIN|unix.EPOLLOUT)
			}
			return nil
		default:
			return e
		}
	}
	if w.out[i] {
		w.out[i] = false
		return w.interest(i, m, unix.EPOLLIN)
	}
	return nil
}

func (w *muxWorker) interest(i int, m *muxConn, events uint32) error {
	ev := unix.EpollEvent{Events: events, Fd: int32(i)}
	return unix.EpollCtl(w.ep, unix.EPOLL_CTL_MOD, m.fd, &ev)
}

// receive reads what has arrived and completes the transaction once its reply is whole.
func (w *muxWorker) receive(i int, m *muxConn) {
	for {
		if len(m.in) == cap(m.in) {
			m.in = append(make([]byte, 0, 2*cap(m.in)), m.in...)
		}
		buf := m.in[len(m.in):cap(m.in)]
		n, _, e := unix.RawSyscall6(unix.SYS_RECVFROM, uintptr(m.fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), unix.MSG_DONTWAIT, 0, 0)
		switch {
		case e == unix.EINTR:
			continue
		case e == unix.EAGAIN:
			return
		case e != 0:
			w.complete(i, m, m.ex.Lost(e))
			return
		case n == 0:
			w.complete(i, m, m.ex.Lost(io.EOF))
			return
		}
		m.in = m.in[:len(m.in)+int(n)]
		used, done, err := m.ex.ParseReply(m.in)
		m.in = m.in[:copy(m.in, m.in[used:])]
		if done {
			w.complete(i, m, err)
			return
		}
		if int(n) < len(buf) {
			return // drained for now; epoll says when more comes
		}
	}
}

// complete ends one try of the transaction, as Runner.runOne does for one call of
// Do: success, a retry, an error given up on, or a lost connection, after which the
// client goes on in a goroutine of its own (reconnecting as usual).
func (w *muxWorker) complete(i int, m *muxConn, err error) {
	r, c := w.r, m.c
	if m.step != nil {
		w.stepTo(i, m, m.step.Reply(err))
		return
	}
	if err == nil {
		r.finish(c, m.typ, m.start, time.Time{}, m.stmts, m.retry, false)
		w.begin(i, m)
		return
	}
	class := target.ClassOf(err)
	rec := c.slot.Begin()
	rec.Counts[m.typ].Errors[class]++
	warm := rec.Warmup
	c.slot.End()
	c.failClass = class
	r.noteError(c, m.typ, err, class, warm, false)
	if class == target.ClassConnection || !c.conn.Alive() {
		r.finish(c, m.typ, m.start, time.Time{}, m.stmts, m.retry, true)
		w.handoff(i, err)
		return
	}
	if class.Retryable() && m.tries < r.cfg.MaxTries && !r.stop.Load() {
		m.retry++
		w.send(i, m)
		return
	}
	r.finish(c, m.typ, m.start, time.Time{}, m.stmts, m.retry, true)
	w.begin(i, m)
}

// remove takes conns[i] out of the epoll set.
func (w *muxWorker) remove(i int) {
	if w.live[i] {
		_ = unix.EpollCtl(w.ep, unix.EPOLL_CTL_DEL, w.conns[i].fd, nil)
		w.live[i] = false
		w.active--
	}
}

// leave ends the client: its run is over.
func (w *muxWorker) leave(i int) {
	w.remove(i)
	w.conns[i].c.done.Store(true)
}

// handoff moves the client to a goroutine of its own: after a lost connection
// (cause) it reconnects first.
func (w *muxWorker) handoff(i int, cause error) {
	w.remove(i)
	r, c := w.r, w.conns[i].c
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer c.done.Store(true)
		if cause != nil && !r.reconnect(c, cause) {
			return
		}
		// With -t, Runner.client goes on from the client's count so far.
		r.client(c)
	}()
}

// cancel ends every client at a hard stop, its statement in flight counted as the
// goroutine path counts one cut off by the stop.
func (w *muxWorker) cancel() {
	for i, m := range w.conns {
		if !w.live[i] {
			continue
		}
		rec := m.c.slot.Begin()
		rec.Counts[m.typ].Statements += m.stmts
		rec.Counts[m.typ].Retries += m.retry
		m.c.slot.End()
		if m.ex != nil {
			_ = m.ex.Lost(context.Canceled)
		}
		w.leave(i)
	}
}
