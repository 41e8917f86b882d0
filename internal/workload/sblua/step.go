package sblua

import (
	"context"
	"errors"
	"strings"

	"github.com/fathom-lab/fathom/internal/lua"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
)

// A script's event() as a workload.Stepper: with many clients the runner drives the
// connections from a few threads (its multiplexed path), and each client's event()
// runs as a Lua coroutine that yields at every statement it sends on the runner's
// connection. The statement goes back to the runner as a target.Exchanger with its
// values (Step), the runner sends it and reads the reply as it arrives, and Reply
// resumes the coroutine with the outcome: stmt:execute() returns its result, or raises
// the statement's error exactly where it would have, in the script's own frame.
//
// Only what would otherwise block on the runner's connection yields: prepared
// statements whose rows the script never reads (the rows are skipped on the wire, as
// RunDirect does) and con:query() with no rows read. Anything else (a statement on a
// connection the script opened itself, a script that reads results, a bulk insert)
// runs as before, to completion, in the thread that resumed the coroutine. A
// statement is never yielded from inside a call made through Go (pcall, xpcall, a
// hook fathom calls, a module loading): gopher-lua cannot suspend those, so the
// statement runs there to completion as well.

// stmt:execute() and con:query() yield when they may: the Go function returns
// either the result or, when it yielded, what the runner resumes it with. A failed
// statement resumes the coroutine with a continuation (lua.ResumeWith) that raises
// the error in place of the yielded call, at the script's line.

// stepLoop is the body of a client's coroutine: event() again and again, the
// coroutine suspended (ended) between two events, so that one coroutine serves them
// all (a new one costs a Lua state's registry and call stack: about as much CPU as a
// point select's whole exchange). One that raised an error is dead and replaced.
const stepLoop = `local event, ended = ...
return function(tid)
  while true do
    ended(event(tid))
  end
end`

// stepper is a worker's stepping state, in its env.
type stepper struct {
	co      *lua.LState // the coroutine event() runs in; nil until the first Start
	loop    *lua.LFunction
	ended   bool       // the coroutine yielded at the end of an event (stepLoop)
	ret     lua.LValue // what that event returned
	active  bool       // a Start or Reply is running the coroutine
	nested  int        // calls through Go in progress (pcall, xpcall, hooks): no yield
	pending *sqlConn   // the connection whose statement was yielded
	query   string     // the yielded statement's text, for its error ("<prepared statement>")
	class   int        // its sysbench class
	res     *sqlResult // the result a yielded statement returns
	err     error      // the failed statement's error, for fail
	ex      target.Exchanger
	args    []target.Value
	yields  int64 // statements yielded to the runner, added to the workload's at Finish
	yielded bool  // the coroutine's last yield was a statement's (yield)
}

// canYield reports whether a statement on c, called in L, can be yielded to the
// runner: the stepping coroutine runs it on the runner's connection, outside any call
// through Go.
func (e *env) canYield(L *lua.LState, c *sqlConn) bool {
	st := &e.step
	return st.active && L == st.co && st.nested == 0 && c.primary && !e.s.mods.readsResults.Load()
}

// yield suspends the coroutine with ex and args for the runner.
func (e *env) yield(L *lua.LState, c *sqlConn, ex target.Exchanger, args []target.Value, query string, class int, res *sqlResult) int {
	st := &e.step
	st.pending, st.ex, st.args, st.query, st.class, st.res = c, ex, args, query, class, res
	st.yields++
	st.yielded = true
	return L.Yield()
}

// luaStepFail raises the yielded statement's error in place of its call: the
// continuation Reply resumes the coroutine with.
func (e *env) luaStepFail(L *lua.LState) int {
	st := &e.step
	err, c, q := st.err, st.pending, st.query
	st.err, st.pending = nil, nil
	return e.sqlFail(L, c, q, err)
}

// wrapStepping replaces pcall, xpcall, require and dofile by versions that count as
// calls through Go (a statement inside one runs to its end, see canYield).
func (e *env) wrapStepping() error {
	L := e.L
	for _, name := range []string{"pcall", "xpcall", "require", "dofile"} {
		orig, ok := L.GetGlobal(name).(*lua.LFunction)
		if !ok || !orig.IsG {
			continue
		}
		g := orig.GFunction
		L.SetGlobal(name, L.NewFunction(func(L *lua.LState) int {
			e.step.nested++
			defer func() { e.step.nested-- }()
			return g(L)
		}))
	}
	return nil
}

// makeLoop compiles stepLoop around the script's event().
func (e *env) makeLoop(event *lua.LFunction) error {
	L := e.L
	proto, err := compileString(stepLoop, "sysbench.compat.loop")
	if err != nil {
		return err
	}
	loop := L.NewFunctionFromProto(proto)
	L.Push(loop)
	L.Push(event)
	L.Push(L.NewFunction(func(L *lua.LState) int {
		e.step.ended, e.step.ret = true, L.Get(1)
		return L.Yield()
	}))
	if err := L.PCall(2, 1, nil); err != nil {
		return err
	}
	e.step.loop, _ = L.Get(-1).(*lua.LFunction)
	L.Pop(1)
	if e.step.loop == nil {
		return errors.New("the event loop did not compile")
	}
	return nil
}

// Stepped: a MySQL target whose prepared statements are exchanged on the socket
// (target.Exchanging), and a script that reads no results.
func (k *worker) Stepped() bool {
	if k.e == nil || k.err != nil || k.e.driver != "mysql" || k.w.s.mods.readsResults.Load() {
		return false
	}
	x, ok := k.e.tgt.(target.Exchanging)
	return ok && x.Exchanges()
}

// Socket is the runner's connection's descriptor, through a statement the script
// prepared on it (none: not steppable).
func (k *worker) Socket() (int, bool) {
	if k.e == nil || k.e.primaryConn == nil {
		return -1, false
	}
	for _, s := range k.e.primaryConn.stmts {
		if ex, ok := s.st.(target.Exchanger); ok && !s.closed {
			return ex.Socket()
		}
	}
	if qx, ok := k.e.primary.(target.QueryExchanging); ok {
		if ex, ok := qx.QueryExchanger(""); ok {
			return ex.Socket()
		}
	}
	return -1, false
}

// Start runs event() in the client's coroutine up to its first statement.
func (k *worker) Start(ctx context.Context) workload.Step {
	e := k.e
	e.ctx, e.stmts, e.lastErr, e.lastVal, e.eventErr = ctx, 0, nil, nil, false
	st := &e.step
	st.nested = 0 // a hook that raised an error may have left it counted
	if st.co != nil && !st.co.Dead && st.ended {
		return k.resume(nil)
	}
	if st.loop == nil {
		if err := e.makeLoop(k.event); err != nil {
			return workload.Step{Err: &workload.AbortError{Err: luaError(err)}}
		}
	}
	st.co, _ = e.L.NewThread()
	return k.resume(st.loop, k.tid)
}

// Reply resumes event() with the yielded statement's outcome.
func (k *worker) Reply(err error) workload.Step {
	e := k.e
	st := &e.step
	e.sentClass(st.class)
	if err != nil {
		st.err = err
		return k.resumeWith(e.luaStepFail)
	}
	r := st.res
	r.skipped, r.rows, r.nrows, r.nfields, r.next = true, nil, 0, 0, 0
	st.pending = nil
	return k.resume(nil, r.ud)
}

// resume runs the coroutine until it yields a statement (a Step to send) or event()
// ends (a Step with Do's results).
func (k *worker) resume(fn *lua.LFunction, args ...lua.LValue) workload.Step {
	st := &k.e.step
	st.active, st.ended, st.yielded = true, false, false
	state, err := k.e.L.ResumeDiscard(st.co, fn, args...)
	return k.resumed(state, err)
}

// resumeWith resumes the coroutine with cont in place of the call that yielded.
func (k *worker) resumeWith(cont lua.LGFunction) workload.Step {
	st := &k.e.step
	st.active, st.ended, st.yielded = true, false, false
	state, err := k.e.L.ResumeWith(st.co, cont)
	return k.resumed(state, err)
}

// resumed turns what a resume ended with into the runner's next Step.
func (k *worker) resumed(state lua.ResumeState, err error) workload.Step {
	e := k.e
	st := &e.step
	st.active = false
	switch state {
	case lua.ResumeYield:
		if !st.ended && !st.yielded {
			// The script called coroutine.yield() in event() itself: outside a
			// coroutine of its own that is an error, as it is when the event runs
			// in a goroutine (and under sysbench).
			where := ""
			for lvl := 0; lvl < 8 && where == ""; lvl++ { // the suspended script's own frame
				if w := st.co.Where(lvl); !strings.Contains(w, "sysbench.compat") {
					where = w
				}
			}
			st.co = nil
			return workload.Step{Stmts: e.stmts, Err: &workload.AbortError{Err: &scriptError{Msg: strings.TrimSpace(where + " can not yield from outside of a coroutine")}}}
		}
		if !st.ended {
			return workload.Step{Ex: st.ex, Args: st.args}
		}
		if lua.LVAsBool(st.ret) {
			// sysbench ends the thread when event() returns a true value, and does
			// not count that event.
			k.stop()
			return workload.Step{Stmts: e.stmts, Err: workload.ErrWorkerDone}
		}
		return workload.Step{Stmts: e.stmts}
	case lua.ResumeOK: // stepLoop never returns
		return workload.Step{Stmts: e.stmts, Err: &workload.AbortError{Err: errors.New("event() loop ended")}}
	}
	st.co = nil // a coroutine that raised an error is dead
	return workload.Step{Stmts: e.stmts, Err: k.outcome(e.ctx, err)}
}
