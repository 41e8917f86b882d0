package instance

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/target/postgres"
)

type pgKind struct{}

func (pgKind) superuser() string { return "postgres" }

func (pgKind) socketPath(dir string, port int) string {
	return filepath.Join(dir, ".s.PGSQL."+strconv.Itoa(port))
}

func (pgKind) pidFile(i *Instance) string { return filepath.Join(i.DataDir(), "postmaster.pid") }

func (pgKind) find(version string) (string, string, error) {
	var tried []string
	for _, d := range pgBinDirs() {
		if !executable(filepath.Join(d, "initdb")) || !executable(filepath.Join(d, "pg_ctl")) {
			continue
		}
		v := programVersion(filepath.Join(d, "postgres"))
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

func (pgKind) initialize(ctx context.Context, i *Instance) error {
	_, err := i.run(ctx, filepath.Join(i.Bin, "initdb"), "-D", i.DataDir(), "-U", i.User, "--auth=trust",
		"-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions")
	if err != nil && strings.Contains(err.Error(), "--no-instructions") {
		// initdb before PostgreSQL 14 has no --no-instructions.
		_ = os.RemoveAll(i.DataDir())
		_, err = i.run(ctx, filepath.Join(i.Bin, "initdb"), "-D", i.DataDir(), "-U", i.User, "--auth=trust",
			"-E", "UTF8", "--locale=C", "--no-sync")
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

func (pgKind) config(i *Instance) (string, string) {
	var b strings.Builder
	b.WriteString("# Written by fathom for instance " + i.Name + "; rewritten whenever its settings change.\n")
	fmt.Fprintf(&b, "port = %d\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = %s\n", i.Port, quoteConf(filepath.Dir(i.Socket)))
	b.WriteString("# settings\n")
	for _, s := range i.Settings {
		fmt.Fprintf(&b, "%s = %s\n", s.Name, quoteConf(s.Value))
	}
	return filepath.Join(i.DataDir(), pgConf), b.String()
}

func (k pgKind) start(ctx context.Context, i *Instance) error {
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
		secs := strconv.Itoa(int(i.timeout()/time.Second) + 1)
		_, err := i.run(ctx, filepath.Join(i.Bin, "pg_ctl"), "-D", i.DataDir(), "-l", i.LogFile(), "-w", "-t", secs, "start")
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			_ = k.stop(context.WithoutCancel(ctx), i)
			return i.startError("it was still not accepting connections when fathom stopped waiting (" + ctx.Err().Error() + ")")
		}
		if attempt < 3 && strings.Contains(i.LogTail(10), "already in use") {
			if err := i.newPort(); err != nil {
				return err
			}
			continue
		}
		return i.startError("pg_ctl start failed")
	}
	return i.ensureDatabase(ctx)
}

// ensureDatabase creates the instance's database the first time it starts.
func (i *Instance) ensureDatabase(ctx context.Context) error {
	if i.Kind != Postgres {
		return nil
	}
	dsn := fmt.Sprintf("postgres://%s@127.0.0.1:%d/postgres?sslmode=disable", i.User, i.Port)
	t, err := postgres.Open(dsn, target.Config{ConnectTimeout: 10 * time.Second, AppName: "fathom"})
	if err != nil {
		return err
	}
	c, err := t.Connect(ctx)
	if err != nil {
		return i.startError("cannot connect: " + err.Error())
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

func (pgKind) stop(ctx context.Context, i *Instance) error {
	if !i.Running() {
		return nil
	}
	pgctl := filepath.Join(i.Bin, "pg_ctl")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	_, err := i.run(sctx, pgctl, "-D", i.DataDir(), "-m", "fast", "-w", "-t", "60", "stop")
	if err == nil || !i.Running() {
		return nil
	}
	_, err2 := i.run(sctx, pgctl, "-D", i.DataDir(), "-m", "immediate", "-w", "-t", "30", "stop")
	if err2 != nil && i.Running() {
		return fmt.Errorf("stopping instance %s: %v", i.Name, err)
	}
	return nil
}

func (pgKind) reload(ctx context.Context, i *Instance) error {
	if !i.Running() {
		return nil
	}
	_, err := i.run(ctx, filepath.Join(i.Bin, "pg_ctl"), "-D", i.DataDir(), "-s", "reload")
	return err
}
