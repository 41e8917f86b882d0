//go:build !linux

package runner

import "time"

func cutterThread(bool) func() { return func() {} }

// sleepUntilOrDone sleeps until t or until done is closed, whichever comes first, and
// reports whether done was closed.
func sleepUntilOrDone(t time.Time, done <-chan struct{}, _ bool) bool {
	return timerUntilOrDone(t, done)
}
