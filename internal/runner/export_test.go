package runner

import "time"

// SetMuxClients sets the client count above which runs are multiplexed, for tests in
// package runner_test, and returns a function that restores it.
func SetMuxClients(n int) (restore func()) {
	saved := muxClients
	muxClients = n
	return func() { muxClients = saved }
}

// BeforeCut makes f run as each interval cut begins (plan: the boundary it stands for).
func (r *Runner) BeforeCut(f func(plan time.Duration)) { r.beforeCut = f }
