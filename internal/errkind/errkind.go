// Package errkind says what an error of the engine or the libraries under it means to a
// front end: a failure, a caller's mistake, or an interruption. The CLI maps kinds to
// exit codes (internal/cli/exit.go), a web server would map them to statuses.
package errkind

import (
	"errors"
	"fmt"
)

// Kind says what an engine error means to a front end (the CLI maps it to an exit code,
// a web server to a status).
type Kind int

const (
	// Failed: the engine could not do its job (server down, store unwritable, run failed).
	Failed Kind = iota + 1
	// Usage: the caller asked for something that makes no sense; nothing was measured.
	Usage
	// Interrupted: the run or experiment was stopped; what was measured is kept.
	Interrupted
	// Errors: the run went its course but its transactions failed (none succeeded,
	// or clients aborted, as pgbench aborts them); what was measured is kept.
	Errors
	// Threshold: the run went its course but passed a limit the caller set (its
	// error rate above the maximum); what was measured is kept.
	Threshold
	// Aborted: the run was stopped early because a threshold set to abort it
	// (measure.Threshold.Abort) failed; what was measured is kept.
	Aborted
)

// kindError is an engine error with its kind. Errors without one are failures.
type kindError struct {
	Kind Kind
	Err  error
}

func (e *kindError) Error() string { return e.Err.Error() }
func (e *kindError) Unwrap() error { return e.Err }

// Usagef is a caller's mistake.
func Usagef(format string, args ...any) error {
	return &kindError{Kind: Usage, Err: fmt.Errorf(format, args...)}
}

// WithKind attaches a kind to err (nil stays nil).
func WithKind(k Kind, err error) error {
	if err == nil {
		return nil
	}
	return &kindError{Kind: k, Err: err}
}

// KindOf is the kind of err: Failed unless it says otherwise (0 for nil).
func KindOf(err error) Kind {
	if err == nil {
		return 0
	}
	var e *kindError
	if errors.As(err, &e) {
		return e.Kind
	}
	return Failed
}
