//go:build unix

package safefile

import (
	"io/fs"
	"syscall"
)

// noFollow makes an open fail on a symbolic link as the last path component.
const noFollow = syscall.O_NOFOLLOW

// modeBits: Unix permission bits say who else may write.
const modeBits = true

// uidOf is the owner of fi.
func uidOf(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
