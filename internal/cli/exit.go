package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/fathom-lab/fathom/internal/errkind"
	"github.com/fathom-lab/fathom/internal/measure"
)

// Exit codes. check uses the Nagios codes separately.
const (
	exitOK           = 0
	exitFailure      = 1   // the command could not do its job (server down, run failed)
	exitUsage        = 2   // the user asked for something that makes no sense
	exitErrors       = 3   // the run's transactions failed: none succeeded, or clients aborted
	exitThreshold    = 4   // the run passed a limit the user set (--max-error-rate)
	exitInconsistent = 5   // check-data: the workload's data breaks its rules
	exitRegression   = 6   // fathom regressions: the newest runs of a series regressed
	exitThresholds   = 7   // the run failed a --threshold (completed, or aborted by one with ;abort)
	exitInterrupted  = 130 // stopped by SIGINT/SIGTERM; what was measured is kept
)

// exitError attaches an exit code to an error.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usagef is a user mistake: exit 2 with one line.
func usagef(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// withCode attaches a code to err (nil stays nil).
func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: code, err: err}
}

func codeOf(err error) int {
	if err == nil {
		return exitOK
	}
	var e *exitError
	if errors.As(err, &e) {
		return e.code
	}
	switch errkind.KindOf(err) {
	case errkind.Usage:
		return exitUsage
	case errkind.Interrupted:
		return exitInterrupted
	case errkind.Errors:
		return exitErrors
	case errkind.Threshold:
		return exitThreshold
	case errkind.Aborted:
		return exitThresholds
	}
	return exitFailure
}

// thresholdsError is exit 7 naming the run's failed --threshold bars (nil: none failed).
func thresholdsError(sum *measure.Summary) error {
	failed := measure.FailedThresholds(sum.Thresholds)
	if len(failed) == 0 {
		return nil
	}
	var parts []string
	for _, r := range failed {
		parts = append(parts, r.String())
	}
	return withCode(exitThresholds, fmt.Errorf("run %d failed %d of %d thresholds: %s", sum.RunID, len(failed), len(sum.Thresholds), strings.Join(parts, "; ")))
}
