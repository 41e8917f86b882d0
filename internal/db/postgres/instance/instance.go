// Package postgres is the PostgreSQL driver of throwaway instances: a cluster made by
// initdb and run with pg_ctl, whose superuser has a generated password
// (scram-sha-256 over TCP and the socket alike), kept in a .pgpass file.
package postgres

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	postgres "github.com/fathom-lab/fathom/internal/db/postgres/target"
	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/target"
)

// Names of the driver's files in an instance directory.
const (
	pgConf     = "fathom.conf" // included from postgresql.conf
	pgPassFile = "pgpass"      // *:*:*:postgres:PASSWORD, for fathom and hooks (PGPASSFILE)
	pgInitPw   = ".initpw"     // initdb --pwfile, removed once initdb has run
)

// Driver runs PostgreSQL instances.
type Driver struct{}

func (Driver) Kind() instance.Kind           { return instance.Postgres }
func (Driver) Aliases() []string             { return []string{"postgresql", "pg"} }
func (Driver) Title() string                 { return "PostgreSQL" }
func (Driver) Account() string               { return "postgres" }
func (Driver) Programs() []string            { return []string{"initdb", "pg_ctl", "postgres"} }
func (Driver) Superuser() string             { return "postgres" }
func (Driver) SecretFile() string            { return pgPassFile }
func (Driver) NormalizeName(n string) string { return strings.ToLower(n) }

func (Driver) SocketPath(dir string, port int) string {
	return filepath.Join(dir, ".s.PGSQL."+strconv.Itoa(port))
}

func (Driver) PIDFile(i *instance.Instance) string {
	return filepath.Join(i.DataDir(), "postmaster.pid")
}

func (Driver) Secret(i *instance.Instance, password string) string {
	return "# written by fathom: the password of instance " + i.Name + "'s superuser\n*:*:*:" + i.User + ":" + password + "\n"
}

func (Driver) Password(text string) string {
	for _, line := range strings.Split(text, "\n") {
		if f := strings.Split(line, ":"); len(f) == 5 {
			return f[4]
		}
	}
	return ""
}

func (Driver) CheckSetting(instance.Setting) error { return nil }

// DSN names the password file (passfile=), so that it is safe to print.
func (Driver) DSN(i *instance.Instance, secret string) string {
	if secret != "" {
		return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable&passfile=%s", i.User, i.Port, i.Database, instance.QueryPath(secret))
	}
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", i.User, i.Port, i.Database)
}

// Clients: PGHOST (127.0.0.1, so that inet_server_port() says where a hook is),
// PGPORT, PGUSER, PGDATABASE, PGSSLMODE and PGPASSFILE (the password file, not the
// password). libpq applies a service (PGSERVICE, from ~/.pg_service.conf or
// PGSERVICEFILE/PGSYSCONFDIR) before these variables, and PGHOSTADDR and PGPASSWORD
// beat PGHOST and PGPASSFILE (PGCLUSTER picks a host cluster in Debian's pg_wrapper):
// hooks do not get them. No program needs wrapping. By hand: psql with the DSN and
// hostaddr (libpq takes a service's hostaddr, which beats the DSN's host, unless the
// DSN names one; fathom's own driver has no hostaddr, so the DSN itself cannot).
func (Driver) Clients(i *instance.Instance) instance.Clients {
	env := []string{"PGHOST=127.0.0.1", "PGPORT=" + strconv.Itoa(i.Port), "PGUSER=" + i.User, "PGDATABASE=" + i.Database, "PGSSLMODE=disable"}
	if s := i.SecretFile(); s != "" {
		env = append(env, "PGPASSFILE="+s)
	}
	return instance.Clients{Env: env, Command: "psql " + instance.ShellWord(i.DSN()+"&hostaddr=127.0.0.1"), Unset: []string{"PGSERVICE", "PGSERVICEFILE", "PGSYSCONFDIR", "PGHOSTADDR", "PGPASSWORD", "PGCLUSTER",
		"PGREQUIRESSL", "PGGSSENCMODE", "PGREQUIREAUTH", "PGCHANNELBINDING", "PGTARGETSESSIONATTRS", "PGLOADBALANCEHOSTS", "PGOPTIONS"}}
}

// Reserved are what Config writes (where the server listens) and what would make it
// read other files.
func (Driver) Reserved() []string {
	return []string{"port", "listen_addresses", "unix_socket_directories", "unix_socket_permissions", "data_directory", "config_file", "hba_file", "ident_file", "include", "include_if_exists", "include_dir"}
}

func (Driver) Find(version string) (string, string, error) {
	var tried []string
	for _, d := range pgBinDirs() {
		if !instance.Executable(filepath.Join(d, "initdb")) || !instance.Executable(filepath.Join(d, "pg_ctl")) {
			continue
		}
		v := instance.ProgramVersion(filepath.Join(d, "postgres"))
		tried = append(tried, v)
		if version == "" || v == version || strings.HasPrefix(v, version+".") {
			return d, v, nil
		}
	}
	if version != "" && len(tried) > 0 {
		return "", "", fmt.Errorf("PostgreSQL %s is not installed (found %s): install it or remove version from the plan", version, strings.Join(tried, ", "))
	}
	return "", "", fmt.Errorf("PostgreSQL's initdb and pg_ctl were not found (looked in /usr/lib/postgresql/*/bin, /usr/local/pgsql/bin and PATH): install the postgresql package")
}

// pgBinDirs lists PostgreSQL program directories, newest major version first.
func pgBinDirs() []string {
	var dirs []string
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(matches, func(a, b int) bool {
		va, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(matches[a])), 64)
		vb, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(matches[b])), 64)
		return va > vb
	})
	dirs = append(dirs, matches...)
	dirs = append(dirs, "/usr/local/pgsql/bin")
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		dirs = append(dirs, filepath.Dir(p))
	}
	return dirs
}

func (Driver) Initialize(ctx context.Context, i *instance.Instance) error {
	// The superuser gets a generated password, required (scram-sha-256) over TCP and
	// over the socket alike: other local users must not get in.
	password, err := instance.NewPassword()
	if err != nil {
		return err
	}
	pwfile, err := i.WriteServerFile(pgInitPw, password+"\n")
	if err != nil {
		return err
	}
	defer os.Remove(pwfile)
	args := []string{"-D", i.DataDir(), "-U", i.User, "--auth-local=scram-sha-256", "--auth-host=scram-sha-256", "--pwfile=" + pwfile,
		"-E", "UTF8", "--locale=C", "--no-sync"}
	_, err = i.Run(ctx, filepath.Join(i.Bin, "initdb"), append(args, "--no-instructions")...)
	if err != nil && strings.Contains(err.Error(), "--no-instructions") {
		// initdb before PostgreSQL 14 has no --no-instructions.
		_ = os.RemoveAll(i.DataDir())
		_, err = i.Run(ctx, filepath.Join(i.Bin, "initdb"), args...)
	}
	if err == nil {
		err = i.WriteSecret(password)
	}
	if err != nil {
		return fmt.Errorf("creating a PostgreSQL cluster in %s: %v", i.DataDir(), err)
	}
	f, err := os.OpenFile(filepath.Join(i.DataDir(), "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "\n# fathom: the instance's settings\ninclude_if_exists = '%s'\n", pgConf)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func quoteConf(v string) string { return "'" + strings.ReplaceAll(v, "'", "''") + "'" }

func (Driver) Config(i *instance.Instance) (string, string) {
	var b strings.Builder
	b.WriteString("# Written by fathom for instance " + i.Name + "; rewritten whenever its settings change.\n")
	listen := strings.Join(append([]string{"127.0.0.1"}, i.Listen...), ",")
	fmt.Fprintf(&b, "port = %d\nlisten_addresses = %s\nunix_socket_directories = %s\nunix_socket_permissions = 0700\npassword_encryption = 'scram-sha-256'\n", i.Port, quoteConf(listen), quoteConf(filepath.Dir(i.Socket)))
	b.WriteString("# settings\n")
	for _, s := range i.Settings {
		fmt.Fprintf(&b, "%s = %s\n", s.Name, quoteConf(s.Value))
	}
	return filepath.Join(i.DataDir(), pgConf), b.String()
}

func (k Driver) Start(ctx context.Context, i *instance.Instance) error {
	err := i.StartOnFreePort(func() error {
		secs := strconv.Itoa(int(i.StartTimeout()/time.Second) + 1)
		_, err := i.Run(ctx, filepath.Join(i.Bin, "pg_ctl"), "-D", i.DataDir(), "-l", i.LogFile(), "-w", "-t", secs, "start")
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			_ = k.Stop(context.WithoutCancel(ctx), i)
			return i.StartError("it was still not accepting connections when fathom stopped waiting (" + ctx.Err().Error() + ")")
		}
		return i.StartError("pg_ctl start failed")
	}, func(error) bool { return ctx.Err() == nil && strings.Contains(i.LogTail(10), "already in use") })
	if err != nil {
		return err
	}
	return ensureDatabase(ctx, i)
}

// ensureDatabase creates the instance's database the first time it starts.
func ensureDatabase(ctx context.Context, i *instance.Instance) error {
	dsn := strings.Replace(i.DSN(), "/"+i.Database+"?", "/postgres?", 1)
	t, err := postgres.Open(dsn, target.Config{ConnectTimeout: 10 * time.Second, AppName: "fathom"})
	if err != nil {
		return err
	}
	c, err := t.Connect(ctx)
	if err != nil {
		return i.StartError("cannot connect: " + err.Error())
	}
	defer c.Close()
	rows, err := c.Query(ctx, "SELECT 1 FROM pg_database WHERE datname = $1", target.Text([]byte(i.Database)))
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		if err := c.Exec(ctx, `CREATE DATABASE "`+i.Database+`"`); err != nil {
			return fmt.Errorf("creating database %s on instance %s: %v", i.Database, i.Name, err)
		}
	}
	return nil
}

func (Driver) Stop(ctx context.Context, i *instance.Instance) error {
	if !i.Running() {
		return nil
	}
	pgctl := filepath.Join(i.Bin, "pg_ctl")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	_, err := i.Run(sctx, pgctl, "-D", i.DataDir(), "-m", "fast", "-w", "-t", "60", "stop")
	if err == nil || !i.Running() {
		return nil
	}
	_, err2 := i.Run(sctx, pgctl, "-D", i.DataDir(), "-m", "immediate", "-w", "-t", "30", "stop")
	if err2 != nil && i.Running() {
		return fmt.Errorf("stopping instance %s: %v", i.Name, err)
	}
	return nil
}

func (Driver) Reload(ctx context.Context, i *instance.Instance) error {
	if !i.Running() {
		return nil
	}
	_, err := i.Run(ctx, filepath.Join(i.Bin, "pg_ctl"), "-D", i.DataDir(), "-s", "reload")
	return err
}

// Catalog runs `postgres --describe-config`: each setting with its context and type.
func (Driver) Catalog(bin string) (map[string]instance.SettingInfo, error) {
	out, err := exec.Command(filepath.Join(bin, "postgres"), "--describe-config").Output()
	if err != nil {
		return nil, fmt.Errorf("listing PostgreSQL's settings: %v", err)
	}
	return parseCatalog(out), nil
}

func parseCatalog(out []byte) map[string]instance.SettingInfo {
	c := map[string]instance.SettingInfo{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) < 4 || f[0] == "" {
			continue
		}
		c[f[0]] = instance.SettingInfo{Name: f[0], Context: f[1], Type: f[3]}
	}
	return c
}
