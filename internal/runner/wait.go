package runner

import "time"

// timerUntilOrDone waits with a Go timer until t or until done is closed, whichever
// comes first, and reports whether done was closed.
func timerUntilOrDone(t time.Time, done <-chan struct{}) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
		return false
	case <-done:
		return true
	}
}
