package procset

import (
	"runtime"
	"runtime/debug"
	"testing"
)

// Runs that overlap share GOMAXPROCS: it covers all their clients until the last one
// is done, then returns to what it was; the GC percent likewise.
func TestProcsShared(t *testing.T) {
	var p Process
	base, baseGC := runtime.GOMAXPROCS(0), GCPercent()
	p.acquire(40, false)
	if got := runtime.GOMAXPROCS(0); got != max(base, 42) {
		t.Fatalf("one run of 40 clients: GOMAXPROCS %d", got)
	}
	if got := GCPercent(); got != RunGC {
		t.Fatalf("while network clients run: GC percent %d, want %d", got, RunGC)
	}
	p.acquire(30, false)
	if got := runtime.GOMAXPROCS(0); got != max(base, 72) {
		t.Fatalf("40 + 30 clients: GOMAXPROCS %d", got)
	}
	p.release(40, false)
	if got := runtime.GOMAXPROCS(0); got != max(base, 32) {
		t.Fatalf("after the first released: GOMAXPROCS %d", got)
	}
	if got := GCPercent(); got != RunGC {
		t.Fatalf("while one run still runs: GC percent %d, want %d", got, RunGC)
	}
	p.release(30, false)
	if got := runtime.GOMAXPROCS(0); got != base {
		t.Fatalf("after all released: GOMAXPROCS %d, want %d", got, base)
	}
	if got := GCPercent(); got != baseGC {
		t.Fatalf("after all released: GC percent %d, want %d", got, baseGC)
	}
}

// A GOGC chosen by the user is left alone.
func TestGOGCRespected(t *testing.T) {
	old := debug.SetGCPercent(150)
	defer debug.SetGCPercent(old)
	var p Process
	tu := Tuner{Process: &p, KeepGC: true}
	tu.Acquire(4)
	defer tu.Release(4)
	if got := GCPercent(); got != 150 {
		t.Fatalf("GOGC=150 set: GC percent %d while running", got)
	}
}
