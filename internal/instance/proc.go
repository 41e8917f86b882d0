package instance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// account is the operating system user a server runs as when fathom runs as root.
type account struct {
	name     string
	uid, gid int
}

// serviceAccount returns the user to run kind's server as: nil when fathom is not
// root (the server runs as fathom's user), else postgres or mysql.
func serviceAccount(k Kind) (*account, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	name := "postgres"
	why := "PostgreSQL refuses to run as root"
	if k == MariaDB {
		name, why = "mysql", "MariaDB should not run as root"
	}
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
		st, ok := fi.Sys().(*syscall.Stat_t)
		mode := fi.Mode().Perm()
		okFor := mode&0o001 != 0 ||
			(ok && int(st.Uid) == a.uid && mode&0o100 != 0) ||
			(ok && int(st.Gid) == a.gid && mode&0o010 != 0)
		if !okFor {
			return fmt.Errorf("the %s user cannot enter %s (mode %v), so a server running as %s cannot use an instance directory under it: choose a --dir it can reach, e.g. %s", a.name, d, mode, a.name, DefaultDir())
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

// command prepares a server program to run as the instance's account, in its own
// process group (a Ctrl-C at the terminal is fathom's to handle, not the server's),
// with an environment free of client variables that would redirect it.
func (i *Instance) command(ctx context.Context, prog string, args ...string) *exec.Cmd {
	var cmd *exec.Cmd
	if ctx != nil {
		cmd = exec.CommandContext(ctx, prog, args...)
		cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
		cmd.WaitDelay = 5 * time.Second
	} else {
		cmd = exec.Command(prog, args...)
	}
	cmd.Dir = i.Path
	cmd.Env = serverEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if acct, _ := serviceAccount(i.Kind); acct != nil {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(acct.uid), Gid: uint32(acct.gid)}
	}
	return cmd
}

func killGroup(pid int) error {
	if pid <= 0 {
		return nil
	}
	return syscall.Kill(-pid, syscall.SIGKILL)
}

// serverEnv is fathom's environment without the variables that point libpq, pg_ctl or
// the MariaDB tools elsewhere (PGDATA, PGPORT, MYSQL_HOME …), in the C locale.
func serverEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "PG") || strings.HasPrefix(k, "MYSQL") || strings.HasPrefix(k, "MARIADB") ||
			strings.HasPrefix(k, "LC_") || k == "LANG" || k == "LANGUAGE" {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "LANG=C", "LC_ALL=C")
}

// run runs a server tool to completion and returns its combined output in the error.
func (i *Instance) run(ctx context.Context, prog string, args ...string) (string, error) {
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

func startProcess(cmd *exec.Cmd) (*process, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// processAlive reports whether pid is a live (not zombie) process.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
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
			if p.exited() {
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
