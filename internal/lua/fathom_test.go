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
