package instance_test

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/dbtest"
	. "github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/plan"
)

// hostAddr is the host and port of one of the host's own test servers (its DSN).
func hostAddr(t *testing.T, dsn string) (string, string) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil || u.Hostname() == "" || u.Port() == "" {
		t.Fatalf("the test server's DSN names no host and port")
	}
	return u.Hostname(), u.Port()
}

// plantedEnv is this process's environment with everything that points the servers'
// own clients somewhere replaced by settings that point them at the host's own
// servers: HOME (with a ~/.my.cnf and a ~/.pg_service.conf), PGSERVICE with
// PGSERVICEFILE, PG*, MYSQL_* and REDIS_* variables.
func plantedEnv(t *testing.T, home string, planted ...string) []string {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		n, _, _ := strings.Cut(kv, "=")
		if n == "HOME" || strings.HasPrefix(n, "PG") || strings.HasPrefix(n, "MYSQL") || strings.HasPrefix(n, "MARIADB") || strings.HasPrefix(n, "REDIS") {
			continue
		}
		env = append(env, kv)
	}
	return append(append(env, "HOME="+home), planted...)
}

// shell runs command as a plan's shell hook does, with env as its whole environment,
// and returns its output without surrounding space.
func shell(t *testing.T, command string, env []string) string {
	t.Helper()
	r := plan.RunShell(context.Background(), command, t.TempDir(), env, time.Minute)
	if !r.OK {
		t.Fatalf("%s: %s\n%s", command, r.Error, r.Output)
	}
	return strings.TrimSpace(r.Output)
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestClientsReachOnlyTheInstance: on a host whose option files, service files and
// environment point the servers' own clients at the host's servers (Debian's
// [client-server] socket, a ~/.my.cnf naming 127.0.0.1:3306, a PGSERVICE and a
// ~/.pg_service.conf naming 5432, REDIS_URL and friends naming 6379), what a hook runs
// (HookEnv, as experiments give it) and the documented manual routes (client.cnf,
// the DSN) reach the instance and not the host: the server itself says which port it
// answers on. First the planted settings are shown to reach the host's servers, so
// that the test cannot pass because they did nothing.
func TestClientsReachOnlyTheInstance(t *testing.T) {
	t.Run("mariadb", func(t *testing.T) {
		t.Parallel()
		needKind(t, MariaDB)
		host, hostPort := hostAddr(t, dbtest.MySQLDSN(t))
		ctx := context.Background()
		inst, err := Create(ctx, testOptions(Options{Kind: MariaDB, Name: "routes", Dir: testDir(t)}))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { inst.Remove(context.Background()) })
		if err := inst.Start(ctx); err != nil {
			t.Fatal(err)
		}
		want := strconv.Itoa(inst.Port)
		// Debian's default client options only (a socket), and a ~/.my.cnf that names the
		// host's server outright, in every group the clients read.
		debian := t.TempDir()
		writeFile(t, filepath.Join(debian, ".my.cnf"), "[client-server]\nsocket = /run/mysqld/mysqld.sock\n")
		mycnf := t.TempDir()
		writeFile(t, filepath.Join(mycnf, ".my.cnf"), "[client-server]\nsocket = /run/mysqld/mysqld.sock\n"+
			"[client]\nhost = "+host+"\nport = "+hostPort+"\nuser = root\n[mysql]\nhost = "+host+"\nport = "+hostPort+"\n[client-mariadb]\nhost = "+host+"\nport = "+hostPort+"\n")
		extra := []string{"MYSQL_HOST=" + host, "MYSQL_TCP_PORT=" + hostPort, "MYSQL_UNIX_PORT=/run/mysqld/mysqld.sock", "MYSQL_HOME=" + mycnf}
		const q = "-Nse 'select @@port'"
		if got := shell(t, "mariadb "+q, plantedEnv(t, mycnf, extra...)); got != hostPort {
			t.Fatalf("the planted ~/.my.cnf reaches port %s, not the host's %s: the test proves nothing", got, hostPort)
		}
		for _, home := range []string{debian, mycnf} {
			env, err := inst.HookEnv(plantedEnv(t, home, extra...), filepath.Join(t.TempDir(), "bin"))
			if err != nil {
				t.Fatal(err)
			}
			for _, cmd := range []string{"mariadb -uroot " + q, "mysql " + q, "mariadb --defaults-file=" + inst.SecretFile() + " " + q,
				"mariadb-admin variables | awk '$2 == \"port\" { print $4 }'"} {
				if got := shell(t, cmd, env); got != want {
					t.Errorf("hook (HOME %s): %s answered from port %q, want the instance's %s", home, cmd, got, want)
				}
			}
			if home == debian {
				// A client named by its full path misses the wrapper: the variables still
				// reach the instance where the option files set no host or port.
				if got := shell(t, "/usr/bin/mariadb -uroot "+q, env); got != want {
					t.Errorf("hook: /usr/bin/mariadb answered from port %q, want the instance's %s", got, want)
				}
			}
			// By hand, as the README and `fathom instance start` show: the client file alone.
			manual := inst.Driver().Clients(inst).Command
			if manual != "mariadb --defaults-file="+inst.SecretFile() {
				t.Errorf("the printed client command is %q", manual)
			}
			if got := shell(t, manual+" "+q, plantedEnv(t, home, extra...)); got != want {
				t.Errorf("%s (HOME %s) answered from port %q, want the instance's %s", manual, home, got, want)
			}
		}
	})

	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		needKind(t, Postgres)
		host, hostPort := hostAddr(t, dbtest.PostgresDSN(t))
		ctx := context.Background()
		inst, err := Create(ctx, testOptions(Options{Kind: Postgres, Name: "routes", Dir: testDir(t)}))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { inst.Remove(context.Background()) })
		if err := inst.Start(ctx); err != nil {
			t.Fatal(err)
		}
		want := strconv.Itoa(inst.Port)
		home := t.TempDir()
		service := "[fathomhost]\nhost=" + host + "\nhostaddr=" + host + "\nport=" + hostPort + "\nuser=postgres\ndbname=postgres\n"
		writeFile(t, filepath.Join(home, ".pg_service.conf"), service)
		svcfile := filepath.Join(t.TempDir(), "pg_service.conf")
		writeFile(t, svcfile, service)
		env0 := plantedEnv(t, home, "PGSERVICE=fathomhost", "PGSERVICEFILE="+svcfile, "PGSYSCONFDIR="+filepath.Dir(svcfile),
			"PGHOST="+host, "PGHOSTADDR="+host, "PGPORT="+hostPort, "PGUSER=postgres", "PGDATABASE=postgres", "PGCLUSTER=15/main")
		const q = "psql -XAtc 'select inet_server_port()'"
		if got := shell(t, q, env0); got != hostPort {
			t.Fatalf("the planted service reaches port %s, not the host's %s: the test proves nothing", got, hostPort)
		}
		env, err := inst.HookEnv(env0, filepath.Join(t.TempDir(), "bin"))
		if err != nil {
			t.Fatal(err)
		}
		for _, cmd := range []string{q, "psql -XAt -c 'select inet_server_port()' -d fathom", "pg_isready -q && " + q} {
			if got := shell(t, cmd, env); got != want {
				t.Errorf("hook: %s answered from port %q, want the instance's %s", cmd, got, want)
			}
		}
		// By hand, as the README and `fathom instance start` show: the DSN, in the planted
		// environment.
		manual := inst.Driver().Clients(inst).Command
		if manual != "psql '"+inst.DSN()+"&hostaddr=127.0.0.1'" {
			t.Errorf("the printed client command is %q", manual)
		}
		// A service whose hostaddr (which beats a DSN's host) names another address:
		// 127.0.0.2, where the instance does not listen.
		trap := filepath.Join(t.TempDir(), "pg_service.conf")
		writeFile(t, trap, "[fathomhost]\nhostaddr=127.0.0.2\nport="+hostPort+"\n")
		for _, e := range [][]string{env0, plantedEnv(t, home, "PGSERVICE=fathomhost", "PGSERVICEFILE="+trap)} {
			if got := shell(t, manual+" -XAtc 'select inet_server_port()'", e); got != want {
				t.Errorf("%s answered from port %q, want the instance's %s", manual, got, want)
			}
		}
	})

	t.Run("redis", func(t *testing.T) {
		t.Parallel()
		needKind(t, Redis)
		host, hostPort := hostAddr(t, dbtest.RedisURL(t))
		ctx := context.Background()
		inst, err := Create(ctx, Options{Kind: Redis, Name: "routes", Dir: testDir(t)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { inst.Remove(context.Background()) })
		if err := inst.Start(ctx); err != nil {
			t.Fatal(err)
		}
		want := "port\n" + strconv.Itoa(inst.Port)
		env0 := plantedEnv(t, t.TempDir(), "REDIS_URL=redis://"+host+":"+hostPort+"/15", "REDIS_HOST="+host, "REDIS_PORT="+hostPort, "REDISCLI_AUTH=not-the-instance's")
		const q = "redis-cli --no-auth-warning CONFIG GET port"
		if got := shell(t, "redis-cli --no-auth-warning -u \"$REDIS_URL\" CONFIG GET port 2>/dev/null", env0); got != "port\n"+hostPort {
			t.Fatalf("the planted REDIS_URL reaches %q, not the host's port %s: the test proves nothing", got, hostPort)
		}
		env, err := inst.HookEnv(env0, filepath.Join(t.TempDir(), "bin"))
		if err != nil {
			t.Fatal(err)
		}
		for _, cmd := range []string{q, "redis-cli --no-auth-warning -u \"$REDIS_URL\" CONFIG GET port", "redis-cli --no-auth-warning -s \"$REDIS_SOCKET\" CONFIG GET port",
			"redis-cli --no-auth-warning -h \"$REDIS_HOST\" -p \"$REDIS_PORT\" CONFIG GET port"} {
			if got := shell(t, cmd, env); got != want {
				t.Errorf("hook: %s answered %q, want the instance's %q", cmd, got, want)
			}
		}
		// By hand, as the README and `fathom instance start` show.
		manual := inst.Driver().Clients(inst).Command + " --no-auth-warning CONFIG GET port"
		if !strings.HasPrefix(manual, "REDISCLI_AUTH=") {
			t.Errorf("the printed client command is %q", manual)
		}
		if got := shell(t, manual, env0); got != want {
			t.Errorf("%s answered %q, want the instance's %q", manual, got, want)
		}
	})
}
