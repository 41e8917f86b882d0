package runner

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// Runners that overlap share GOMAXPROCS: it covers all their clients until the last
// one closes, then returns to what it was.
func TestProcsShared(t *testing.T) {
	t.Setenv("GOGC", "") // not set by the user: runners may raise the GC percent
	base, baseGC := runtime.GOMAXPROCS(0), gcPercent()
	a := &Runner{clients: make([]*client, 40)}
	b := &Runner{clients: make([]*client, 30)}
	s := &Runner{clients: make([]*client, 50)}
	a.threads("postgres")
	if got := runtime.GOMAXPROCS(0); got != max(base, 42) {
		t.Fatalf("one runner of 40 clients: GOMAXPROCS %d", got)
	}
	if got := gcPercent(); got != runGC {
		t.Fatalf("while network clients run: GC percent %d, want %d", got, runGC)
	}
	b.threads("mysql")
	s.threads("sqlite") // computes rather than waits: asks for nothing
	if got := runtime.GOMAXPROCS(0); got != max(base, 72) {
		t.Fatalf("40 + 30 clients: GOMAXPROCS %d", got)
	}
	a.Close()
	if got := runtime.GOMAXPROCS(0); got != max(base, 32) {
		t.Fatalf("after the first closed: GOMAXPROCS %d", got)
	}
	if got := gcPercent(); got != runGC {
		t.Fatalf("while one runner still runs: GC percent %d, want %d", got, runGC)
	}
	b.Close()
	s.Close()
	if got := runtime.GOMAXPROCS(0); got != base {
		t.Fatalf("after all closed: GOMAXPROCS %d, want %d", got, base)
	}
	if got := gcPercent(); got != baseGC {
		t.Fatalf("after all closed: GC percent %d, want %d", got, baseGC)
	}
}

// A GOGC chosen by the user is left alone.
func TestGOGCRespected(t *testing.T) {
	t.Setenv("GOGC", "150")
	old := debug.SetGCPercent(150)
	defer debug.SetGCPercent(old)
	r := &Runner{clients: make([]*client, 4)}
	r.threads("postgres")
	defer r.Close()
	if got := gcPercent(); got != 150 {
		t.Fatalf("GOGC=150 set: GC percent %d while running", got)
	}
}
