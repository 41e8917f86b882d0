// Package redis is the Redis driver of throwaway instances: redis-server with its own
// configuration file (redis.conf, private to the server's account: it holds
// requirepass), data directory, port and socket, bound to 127.0.0.1, with a generated
// password kept for fathom in redis.pass (0600). Its settings are redis.conf
// directives ("appendfsync everysec", "save 60 1000").
package redis

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	redis "github.com/fathom-lab/fathom/internal/db/redis/target"
	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/target"
)

// Names of the driver's files in an instance directory.
const (
	redisConf = "redis.conf"
	redisPid  = "redis.pid"
	redisPass = "redis.pass" // the password alone, for fathom (passfile=)
)

// Driver runs Redis instances.
type Driver struct{}

func (Driver) Kind() instance.Kind                    { return instance.Redis }
func (Driver) Aliases() []string                      { return nil }
func (Driver) Title() string                          { return "Redis" }
func (Driver) Account() string                        { return "redis" }
func (Driver) Programs() []string                     { return []string{"redis-server"} }
func (Driver) Superuser() string                      { return "default" }
func (Driver) SecretFile() string                     { return redisPass }
func (Driver) NormalizeName(name string) string       { return strings.ToLower(name) }
func (Driver) SocketPath(dir string, port int) string { return filepath.Join(dir, "redis.sock") }
func (Driver) PIDFile(i *instance.Instance) string    { return filepath.Join(i.Path, redisPid) }
func (Driver) Reload(context.Context, *instance.Instance) error {
	return nil // settings change with CONFIG SET on a running server, or a restart
}

// Catalog lists the settings the redis-server in bin knows (see catalog.go).
func (Driver) Catalog(bin string) (map[string]instance.SettingInfo, error) {
	return catalog(filepath.Join(bin, "redis-server"))
}

func (Driver) Secret(i *instance.Instance, password string) string {
	return "# written by fathom: the password of instance " + i.Name + "\n" + password + "\n"
}

func (Driver) Password(text string) string {
	for _, line := range strings.Split(text, "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			return line
		}
	}
	return ""
}

func (Driver) CheckSetting(s instance.Setting) error {
	if strings.EqualFold(s.Name, "requirepass") {
		return fmt.Errorf("setting requirepass: fathom sets the instance's password itself")
	}
	return nil
}

// DSN names the password file (passfile=), so that it is safe to print.
func (Driver) DSN(i *instance.Instance, secret string) string {
	return fmt.Sprintf("redis://127.0.0.1:%d/0?passfile=%s", i.Port, instance.QueryPath(secret))
}

// Clients: redis-cli has no variable for where to connect (it takes 127.0.0.1:6379,
// the host's server) and reads REDISCLI_AUTH: hooks run it, and redis-benchmark,
// through wrappers that pass -h 127.0.0.1 -p PORT first (a hook's own -h, -p, -s or
// -u still wins), with REDISCLI_AUTH, REDIS_HOST, REDIS_PORT, REDIS_SOCKET and
// REDIS_URL (no password in it) naming the instance.
func (Driver) Clients(i *instance.Instance) instance.Clients {
	port := strconv.Itoa(i.Port)
	env := []string{"REDIS_HOST=127.0.0.1", "REDIS_PORT=" + port, "REDIS_SOCKET=" + i.Socket, "REDIS_URL=redis://127.0.0.1:" + port}
	if pw := i.Password(); pw != "" {
		env = append(env, "REDISCLI_AUTH="+pw)
	}
	first := []string{"-h", "127.0.0.1", "-p", port}
	c := instance.Clients{Env: env, Wrap: map[string][]string{"redis-cli": first, "redis-benchmark": first}}
	if s := i.SecretFile(); s != "" {
		c.Command = "REDISCLI_AUTH=\"$(tail -n 1 " + instance.ShellWord(s) + ")\" redis-cli -h 127.0.0.1 -p " + port
	}
	return c
}

// Reserved are what Config writes, and what would make it read other files.
func (Driver) Reserved() []string {
	return []string{"port", "bind", "protected-mode", "unixsocket", "unixsocketperm", "dir", "pidfile", "logfile", "daemonize", "requirepass", "include", "tls-port"}
}

func (Driver) Find(version string) (string, string, error) {
	return instance.FindServer("redis-server", []string{"/usr/bin", "/usr/local/bin", "/usr/sbin"}, "Redis", version,
		"/usr/bin, /usr/local/bin", "install the redis-server package")
}

func (Driver) Initialize(ctx context.Context, i *instance.Instance) error {
	if err := os.Mkdir(i.DataDir(), 0o700); err != nil {
		return err
	}
	if err := i.GiveToAccount(i.DataDir()); err != nil {
		return err
	}
	password, err := instance.NewPassword()
	if err != nil {
		return err
	}
	return i.WriteSecret(password)
}

func (Driver) Config(i *instance.Instance) (string, string) {
	var b strings.Builder
	b.WriteString("# Written by fathom for instance " + i.Name + "; rewritten whenever its settings change.\n")
	fmt.Fprintf(&b, "port %d\nbind 127.0.0.1\nprotected-mode yes\nunixsocket %s\nunixsocketperm 700\ndir %s\npidfile %s\nlogfile %s\ndaemonize no\n",
		i.Port, i.Socket, i.DataDir(), filepath.Join(i.Path, redisPid), i.LogFile())
	if pw := i.Password(); pw != "" {
		fmt.Fprintf(&b, "requirepass %s\n", pw)
	}
	b.WriteString("# settings\n")
	for _, s := range i.Settings {
		v := s.Value
		if v == "" {
			v = `""` // redis.conf's empty argument (save "")
		}
		fmt.Fprintf(&b, "%s %s\n", s.Name, v)
	}
	return filepath.Join(i.Path, redisConf), b.String()
}

func (k Driver) Start(ctx context.Context, i *instance.Instance) error {
	_, err := k.StartTimed(ctx, i)
	return err
}

// StartTimed starts the server and returns how long it took from the start of the
// process until it answered a PING (after loading its RDB or AOF file).
func (k Driver) StartTimed(ctx context.Context, i *instance.Instance) (time.Duration, error) {
	var took time.Duration
	err := i.StartOnFreePort(func() (err error) {
		took, err = k.startOnce(ctx, i)
		return err
	}, func(err error) bool {
		se, ok := err.(*instance.StartError)
		return ok && strings.Contains(se.Log, "Address already in use")
	})
	if err != nil {
		return 0, err
	}
	return took, nil
}

func (k Driver) startOnce(ctx context.Context, i *instance.Instance) (time.Duration, error) {
	if err := i.WriteConfig(); err != nil { // a new port, or settings changed
		return 0, err
	}
	logf, mark, err := i.OpenLog()
	if err != nil {
		return 0, err
	}
	logf.Close()
	t, err := redis.Open(i.DSN(), target.Config{ConnectTimeout: 2 * time.Second, AppName: "fathom"})
	if err != nil {
		return 0, err
	}
	defer t.Close()
	cmd := i.Daemon(filepath.Join(i.Bin, "redis-server"), filepath.Join(i.Path, redisConf))
	began := time.Now()
	p, err := i.StartProcess(cmd)
	if err != nil {
		return 0, fmt.Errorf("starting redis-server: %v", err)
	}
	var last error
	for {
		if p.Exited() {
			return 0, &instance.StartError{Instance: i.Name, Reason: "redis-server exited: " + p.ExitText(), Log: i.LogSince(mark), LogFile: i.LogFile()}
		}
		c, err := t.Connect(ctx)
		if err == nil {
			err = c.Exec(ctx, "PING") // LOADING until the data set is in memory
			c.Close()
			if err == nil {
				return time.Since(began), nil
			}
		}
		last = err
		if ctx.Err() != nil {
			se := &instance.StartError{Instance: i.Name, Reason: fmt.Sprintf("not answering when fathom stopped waiting (%v; last error: %v)", ctx.Err(), last),
				Log: i.LogSince(mark), LogFile: i.LogFile()}
			_ = k.Stop(context.WithoutCancel(ctx), i)
			return 0, se
		}
		select {
		case <-p.Done():
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// Stop: on SIGTERM Redis fsyncs the AOF, saves an RDB when save points are set, and
// exits; that may take long with a large data set.
func (Driver) Stop(ctx context.Context, i *instance.Instance) error {
	_, err := i.StopProcess(ctx, "redis-server", 10*time.Minute)
	return err
}
