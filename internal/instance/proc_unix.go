//go:build unix

package instance

import (
	"errors"
	"io/fs"
	"syscall"
)

// procAttr starts a server in its own process group, as acct when it is set.
func procAttr(acct *account) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true}
	if acct != nil {
		a.Credential = &syscall.Credential{Uid: uint32(acct.uid), Gid: uint32(acct.gid)}
	}
	return a
}

// killGroup kills a server started by command and everything it started.
func killGroup(pid int) error {
	if pid <= 0 {
		return nil
	}
	return syscall.Kill(-pid, syscall.SIGKILL)
}

// terminate asks a process to shut down (SIGTERM); kill stops it at once.
func terminate(pid int) error { return syscall.Kill(pid, syscall.SIGTERM) }
func kill(pid int) error      { return syscall.Kill(pid, syscall.SIGKILL) }

// exists reports whether a process with this id exists (it may be a zombie).
func exists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// owner is the user and group owning a file, when the system says.
func owner(fi fs.FileInfo) (uid, gid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return int(st.Uid), int(st.Gid), true
}
