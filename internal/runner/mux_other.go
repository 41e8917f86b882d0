//go:build !linux

package runner

import "sync"

// muxSupported: the multiplexed path uses epoll, Linux only.
const muxSupported = false

func (r *Runner) runMux(*sync.WaitGroup) {}
