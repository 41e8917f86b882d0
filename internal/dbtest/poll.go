package dbtest

import (
	"fmt"
	"testing"
	"time"
)

// Poll calls cond every step until it holds, and returns an error naming what was
// waited for once limit has passed: tests wait for conditions, never for a time that a
// busy machine may not keep. It does not touch a testing.T, so other goroutines than
// the test's may call it.
func Poll(limit, step time.Duration, what string, cond func() bool) error {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("waited %s for %s", limit, what)
		}
		time.Sleep(step)
	}
	return nil
}

// WaitFor is Poll that fails the test.
func WaitFor(t testing.TB, limit, step time.Duration, what string, cond func() bool) {
	t.Helper()
	if err := Poll(limit, step, what, cond); err != nil {
		t.Fatal(err)
	}
}
