package run

import "fmt"

// NotPreparedError says the workload's tables are missing on the target; front ends
// add how to prepare them in their own syntax.
type NotPreparedError struct {
	Err    error  // wraps workload.ErrNotPrepared
	Target string // redacted
}

func (e *NotPreparedError) Error() string { return fmt.Sprintf("%v in %s", e.Err, e.Target) }
func (e *NotPreparedError) Unwrap() error { return e.Err }
