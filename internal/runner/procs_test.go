package runner

import (
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/fathom-lab/fathom/internal/procset"
)

// Runners that overlap share GOMAXPROCS: it covers all their clients until the last
// one closes, then returns to what it was.
func TestProcsShared(t *testing.T) {
	// GOGC not set by the user: runners may raise the GC percent. The process's
	// settings change only through the Tuner the front end gives (package procset).
	cfg := Config{Tuner: procset.Tuner{Process: &procset.Process{}}}
	base, baseGC := runtime.GOMAXPROCS(0), gcPercent()
	a := &Runner{clients: make([]*client, 40), cfg: cfg}
	b := &Runner{clients: make([]*client, 30), cfg: cfg}
	s := &Runner{clients: make([]*client, 50), cfg: cfg}
	a.threads(true)
	if got := runtime.GOMAXPROCS(0); got != max(base, 42) {
		t.Fatalf("one runner of 40 clients: GOMAXPROCS %d", got)
	}
	if got := gcPercent(); got != procset.RunGC {
		t.Fatalf("while network clients run: GC percent %d, want %d", got, procset.RunGC)
	}
	b.threads(true)
	s.threads(false) // computes rather than waits: asks for nothing
	if got := runtime.GOMAXPROCS(0); got != max(base, 72) {
		t.Fatalf("40 + 30 clients: GOMAXPROCS %d", got)
	}
	a.Close()
	if got := runtime.GOMAXPROCS(0); got != max(base, 32) {
		t.Fatalf("after the first closed: GOMAXPROCS %d", got)
	}
	if got := gcPercent(); got != procset.RunGC {
		t.Fatalf("while one runner still runs: GC percent %d, want %d", got, procset.RunGC)
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
	old := debug.SetGCPercent(150)
	defer debug.SetGCPercent(old)
	// The CLI reads GOGC and says so to the tuner (KeepGC).
	r := &Runner{clients: make([]*client, 4), cfg: Config{Tuner: procset.Tuner{Process: &procset.Process{}, KeepGC: true}}}
	r.threads(true)
	defer r.Close()
	if got := gcPercent(); got != 150 {
		t.Fatalf("GOGC=150 set: GC percent %d while running", got)
	}
}

// Without a Tuner (a library caller that keeps its process as it is) the runner
// changes neither GOMAXPROCS nor the GC percent.
func TestNoTunerChangesNothing(t *testing.T) {
	base, baseGC := runtime.GOMAXPROCS(0), gcPercent()
	r := &Runner{clients: make([]*client, 40)}
	r.threads(true)
	defer r.Close()
	if got := runtime.GOMAXPROCS(0); got != base {
		t.Errorf("GOMAXPROCS %d, was %d", got, base)
	}
	if got := gcPercent(); got != baseGC {
		t.Errorf("GC percent %d, was %d", got, baseGC)
	}
}
