package sblua

import (
	"context"
	"errors"
	"strings"

	"github.com/fathom-lab/fathom/internal/lua"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
)

// worker is one client: a Lua state running the script as one sysbench thread.
type worker struct {
	w     *Workload
	id    int
	seed  uint64
	e     *env
	err   error
	bound bool
	event *lua.LFunction
	tid   lua.LValue
	ended bool // no longer counted among the threads running
}

// stop counts the client out of the threads running (sysbench's threads_running).
func (k *worker) stop() {
	if !k.ended {
		k.ended = true
		k.w.rep.done()
	}
}

// NewWorker makes the client's Lua state (sysbench.tid is the client's number); the
// script's thread_init runs at the first Bind, with the runner's connection.
func (w *Workload) NewWorker(id int, seed uint64) workload.Worker {
	k := &worker{w: w, id: id, seed: seed, tid: lua.LNumber(id)}
	if w.uniq == nil {
		w.seed = seed // sysbench.rand.unique's sequence follows the run's seed
	}
	cfg := w.config(id, "run")
	cfg.seed = seed
	k.e, k.err = newEnv(context.Background(), cfg)
	if k.err == nil {
		w.rep.addEnv(k.e)
		var ok bool
		if k.event, ok = k.e.L.GetGlobal("event").(*lua.LFunction); !ok {
			k.err = errors.New("cannot find the event() function in " + w.s.Path)
		}
	}
	return k
}

// Bind gives the client's connection to the script: its first drv:connect() returns
// it. After a reconnect the statements the script prepared on it are prepared again.
func (k *worker) Bind(ctx context.Context, conn target.Conn) error {
	if k.err != nil {
		return &workload.AbortError{Err: k.err}
	}
	e := k.e
	e.ctx = ctx
	e.primary = conn
	if !k.bound {
		k.bound = true
		if err := e.call("thread_init", k.tid); err != nil {
			return err
		}
		return nil
	}
	if e.primaryConn != nil {
		e.primaryConn.conn = conn
		return e.primaryConn.rebind(ctx)
	}
	return nil
}

// Next: a script has one kind of transaction, its event().
func (k *worker) Next() int { return 0 }

// Do runs event() once. A statement's error raised in it comes back with its class;
// one sysbench restarts the event on (a deadlock, a serialization failure …: see
// env.ignorable) comes back as a workload.RestartError after the script's
// before_restart_event hook, and the runner runs the event again, as sysbench does,
// whatever --max-tries says. A Lua error is the script's mistake and aborts the client
// with one line naming the file and line.
func (k *worker) Do(ctx context.Context) (int, error) {
	e := k.e
	e.ctx, e.stmts, e.lastErr, e.lastVal, e.eventErr = ctx, 0, nil, nil, false
	err := e.L.CallByParam(lua.P{Fn: k.event, NRet: 1, Protect: true}, k.tid)
	if err == nil {
		ret := e.L.Get(-1)
		e.L.Pop(1)
		if lua.LVAsBool(ret) {
			// sysbench ends the thread when event() returns a true value, and does
			// not count that event.
			k.stop()
			return e.stmts, workload.ErrWorkerDone
		}
		return e.stmts, nil
	}
	return e.stmts, k.outcome(ctx, err)
}

// outcome turns an error event() raised into what the runner sees: a statement's
// error with its class; one sysbench restarts the event on as a workload.RestartError,
// after the script's before_restart_event hook; the script's own Lua error (its
// mistake) as a workload.AbortError naming the file and line.
func (k *worker) outcome(ctx context.Context, err error) error {
	e := k.e
	if e.lastErr != nil && e.raised(err) {
		var ae *lua.ApiError
		if errors.As(err, &ae) {
			if t, ok := ae.Object.(*lua.LTable); ok && t.RawGetString("errcode") == lua.LNumber(restartEvent) {
				lastErr := e.lastErr
				if hook, ok := e.hook("before_restart_event").(*lua.LFunction); ok {
					if herr := e.L.CallByParam(lua.P{Fn: hook, NRet: 0, Protect: true}, t); herr != nil {
						return &workload.AbortError{Err: luaError(herr)}
					}
				}
				// sysbench runs the event again until it succeeds.
				return &workload.RestartError{Err: lastErr}
			}
		}
		return e.lastErr
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return &workload.AbortError{Err: luaError(err)}
}

// Retype: an event whose script counted an error (ffi.C.sb_counter_inc with
// SB_CNT_ERROR) is measured as the type "event-error". (A call reached through a
// module the script only requires later, inside a function, finds the one type
// "event" and is counted as a plain event.)
func (k *worker) Retype(drawn int) int {
	if k.e != nil && k.e.eventErr && k.w.s.countsErrors {
		return 1
	}
	return drawn
}

// Place is where the last statement error was raised in the script.
func (k *worker) Place() string {
	if k.e == nil {
		return ""
	}
	return strings.TrimSuffix(strings.TrimSpace(k.e.lastWhere), ":")
}

// Finish runs the script's thread_done() and closes the connections the script
// opened itself.
func (k *worker) Finish(ctx context.Context) error {
	if k.e == nil || k.err != nil {
		return nil
	}
	k.e.ctx = ctx
	k.w.yields.Add(k.e.step.yields)
	k.stop()
	err := error(nil)
	if k.bound {
		err = k.e.call("thread_done", k.tid)
	}
	k.e.close()
	k.e = nil
	return err
}
