//go:build !unix

package instance

import (
	"io/fs"
	"os"
	"syscall"
)

// The portable build (Windows): no process groups, signals or owners to set, so a
// server is stopped with os.Process.Kill (MariaDB then recovers at its next start, as
// after a crash), and a process exists when it can be opened. Throwaway instances are
// built and tested on Linux; see docs/install.md, Platforms.

func procAttr(*account) *syscall.SysProcAttr { return nil }

func killGroup(pid int) error { return kill(pid) }

func terminate(pid int) error { return kill(pid) }

func kill(pid int) error {
	if pid <= 0 {
		return nil
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	defer p.Release()
	return p.Kill()
}

func exists(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	_ = p.Release()
	return true
}

func owner(fs.FileInfo) (uid, gid int, ok bool) { return 0, 0, false }
