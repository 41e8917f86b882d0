package instance

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/target/mysql"
)

type mariaKind struct{}

func (mariaKind) superuser() string { return "root" }

func (mariaKind) socketPath(dir string, port int) string { return filepath.Join(dir, "mariadbd.sock") }

func (mariaKind) pidFile(i *Instance) string { return filepath.Join(i.Path, myPidFile) }

func findProgram(names []string, dirs []string) string {
	for _, n := range names {
		for _, d := range dirs {
			if p := filepath.Join(d, n); executable(p) {
				return p
			}
		}
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	return ""
}

func (mariaKind) find(version string) (string, string, error) {
	server := findProgram([]string{"mariadbd"}, []string{"/usr/sbin", "/usr/bin", "/usr/local/mysql/bin"})
	if server == "" {
		return "", "", fmt.Errorf("mariadbd was not found (looked in /usr/sbin, /usr/local/mysql/bin and PATH): install the mariadb-server package")
	}
	if installDB() == "" {
		return "", "", fmt.Errorf("mariadb-install-db was not found (looked in /usr/bin, /usr/local/mysql/scripts and PATH): install the mariadb-server package")
	}
	v := programVersion(server)
	if version != "" && v != version && !strings.HasPrefix(v, version+".") {
		return "", "", fmt.Errorf("MariaDB %s is not installed (found %s): install it or remove version from the plan", version, v)
	}
	return filepath.Dir(server), v, nil
}

func installDB() string {
	return findProgram([]string{"mariadb-install-db", "mysql_install_db"}, []string{"/usr/bin", "/usr/local/mysql/scripts", "/usr/local/mysql/bin"})
}

func (mariaKind) initialize(ctx context.Context, i *Instance) error {
	// The data directory is made by its owner, so that mariadb-install-db needs no --user.
	if err := os.Mkdir(i.DataDir(), 0o700); err != nil {
		return err
	}
	if acct, _ := serviceAccount(i.Kind); acct != nil {
		if err := os.Chown(i.DataDir(), acct.uid, acct.gid); err != nil {
			return err
		}
	}
	out, err := i.run(ctx, installDB(), "--no-defaults", "--datadir="+i.DataDir(), "--auth-root-authentication-method=normal",
		"--skip-test-db", "--skip-name-resolve")
	if err != nil {
		return fmt.Errorf("creating a MariaDB data directory in %s: %v", i.DataDir(), err)
	}
	_ = os.WriteFile(filepath.Join(i.Path, "install.log"), []byte(out+"\n"), 0o644)
	return nil
}

func (mariaKind) config(i *Instance) (string, string) {
	var b strings.Builder
	b.WriteString("# Written by fathom for instance " + i.Name + "; rewritten whenever its settings change.\n[mariadbd]\n")
	fmt.Fprintf(&b, "datadir=%s\nport=%d\nbind-address=127.0.0.1\nsocket=%s\npid-file=%s\nlog-error=%s\nskip-name-resolve\n",
		i.DataDir(), i.Port, i.Socket, filepath.Join(i.Path, myPidFile), i.LogFile())
	b.WriteString("# settings\n")
	for _, s := range i.Settings {
		fmt.Fprintf(&b, "%s=%s\n", s.Name, s.Value)
	}
	return filepath.Join(i.Path, myConf), b.String()
}

func (k mariaKind) start(ctx context.Context, i *Instance) error {
	for attempt := 0; ; attempt++ {
		if !portFree(i.Port) {
			if attempt >= 3 {
				return i.startError(fmt.Sprintf("port %d is in use", i.Port))
			}
			if err := i.newPort(); err != nil {
				return err
			}
			continue
		}
		err := k.startOnce(ctx, i)
		if err == nil {
			return nil
		}
		if se, ok := err.(*StartError); ok && attempt < 3 && strings.Contains(se.Log, "already in use") {
			if err := i.newPort(); err != nil {
				return err
			}
			continue
		}
		return err
	}
}

func (k mariaKind) startOnce(ctx context.Context, i *Instance) error {
	logf, err := os.OpenFile(i.LogFile(), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if acct, _ := serviceAccount(i.Kind); acct != nil {
		_ = os.Chown(i.LogFile(), acct.uid, acct.gid)
	}
	mark, _ := logf.Seek(0, 2)
	cmd := i.command(nil, filepath.Join(i.Bin, "mariadbd"), "--defaults-file="+filepath.Join(i.Path, myConf))
	cmd.Stdout, cmd.Stderr = logf, logf
	p, err := startProcess(cmd)
	logf.Close()
	if err != nil {
		return fmt.Errorf("starting mariadbd: %v", err)
	}
	i.proc = p
	dsn := fmt.Sprintf("mysql://%s:@127.0.0.1:%d/", i.User, i.Port)
	t, err := mysql.Open(dsn, target.Config{ConnectTimeout: 2 * time.Second, AppName: "fathom"})
	if err != nil {
		return err
	}
	var last error
	for {
		if p.exited() {
			return &StartError{Instance: i.Name, Reason: "mariadbd exited: " + exitText(p.err), Log: relevant(tailFrom(i.LogFile(), mark, 40), 15), LogFile: i.LogFile()}
		}
		c, err := t.Connect(ctx)
		if err == nil {
			err = c.Exec(ctx, "CREATE DATABASE IF NOT EXISTS `"+i.Database+"`")
			c.Close()
			if err != nil {
				return fmt.Errorf("creating database %s on instance %s: %v", i.Database, i.Name, err)
			}
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			se := &StartError{Instance: i.Name, Reason: fmt.Sprintf("not accepting connections when fathom stopped waiting (%v; last error: %v)", ctx.Err(), last),
				Log: relevant(tailFrom(i.LogFile(), mark, 40), 15), LogFile: i.LogFile()}
			_ = k.stop(context.WithoutCancel(ctx), i)
			return se
		case <-p.done:
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// tailFrom is the last n lines written to path after offset mark (this start's lines).
func tailFrom(path string, mark int64, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	if mark > 0 && mark <= int64(len(b)) {
		b = b[mark:]
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func (mariaKind) stop(ctx context.Context, i *Instance) error {
	pid := i.PID()
	if pid == 0 && i.proc != nil && !i.proc.exited() {
		pid = i.proc.cmd.Process.Pid
	}
	if pid == 0 || !processAlive(pid) {
		return nil
	}
	var p *process
	if i.proc != nil && i.proc.cmd.Process.Pid == pid {
		p = i.proc
	}
	ctx = context.WithoutCancel(ctx)
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return fmt.Errorf("stopping instance %s: %v", i.Name, err)
	}
	if waitGone(ctx, pid, p, 2*time.Minute) {
		_ = os.Remove(filepath.Join(i.Path, myPidFile))
		return nil
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	if waitGone(ctx, pid, p, 10*time.Second) {
		_ = os.Remove(filepath.Join(i.Path, myPidFile))
		return nil
	}
	return fmt.Errorf("stopping instance %s: mariadbd (pid %d) did not exit", i.Name, pid)
}

func (mariaKind) reload(context.Context, *Instance) error { return nil }
