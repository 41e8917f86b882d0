package cli

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/instance"
)

// freePorts finds n consecutive ports free now, none a default database port.
func freePorts(t *testing.T, n int) int {
	t.Helper()
	for tries := 0; tries < 50; tries++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		ok := p+n-1 <= 65535
		for q := p; ok && q < p+n; q++ {
			ok = instance.PortFree(q) && q != 3306 && q != 5432 && q != 6379
		}
		if ok {
			return p
		}
	}
	t.Fatalf("no %d consecutive free ports", n)
	return 0
}

// redisPort asks a Redis instance which port it serves.
func redisPort(t *testing.T, inst *instance.Instance) string {
	t.Helper()
	cmd := exec.Command("redis-cli", "--no-auth-warning", "-h", "127.0.0.1", "-p", strconv.Itoa(inst.Port), "CONFIG", "GET", "port")
	cmd.Env = append(os.Environ(), "REDISCLI_AUTH="+inst.Password())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli: %v %s", err, out)
	}
	f := strings.Fields(string(out))
	if len(f) != 2 {
		t.Fatalf("CONFIG GET port: %q", out)
	}
	return f[1]
}

// `fathom instance start --port N` listens on N and `--port-range A-B` inside the
// range, as the server itself says; `--set port=N`, a default port, both flags or a
// taken port are refused in one line before anything is made.
func TestInstanceStartPorts(t *testing.T) {
	needServer(t, instance.Redis)
	t.Parallel()
	env, dir := expEnv(t)
	port := freePorts(t, 1)
	r := fathom(t, env, nil, "instance", "start", "--kind", "redis", "--name", "fixed", "--port", strconv.Itoa(port))
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	inst, err := instance.Find(dir, "fixed")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Remove(context.Background()) })
	if !strings.Contains(r.stdout, fmt.Sprintf("on port %d", port)) || inst.Port != port || redisPort(t, inst) != strconv.Itoa(port) {
		t.Errorf("--port %d: instance on %d, says\n%s", port, inst.Port, r.stdout)
	}
	// The same port again: taken, refused, nothing made.
	oneLine(t, fathom(t, env, nil, "instance", "start", "--kind", "redis", "--name", "again", "--port", strconv.Itoa(port)), exitFailure,
		fmt.Sprintf("port %d is in use", port))

	lo := freePorts(t, 3)
	rng := fmt.Sprintf("%d-%d", lo, lo+2)
	r = fathom(t, env, nil, "instance", "start", "--kind", "redis", "--name", "ranged", "--port-range", rng)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	ranged, err := instance.Find(dir, "ranged")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ranged.Remove(context.Background()) })
	if got, _ := strconv.Atoi(redisPort(t, ranged)); got < lo || got > lo+2 || got != ranged.Port {
		t.Errorf("--port-range %s: the server answers on %d (instance.json says %d)", rng, got, ranged.Port)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--set", "port=" + strconv.Itoa(lo)}, "setting port: fathom sets an instance's port itself"},
		{[]string{"--set", "PORT=" + strconv.Itoa(lo)}, "use --port N"},
		{[]string{"--set", "unixsocket=/tmp/x.sock"}, "setting unixsocket: fathom sets it itself"},
		{[]string{"--port", "6379"}, "port 6379 is a default database port"},
		{[]string{"--port", "80"}, "between 1024 and 65535"},
		{[]string{"--port", "40000", "--port-range", "40000-40010"}, "give --port or --port-range, not both"},
		{[]string{"--port-range", "40010-40000"}, "--port-range: port range \"40010-40000\""},
	} {
		args := append([]string{"instance", "start", "--kind", "redis", "--name", "refused"}, tc.args...)
		oneLine(t, fathom(t, env, nil, args...), exitUsage, tc.want)
	}
	if list, _ := instance.List(dir); len(list) != 2 {
		t.Errorf("instances after the refusals: %d, want the 2 started", len(list))
	}
}

// TestExperimentHooksReachTheInstance: the case of issue 25 through `fathom
// experiment`. The host's MariaDB client options (Debian's [client-server] socket and a
// ~/.my.cnf naming the host's 127.0.0.1:3306), a PGSERVICE naming the host's 5432 and
// MYSQL_* variables naming 3306 are planted in fathom's environment; a plan on a
// throwaway MariaDB with a port_range runs the README's hook routes before, around and
// after its run, and every one answers `select @@port` with the instance's port.
func TestExperimentHooksReachTheInstance(t *testing.T) {
	needServer(t, instance.MariaDB)
	dbtest.SkipMariaDBInPGMatrix(t)
	u, err := url.Parse(dbtest.MySQLDSN(t))
	if err != nil {
		t.Fatal("FATHOM_TEST_MYSQL_DSN is not a URL")
	}
	env, _ := expEnv(t)
	home := t.TempDir()
	mycnf := "[client-server]\nsocket = /run/mysqld/mysqld.sock\n[client]\nhost = " + u.Hostname() + "\nport = " + u.Port() + "\nuser = root\n"
	if err := os.WriteFile(filepath.Join(home, ".my.cnf"), []byte(mycnf), 0o600); err != nil {
		t.Fatal(err)
	}
	svc := filepath.Join(home, "pg_service.conf")
	if err := os.WriteFile(svc, []byte("[hostpg]\nhost=127.0.0.1\nport=5432\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Process-wide, so that fathom's own connections live with them too.
	for k, v := range map[string]string{"HOME": home, "PGSERVICE": "hostpg", "PGSERVICEFILE": svc,
		"MYSQL_HOST": u.Hostname(), "MYSQL_TCP_PORT": u.Port(), "MYSQL_UNIX_PORT": "/run/mysqld/mysqld.sock"} {
		t.Setenv(k, v)
	}
	if out, err := exec.Command("mariadb", "-Nse", "select @@port").CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != u.Port() {
		t.Fatalf("the planted ~/.my.cnf does not reach the host's MariaDB on %s (%v: %s): the test would prove nothing", u.Port(), err, out)
	}
	lo := freePorts(t, 4)
	const q = "-Nse 'select @@port'"
	plan := writePlan(t, fmt.Sprintf(`experiment: routes
instance: {kind: mariadb, port_range: %d-%d}
workload: oltp_point_select
options: {tables: 1, table_size: 100}
transactions: 10
hooks:
  before_experiment:
    - shell: mariadb -uroot %s
  before_run:
    - shell: mariadb --defaults-file="$FATHOM_INSTANCE_DIR/client.cnf" %s
    - shell: mysql %s
  after_experiment:
    - shell: mariadb %s
`, lo, lo+3, q, q, q, q))
	r := fathom(t, env, nil, "experiment", "-q", plan)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	st := openTestStore(t, env)
	ctx := context.Background()
	exp, err := st.ExperimentByName(ctx, "routes")
	if err != nil {
		t.Fatal(err)
	}
	hooks, err := st.ExperimentHooks(ctx, exp.ID)
	if err != nil || len(hooks) != 4 {
		t.Fatalf("%d hooks stored (%v), want 4", len(hooks), err)
	}
	first := strings.TrimSpace(hooks[0].Output)
	if p, err := strconv.Atoi(first); err != nil || p < lo || p > lo+3 {
		t.Fatalf("before_experiment hook answered from port %q, want the instance's, inside %d-%d", first, lo, lo+3)
	}
	for _, h := range hooks {
		if got := strings.TrimSpace(h.Output); !h.OK || got != first {
			t.Errorf("%s hook %q answered from port %q (ok %v), want the instance's %s", h.Phase, h.Command, got, h.OK, first)
		}
	}
}
