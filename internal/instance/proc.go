package instance

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fathom-lab/fathom/internal/safefile"
)

// account is the operating system user a server runs as when fathom runs as root.
type account struct {
	name     string
	uid, gid int
}

// serviceAccount returns the user to run the driver's server as: nil when fathom is
// not root (the server runs as fathom's user), else the driver's account.
func serviceAccount(d Driver) (*account, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	name := d.Account()
	why := d.Title() + " should not run as root"
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("%s and there is no %s user to run it as: create one (useradd --system %s) or run fathom as an ordinary user", why, name, name)
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("user %s has a non-numeric uid or gid", name)
	}
	return &account{name: name, uid: uid, gid: gid}, nil
}

// canReach checks that the account can enter dir: every directory above it must be
// searchable by others (the account is neither owner nor, usually, in the group).
func (a *account) canReach(dir string) error {
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return err
		}
		uid, gid, ok := owner(fi)
		mode := fi.Mode().Perm()
		okFor := mode&0o001 != 0 ||
			(ok && uid == a.uid && mode&0o100 != 0) ||
			(ok && gid == a.gid && mode&0o010 != 0)
		if !okFor {
			return fmt.Errorf("the %s user cannot enter %s (mode %v), so a server running as %s cannot use an instance directory under it: choose a --dir it can reach, e.g. %s", a.name, d, mode, a.name, DefaultDir())
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

// GiveToAccount gives path to the account the server runs as (when fathom is root;
// else it does nothing).
func (i *Instance) GiveToAccount(path string) error {
	if acct, _ := serviceAccount(i.Driver()); acct != nil {
		return os.Chown(path, acct.uid, acct.gid)
	}
	return nil
}

// command prepares a server program to run as the instance's account, in its own
// process group (a Ctrl-C at the terminal is fathom's to handle, not the server's),
// with an environment free of client variables that would redirect it. When ctx
// ends, the program is killed with its process group.
func (i *Instance) command(ctx context.Context, prog string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	cmd.WaitDelay = 5 * time.Second
	return i.prepare(cmd)
}

// Daemon prepares a server that outlives the call starting it, as Run does but tied
// to no context: Stop ends it. Start it with StartProcess.
func (i *Instance) Daemon(prog string, args ...string) *exec.Cmd {
	return i.prepare(exec.Command(prog, args...))
}

func (i *Instance) prepare(cmd *exec.Cmd) *exec.Cmd {
	cmd.Dir = i.Path
	cmd.Env = serverEnv(i.Env)
	acct, _ := serviceAccount(i.Driver())
	cmd.SysProcAttr = procAttr(acct)
	return cmd
}

// serverEnv is base (fathom's environment, as the front end read it) without the
// variables that point libpq, pg_ctl or the MariaDB tools elsewhere (PGDATA, PGPORT,
// MYSQL_HOME …), in the C locale. Without a base the tools get a default PATH.
func serverEnv(base []string) []string {
	if base == nil {
		base = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	}
	var out []string
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "PG") || strings.HasPrefix(k, "MYSQL") || strings.HasPrefix(k, "MARIADB") ||
			strings.HasPrefix(k, "LC_") || k == "LANG" || k == "LANGUAGE" {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "LANG=C", "LC_ALL=C")
}

// Run runs a server tool to completion, as the server's account in the instance
// directory, and returns its output (and, when it fails, the end of it in the error).
func (i *Instance) Run(ctx context.Context, prog string, args ...string) (string, error) {
	cmd := i.command(ctx, prog, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	text := strings.TrimSpace(out.String())
	if err != nil {
		if ctx.Err() != nil {
			return text, fmt.Errorf("%s: %v", filepath.Base(prog), ctx.Err())
		}
		if text == "" {
			text = err.Error()
		}
		return text, fmt.Errorf("%s failed: %s", filepath.Base(prog), lastLines(text, 8))
	}
	return text, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// process is a server this fathom started and waits for.
type process struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// StartProcess starts a server prepared by Daemon; the instance keeps it, so that
// Stop can wait for it.
func (i *Instance) StartProcess(cmd *exec.Cmd) (*process, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	i.proc = p
	return p, nil
}

// Exited reports whether the process has ended.
func (p *process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Done is closed when the process has ended.
func (p *process) Done() <-chan struct{} { return p.done }

// ExitText says how the process ended.
func (p *process) ExitText() string {
	if p.err == nil {
		return "exit status 0"
	}
	return p.err.Error()
}

// processAlive reports whether pid is a live (not zombie) process.
func processAlive(pid int) bool {
	if !exists(pid) {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		if _, perr := os.Stat("/proc/self/stat"); perr == nil {
			// /proc is there and the process is not: it was reaped between the
			// signal 0 and the read (a zombie's parent waiting for it). Taking this
			// for alive made a stopped instance look running (TestRegisteredDriver
			// failed so once in the PostgreSQL 17 matrix).
			return false
		}
		return true // no /proc: trust kill
	}
	// pid (comm) state …: the state follows the last ')'.
	if j := bytes.LastIndexByte(b, ')'); j >= 0 && j+2 < len(b) {
		return b[j+2] != 'Z' && b[j+2] != 'X'
	}
	return true
}

// ProcessAlive reports whether a process with this id is running on this machine.
func ProcessAlive(pid int) bool { return pid > 0 && processAlive(pid) }

// waitGone waits until pid has exited or the timeout passes.
func waitGone(ctx context.Context, pid int, p *process, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if p != nil {
			if p.Exited() {
				return true
			}
		} else if !processAlive(pid) {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
	return false
}

// CurrentPID is this process's id, recorded so that a later fathom can tell whether
// an experiment is still being run.
func CurrentPID() int { return os.Getpid() }

// StopProcess stops a server process fathom runs without a control program (SIGTERM,
// then SIGKILL after grace): the one in the pid file, or the one this fathom started.
// stopped is false when there was none running. prog names it in errors.
func (i *Instance) StopProcess(ctx context.Context, prog string, grace time.Duration) (stopped bool, err error) {
	pid := i.PID()
	if pid == 0 && i.proc != nil && !i.proc.Exited() {
		pid = i.proc.cmd.Process.Pid
	}
	if pid == 0 || !processAlive(pid) {
		return false, nil
	}
	var p *process
	if i.proc != nil && i.proc.cmd.Process.Pid == pid {
		p = i.proc
	}
	ctx = context.WithoutCancel(ctx)
	if err := terminate(pid); err != nil {
		return false, fmt.Errorf("stopping instance %s: %v", i.Name, err)
	}
	if waitGone(ctx, pid, p, grace) {
		return true, nil
	}
	_ = kill(pid)
	if waitGone(ctx, pid, p, 10*time.Second) {
		return true, nil
	}
	return false, fmt.Errorf("stopping instance %s: %s (pid %d) did not exit", i.Name, prog, pid)
}

// StartOnFreePort runs start until the server is up, moving the instance to another
// free port (at most three times) when its port is taken before the start or when
// portTaken says the start failed for that reason.
func (i *Instance) StartOnFreePort(start func() error, portTaken func(error) bool) error {
	for attempt := 0; ; attempt++ {
		if !PortFree(i.Port) {
			if attempt >= 3 {
				return i.StartError(fmt.Sprintf("port %d is in use", i.Port))
			}
			if err := i.newPort(); err != nil {
				return err
			}
			continue
		}
		err := start()
		if err == nil {
			return nil
		}
		if attempt < 3 && portTaken(err) {
			if err := i.newPort(); err != nil {
				return err
			}
			continue
		}
		return err
	}
}

// OpenLog opens the server's log for appending (made the server account's) and
// returns it with its current size, from which LogSince reads this start's lines.
func (i *Instance) OpenLog() (*os.File, int64, error) {
	f, err := safefile.OpenFile(i.LogFile(), os.O_CREATE|os.O_APPEND|os.O_WRONLY, baseOwners()...)
	if err != nil {
		return nil, 0, err
	}
	_ = i.GiveToAccount(i.LogFile())
	mark, _ := f.Seek(0, 2)
	return f, mark, nil
}

// LogSince is the relevant end (see Relevant) of what the server logged after offset
// mark (this start's lines).
func (i *Instance) LogSince(mark int64) string {
	b, err := os.ReadFile(i.LogFile())
	if err != nil {
		return ""
	}
	if mark > 0 && mark <= int64(len(b)) {
		b = b[mark:]
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	return Relevant(strings.Join(lines, "\n"), 15)
}

// Pid is the process's id.
func (p *process) Pid() int { return p.cmd.Process.Pid }
