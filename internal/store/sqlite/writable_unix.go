//go:build unix

package sqlite

import "syscall"

// writable reports whether this process may create files in dir (access(2), W_OK).
func writable(dir string) error { return syscall.Access(dir, 2) }
