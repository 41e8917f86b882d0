package check_test

import (
	"context"
	"fmt"
	"github.com/fathom-lab/fathom/internal/check"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/target"
)

// Replication tests start their own servers (internal/instance) on free ports in
// temporary directories: a MariaDB primary and replica, and a PostgreSQL primary and
// streaming standby, each replica reaching its primary through a proxy that can go
// silent. The machine's default servers are never touched.

func instanceBase(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts database servers: not in -short mode")
	}
	base, err := os.MkdirTemp("", "fck")
	if err != nil {
		t.Fatal(err)
	}
	// The servers run as postgres/mysql when the tests run as root: they must reach it.
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	return base
}

func startInstance(t *testing.T, base string, kind instance.Kind, name string, settings ...instance.Setting) *instance.Instance {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	inst, err := instance.Create(ctx, instance.Options{Kind: kind, Name: name, Dir: base, Settings: settings, StartTimeout: time.Minute, Owner: "check tests", Bin: dbtest.PGBin(kind == instance.Postgres)})
	if err != nil {
		if dbtest.Required() {
			t.Fatalf("creating a %s instance: %v", kind, err)
		}
		t.Skipf("cannot create a %s instance here: %v", kind, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := inst.Remove(ctx); err != nil {
			t.Errorf("removing instance %s: %v", name, err)
		}
	})
	if err := inst.Start(ctx); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	return inst
}

func mustExec(t *testing.T, tg target.Target, stmts ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, s := range stmts {
		if _, err := c.Query(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func queryRow(t *testing.T, tg target.Target, q string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rows, err := c.Query(ctx, q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	if len(rows) == 0 {
		return nil
	}
	return rows[0]
}

// waitFor polls cond until it holds, failing the test after timeout.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	var last string
	err := dbtest.Poll(timeout, 200*time.Millisecond, what, func() (ok bool) { ok, last = cond(); return ok })
	if err != nil {
		t.Fatalf("%v (last: %s)", err, last)
	}
}

// runCheck runs one check as one invocation, without a sample cache.
func runCheck(t *testing.T, tg target.Target, c *check.Check) check.Result {
	t.Helper()
	prepared(t, c)
	res := runOnce(t, tg, t.TempDir(), c)[0]
	res.Name = c.Name
	checkLine(t, res.Line())
	return res
}

// heartbeat runs `fathom heartbeat` against tg until stop is called or the test ends.
func heartbeat(t *testing.T, tg target.Target) (hb *check.Heartbeat, stop func()) {
	t.Helper()
	hb = &check.Heartbeat{Target: tg, Dialect: dialectFor(tg), Interval: 200 * time.Millisecond}
	if err := hb.Prepare(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- hb.Run(ctx, false) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("heartbeat: %v", err)
		}
	}
	t.Cleanup(stop)
	return hb, stop
}

func lagOf(r check.Result) float64 {
	if len(r.Perf) == 0 {
		return -1
	}
	return r.Perf[0].Value
}

func noSecret(t *testing.T, secret string, results ...check.Result) {
	t.Helper()
	for _, r := range results {
		if strings.Contains(r.Line(), secret) {
			t.Errorf("output shows a password: %q", r.Line())
		}
	}
}

func TestMariaDBReplication(t *testing.T) {
	dbtest.SkipMariaDBInPGMatrix(t)
	base := instanceBase(t)
	primary := startInstance(t, base, instance.MariaDB, "primary",
		instance.Setting{Name: "server_id", Value: "1"},
		instance.Setting{Name: "log_bin", Value: "primary-bin"},
		instance.Setting{Name: "binlog_format", Value: "ROW"})
	replica := startInstance(t, base, instance.MariaDB, "replica",
		instance.Setting{Name: "server_id", Value: "2"},
		instance.Setting{Name: "relay_log", Value: "replica-relay"})
	ptg, rtg := openTarget(t, primary.DSN()), openTarget(t, replica.DSN())
	px := newProxy(t, fmt.Sprintf("127.0.0.1:%d", primary.Port))

	const secret = "repl-s3cret-pw"
	mustExec(t, ptg, "CREATE USER 'repl'@'127.0.0.1' IDENTIFIED BY '"+secret+"'", "GRANT REPLICATION SLAVE ON *.* TO 'repl'@'127.0.0.1'")
	pos := queryRow(t, ptg, "SHOW MASTER STATUS")
	mustExec(t, rtg, fmt.Sprintf("CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=%d, MASTER_USER='repl', MASTER_PASSWORD='%s', MASTER_LOG_FILE='%s', MASTER_LOG_POS=%s, MASTER_CONNECT_RETRY=1",
		px.port(), secret, pos[0], pos[1]), "START SLAVE")

	hb, _ := heartbeat(t, ptg)
	waitFor(t, 30*time.Second, "heartbeat replicated", func() (bool, string) {
		r := runCheck(t, rtg, &check.Check{Mode: "replication-lag", Heartbeat: true, Warning: check.MustRange("2"), Critical: check.MustRange("5")})
		return r.Status == check.OK, r.Line()
	})
	if hb.ID() != 1 {
		t.Errorf("heartbeat server id %d, want @@server_id 1", hb.ID())
	}

	hbCheck := func() check.Result {
		return runCheck(t, rtg, &check.Check{Name: "lag", Mode: "replication-lag", Heartbeat: true, Warning: check.MustRange("1.5"), Critical: check.MustRange("2.5")})
	}
	sbmCheck := func() check.Result {
		return runCheck(t, rtg, &check.Check{Name: "sbm", Mode: "seconds-behind-master", Warning: check.MustRange("1.5"), Critical: check.MustRange("2.5")})
	}

	t.Run("healthy", func(t *testing.T) {
		// Polled: on a loaded machine a heartbeat or its replay can be a second late now
		// and then, and a healthy replica is OK again at the next.
		var r, s check.Result
		waitFor(t, 20*time.Second, "a healthy replica's checks OK", func() (bool, string) {
			r, s = hbCheck(), sbmCheck()
			return r.Status == check.OK && s.Status == check.OK && strings.Contains(s.Message, "Seconds_Behind_Master 0s"), r.Line() + "; " + s.Line()
		})
		if lagOf(r) > 1.5 || !strings.Contains(r.Message, "heartbeat lag") || !strings.Contains(r.Message, "server id 1") {
			t.Errorf("heartbeat: %q", r.Line())
		}
		noSecret(t, secret, r, s)
	})

	// A silent link: the I/O thread runs but receives nothing. Seconds_Behind_Master
	// only compares the relay log with the SQL thread and says 0; the heartbeat knows.
	t.Run("starved I/O thread", func(t *testing.T) {
		px.pause()
		time.Sleep(3 * time.Second)
		r, s := hbCheck(), sbmCheck()
		px.resume()
		if r.Status != check.Critical || lagOf(r) < 2.5 || !strings.Contains(r.Message, "(> 2.5)") {
			t.Errorf("heartbeat on a starved replica: %q, want CRITICAL with lag > 2.5s", r.Line())
		}
		if s.Status != check.OK || lagOf(s) != 0 {
			t.Errorf("Seconds_Behind_Master on a starved replica: %q (its blind spot says 0)", s.Line())
		}
		t.Logf("starved for 3s: heartbeat %q; Seconds_Behind_Master %q", r.Line(), s.Line())
		waitFor(t, 20*time.Second, "lag recovers after the link comes back", func() (bool, string) {
			r := hbCheck()
			return r.Status == check.OK, r.Line()
		})
	})

	t.Run("SQL thread stopped", func(t *testing.T) {
		mustExec(t, rtg, "STOP SLAVE SQL_THREAD")
		defer mustExec(t, rtg, "START SLAVE SQL_THREAD")
		for _, r := range []check.Result{hbCheck(), sbmCheck()} {
			if r.Status != check.Critical || !strings.Contains(r.Message, "SQL thread not running") {
				t.Errorf("%q, want CRITICAL SQL thread not running", r.Line())
			}
		}
	})

	t.Run("replication stopped", func(t *testing.T) {
		mustExec(t, rtg, "STOP SLAVE")
		for _, r := range []check.Result{hbCheck(), sbmCheck()} {
			if r.Status != check.Critical || !strings.Contains(r.Message, "I/O thread not running (No)") || !strings.Contains(r.Message, "SQL thread not running") {
				t.Errorf("%q, want CRITICAL with both threads stopped", r.Line())
			}
			if strings.Contains(r.Message, " 0s") {
				t.Errorf("stopped replication reported as 0 seconds: %q", r.Line())
			}
			noSecret(t, secret, r)
		}
		mustExec(t, rtg, "START SLAVE")
		waitFor(t, 20*time.Second, "replication restarts", func() (bool, string) {
			r := hbCheck()
			return r.Status == check.OK, r.Line()
		})
	})

	t.Run("primary unreachable", func(t *testing.T) {
		// The replica cannot connect: MASTER_CONNECT_RETRY=1 and a port nobody listens on.
		mustExec(t, rtg, "STOP SLAVE", "CHANGE MASTER TO MASTER_PORT=1", "START SLAVE")
		defer mustExec(t, rtg, "STOP SLAVE", fmt.Sprintf("CHANGE MASTER TO MASTER_PORT=%d", px.port()), "START SLAVE")
		waitFor(t, 20*time.Second, "CRITICAL for a disconnected replica", func() (bool, string) {
			r := hbCheck()
			return r.Status == check.Critical && strings.Contains(r.Message, "I/O thread not connected to the primary (Connecting)"), r.Line()
		})
		noSecret(t, secret, hbCheck(), sbmCheck())
	})

	t.Run("no heartbeat", func(t *testing.T) {
		r := runCheck(t, rtg, &check.Check{Mode: "replication-lag", Heartbeat: true, ServerID: 99})
		if r.Status != check.Critical || !strings.Contains(r.Message, "no heartbeat row for server id 99 in fathom_heartbeat") {
			t.Errorf("%q", r.Line())
		}
		r = runCheck(t, rtg, &check.Check{Mode: "replication-lag", Heartbeat: true, HeartbeatTable: "no_such_table"})
		if r.Status != check.Critical || !strings.Contains(r.Message, "no heartbeat table no_such_table") {
			t.Errorf("%q", r.Line())
		}
		r = runCheck(t, ptg, &check.Check{Mode: "replication-lag", Heartbeat: true})
		if r.Status != check.Critical || !strings.Contains(r.Message, "is not a replica") {
			t.Errorf("on the primary: %q", r.Line())
		}
		r = runCheck(t, rtg, &check.Check{Mode: "replication-lag", Heartbeat: true, Channel: "nope"})
		if r.Status != check.Critical || !strings.Contains(r.Message, `no replication channel "nope"`) {
			t.Errorf("%q", r.Line())
		}
	})

	// Counter resets between two runs: a restart (Uptime) and FLUSH STATUS.
	t.Run("resets", func(t *testing.T) {
		dir := t.TempDir()
		run := func() check.Result {
			return runOnce(t, ptg, dir, prepared(t, &check.Check{Name: "qps", Expression: "rate(Questions)"}))[0]
		}
		run()
		time.Sleep(1100 * time.Millisecond)
		if r := run(); r.Status != check.OK {
			t.Fatalf("second run: %q", r.Line())
		}
		mustExec(t, ptg, "FLUSH STATUS")
		time.Sleep(1100 * time.Millisecond)
		r := run()
		if r.Status != check.Unknown || !strings.Contains(r.Message, "statistics were reset at") || !strings.Contains(r.Message, "FLUSH STATUS") {
			t.Errorf("after FLUSH STATUS: %q", r.Line())
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := primary.Restart(ctx); err != nil {
			t.Fatal(err)
		}
		r = run()
		if r.Status != check.Unknown || !strings.Contains(r.Message, "the server restarted at") {
			t.Errorf("after a restart: %q", r.Line())
		}
		time.Sleep(1100 * time.Millisecond)
		if r := run(); r.Status != check.OK || lagOf(r) < 0 {
			t.Errorf("after the new baseline: %q", r.Line())
		}
	})
}

// pgBasebackup makes dir a standby of the server at port, as the user the instance
// runs as.
func pgBasebackup(t *testing.T, primary, inst *instance.Instance, port int) {
	t.Helper()
	// The primary requires its superuser's password (scram-sha-256): pg_basebackup, and
	// the standby's primary_conninfo that -R writes, read it from a password file the
	// standby's account owns. The copied cluster has the primary's password, so the
	// standby's own password file says so too.
	pass := filepath.Join(inst.Path, "primary.pgpass")
	if err := os.WriteFile(pass, []byte("*:*:*:"+primary.User+":"+primary.Password()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(inst.SecretFile(), []byte("*:*:*:"+inst.User+":"+primary.Password()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := os.RemoveAll(inst.DataDir()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(inst.Bin, "pg_basebackup")); err != nil {
		// The npm registry's server-only builds (the 16–18 version matrix) have no
		// pg_basebackup: copy the stopped primary's data directory instead.
		pgColdCopy(t, ctx, primary, inst, port)
		return
	}
	cmd := exec.CommandContext(ctx, filepath.Join(inst.Bin, "pg_basebackup"), "-D", inst.DataDir(), "-h", "127.0.0.1",
		"-p", strconv.Itoa(port), "-U", inst.User, "-R", "-X", "stream", "-c", "fast", "--no-sync")
	if inst.RunAs != "" {
		u, err := user.Lookup(inst.RunAs)
		if err != nil {
			t.Fatal(err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
		if err := os.Chown(pass, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	cmd.Env = append(os.Environ(), "PGPASSFILE="+pass)
	cmd.Dir = inst.Path
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pg_basebackup: %v: %s", err, out)
	}
	// The copied configuration includes the primary's port: write the standby's own.
	if err := inst.Configure(inst.Settings); err != nil {
		t.Fatal(err)
	}
}

func TestPostgresReplication(t *testing.T) {
	base := instanceBase(t)
	primary := startInstance(t, base, instance.Postgres, "primary")
	standby := startInstance(t, base, instance.Postgres, "standby")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := standby.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	px := newProxy(t, fmt.Sprintf("127.0.0.1:%d", primary.Port))
	pgBasebackup(t, primary, standby, px.port())
	if err := standby.Start(ctx); err != nil {
		t.Fatalf("starting the standby: %v", err)
	}
	ptg, stg := openTarget(t, primary.DSN()), openTarget(t, standby.DSN())
	if got := queryRow(t, stg, "SELECT pg_is_in_recovery()"); len(got) != 1 || got[0] != "t" {
		t.Fatalf("the standby is not in recovery: %v", got)
	}

	_, stopHeartbeat := heartbeat(t, ptg)
	hbCheck := func() check.Result {
		return runCheck(t, stg, &check.Check{Name: "lag", Mode: "replication-lag", Heartbeat: true, Warning: check.MustRange("1.5"), Critical: check.MustRange("2.5")})
	}
	plainCheck := func() check.Result {
		return runCheck(t, stg, &check.Check{Name: "replay", Mode: "replication-lag", Warning: check.MustRange("1.5"), Critical: check.MustRange("2.5")})
	}
	waitFor(t, 30*time.Second, "heartbeat replicated", func() (bool, string) {
		r := hbCheck()
		return r.Status == check.OK, r.Line()
	})

	t.Run("healthy", func(t *testing.T) {
		// Polled: on a loaded machine a heartbeat or its replay can be a second late now
		// and then, and a healthy standby is OK again at the next.
		var hb, plain, r check.Result
		waitFor(t, 20*time.Second, "a healthy standby's checks OK", func() (bool, string) {
			hb, plain = hbCheck(), plainCheck()
			r = runCheck(t, ptg, &check.Check{Name: "standbys", Mode: "replication-lag", MinReplicas: 1, Warning: check.MustRange("1.5"), Critical: check.MustRange("2.5")})
			return hb.Status == check.OK && plain.Status == check.OK && r.Status == check.OK, hb.Line() + "; " + plain.Line() + "; " + r.Line()
		})
		if lagOf(hb) > 1.5 {
			t.Errorf("standby heartbeat: %q", hb.Line())
		}
		if !strings.Contains(r.Message, "replay lag") {
			t.Errorf("primary: %q", r.Line())
		}
		r = runCheck(t, ptg, &check.Check{Name: "standbys", Mode: "replication-lag", MinReplicas: 2})
		if r.Status != check.Critical || !strings.Contains(r.Message, "1 standby(s) streaming, want at least 2") {
			t.Errorf("primary wanting 2 standbys: %q", r.Line())
		}
	})

	// An idle primary: pg_stat_replication's lag times go NULL once the standby has
	// caught up; that is no lag, not an unknown one.
	parent := t
	t.Run("idle primary", func(t *testing.T) {
		stopHeartbeat()
		waitFor(t, 30*time.Second, "NULL lag times for a caught-up standby of an idle primary", func() (bool, string) {
			row := queryRow(t, ptg, "SELECT replay_lag IS NULL FROM pg_stat_replication")
			return len(row) == 1 && row[0] == "t", fmt.Sprint(row)
		})
		r := runCheck(t, ptg, &check.Check{Name: "standbys", Mode: "replication-lag", MinReplicas: 1, Warning: check.MustRange("1.5"), Critical: check.MustRange("2.5")})
		if r.Status != check.OK || lagOf(r) != 0 || !strings.Contains(r.Message, "replay lag 0s, 0 bytes behind") {
			t.Errorf("idle primary: %q, want OK with lag 0", r.Line())
		}
		_, stopHeartbeat = heartbeat(parent, ptg) // beyond this subtest
		waitFor(t, 20*time.Second, "heartbeat again", func() (bool, string) {
			r := hbCheck()
			return r.Status == check.OK, r.Line()
		})
	})

	t.Run("starved receiver", func(t *testing.T) {
		px.pause()
		time.Sleep(3 * time.Second)
		r, p := hbCheck(), plainCheck()
		px.resume()
		if r.Status != check.Critical || lagOf(r) < 2.5 {
			t.Errorf("heartbeat on a starved standby: %q, want CRITICAL with lag > 2.5s", r.Line())
		}
		t.Logf("starved for 3s: heartbeat %q; replay-based %q", r.Line(), p.Line())
		waitFor(t, 20*time.Second, "lag recovers after the link comes back", func() (bool, string) {
			r := hbCheck()
			return r.Status == check.OK, r.Line()
		})
	})

	t.Run("replay paused", func(t *testing.T) {
		mustExec(t, stg, "SELECT pg_wal_replay_pause()")
		defer mustExec(t, stg, "SELECT pg_wal_replay_resume()")
		waitFor(t, 10*time.Second, "CRITICAL for paused replay", func() (bool, string) {
			r := hbCheck()
			return r.Status == check.Critical && strings.Contains(r.Message, "WAL replay is paused"), r.Line()
		})
		if r := plainCheck(); r.Status != check.Critical || !strings.Contains(r.Message, "WAL replay is paused") {
			t.Errorf("replay check: %q", r.Line())
		}
		// Seen from the primary: replay_lag keeps its last (small) value while the
		// standby falls behind. Bytes behind do not stay stale: byte thresholds catch
		// it, and without them the message says what the time cannot show.
		mustExec(t, ptg, "CREATE TABLE IF NOT EXISTS walgen AS SELECT g AS id, repeat('x', 100) AS pad FROM generate_series(1, 20000) g")
		primaryCheck := func(crit string) check.Result {
			c := &check.Check{Name: "standbys", Mode: "replication-lag", MinReplicas: 1, Warning: check.MustRange("60"), Critical: check.MustRange("300")}
			if crit != "" {
				c.CriticalBytes = check.MustRange(crit)
			}
			return runCheck(t, ptg, c)
		}
		waitFor(t, 20*time.Second, "the primary sees WAL received but not replayed", func() (bool, string) {
			r := primaryCheck("")
			return strings.Contains(r.Message, "received but not replayed"), r.Line()
		})
		r := primaryCheck("")
		if r.Status != check.OK || !strings.Contains(r.Message, "--warning-bytes") {
			t.Errorf("time thresholds only: %q, want OK that names the byte thresholds", r.Line())
		}
		r = primaryCheck("65536")
		if r.Status != check.Critical || !strings.Contains(r.Message, "over the critical bytes threshold") || !strings.Contains(r.Line(), "'standbys_bytes'=") {
			t.Errorf("with --critical-bytes 65536: %q, want CRITICAL", r.Line())
		}
	})

	t.Run("no heartbeat", func(t *testing.T) {
		r := runCheck(t, stg, &check.Check{Mode: "replication-lag", Heartbeat: true, ServerID: 42})
		if r.Status != check.Critical || !strings.Contains(r.Message, "no heartbeat row for server id 42") {
			t.Errorf("%q", r.Line())
		}
		r = runCheck(t, ptg, &check.Check{Mode: "replication-lag", Heartbeat: true})
		if r.Status != check.Critical || !strings.Contains(r.Message, "is not a standby") {
			t.Errorf("on the primary: %q", r.Line())
		}
	})

	t.Run("resets", func(t *testing.T) {
		dir := t.TempDir()
		run := func() check.Result {
			return runOnce(t, ptg, dir, prepared(t, &check.Check{Name: "tps", Expression: "rate(xact_commit)"}))[0]
		}
		run()
		time.Sleep(1100 * time.Millisecond)
		if r := run(); r.Status != check.OK {
			t.Fatalf("second run: %q", r.Line())
		}
		time.Sleep(2600 * time.Millisecond) // reset markers have 2.5s of slack
		mustExec(t, ptg, "SELECT pg_stat_reset()")
		r := run()
		if r.Status != check.Unknown || !strings.Contains(r.Message, "pg_stat_reset()") {
			t.Errorf("after pg_stat_reset(): %q", r.Line())
		}
		rctx, rcancel := context.WithTimeout(context.Background(), time.Minute)
		defer rcancel()
		if err := primary.Restart(rctx); err != nil {
			t.Fatal(err)
		}
		r = run()
		if r.Status != check.Unknown || !strings.Contains(r.Message, "the server restarted at") {
			t.Errorf("after a restart: %q", r.Line())
		}
	})

	// Last: the primary goes away; the standby's receiver stops streaming.
	t.Run("primary down", func(t *testing.T) {
		if err := primary.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 30*time.Second, "CRITICAL for a disconnected standby", func() (bool, string) {
			r := plainCheck()
			return r.Status == check.Critical && (strings.Contains(r.Message, "WAL receiver") || strings.Contains(r.Message, "no WAL receiver")), r.Line()
		})
		r := runCheck(t, ptg, &check.Check{Name: "down", Mode: "connections"})
		if r.Status != check.Critical || !strings.Contains(r.Message, "cannot connect to 127.0.0.1:") {
			t.Errorf("connections on a stopped primary: %q", r.Line())
		}
	})
}

// pgColdCopy makes inst a standby of primary (reached at port) from a copy of the
// primary's data directory taken while it is stopped.
func pgColdCopy(t *testing.T, ctx context.Context, primary, inst *instance.Instance, port int) {
	t.Helper()
	if err := primary.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.CommandContext(ctx, "cp", "-a", primary.DataDir(), inst.DataDir()).CombinedOutput(); err != nil {
		t.Fatalf("copying the primary's data directory: %v: %s", err, out)
	}
	if err := primary.Start(ctx); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(inst.DataDir(), "postmaster.pid"))
	// The primary requires a password: the standby's server reads it from the password
	// file pgBasebackup wrote (owned by the server's account below).
	pass := filepath.Join(inst.Path, "primary.pgpass")
	conninfo := fmt.Sprintf("\nprimary_conninfo = 'host=127.0.0.1 port=%d user=%s passfile=%s'\n", port, inst.User, pass)
	f, err := os.OpenFile(filepath.Join(inst.DataDir(), "postgresql.auto.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString(conninfo)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(inst.DataDir(), "standby.signal"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if inst.RunAs != "" {
		u, err := user.Lookup(inst.RunAs)
		if err != nil {
			t.Fatal(err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		for _, f := range []string{filepath.Join(inst.DataDir(), "standby.signal"), filepath.Join(inst.DataDir(), "postgresql.auto.conf"), pass} {
			if err := os.Chown(f, uid, gid); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The copied configuration includes the primary's port: write the standby's own.
	if err := inst.Configure(inst.Settings); err != nil {
		t.Fatal(err)
	}
}
