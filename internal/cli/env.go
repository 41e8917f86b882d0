// Package cli implements fathom's commands. env.go is the only file that touches the
// process (stdio, environment, signals, exit); everything else takes an *Env.
package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/fathom-lab/fathom/internal/procset"
)

// Env is everything a command may use of the process.
type Env struct {
	Args   []string // without the program name
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	// Environ is the whole environment, the base of hooks', restart commands' and
	// instance tools' (nil: none).
	Environ []string
	// Terminal reports whether stderr is a terminal (progress bar) .
	Terminal bool
	Now      func() time.Time
	// Interrupts is cancelled on SIGINT, SIGTERM or SIGHUP (nil: never).
	Interrupts func(ctx context.Context) (context.Context, context.CancelFunc)
	// OpenFiles is how many files this process may have open (RLIMIT_NOFILE), or 0
	// when unknown (nil: the process's own limit).
	OpenFiles func() uint64
}

func (e *Env) openFiles() uint64 {
	if e.OpenFiles != nil {
		return e.OpenFiles()
	}
	return openFiles()
}

// process is this process's runtime settings (GOMAXPROCS, GC percent), changed only
// through the tuner below, which every run of this process shares.
var process procset.Process

// tuner is what a run may change in the process: GOMAXPROCS, and the GC percent
// unless the user chose GOGC.
func (e *Env) tuner() procset.Tuner {
	return procset.Tuner{Process: &process, KeepGC: e.Getenv("GOGC") != ""}
}

// osEnv returns the Env of this process.
func osEnv() *Env {
	return &Env{
		Args:       os.Args[1:],
		Stdin:      os.Stdin,
		Stdout:     os.Stdout,
		Stderr:     os.Stderr,
		Getenv:     os.Getenv,
		Environ:    os.Environ(),
		Terminal:   term.IsTerminal(int(os.Stderr.Fd())),
		Now:        time.Now,
		Interrupts: osInterrupts,
		OpenFiles:  openFiles,
	}
}

// stopSignals stop a run, watch or experiment gracefully (the interval in progress
// stored, the summary printed): Ctrl-C, SIGTERM, and SIGHUP, sent when the terminal
// or ssh session closes, whose default action would kill fathom on the spot.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

func osInterrupts(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, stopSignals...)
}

// Main runs fathom in this process and exits with its code. FATHOM_CPUPROFILE=FILE
// writes a Go CPU profile of the whole command, FATHOM_MEMPROFILE=FILE a profile of
// every allocation it made (for measuring fathom itself).
func Main() {
	stop := cpuProfile(os.Getenv("FATHOM_CPUPROFILE"))
	stopMem := memProfile(os.Getenv("FATHOM_MEMPROFILE"))
	code := Run(context.Background(), osEnv())
	stop()
	stopMem()
	os.Exit(code)
}

func memProfile(path string) func() {
	if path == "" {
		return func() {}
	}
	runtime.MemProfileRate = 4096
	return func() {
		// A profile holds what the last completed GC cycle published: without this
		// one, a run whose heap grew since (at GC percent 400, most of it) was missing.
		runtime.GC()
		f, err := os.Create(path)
		if err == nil {
			err = pprof.Lookup("allocs").WriteTo(f, 0)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "fathom: FATHOM_MEMPROFILE: %v\n", err)
		}
	}
}

func cpuProfile(path string) func() {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "fathom: FATHOM_CPUPROFILE: %v\n", err)
		return func() {}
	}
	return func() { pprof.StopCPUProfile(); _ = f.Close() }
}
