//go:build unix

package store

import (
	"errors"
	"syscall"
)

// processExists reports whether a process with pid exists (kill(pid, 0): EPERM means
// it exists and belongs to someone else).
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
