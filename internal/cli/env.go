// Package cli implements fathom's commands. env.go is the only file that touches the
// process (stdio, environment, signals, exit); everything else takes an *Env.
package cli

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/term"
)

// Env is everything a command may use of the process.
type Env struct {
	Args   []string // without the program name
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	// Terminal reports whether stderr is a terminal (progress bar) .
	Terminal bool
	Now      func() time.Time
	// Interrupts is cancelled on SIGINT or SIGTERM (nil: never).
	Interrupts func(ctx context.Context) (context.Context, context.CancelFunc)
}

// OSEnv returns the Env of this process.
func OSEnv() *Env {
	return &Env{
		Args:     os.Args[1:],
		Stdin:    os.Stdin,
		Stdout:   os.Stdout,
		Stderr:   os.Stderr,
		Getenv:   os.Getenv,
		Terminal: term.IsTerminal(int(os.Stderr.Fd())),
		Now:      time.Now,
		Interrupts: func(ctx context.Context) (context.Context, context.CancelFunc) {
			return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		},
	}
}

// Main runs fathom in this process and exits with its code.
func Main() {
	os.Exit(Run(context.Background(), OSEnv()))
}
