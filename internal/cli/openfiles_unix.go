//go:build unix

package cli

import "syscall"

// openFiles is the process's open-files limit: RLIMIT_NOFILE's soft value, which Go
// raises to the hard value at start-up. 0 when it cannot be read or is unlimited.
// (Rlimit's fields are uint64 on Linux and int64 on the BSDs.)
func openFiles() uint64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0
	}
	if cur := uint64(rl.Cur); cur > 0 && cur < 1<<62 {
		return cur
	}
	return 0
}
