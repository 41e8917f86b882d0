package store

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"sync"
)

// A run or experiment is written by one process; while it is "running", a reader on
// the same machine can tell whether that process still exists. One whose process is
// gone (SIGKILL, OOM killer, full disk, power loss) is read as interrupted with the
// reason ProcessGone, by every command, and its finished intervals stay usable.

// ProcessGone is the reason given to a run or experiment whose process is gone.
const ProcessGone = "process gone"

// Process identifies one process: the machine (host name, boot), its pid and its
// start time since boot, which tells it apart from a later process given the same pid.
type Process struct {
	Host  string
	PID   int
	Boot  string // /proc/sys/kernel/random/boot_id, "" when unknown
	Start string // field 22 of /proc/PID/stat (clock ticks since boot), "" when unknown
}

var (
	selfOnce sync.Once
	self     Process
	bootID   string
)

// ThisProcess is the calling process.
func ThisProcess() Process {
	selfOnce.Do(func() {
		self.Host, _ = os.Hostname()
		self.PID = os.Getpid()
		if b, err := os.ReadFile("/proc/sys/kernel/random/boot_id"); err == nil {
			bootID = strings.TrimSpace(string(b))
		}
		self.Boot = bootID
		self.Start, _ = procStart(self.PID)
	})
	return self
}

// String is how a Process is stored: host, boot and start, space-separated (the pid
// has its own column).
func (p Process) String() string {
	return strings.Join([]string{p.Host, p.Boot, p.Start}, " ")
}

// ParseProcess reads a process as Process.String wrote it, for the run of pid on host.
func ParseProcess(host string, pid int, s string) Process {
	p := Process{Host: host, PID: pid}
	if f := strings.Split(s, " "); len(f) == 3 {
		p.Host, p.Boot, p.Start = f[0], f[1], f[2]
	}
	return p
}

// Gone reports whether p is known to have ended: it ran on this machine and no
// process with its pid (and start time, when known) exists now, or the machine has
// rebooted since. A process on another machine, or one this machine cannot check, is
// not known to be gone.
func (p Process) Gone() bool {
	me := ThisProcess()
	if p.PID <= 0 || p.Host == "" || p.Host != me.Host {
		return false
	}
	if p.Boot != "" && bootID != "" && p.Boot != bootID {
		return true
	}
	if p.PID == me.PID && (p.Start == "" || p.Start == me.Start) {
		return false
	}
	if !processExists(p.PID) {
		return true
	}
	start, state := procStart(p.PID)
	switch {
	case state == 0: // no /proc entry: trust kill
		return false
	case state == 'Z' || state == 'X': // exited, not yet reaped
		return true
	case p.Start != "" && start != "" && start != p.Start: // the pid now belongs to another process
		return true
	}
	return false
}

// procStart reads a process's start time and state from /proc/PID/stat (state 0 when
// it cannot be read).
func procStart(pid int) (start string, state byte) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0
	}
	// pid (comm) state ppid …: the command may hold spaces and parentheses, so fields
	// are counted after the last ')'. Start time is field 22, the 20th after it.
	j := bytes.LastIndexByte(b, ')')
	if j < 0 || j+2 >= len(b) {
		return "", 0
	}
	f := strings.Fields(string(b[j+1:]))
	if len(f) < 20 {
		return "", b[j+2]
	}
	return f[19], f[0][0]
}
