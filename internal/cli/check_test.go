package cli

import (
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/dbtest"
)

var checkLine = regexp.MustCompile(`^\S+ (OK|WARNING|CRITICAL|UNKNOWN) - [^|\n]+( \| [^\n]+)?$`)

// TestCheckCommand runs `fathom check` as Nagios would: one plugin line on stdout,
// nothing on stderr, the status as the exit code.
func TestCheckCommand(t *testing.T) {
	for _, srv := range []struct {
		name string
		dsn  func(testing.TB) string
		expr string
	}{
		{"mysql", func(t testing.TB) string { return dbtest.MySQLDatabase(t, "check") }, "Threads_connected / max_connections * 100"},
		{"postgres", func(t testing.TB) string { return dbtest.PostgresDatabase(t, "check") }, "connections / max_connections * 100"},
	} {
		t.Run(srv.name, func(t *testing.T) {
			dsn := srv.dsn(t)
			env := map[string]string{"FATHOM_CHECK_STATE_DIR": t.TempDir()}
			for _, tt := range []struct {
				args []string
				code int
				want string
			}{
				// The server is shared with other packages' tests (the runner's use 64
				// connections) and other checkouts: thresholds no share of the maximum can
				// cross (the default ones are checked in internal/check).
				{[]string{"--mode", "connections", "-w", "101", "-c", "102"}, 0, "connections OK - "},
				{[]string{"-e", srv.expr, "--comparison_warning", "> 101", "--comparison_critical", "> 102", "--shortname", "threads"}, 0, "threads OK - " + srv.expr + " = "},
				{[]string{"-e", "max_connections", "-c", "~:1", "-n", "maxconn"}, 2, "maxconn CRITICAL - max_connections = "},
				{[]string{"-e", "max_connections", "-w", "~:1", "-c", "~:100000", "-n", "maxconn"}, 1, "maxconn WARNING - "},
				{[]string{"-e", "rate(uptime)", "-n", "up"}, 3, "up UNKNOWN - collecting a baseline"},
				{[]string{"-e", "rate(uptime)", "-n", "up2", "--baseline-status", "ok"}, 0, "up2 OK - collecting a baseline"},
				{[]string{"-e", "max_conections"}, 3, `varcomp UNKNOWN - unknown variable "max_conections" (did you mean max_connections?)`},
				{[]string{"--mode", "long-query", "-w", "abc"}, 3, `FATHOM UNKNOWN - warning threshold "abc": "abc" is not a number`},
				{[]string{"--mode", "nope"}, 3, `FATHOM UNKNOWN - unknown mode "nope"`},
				{[]string{"--bogus"}, 3, "FATHOM UNKNOWN - unknown flag: --bogus"},
				{[]string{"-e", "1 +"}, 3, `FATHOM UNKNOWN - expression "1 +": unexpected token EOF`},
				// A sum past 2^63 is a large number (floats, as in the Perl plugins), not a
				// wrapped negative one below the critical range.
				{[]string{"-e", "max_connections + 9223372036854775807 + 9223372036854775807", "-c", "0:", "-n", "big"}, 0, "big OK - "},
				{[]string{"--mode", "connections", "--connect-failure", "maybe"}, 3, `FATHOM UNKNOWN - --connect-failure "maybe"`},
				{[]string{"--mode", "replication-lag", "--heartbeat"}, 2, "replication-lag CRITICAL - "},
				{[]string{"--mode", "connections", "--heartbeat"}, 3, "FATHOM UNKNOWN - --heartbeat goes with --mode replication-lag"},
			} {
				r := fathom(t, env, nil, append([]string{"check", "--target", dsn}, tt.args...)...)
				if r.code != tt.code || !strings.HasPrefix(r.stdout, tt.want) || r.stderr != "" {
					t.Errorf("check %q: exit %d, stdout %q, stderr %q; want exit %d and %q…", tt.args, r.code, r.stdout, r.stderr, tt.code, tt.want)
				}
				if lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n"); len(lines) != 1 || !checkLine.MatchString(lines[0]) {
					t.Errorf("check %q: not one plugin line: %q", tt.args, r.stdout)
				}
			}
			r := fathom(t, env, nil, "check", "--target", dsn, "--list")
			if r.code != 0 || !strings.Contains(strings.ToLower(r.stdout), "max_connections ") || strings.Count(r.stdout, "\n") < 100 {
				t.Errorf("--list: exit %d, %d lines, stderr %q", r.code, strings.Count(r.stdout, "\n"), r.stderr)
			}

			// --config: named checks in one invocation; the worst status wins.
			cfg := filepath.Join(t.TempDir(), "checks.yaml")
			os.WriteFile(cfg, []byte(`name: db
checks:
  - name: conns
    mode: connections
    warning: 101
    critical: 102
  - name: maxconn
    expression: max_connections
    comparison_critical: "< 1000000"
  - name: rate
    expression: rate(uptime)
    baseline: ok
`), 0o644)
			r = fathom(t, env, nil, "check", "--target", dsn, "--config", cfg)
			lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
			if r.code != 2 || len(lines) != 4 || !strings.HasPrefix(lines[0], "db CRITICAL - 1 critical, 2 ok: maxconn CRITICAL | 'conns'=") ||
				!strings.HasPrefix(lines[2], "maxconn CRITICAL - max_connections = ") || r.stderr != "" {
				t.Errorf("--config: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
			}
			os.WriteFile(cfg, []byte("checks:\n  - name: x\n    mode: connections\n    colour: red\n"), 0o644)
			r = fathom(t, env, nil, "check", "--target", dsn, "--config", cfg)
			if r.code != 3 || !strings.HasPrefix(r.stdout, "FATHOM UNKNOWN - config "+cfg+": line 4: unknown field colour") {
				t.Errorf("bad config: exit %d, stdout %q", r.code, r.stdout)
			}

			// fathom heartbeat --once writes the row; on a server that is not a replica the
			// lag check is CRITICAL, never "0 seconds".
			r = fathom(t, env, nil, "heartbeat", dsn, "--once")
			if r.code != 0 || !strings.HasPrefix(r.stdout, "heartbeat written for server id ") {
				t.Errorf("heartbeat --once: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
			}
		})
	}
}

func TestCheckBadInput(t *testing.T) {
	env := map[string]string{"FATHOM_CHECK_STATE_DIR": t.TempDir()}
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"check", "--mode", "connections"}, 3, "FATHOM UNKNOWN - no server to check: give --target"},
		{[]string{"check", "--target", "sqlite:x.db", "--mode", "connections"}, 3, "FATHOM UNKNOWN - fathom check reads server status: use a PostgreSQL or MySQL/MariaDB target"},
		{[]string{"check", "--target", "oracle://u:pw@h/db", "--mode", "connections"}, 3, "FATHOM UNKNOWN - unknown target kind"},
		{[]string{"check", "--target", "mysql://mon:s3cret@127.0.0.1:1/db", "--mode", "connections"}, 2, "connections CRITICAL - cannot connect to 127.0.0.1:1: connection refused"},
		{[]string{"check", "--target", "postgres://mon:s3cret@127.0.0.1:1/db", "--mode", "connections", "--connect-failure", "unknown"}, 3, "connections UNKNOWN - cannot connect to 127.0.0.1:1"},
		{[]string{"check", "--target", "postgres://mon@127.0.0.1:1/db", "--mode", "connections", "--defaults-file", "/x"}, 3, "FATHOM UNKNOWN - --defaults-file is for MySQL/MariaDB targets"},
		{[]string{"check", "extra-arg"}, 3, "FATHOM UNKNOWN - "},
	} {
		r := fathom(t, env, nil, tt.args...)
		if r.code != tt.code || !strings.HasPrefix(r.stdout, tt.want) || strings.Contains(r.stdout+r.stderr, "s3cret") || strings.Count(r.stdout, "\n") != 1 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d and %q…", tt.args, r.code, r.stdout, r.stderr, tt.code, tt.want)
		}
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"heartbeat"}, "fathom: no primary to write to"},
		{[]string{"heartbeat", "sqlite:x.db"}, "fathom: fathom heartbeat writes to a PostgreSQL or MySQL/MariaDB primary"},
		{[]string{"heartbeat", "mysql://u@h/db", "--table", "bad name"}, `fathom: heartbeat table "bad name"`},
		{[]string{"heartbeat", "mysql://u@h/db", "--interval", "1ms"}, "fathom: the heartbeat interval must be at least 10ms"},
	} {
		r := fathom(t, env, nil, tt.args...)
		if r.code != exitUsage || !strings.HasPrefix(r.stderr, tt.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and %q…", tt.args, r.code, r.stderr, tt.want)
		}
	}
}

// TestCheckTimeout: a server that accepts connections and never answers is CRITICAL
// within --timeout, whatever the driver does.
func TestCheckTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	conns := make(chan net.Conn, 16)
	defer func() {
		ln.Close()
		for len(conns) > 0 {
			(<-conns).Close()
		}
	}()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			select {
			case conns <- c:
			default:
				c.Close()
			}
		}
	}()
	addr := ln.Addr().String()
	env := map[string]string{"FATHOM_CHECK_STATE_DIR": t.TempDir()}
	for _, dsn := range []string{"mysql://mon:s3cret@" + addr + "/x", "postgres://mon:s3cret@" + addr + "/x?sslmode=disable"} {
		start := time.Now()
		r := fathom(t, env, nil, "check", "--target", dsn, "--mode", "connections", "-t", "1")
		if took := time.Since(start); took > 3*time.Second {
			t.Errorf("%s: took %s with --timeout 1", dsn, took)
		}
		if r.code != 2 || !strings.HasPrefix(r.stdout, "connections CRITICAL - no answer from "+addr) || strings.Contains(r.stdout, "s3cret") {
			t.Errorf("%s: exit %d, stdout %q", dsn, r.code, r.stdout)
		}
	}
}

// No stray '|' in plugin output: Nagios reads what follows it as perfdata. A refused
// short name (and the message naming it) is printed without one.
func TestCheckNoStrayBar(t *testing.T) {
	for _, args := range [][]string{
		{"check", "--target", "postgres://nobody@127.0.0.1:1/x", "--mode", "connections", "--shortname", "a|b"},
		{"check", "--target", "postgres://nobody@127.0.0.1:1/x", "--mode", "varcomp", "-e", "1 | 2"},
		{"check", "--target", "postgres://nobody@127.0.0.1:1/x", "--mode", "replication-lag", "--critical-bytes", "x|y"},
		{"check", "--target", "postgres://nobody@127.0.0.1:1/x", "--mode", "connections", "--warning-bytes", "10"},
	} {
		r := fathom(t, map[string]string{}, nil, args...)
		if r.code != 3 || !strings.Contains(r.stdout, "UNKNOWN - ") || strings.Contains(r.stdout, "|") || strings.Count(strings.TrimSpace(r.stdout), "\n") != 0 {
			t.Errorf("%v: exit %d, stdout %q: want one UNKNOWN line without '|'", args, r.code, r.stdout)
		}
	}
}

// TestCheckStateDirOfAnotherUser: with HOME unset or /, the state directory is a
// per-user one in the temporary directory; one made by another user (who could replace
// the cached sample or plant a link as the lock file) is refused in one line.
func TestCheckStateDirOfAnotherUser(t *testing.T) {
	dsn := dbtest.MySQLDatabase(t, "clicheck")
	tmp := dbtest.SharedTempDir(t)
	state := filepath.Join(tmp, "fathom-check-"+strconv.Itoa(os.Geteuid()))
	if out, err := dbtest.AsNobody(t, "mkdir -m 0777 "+state+" && ln -s "+tmp+"/owned-by-root "+state+"/x.lock"); err != nil {
		t.Fatalf("as nobody: %v %s", err, out)
	}
	for _, home := range []string{"", "/"} {
		env := map[string]string{"HOME": home, "TMPDIR": tmp}
		r := fathom(t, env, nil, "check", "--target", dsn, "--mode", "connections")
		if r.code != 3 || !strings.Contains(r.stdout, "refusing "+state+": it belongs to uid") || strings.Count(r.stdout, "\n") != 1 {
			t.Errorf("HOME=%q: exit %d, stdout %q, stderr %q; want UNKNOWN refusing the directory", home, r.code, r.stdout, r.stderr)
		}
	}
	if _, err := os.Lstat(filepath.Join(tmp, "owned-by-root")); err == nil {
		t.Error("a file was created through the planted link")
	}
	// Its own directory is made private.
	own := dbtest.PublicTempDir(t)
	r := fathom(t, map[string]string{"TMPDIR": own}, nil, "check", "--target", dsn, "--mode", "connections")
	if r.code != 0 {
		t.Fatalf("own state directory: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	dir := filepath.Join(own, "fathom-check-"+strconv.Itoa(os.Geteuid()))
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("state directory %s: %v %v, want mode 0700", dir, fi.Mode(), err)
	}
	if out, err := dbtest.AsNobody(t, "ls "+dir); err == nil {
		t.Errorf("nobody lists the state directory: %s", out)
	}
}

// TestCheckRedis: check reads INFO's fields on Redis (the bundle's check dialect); the
// replication modes and the heartbeat, which are SQL servers', are refused in one line.
func TestCheckRedis(t *testing.T) {
	dsn := dbtest.RedisURL(t)
	env := map[string]string{"FATHOM_CHECK_STATE_DIR": t.TempDir()}
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--mode", "connections"}, 0, "connections OK - "},
		{[]string{"-e", "used_memory", "-c", "~:1", "-n", "mem"}, 2, "mem CRITICAL - used_memory = "},
		{[]string{"-e", "connected_clients / maxclients * 100", "-w", "50", "-n", "clients"}, 0, "clients OK - "},
		{[]string{"--mode", "replication-lag"}, 3, "replication-lag UNKNOWN - replication-lag reads MySQL/MariaDB or PostgreSQL replication"},
	} {
		r := fathom(t, env, nil, append([]string{"check", "--target", dsn}, tt.args...)...)
		if r.code != tt.code || !strings.HasPrefix(r.stdout, tt.want) || r.stderr != "" {
			t.Errorf("check %q: exit %d, stdout %q, stderr %q; want exit %d and %q…", tt.args, r.code, r.stdout, r.stderr, tt.code, tt.want)
		}
		if lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n"); len(lines) != 1 || !checkLine.MatchString(lines[0]) {
			t.Errorf("check %q: not one plugin line: %q", tt.args, r.stdout)
		}
	}
	if r := fathom(t, env, nil, "check", "--target", dsn, "--mode", "connections"); !strings.Contains(r.stdout, "% of maxclients (") {
		t.Errorf("connections on Redis: %q, want it to name maxclients", r.stdout)
	}
	if r := fathom(t, env, nil, "heartbeat", "--target", dsn, "--once"); r.code != exitUsage || !strings.Contains(r.stderr, "not redis") {
		t.Errorf("heartbeat on Redis: exit %d, stderr %q", r.code, r.stderr)
	}
}
