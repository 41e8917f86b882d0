package check_test

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/fathom-lab/fathom/internal/check"
	"github.com/fathom-lab/fathom/internal/db"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/db/mysql/target"
	"github.com/fathom-lab/fathom/internal/db/postgres/target"
	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/target"
)

// dialectFor is the check dialect of tg's kind.
func dialectFor(tg target.Target) *check.Dialect { return db.CheckOf(tg.Kind()) }

// openTarget opens a PostgreSQL or MySQL target from a test DSN.
func openTarget(t testing.TB, dsn string) target.Target {
	t.Helper()
	var (
		tg  target.Target
		err error
	)
	if strings.HasPrefix(dsn, "mysql://") {
		tg, err = mysql.Open(dsn, target.Config{ConnectTimeout: 5 * time.Second})
	} else {
		tg, err = postgres.Open(dsn, target.Config{ConnectTimeout: 5 * time.Second})
	}
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

type server struct {
	name string
	dsn  func(t testing.TB) string
}

var servers = []server{
	{"mysql", func(t testing.TB) string { return dbtest.MySQLDatabase(t, "check") }},
	{"postgres", func(t testing.TB) string { return dbtest.PostgresDatabase(t, "check") }},
}

func prepared(t testing.TB, c *check.Check) *check.Check {
	t.Helper()
	if err := c.Prepare(); err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	return c
}

// runOnce runs checks in a new runner, as one invocation of `fathom check` does.
func runOnce(t testing.TB, tg target.Target, dir string, checks ...*check.Check) []check.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r := check.NewRunner(tg, check.Options{Dialect: dialectFor(tg), State: check.Dir{Path: dir}, ConnectFailure: check.Critical})
	defer r.Close()
	return r.Run(ctx, checks)
}

// pluginLine is the plugin guidelines' output: NAME STATUS - text | perfdata, with
// perfdata 'label'=value[UOM];[warn];[crit];[min];[max], all numeric.
var (
	pluginLine = regexp.MustCompile(`^(\S+) (OK|WARNING|CRITICAL|UNKNOWN) - ([^|\n]*?)(?: \| (.*))?$`)
	perfItem   = regexp.MustCompile(`^'[^'=]+'=-?[0-9]+(\.[0-9]+)?(s|ms|us|%|B|KB|MB|TB|c)?(;(@?(~|-?[0-9.]+)?:?(-?[0-9.]+)?)?){0,2}(;(-?[0-9.]+)?){0,2}$`)
)

func checkLine(t testing.TB, line string) []string {
	t.Helper()
	m := pluginLine.FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("not a plugin output line: %q", line)
	}
	var perf []string
	if m[4] != "" {
		perf = strings.Split(m[4], " ")
		for _, p := range perf {
			if !perfItem.MatchString(p) {
				t.Errorf("perfdata item %q breaks the plugin guidelines (in %q)", p, line)
			}
		}
	}
	return perf
}

func TestVarcomp(t *testing.T) {
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			tg := openTarget(t, s.dsn(t))
			dir := t.TempDir()
			expr := "Threads_connected / max_connections * 100"
			if s.name == "postgres" {
				expr = "connections / max_connections * 100"
			}
			// The server is shared with other packages' tests and other checkouts: a
			// threshold no share of the maximum can cross.
			w, c, err := check.Thresholds("", "", "> 101", "> 102")
			if err != nil {
				t.Fatal(err)
			}
			ok := prepared(t, &check.Check{Name: "conn_pct", Mode: "varcomp", Expression: expr, Warning: w, Critical: c, UOM: "%"})
			crit := prepared(t, &check.Check{Name: "always", Mode: "varcomp", Expression: "max_connections", Critical: check.MustRange("~:1")})
			conns := prepared(t, &check.Check{Mode: "connections"})
			res := runOnce(t, tg, dir, ok, crit, conns)
			if res[0].Status != check.OK || !strings.HasPrefix(res[0].Line(), "conn_pct OK - "+expr+" = ") {
				t.Errorf("got %q", res[0].Line())
			}
			perf := checkLine(t, res[0].Line())
			if len(perf) != 1 || !strings.HasPrefix(perf[0], "'conn_pct'=") || !strings.HasSuffix(perf[0], "%;~:101;~:102") {
				t.Errorf("perfdata %q", perf)
			}
			if res[1].Status != check.Critical || !strings.Contains(res[1].Message, "(> 1)") {
				t.Errorf("got %q, want CRITICAL (> 1)", res[1].Line())
			}
			// The default thresholds (80, 90), and the status they give the share the
			// server has now (other tests' connections count too: usually OK).
			p := checkLine(t, res[2].Line())
			if len(p) != 1 || !strings.HasSuffix(p[0], "%;80;90;0;100") {
				t.Fatalf("connections perfdata %q", p)
			}
			wantConns := check.OK
			if v := res[2].Perf[0].Value; v > 90 {
				wantConns = check.Critical
			} else if v > 80 {
				wantConns = check.Warning
			}
			if res[2].Status != wantConns || !strings.Contains(res[2].Message, "% of max_connections (") {
				t.Errorf("connections: %q, want %s", res[2].Line(), wantConns)
			}
			status, out := check.Combine("FATHOM", res)
			if status != check.Critical || wantConns == check.OK && !strings.HasPrefix(out, "FATHOM CRITICAL - 1 critical, 2 ok: always CRITICAL | ") {
				t.Errorf("combined: %d %q", status, out)
			}
			if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 4 {
				t.Errorf("combined output has %d lines, want 4", len(lines))
			} else {
				checkLine(t, lines[0])
			}
		})
	}
}

func TestUnknownVariable(t *testing.T) {
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			tg := openTarget(t, s.dsn(t))
			c := prepared(t, &check.Check{Name: "typo", Expression: "max_conections + 1"})
			res := runOnce(t, tg, t.TempDir(), c)
			want := `typo UNKNOWN - unknown variable "max_conections" (did you mean max_connections?)`
			if !strings.HasPrefix(res[0].Line(), want) {
				t.Errorf("got %q, want %q…", res[0].Line(), want)
			}
			// Stateful expressions say so on the first run already.
			c = prepared(t, &check.Check{Name: "typo2", Expression: "rate(Questionz) + rate(xact_comit)"})
			res = runOnce(t, tg, t.TempDir(), c)
			if res[0].Status != check.Unknown || !strings.Contains(res[0].Message, "unknown variable") {
				t.Errorf("got %q", res[0].Line())
			}
		})
	}
}

// TestDeltas runs a rate check twice, as two invocations: a baseline, then a rate.
func TestDeltas(t *testing.T) {
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			tg := openTarget(t, s.dsn(t))
			dir := t.TempDir()
			counter := "Questions"
			if s.name == "postgres" {
				counter = "xact_commit"
			}
			mk := func() []*check.Check {
				return []*check.Check{
					prepared(t, &check.Check{Name: "qps", Mode: "lastrun-varcomp", Expression: "rate(" + counter + ")", Warning: check.MustRange("~:1000000")}),
					prepared(t, &check.Check{Name: "orig", Mode: "lastrun-varcomp", Expression: "current{" + counter + "} - lastrun{" + counter + "}"}),
					prepared(t, &check.Check{Name: "ok_baseline", Expression: "delta(" + counter + ")", Baseline: ptrStatus(check.OK)}),
				}
			}
			// The server's counter, read around each run: bounds for what the runs can
			// have seen (the server is shared with other packages' tests, whose traffic
			// counts too: no fixed ceiling holds).
			ctx := context.Background()
			conn, err := tg.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			read := "SHOW GLOBAL STATUS LIKE 'Questions'"
			if s.name == "postgres" {
				read = "SELECT 'xact_commit', sum(xact_commit) FROM pg_stat_database"
			}
			counterNow := func() float64 {
				rows, err := conn.Query(ctx, read)
				if err != nil || len(rows) != 1 || len(rows[0]) != 2 {
					t.Fatalf("%s: %v %v", read, rows, err)
				}
				v, err := strconv.ParseFloat(rows[0][1], 64)
				if err != nil {
					t.Fatalf("%s: %v", read, err)
				}
				return v
			}
			c0, t0 := counterNow(), time.Now()
			res := runOnce(t, tg, dir, mk()...)
			t1 := time.Now()
			c1 := counterNow()
			for i, r := range res {
				want := check.Unknown
				if i == 2 {
					want = check.OK
				}
				if r.Status != want || !strings.Contains(r.Message, "collecting a baseline") || len(r.Perf) != 0 {
					t.Errorf("first run: %q, want %s collecting a baseline", r.Line(), want)
				}
			}
			// Some traffic, then the second run once the server's counter shows it.
			traffic, err := tg.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for range 20 {
				if _, err := traffic.Query(ctx, "SELECT 1"); err != nil {
					t.Fatal(err)
				}
			}
			traffic.Close()
			// A PostgreSQL backend reports its counts at most once a second, and when it
			// exits (after Close returns): polled, not slept on.
			for deadline := time.Now().Add(30 * time.Second); counterNow() < c1+20; time.Sleep(100 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("%s did not go up by the 20 statements run within 30s", counter)
				}
			}
			time.Sleep(time.Until(t1.Add(1100 * time.Millisecond))) // a delta needs 1s since the baseline
			c2, t2 := counterNow(), time.Now()
			res = runOnce(t, tg, dir, mk()...)
			t3 := time.Now()
			c3 := counterNow()
			for _, r := range res {
				if r.Status != check.OK || len(r.Perf) != 1 || r.Perf[0].Value <= 0 {
					t.Fatalf("second run: %q, want OK with a positive value", r.Line())
				}
				checkLine(t, r.Line())
			}
			// The baseline was read between t0 and t1 (so between c0 and c1), the second
			// sample between t2 and t3 (c2 and c3); 1% for rounding in the output.
			lo, hi := c2-c1, c3-c0
			if v := res[0].Perf[0].Value; v < 0.99*lo/t3.Sub(t0).Seconds() || v > 1.01*hi/t2.Sub(t1).Seconds() {
				t.Errorf("rate %v per second; the counter went up %.0f to %.0f in %s to %s", v, lo, hi, t2.Sub(t1), t3.Sub(t0))
			}
			for _, r := range res[1:] {
				if v := r.Perf[0].Value; v < 0.99*lo || v > 1.01*hi {
					t.Errorf("%q: the counter went up %.0f to %.0f", r.Line(), lo, hi)
				}
			}
			// The state file keeps only the variables the check needs, without secrets.
			b, err := os.ReadFile(filepath.Join(dir, check.FileName(s.name+"_"+check.RunnerServer(check.NewRunner(tg, check.Options{Dialect: dialectFor(tg)}))+"_qps")+".state.json"))
			if err != nil {
				t.Fatal(err)
			}
			var st check.StateFile
			if err := json.Unmarshal(b, &st); err != nil || len(st.Samples) != 2 || len(st.Samples[1].Vars) != 1 {
				t.Errorf("state file: %v %s", err, b)
			}
		})
	}
}

// TestConcurrentState runs the same stateful check from many invocations at once: the
// state file must stay whole and every run must give a baseline or a value.
func TestConcurrentState(t *testing.T) {
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			tg := openTarget(t, s.dsn(t))
			dir := t.TempDir()
			counter := "Questions"
			if s.name == "postgres" {
				counter = "xact_commit"
			}
			var wg sync.WaitGroup
			errs := make(chan string, 100)
			var mu sync.Mutex
			values := 0
			for g := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range 4 {
						if i > 0 {
							time.Sleep(700 * time.Millisecond)
						}
						c := prepared(t, &check.Check{Name: "shared", Expression: "delta(" + counter + ")"})
						r := runOnce(t, tg, dir, c)[0]
						if r.Status == check.OK {
							mu.Lock()
							values++
							mu.Unlock()
						}
						if !(r.Status == check.OK || r.Status == check.Unknown && strings.Contains(r.Message, "baseline")) {
							errs <- fmt.Sprintf("goroutine %d run %d: %s", g, i, r.Line())
						}
						if r.Status == check.OK && r.Perf[0].Value < 0 {
							errs <- fmt.Sprintf("negative delta: %s", r.Line())
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for e := range errs {
				t.Error(e)
			}
			if values == 0 {
				t.Error("no run computed a delta")
			}
			files, _ := filepath.Glob(filepath.Join(dir, "*.state.json"))
			if len(files) != 1 {
				t.Fatalf("state files: %v", files)
			}
			b, _ := os.ReadFile(files[0])
			var st check.StateFile
			if err := json.Unmarshal(b, &st); err != nil || len(st.Samples) == 0 || len(st.Samples) > check.KeepSamples {
				t.Errorf("state after concurrent runs: %v %s", err, b)
			}
			for i := 1; i < len(st.Samples); i++ {
				if !st.Samples[i-1].Time.Before(st.Samples[i].Time) {
					t.Errorf("samples out of order: %s", b)
				}
			}
			if tmp, _ := filepath.Glob(filepath.Join(dir, ".*")); len(tmp) != 0 {
				t.Errorf("temporary files left: %v", tmp)
			}
		})
	}
}

// TestSampleCache: invocations within the cache age share one read of the server.
func TestSampleCache(t *testing.T) {
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			tg := openTarget(t, s.dsn(t))
			dir := t.TempDir()
			ctx := context.Background()
			read := func(age time.Duration) *check.Sample {
				r := check.NewRunner(tg, check.Options{Dialect: dialectFor(tg), State: check.Dir{Path: dir}, CacheAge: age})
				defer r.Close()
				smp, err := r.Sample(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if check.RunnerConn(r) != nil && age > 0 && smp != nil && check.RunnerConn(r) == nil {
					t.Fatal("unreachable")
				}
				return smp
			}
			a := read(time.Minute)
			b := read(time.Minute)
			if !a.Time.Equal(b.Time) {
				t.Errorf("second read within the cache age was not cached: %v vs %v", a.Time, b.Time)
			}
			c := read(0)
			if c.Time.Equal(a.Time) {
				t.Error("--cache-age 0 must read the server")
			}
			// A cached sample serves a stateful check twice without a zero interval.
			chk := prepared(t, &check.Check{Name: "cached", Expression: "rate(uptime)"})
			r1 := check.NewRunner(tg, check.Options{Dialect: dialectFor(tg), State: check.Dir{Path: dir}, CacheAge: time.Minute})
			res := r1.Run(ctx, []*check.Check{chk})
			r1.Close()
			r2 := check.NewRunner(tg, check.Options{Dialect: dialectFor(tg), State: check.Dir{Path: dir}, CacheAge: time.Minute})
			res = append(res, r2.Run(ctx, []*check.Check{chk})...)
			r2.Close()
			for _, r := range res {
				if r.Status != check.Unknown || !strings.Contains(r.Message, "baseline") {
					t.Errorf("cached sample seen twice: %q, want a baseline both times", r.Line())
				}
			}
			// No secrets in the cache: settings that hold connection strings are dropped.
			files, _ := filepath.Glob(filepath.Join(dir, "*.sample.json"))
			for _, f := range files {
				b, _ := os.ReadFile(f)
				if strings.Contains(strings.ToLower(string(b)), "conninfo") {
					t.Errorf("%s keeps a conninfo setting", f)
				}
				if fi, _ := os.Stat(f); fi.Mode().Perm()&0o077 != 0 {
					t.Errorf("%s is readable by others: %v", f, fi.Mode())
				}
			}
		})
	}
}

func TestConnectionFailure(t *testing.T) {
	for _, dsn := range []string{
		"mysql://monitor:s3cret-pw@127.0.0.1:1/test",
		"postgres://monitor:s3cret-pw@127.0.0.1:1/test?sslmode=disable",
	} {
		tg := openTarget(t, dsn)
		c := prepared(t, &check.Check{Name: "conns", Mode: "connections"})
		res := runOnce(t, tg, t.TempDir(), c)[0]
		if res.Status != check.Critical || !strings.Contains(res.Message, "cannot connect to 127.0.0.1:1") || strings.Contains(res.Line(), "s3cret") {
			t.Errorf("%s: %q", tg.Kind(), res.Line())
		}
		checkLine(t, res.Line())
		r := check.NewRunner(tg, check.Options{Dialect: dialectFor(tg), State: check.Dir{Path: t.TempDir()}, ConnectFailure: check.Unknown})
		res = r.Run(context.Background(), []*check.Check{c})[0]
		if res.Status != check.Unknown {
			t.Errorf("--connect-failure unknown: %q", res.Line())
		}
	}
}

func TestLongAndLockedQuery(t *testing.T) {
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			tg := openTarget(t, s.dsn(t))
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			setup, err := tg.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer setup.Close()
			// Names of this checkout's own (the prefix): the checks read the whole server,
			// which other checkouts' runs of this test may share.
			locks, sleepAs := dbtest.Prefix()+"check_locks", dbtest.Prefix()+"check_sleep"
			for _, q := range []string{"DROP TABLE IF EXISTS " + locks, "CREATE TABLE " + locks + " (id int PRIMARY KEY, v int)", "INSERT INTO " + locks + " VALUES (1, 0)"} {
				if err := setup.Exec(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			holder, err := tg.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer holder.Close()
			waiter, err := tg.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer waiter.Close()
			// The sleep and the lock wait last until the checks below have seen them (they
			// are polled: on a busy machine the statements may start late), then the sleep
			// is canceled and the lock released; the timeouts only bound a test gone wrong.
			sleep := "SELECT SLEEP(90) AS " + sleepAs + ", 'secret-literal'"
			update := "UPDATE " + locks + " SET v = v + 1 WHERE id = 1"
			if s.name == "postgres" {
				sleep = "SELECT pg_sleep(90) AS " + sleepAs + ", 'secret-literal'"
				if err := waiter.Exec(ctx, "SET lock_timeout = '90s'"); err != nil {
					t.Fatal(err)
				}
			} else if err := waiter.Exec(ctx, "SET SESSION innodb_lock_wait_timeout = 90"); err != nil {
				t.Fatal(err)
			}
			if err := holder.Begin(ctx); err != nil {
				t.Fatal(err)
			}
			if err := holder.Exec(ctx, update); err != nil {
				t.Fatal(err)
			}
			sleeper, err := tg.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer sleeper.Close()
			sleepCtx, stopSleep := context.WithCancel(ctx)
			defer stopSleep()
			var wg sync.WaitGroup
			wg.Add(2)
			go func() { defer wg.Done(); _, _ = sleeper.Query(sleepCtx, sleep) }()
			go func() { defer wg.Done(); _ = waiter.Exec(ctx, update) }()
			long := prepared(t, &check.Check{Mode: "long-query", Warning: check.MustRange("1"), Critical: check.MustRange("60")})
			locked := prepared(t, &check.Check{Mode: "locked-query", Warning: check.MustRange("1"), Critical: check.MustRange("60")})
			// Polled until both have lasted past the warning threshold of 1 s (a sleep
			// racing the clock failed when the statements started late on a busy machine).
			// The server may be shared with other packages' lock tests (the version matrix
			// runs collect's beside these): this test's waiter must be counted, and named
			// unless another waiter has waited longer.
			waitingOf := func(res []check.Result) (waiting int, ours bool) {
				fmt.Sscanf(res[1].Message, "%d statement(s) waiting for locks", &waiting)
				return waiting, strings.Contains(res[1].Message, "UPDATE "+locks+" SET v = v + ? WHERE id = ?")
			}
			var res []check.Result
			for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
				res = runOnce(t, tg, t.TempDir(), long, locked)
				waiting, ours := waitingOf(res)
				if res[0].Status != check.OK && res[1].Status != check.OK && waiting >= 1 && (ours || waiting >= 2) || time.Now().After(deadline) {
					break
				}
			}
			stopSleep()
			if err := holder.Rollback(ctx); err != nil {
				t.Fatal(err)
			}
			wg.Wait()
			if res[0].Status != check.Warning || !strings.Contains(res[0].Message, "longest query running") || !strings.Contains(res[0].Message, "(> 1)") {
				t.Errorf("long-query: %q", res[0].Line())
			}
			if strings.Contains(res[0].Line(), "secret-literal") {
				t.Errorf("long-query shows a literal: %q", res[0].Line())
			}
			waiting, ours := waitingOf(res)
			if res[1].Status != check.Warning || waiting < 1 || (!ours && waiting < 2) {
				t.Errorf("locked-query: %q", res[1].Line())
			}
			for _, r := range res {
				checkLine(t, r.Line())
			}
			// Quiet again. The server is shared with other packages' tests (the version
			// matrix runs collect's lock tests beside these), so wait for quiet; if it never
			// comes, what is still reported must be someone else's, not this test's.
			deadline := time.Now().Add(20 * time.Second)
			for {
				res = runOnce(t, tg, t.TempDir(), long, locked)
				if res[0].Status == check.OK && res[1].Status == check.OK {
					// Below the warning; another package's waiter may still be named.
					if l := res[1].Line(); strings.Contains(l, "UPDATE "+locks+" ") {
						t.Errorf("after: %q", l)
					}
					break
				}
				if time.Now().After(deadline) {
					for _, r := range res {
						if l := r.Line(); strings.Contains(l, "UPDATE "+locks+" ") || strings.Contains(l, sleepAs) {
							t.Errorf("after: this test's statements still reported: %q", l)
						}
					}
					break
				}
				time.Sleep(200 * time.Millisecond)
			}
		})
	}
}

func TestSourcesNamespace(t *testing.T) {
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			tg := openTarget(t, s.dsn(t))
			conn, err := tg.Connect(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			smp, err := check.Fetch(context.Background(), conn, dialectFor(tg).Fetch, tg.Kind(), "x", time.Now)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string][]string{
				"mysql": {"Threads_connected", "max_connections", "Uptime", "Com_select", "innodb_history_list_length",
					"innodb_checkpoint_age", "innodb_pending_reads", "sessions", "sessions_command_query", "longest_query_seconds",
					"lock_waits", "longest_transaction_seconds", "replication_channels"},
				"postgres": {"max_connections", "xact_commit", "blks_hit", "connections", "connections_active",
					"connections_idle_in_transaction", "longest_transaction_seconds", "longest_query_seconds",
					"longest_idle_in_transaction_seconds", "xid_wraparound_age", "xid_wraparound_percent",
					"replicas", "replication_lag_seconds", "checkpoints_timed", "uptime", "lock_waits"},
			}[s.name]
			for _, n := range want {
				if _, ok := smp.Vars.Get(n); !ok {
					t.Errorf("variable %s is missing", n)
				}
			}
			if smp.Started <= 0 || smp.Started > float64(time.Now().Unix()) {
				t.Errorf("Started = %v", smp.Started)
			}
			if len(smp.Missing) != 0 {
				t.Errorf("sources not read: %v", smp.Missing)
			}
			if s.name == "mysql" {
				// Status wins over a variable of the same name, and names are case-insensitive.
				if v, _ := smp.Vars.Get("THREADS_CONNECTED"); !v.IsNum || v.Num < 1 {
					t.Errorf("Threads_connected = %+v", v)
				}
			}
		})
	}
}

func TestPerfString(t *testing.T) {
	zero, hundred := 0.0, 100.0
	for _, tt := range []struct {
		p    check.Perf
		want string
	}{
		{check.Perf{Label: "conns", Value: 12.5, UOM: "%", Warn: check.MustRange("75"), Crit: check.MustRange("80"), Min: &zero, Max: &hundred}, "'conns'=12.5%;75;80;0;100"},
		{check.Perf{Label: "lag", Value: 3, UOM: "s"}, "'lag'=3s"},
		{check.Perf{Label: "x", Value: 1, Crit: check.MustRange("@10:20")}, "'x'=1;;@10:20"},
		{check.Perf{Label: "it's", Value: 0.1234567}, "'it''s'=0.1234567"},
		{check.Perf{Label: "big", Value: 1e21}, "'big'=1000000000000000000000"},
		{check.Perf{Label: "tiny", Value: -1e-9}, "'tiny'=-0.000000001"},
		{check.Perf{Label: "small", Value: 1e-8}, "'small'=0.00000001"},
		{check.Perf{Label: "sum", Value: 0.1 + 0.2}, "'sum'=0.3"},
		{check.Perf{Label: "pi", Value: 3.14159265358979}, "'pi'=3.14159265359"},
		{check.Perf{Label: "a=b", Value: 1}, "'a_b'=1"},
	} {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.p, got, tt.want)
		}
	}
}

func ptrStatus(s check.Status) *check.Status { return &s }

// TestCacheAuthenticates: within the cache window a check with a wrong password, an
// unknown user or another database never reports OK from a sample read with other
// credentials, and the cache is keyed by who and what was read.
func TestCacheAuthenticates(t *testing.T) {
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			dsn := s.dsn(t)
			dir := t.TempDir()
			ctx := context.Background()
			conns := prepared(t, &check.Check{Name: "conns", Mode: "connections"})
			run := func(dsn string) check.Result {
				tg := openTarget(t, dsn)
				r := check.NewRunner(tg, check.Options{Dialect: dialectFor(tg), State: check.Dir{Path: dir}, CacheAge: time.Hour, ConnectFailure: check.Critical})
				defer r.Close()
				return r.Run(ctx, []*check.Check{conns})[0]
			}
			if res := run(dsn); res.Status != check.OK {
				t.Fatalf("the real credentials: %q", res.Line())
			}
			u, err := url.Parse(dsn)
			if err != nil {
				t.Fatal(err)
			}
			variant := func(f func(u *url.URL)) string {
				v := *u
				f(&v)
				return v.String()
			}
			bad := map[string]string{
				"unknown user":   variant(func(v *url.URL) { v.User = url.User("fathom_no_such_user") }),
				"other database": variant(func(v *url.URL) { v.Path = "/fathom_no_such_db" }),
			}
			if s.name == "mysql" {
				// The test server's PostgreSQL trusts local connections: any password
				// passes there, so the wrong-password case is the MySQL one (and the
				// instance tests' scram-sha-256 servers).
				bad["wrong password"] = variant(func(v *url.URL) { v.User = url.UserPassword(u.User.Username(), "wrong-Passw0rd") })
			}
			for name, d := range bad {
				if res := run(d); res.Status == check.OK || !strings.Contains(res.Message, "cannot connect") {
					t.Errorf("%s within the cache window: %q, want a connection failure", name, res.Line())
				}
			}
			files, _ := filepath.Glob(filepath.Join(dir, "*.sample.json"))
			if len(files) != 1 {
				t.Errorf("sample cache files %v, want only the one of the real credentials", files)
			}
			// Another database that exists is read on its own, not from the cache.
			other := variant(func(v *url.URL) {
				if s.name == "mysql" {
					v.Path = "/mysql"
				} else {
					v.Path = "/postgres"
				}
			})
			if res := run(other); res.Status != check.OK {
				t.Errorf("another database: %q", res.Line())
			}
			files, _ = filepath.Glob(filepath.Join(dir, "*.sample.json"))
			if len(files) != 2 {
				t.Errorf("sample cache files %v, want one per database", files)
			}
		})
	}
}
