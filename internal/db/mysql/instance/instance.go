// Package mysql is the MariaDB driver of throwaway instances: a data directory made by
// mariadb-install-db and run by mariadbd, whose root has a generated password and only
// local logins, kept for fathom in a [client] defaults file.
package mysql

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	mysql "github.com/fathom-lab/fathom/internal/db/mysql/target"
	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/safefile"
	"github.com/fathom-lab/fathom/internal/target"
)

// Names of the driver's files in an instance directory.
const (
	myConf      = "my.cnf"
	myPidFile   = "mariadbd.pid"
	myClientCnf = "client.cnf" // [client] user, password, for fathom (defaults-file=)
	myInitFile  = "init.sql"   // run by mariadbd at each start: sets the password, drops other users
)

// Driver runs MariaDB instances.
type Driver struct{}

func (Driver) Kind() instance.Kind { return instance.MariaDB }
func (Driver) Aliases() []string   { return []string{"mysql"} }
func (Driver) Title() string       { return "MariaDB" }
func (Driver) Account() string     { return "mysql" }
func (Driver) Programs() []string  { return []string{"mariadbd"} }
func (Driver) Superuser() string   { return "root" }
func (Driver) SecretFile() string  { return myClientCnf }

func (Driver) SocketPath(dir string, port int) string { return filepath.Join(dir, "mariadbd.sock") }

func (Driver) PIDFile(i *instance.Instance) string { return filepath.Join(i.Path, myPidFile) }

// Secret is client.cnf: the superuser's login and where the instance listens, so that
// `mariadb --defaults-file=client.cnf` (which reads no other option file) reaches it
// and nothing else: the host's option files (Debian's [client-server] socket) and
// ~/.my.cnf are not read, and the compiled-in socket is not used. host is TCP on
// 127.0.0.1; a client told -h localhost takes the instance's socket.
func (Driver) Secret(i *instance.Instance, password string) string {
	return fmt.Sprintf("# written by fathom: how to reach instance %s and its superuser's password\n[client]\nuser=%s\npassword=%s\nhost=127.0.0.1\nport=%d\nsocket=%s\n",
		i.Name, i.User, password, i.Port, i.Socket)
}

func (Driver) Password(text string) string {
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, "password="); ok {
			return v
		}
	}
	return ""
}

// NormalizeName: MariaDB's variables use '_' where option files also allow '-', and
// an option file's loose- prefix (ignore it when unknown) names the same variable.
func (Driver) NormalizeName(name string) string {
	n := strings.ToLower(strings.ReplaceAll(name, "-", "_"))
	if rest, ok := strings.CutPrefix(n, "loose_"); ok && rest != "" {
		return rest
	}
	return n
}

// Reserved are what Config writes, and what would move the server away from it.
func (Driver) Reserved() []string {
	return []string{"port", "socket", "bind_address", "skip_networking", "datadir", "tmpdir", "pid_file", "log_error", "init_file", "user", "basedir"}
}

func (Driver) CheckSetting(s instance.Setting) error {
	if strings.ContainsAny(s.Value, "#;") || strings.TrimSpace(s.Value) != s.Value {
		return fmt.Errorf("setting %s: a MariaDB option value cannot contain '#' or ';' or start or end with spaces", s.Name)
	}
	return nil
}

// DSN names the defaults file (defaults-file=), so that it is safe to print.
func (Driver) DSN(i *instance.Instance, secret string) string {
	if secret != "" {
		return fmt.Sprintf("mysql://%s@127.0.0.1:%d/%s?defaults-file=%s", i.User, i.Port, i.Database, instance.QueryPath(secret))
	}
	// An explicit empty password: a [client] password in ~/.my.cnf is for other servers.
	return fmt.Sprintf("mysql://%s:@127.0.0.1:%d/%s", i.User, i.Port, i.Database)
}

// Clients: mariadb, mysql and their siblings run with --defaults-file=client.cnf, the
// only way to keep the host's option files out (they beat MYSQL_UNIX_PORT and the
// other variables); MYSQL_HOST=127.0.0.1 with MYSQL_TCP_PORT still reaches the
// instance when a hook names a client by its full path on a host whose option files
// set only a socket (Debian's default), and MYSQL_PWD logs it in there (the mariadb
// client has no variable naming a file; an environment is readable only by its own
// user).
func (Driver) Clients(i *instance.Instance) instance.Clients {
	c := instance.Clients{
		Env: []string{"MYSQL_HOST=127.0.0.1", "MYSQL_TCP_PORT=" + strconv.Itoa(i.Port), "MYSQL_UNIX_PORT=" + i.Socket},
		// Other option files, and the group suffix that picks sections in them.
		Unset: []string{"MYSQL_HOME", "MARIADB_HOME", "MYSQL_GROUP_SUFFIX", "MYSQL_TEST_LOGIN_FILE"},
		Wrap:  map[string][]string{},
		// A hook that names its own option file keeps it (the client takes that
		// choice only as its first argument).
		Yield: []string{"--no-defaults", "--defaults-file=*"},
	}
	first := []string{"--no-defaults", "--host=127.0.0.1", "--port=" + strconv.Itoa(i.Port), "--socket=" + i.Socket, "--user=" + i.User}
	if s := i.SecretFile(); s != "" {
		first = []string{"--defaults-file=" + s}
		c.Command = "mariadb " + instance.ShellWord("--defaults-file="+s)
		if pw := i.Password(); pw != "" {
			c.Env = append(c.Env, "MYSQL_PWD="+pw)
		}
	}
	for _, p := range clientPrograms {
		c.Wrap[p] = first
	}
	return c
}

// clientPrograms are MariaDB's and MySQL's clients that connect by their option files.
var clientPrograms = []string{"mariadb", "mysql", "mariadb-admin", "mysqladmin", "mariadb-dump", "mysqldump",
	"mariadb-check", "mysqlcheck", "mariadb-import", "mysqlimport", "mariadb-show", "mysqlshow", "mariadb-slap", "mysqlslap"}

func (Driver) Find(version string) (string, string, error) {
	bin, v, err := instance.FindServer("mariadbd", []string{"/usr/sbin", "/usr/bin", "/usr/local/mysql/bin"}, "MariaDB", version,
		"/usr/sbin, /usr/local/mysql/bin", "install the mariadb-server package")
	if err != nil {
		return "", "", err
	}
	if installDB() == "" {
		return "", "", fmt.Errorf("mariadb-install-db was not found (looked in /usr/bin, /usr/local/mysql/scripts and PATH): install the mariadb-server package")
	}
	return bin, v, nil
}

func installDB() string {
	return instance.FindProgram([]string{"mariadb-install-db", "mysql_install_db"}, []string{"/usr/bin", "/usr/local/mysql/scripts", "/usr/local/mysql/bin"})
}

func (Driver) Initialize(ctx context.Context, i *instance.Instance) error {
	// The data directory is made by its owner, so that mariadb-install-db needs no --user.
	if err := os.Mkdir(i.DataDir(), 0o700); err != nil {
		return err
	}
	if err := i.GiveToAccount(i.DataDir()); err != nil {
		return err
	}
	tmp, err := mariaTmpDir(i)
	if err != nil {
		return err
	}
	out, err := i.Run(ctx, installDB(), "--no-defaults", "--datadir="+i.DataDir(), "--tmpdir="+tmp, "--auth-root-authentication-method=normal",
		"--skip-test-db", "--skip-name-resolve")
	if err != nil {
		return fmt.Errorf("creating a MariaDB data directory in %s: %v", i.DataDir(), err)
	}
	_ = safefile.WriteFile(filepath.Join(i.Path, "install.log"), []byte(out+"\n"))
	// root gets a generated password and only local logins remain, set by an init file
	// the server runs at every start before it accepts connections.
	password, err := instance.NewPassword()
	if err != nil {
		return err
	}
	if _, err := i.WriteServerFile(myInitFile, initSQL(password)); err != nil {
		return err
	}
	return i.WriteSecret(password)
}

// initSQL makes root reachable only from this host, with the password, and drops
// every other login mariadb-install-db made (anonymous users, root@hostname, ::1).
func initSQL(password string) string {
	pw := "'" + password + "'" // hex digits: nothing to escape
	return strings.Join([]string{
		// Not written to the binary log: a replica of this instance must keep its own
		// password rather than replay the primary's.
		"SET sql_log_bin = 0;",
		"DELETE FROM mysql.global_priv WHERE User = '' OR (User = 'root' AND Host NOT IN ('localhost', '127.0.0.1'));",
		"FLUSH PRIVILEGES;",
		"CREATE USER IF NOT EXISTS 'root'@'127.0.0.1' IDENTIFIED BY " + pw + ";",
		"ALTER USER 'root'@'localhost' IDENTIFIED BY " + pw + ";",
		"ALTER USER 'root'@'127.0.0.1' IDENTIFIED BY " + pw + ";",
		"GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;",
		"",
	}, "\n")
}

// myTmpDir is the instance's own temporary directory. A MariaDB server deletes every
// "#sql…" file in its tmpdir when it starts (leftovers of a crash, it assumes), and the
// default tmpdir is /tmp: a throwaway server started with it removed the temporary
// tables of every other MariaDB on the host using /tmp, in the middle of their queries.
// MariaDB 10.11 then crashed (signal 11 in ha_maria::drop_table, freeing an
// information_schema.PROCESSLIST result), and a concurrent mariadb-install-db failed.
const myTmpDir = "tmp"

// mariaTmpDir makes the instance's temporary directory (private to the server's account).
func mariaTmpDir(i *instance.Instance) (string, error) {
	dir := filepath.Join(i.Path, myTmpDir)
	if err := os.Mkdir(dir, 0o700); err != nil && !os.IsExist(err) {
		return "", err
	}
	if err := i.GiveToAccount(dir); err != nil {
		return "", err
	}
	return dir, nil
}

func (Driver) Config(i *instance.Instance) (string, string) {
	var b strings.Builder
	b.WriteString("# Written by fathom for instance " + i.Name + "; rewritten whenever its settings change.\n[mariadbd]\n")
	fmt.Fprintf(&b, "datadir=%s\ntmpdir=%s\nport=%d\nbind-address=127.0.0.1\nsocket=%s\npid-file=%s\nlog-error=%s\nskip-name-resolve\n",
		i.DataDir(), filepath.Join(i.Path, myTmpDir), i.Port, i.Socket, filepath.Join(i.Path, myPidFile), i.LogFile())
	if _, err := os.Lstat(filepath.Join(i.Path, myInitFile)); err == nil {
		fmt.Fprintf(&b, "init-file=%s\n", filepath.Join(i.Path, myInitFile))
	}
	b.WriteString("# settings\n")
	for _, s := range i.Settings {
		fmt.Fprintf(&b, "%s=%s\n", s.Name, s.Value)
	}
	return filepath.Join(i.Path, myConf), b.String()
}

func (k Driver) Start(ctx context.Context, i *instance.Instance) error {
	return i.StartOnFreePort(func() error { return k.startOnce(ctx, i) }, func(err error) bool {
		se, ok := err.(*instance.StartError)
		return ok && strings.Contains(se.Log, "already in use")
	})
}

func (k Driver) startOnce(ctx context.Context, i *instance.Instance) error {
	if _, err := mariaTmpDir(i); err != nil { // instances made before it was kept
		return err
	}
	logf, mark, err := i.OpenLog()
	if err != nil {
		return err
	}
	cmd := i.Daemon(filepath.Join(i.Bin, "mariadbd"), "--defaults-file="+filepath.Join(i.Path, myConf))
	cmd.Stdout, cmd.Stderr = logf, logf
	p, err := i.StartProcess(cmd)
	logf.Close()
	if err != nil {
		return fmt.Errorf("starting mariadbd: %v", err)
	}
	dsn := strings.Replace(i.DSN(), "/"+i.Database, "/", 1)
	t, err := mysql.Open(dsn, target.Config{ConnectTimeout: 2 * time.Second, AppName: "fathom"})
	if err != nil {
		return err
	}
	var last error
	for {
		if p.Exited() {
			return &instance.StartError{Instance: i.Name, Reason: "mariadbd exited: " + p.ExitText(), Log: i.LogSince(mark), LogFile: i.LogFile()}
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
			se := &instance.StartError{Instance: i.Name, Reason: fmt.Sprintf("not accepting connections when fathom stopped waiting (%v; last error: %v)", ctx.Err(), last),
				Log: i.LogSince(mark), LogFile: i.LogFile()}
			_ = k.Stop(context.WithoutCancel(ctx), i)
			return se
		case <-p.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (Driver) Stop(ctx context.Context, i *instance.Instance) error {
	stopped, err := i.StopProcess(ctx, "mariadbd", 2*time.Minute)
	if stopped {
		_ = os.Remove(filepath.Join(i.Path, myPidFile))
	}
	return err
}

func (Driver) Reload(context.Context, *instance.Instance) error { return nil }

// Catalog runs `mariadbd --verbose --help`: the variables' names (with '_'); the
// programs do not say which are dynamic.
func (Driver) Catalog(bin string) (map[string]instance.SettingInfo, error) {
	out, err := exec.Command(filepath.Join(bin, "mariadbd"), "--no-defaults", "--verbose", "--help").Output()
	if err != nil && len(out) == 0 {
		return nil, fmt.Errorf("listing MariaDB's variables: %v", err)
	}
	return parseCatalog(out), nil
}

func parseCatalog(out []byte) map[string]instance.SettingInfo {
	c := map[string]instance.SettingInfo{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	in := false
	for sc.Scan() {
		line := sc.Text()
		if !in {
			if strings.HasPrefix(line, "-----") {
				in = true
			}
			continue
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			break
		}
		name := strings.ReplaceAll(f[0], "-", "_")
		c[name] = instance.SettingInfo{Name: name}
	}
	return c
}
