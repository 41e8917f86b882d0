package runner

import (
	"runtime"
	"testing"
)

// Runners that overlap share GOMAXPROCS: it covers all their clients until the last
// one closes, then returns to what it was.
func TestProcsShared(t *testing.T) {
	base := runtime.GOMAXPROCS(0)
	a := &Runner{clients: make([]*client, 40)}
	b := &Runner{clients: make([]*client, 30)}
	s := &Runner{clients: make([]*client, 50)}
	a.threads("postgres")
	if got := runtime.GOMAXPROCS(0); got != max(base, 42) {
		t.Fatalf("one runner of 40 clients: GOMAXPROCS %d", got)
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
	b.Close()
	s.Close()
	if got := runtime.GOMAXPROCS(0); got != base {
		t.Fatalf("after all closed: GOMAXPROCS %d, want %d", got, base)
	}
}
