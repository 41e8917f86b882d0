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
