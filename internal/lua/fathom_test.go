package lua

import (
	"strings"
	"testing"
)

// TestResumeDiscard: the same states and errors as Resume, without the values, and
// no allocation for a yield.
func TestResumeDiscard(t *testing.T) {
	L := NewState()
	defer L.Close()
	if err := L.DoString(`function body(n)
		for i = 1, n do coroutine.yield(i) end
		if n > 2 then error("too many: " .. n .. "%") end
		return "done"
	end`); err != nil {
		t.Fatal(err)
	}
	fn := L.GetGlobal("body").(*LFunction)
	co, _ := L.NewThread()
	top := L.GetTop()
	if st, err := L.ResumeDiscard(co, fn, LNumber(2)); st != ResumeYield || err != nil {
		t.Fatalf("first resume: %v %v", st, err)
	}
	if st, err := L.ResumeDiscard(co, nil); st != ResumeYield || err != nil {
		t.Fatalf("second resume: %v %v", st, err)
	}
	if st, err := L.ResumeDiscard(co, nil); st != ResumeOK || err != nil {
		t.Fatalf("last resume: %v %v", st, err)
	}
	if L.GetTop() != top {
		t.Fatalf("stack %d after the resumes, was %d", L.GetTop(), top)
	}
	co, _ = L.NewThread()
	st, err := L.ResumeDiscard(co, fn, LNumber(3))
	for st == ResumeYield {
		st, err = L.ResumeDiscard(co, nil)
	}
	if st != ResumeError || err == nil || !strings.Contains(err.Error(), "too many: 3%") {
		t.Fatalf("error resume: %v %v", st, err)
	}

	if err := L.DoString(`function loop() while true do coroutine.yield() end end`); err != nil {
		t.Fatal(err)
	}
	co, _ = L.NewThread()
	loop := L.GetGlobal("loop").(*LFunction)
	if _, err := L.ResumeDiscard(co, loop); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = L.ResumeDiscard(co, nil) }); n != 0 {
		t.Errorf("ResumeDiscard of a yield: %v allocations", n)
	}
}

// TestPushNumber: the value is the number, taken from the state's allocator.
func TestPushNumber(t *testing.T) {
	L := NewState()
	defer L.Close()
	for _, v := range []float64{0, 7, 1e9 + 0.5, -3} {
		L.PushNumber(v)
		if got := L.Get(-1); got != LNumber(v) {
			t.Errorf("PushNumber(%v): %v", v, got)
		}
		L.Pop(1)
	}
	if n := testing.AllocsPerRun(1000, func() { L.PushNumber(123456.5); L.Pop(1) }); n > 0.05 {
		t.Errorf("PushNumber: %v allocations a push", n)
	}
}

// TestResumeWith: a G function that yielded returns, through ResumeWith, what the
// continuation pushes, or raises its error at the script's line.
func TestResumeWith(t *testing.T) {
	L := NewState()
	defer L.Close()
	L.SetGlobal("op", L.NewFunction(func(L *LState) int { return L.Yield() }))
	if err := L.DoString(`function body()
		local a, b = op()
		local c = op() + 1
		local t = {op()}
		local ok, msg = pcall(error, "not reached")
		coroutine.yield(a, b, c, #t)
		local d = op()
		return d
	end`); err != nil {
		t.Fatal(err)
	}
	co, _ := L.NewThread()
	push := func(vs ...LValue) LGFunction {
		return func(L *LState) int {
			for _, v := range vs {
				L.Push(v)
			}
			return len(vs)
		}
	}
	if st, err := L.ResumeDiscard(co, L.GetGlobal("body").(*LFunction)); st != ResumeYield || err != nil {
		t.Fatalf("start: %v %v", st, err)
	}
	if st, err := L.ResumeWith(co, push(LNumber(1), LNumber(2))); st != ResumeYield || err != nil {
		t.Fatalf("a, b: %v %v", st, err)
	}
	if st, err := L.ResumeWith(co, push(LNumber(41))); st != ResumeYield || err != nil {
		t.Fatalf("c: %v %v", st, err)
	}
	// The table constructor's op() resumed with nothing, without a continuation:
	// {op()} is empty, and body runs on to its own coroutine.yield(a, b, c, #t).
	st, err, vals := L.Resume(co, nil)
	if st != ResumeYield || err != nil || len(vals) != 4 {
		t.Fatalf("yield of a, b, c, #t: %v %v %v", st, err, vals)
	}
	if vals[0] != LNumber(1) || vals[1] != LNumber(2) || vals[2] != LNumber(42) || vals[3] != LNumber(0) {
		t.Fatalf("a, b, c, #t = %v", vals)
	}
	if st, err := L.ResumeDiscard(co, nil); st != ResumeYield || err != nil { // on to d = op()
		t.Fatalf("d: %v %v", st, err)
	}
	// d = op(): its continuation raises, at body's line 7
	st, err = L.ResumeWith(co, func(L *LState) int { L.RaiseError("refused: %s", "5% off"); return 0 })
	if st != ResumeError || err == nil || !strings.Contains(err.Error(), ":7: refused: 5% off") {
		t.Fatalf("raise: %v %v", st, err)
	}
	if !co.Dead {
		t.Fatal("the coroutine that raised is not dead")
	}
}
