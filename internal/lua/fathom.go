package lua

// Functions fathom adds to gopher-lua's API (see README.md).

// ResumeDiscard is Resume for a caller that does not read the values the
// coroutine yielded or returned: it does not copy them into a new slice (an
// allocation per resume). An error's value is kept, as Resume keeps it.
func (ls *LState) ResumeDiscard(th *LState, fn *LFunction, args ...LValue) (ResumeState, error) {
	st, err, _ := ls.resume(th, fn, args, false)
	return st, err
}

// PushNumber pushes n as Push(LNumber(n)) does, from the state's number
// allocator (blocks of floats) rather than an allocation of its own: what
// gopher-lua's own operators use for the numbers they make.
func (ls *LState) PushNumber(n float64) {
	ls.reg.Push(ls.alloc.LNumber2I(LNumber(n)))
}

// ResumeWith resumes th, which yielded from a G function, by calling k in that
// function's place: what k pushes is what the call returns to the script, and an
// error k raises is raised at the script's call, with the script's line, as if the
// G function had raised it instead of yielding. (A G function cannot otherwise
// raise an error after it yielded: gopher-lua resumes the script, not the
// function; Lua 5.2's lua_yieldk continuations do this.)
func (ls *LState) ResumeWith(th *LState, k LGFunction) (ResumeState, error) {
	th.yieldCont = k
	return ls.ResumeDiscard(th, nil)
}

// resumeCont runs k as a call from the suspended Lua frame, its results where the
// yielded call's go; true if k yielded in turn.
func resumeCont(L *LState, k LGFunction) bool {
	base := L.reg.Top()
	L.pushCallFrame(callFrame{Fn: &LFunction{IsG: true, GFunction: k}, Base: base, LocalBase: base, ReturnBase: base,
		NRet: MultRet, Parent: L.currentFrame}, nil, false)
	L.currentFrame = L.stack.Last()
	return callGFunction(L, false)
}
