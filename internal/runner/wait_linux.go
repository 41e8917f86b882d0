//go:build linux

package runner

import (
	"runtime"
	"syscall"
	"time"
	"unsafe"
)

// waitSlice is the longest single sleep of the interval cutter, so that it notices
// the end of the run within that long.
const waitSlice = 5 * time.Millisecond

// cutterThread prepares the goroutine that cuts intervals: with raw sleeps it keeps
// an OS thread of its own.
func cutterThread(raw bool) func() {
	if !raw {
		return func() {}
	}
	runtime.LockOSThread()
	return runtime.UnlockOSThread
}

// sleepUntilOrDone sleeps until t or until done is closed, whichever comes first, and
// reports whether done was closed. Unless raw is set it is a Go timer; raw is for when
// every client holds a P in raw receives and a P is set aside for the cutter (see
// Runner.threads).
//
// The sleep is a raw nanosleep that keeps the goroutine's P, as the clients' raw
// receives do (see package sock): when the kernel wakes the thread it runs on at once.
// A Go timer is run by whichever P next goes through the scheduler, and with every
// client holding a P in a raw receive that is the next client to yield or sysmon's
// next look, up to about 10ms later; measured with 64 clients at 100ms on 2 busy
// cores, timer wake-ups came a median 9ms and up to 330ms late. A signal (the
// runtime's preemption for a garbage collection) interrupts the sleep; the goroutine
// then yields so that the collection need not wait.
func sleepUntilOrDone(t time.Time, done <-chan struct{}, raw bool) bool {
	if !raw {
		return timerUntilOrDone(t, done)
	}
	for {
		select {
		case <-done:
			return true
		default:
		}
		d := time.Until(t)
		if d <= 0 {
			return false
		}
		d = min(d, waitSlice)
		ts := syscall.NsecToTimespec(int64(d))
		_, _, e := syscall.RawSyscall(syscall.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
		if e == syscall.EINTR {
			runtime.Gosched()
		}
	}
}
