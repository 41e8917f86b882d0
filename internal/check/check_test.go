package check

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/target/mysql"
	"github.com/fathom-lab/fathom/internal/target/postgres"
)

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

func prepared(t testing.TB, c *Check) *Check {
	t.Helper()
	if err := c.Prepare(); err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	return c
}

// runOnce runs checks in a new runner, as one invocation of `fathom check` does.
func runOnce(t testing.TB, tg target.Target, dir string, checks ...*Check) []Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r := NewRunner(tg, Options{State: Dir{Path: dir}, ConnectFailure: Critical})
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
			w, c, err := Thresholds("", "", "> 75", "> 80")
			if err != nil {
				t.Fatal(err)
			}
			ok := prepared(t, &Check{Name: "conn_pct", Mode: "varcomp", Expression: expr, Warning: w, Critical: c, UOM: "%"})
			crit := prepared(t, &Check{Name: "always", Mode: "varcomp", Expression: "max_connections", Critical: MustRange("~:1")})
			conns := prepared(t, &Check{Mode: "connections"})
			res := runOnce(t, tg, dir, ok, crit, conns)
			if res[0].Status != OK || !strings.HasPrefix(res[0].Line(), "conn_pct OK - "+expr+" = ") {
				t.Errorf("got %q", res[0].Line())
			}
			perf := checkLine(t, res[0].Line())
			if len(perf) != 1 || !strings.HasPrefix(perf[0], "'conn_pct'=") || !strings.HasSuffix(perf[0], "%;~:75;~:80") {
				t.Errorf("perfdata %q", perf)
			}
			if res[1].Status != Critical || !strings.Contains(res[1].Message, "(> 1)") {
				t.Errorf("got %q, want CRITICAL (> 1)", res[1].Line())
			}
			if res[2].Status != OK || !strings.Contains(res[2].Message, "% of max_connections (") {
				t.Errorf("connections: %q", res[2].Line())
			}
			checkLine(t, res[2].Line())
			if p := checkLine(t, res[2].Line()); len(p) != 1 || !strings.HasSuffix(p[0], "%;80;90;0;100") {
				t.Errorf("connections perfdata %q", p)
			}
			status, out := Combine("FATHOM", res)
			if status != Critical || !strings.HasPrefix(out, "FATHOM CRITICAL - 1 critical, 2 ok: always CRITICAL | ") {
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
			c := prepared(t, &Check{Name: "typo", Expression: "max_conections + 1"})
			res := runOnce(t, tg, t.TempDir(), c)
			want := `typo UNKNOWN - unknown variable "max_conections" (did you mean max_connections?)`
			if !strings.HasPrefix(res[0].Line(), want) {
				t.Errorf("got %q, want %q…", res[0].Line(), want)
			}
			// Stateful expressions say so on the first run already.
			c = prepared(t, &Check{Name: "typo2", Expression: "rate(Questionz) + rate(xact_comit)"})
			res = runOnce(t, tg, t.TempDir(), c)
			if res[0].Status != Unknown || !strings.Contains(res[0].Message, "unknown variable") {
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
			mk := func() []*Check {
				return []*Check{
					prepared(t, &Check{Name: "qps", Mode: "lastrun-varcomp", Expression: "rate(" + counter + ")", Warning: MustRange("~:1000000")}),
					prepared(t, &Check{Name: "orig", Mode: "lastrun-varcomp", Expression: "current{" + counter + "} - lastrun{" + counter + "}"}),
					prepared(t, &Check{Name: "ok_baseline", Expression: "delta(" + counter + ")", Baseline: ptrStatus(OK)}),
				}
			}
			res := runOnce(t, tg, dir, mk()...)
			for i, r := range res {
				want := Unknown
				if i == 2 {
					want = OK
				}
				if r.Status != want || !strings.Contains(r.Message, "collecting a baseline") || len(r.Perf) != 0 {
					t.Errorf("first run: %q, want %s collecting a baseline", r.Line(), want)
				}
			}
			// Some traffic, then the second run.
			ctx := context.Background()
			conn, err := tg.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for range 20 {
				if _, err := conn.Query(ctx, "SELECT 1"); err != nil {
					t.Fatal(err)
				}
			}
			conn.Close()
			time.Sleep(1100 * time.Millisecond) // pg_stat_database is updated at most once a second
			res = runOnce(t, tg, dir, mk()...)
			for _, r := range res {
				if r.Status != OK || len(r.Perf) != 1 || r.Perf[0].Value <= 0 {
					t.Errorf("second run: %q, want OK with a positive value", r.Line())
				}
				checkLine(t, r.Line())
			}
			if v := res[0].Perf[0].Value; v > 10000 {
				t.Errorf("rate %v per second is implausible", v)
			}
			// The state file keeps only the variables the check needs, without secrets.
			b, err := os.ReadFile(filepath.Join(dir, fileName(s.name+"_"+NewRunner(tg, Options{}).server+"_qps")+".state.json"))
			if err != nil {
				t.Fatal(err)
			}
			var st stateFile
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
						c := prepared(t, &Check{Name: "shared", Expression: "delta(" + counter + ")"})
						r := runOnce(t, tg, dir, c)[0]
						if r.Status == OK {
							mu.Lock()
							values++
							mu.Unlock()
						}
						if !(r.Status == OK || r.Status == Unknown && strings.Contains(r.Message, "baseline")) {
							errs <- fmt.Sprintf("goroutine %d run %d: %s", g, i, r.Line())
						}
						if r.Status == OK && r.Perf[0].Value < 0 {
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
			var st stateFile
			if err := json.Unmarshal(b, &st); err != nil || len(st.Samples) == 0 || len(st.Samples) > keepSamples {
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
			read := func(age time.Duration) *Sample {
				r := NewRunner(tg, Options{State: Dir{Path: dir}, CacheAge: age})
				defer r.Close()
				smp, err := r.Sample(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if r.conn != nil && age > 0 && smp != nil && r.conn == nil {
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
			chk := prepared(t, &Check{Name: "cached", Expression: "rate(uptime)"})
			r1 := NewRunner(tg, Options{State: Dir{Path: dir}, CacheAge: time.Minute})
			res := r1.Run(ctx, []*Check{chk})
			r1.Close()
			r2 := NewRunner(tg, Options{State: Dir{Path: dir}, CacheAge: time.Minute})
			res = append(res, r2.Run(ctx, []*Check{chk})...)
			r2.Close()
			for _, r := range res {
				if r.Status != Unknown || !strings.Contains(r.Message, "baseline") {
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
		c := prepared(t, &Check{Name: "conns", Mode: "connections"})
		res := runOnce(t, tg, t.TempDir(), c)[0]
		if res.Status != Critical || !strings.Contains(res.Message, "cannot connect to 127.0.0.1:1") || strings.Contains(res.Line(), "s3cret") {
			t.Errorf("%s: %q", tg.Kind(), res.Line())
		}
		checkLine(t, res.Line())
		r := NewRunner(tg, Options{State: Dir{Path: t.TempDir()}, ConnectFailure: Unknown})
		res = r.Run(context.Background(), []*Check{c})[0]
		if res.Status != Unknown {
			t.Errorf("--connect-failure unknown: %q", res.Line())
		}
	}
}

func TestLongAndLockedQuery(t *testing.T) {
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			tg := openTarget(t, s.dsn(t))
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			setup, err := tg.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer setup.Close()
			for _, q := range []string{"DROP TABLE IF EXISTS check_locks", "CREATE TABLE check_locks (id int PRIMARY KEY, v int)", "INSERT INTO check_locks VALUES (1, 0)"} {
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
			sleep := "SELECT SLEEP(4), 'secret-literal'"
			update := "UPDATE check_locks SET v = v + 1 WHERE id = 1"
			if s.name == "postgres" {
				sleep = "SELECT pg_sleep(4), 'secret-literal'"
				if err := waiter.Exec(ctx, "SET lock_timeout = '4s'"); err != nil {
					t.Fatal(err)
				}
			} else if err := waiter.Exec(ctx, "SET SESSION innodb_lock_wait_timeout = 4"); err != nil {
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
			var wg sync.WaitGroup
			wg.Add(2)
			go func() { defer wg.Done(); _, _ = sleeper.Query(ctx, sleep) }()
			go func() { defer wg.Done(); _ = waiter.Exec(ctx, update) }()
			time.Sleep(1500 * time.Millisecond)
			long := prepared(t, &Check{Mode: "long-query", Warning: MustRange("1"), Critical: MustRange("60")})
			locked := prepared(t, &Check{Mode: "locked-query", Warning: MustRange("1"), Critical: MustRange("60")})
			res := runOnce(t, tg, t.TempDir(), long, locked)
			if err := holder.Rollback(ctx); err != nil {
				t.Fatal(err)
			}
			wg.Wait()
			if res[0].Status != Warning || !strings.Contains(res[0].Message, "longest query running") || !strings.Contains(res[0].Message, "(> 1)") {
				t.Errorf("long-query: %q", res[0].Line())
			}
			if strings.Contains(res[0].Line(), "secret-literal") {
				t.Errorf("long-query shows a literal: %q", res[0].Line())
			}
			if res[1].Status != Warning || !strings.Contains(res[1].Message, "1 statement(s) waiting for locks") || !strings.Contains(res[1].Message, "UPDATE check_locks SET v = v + ? WHERE id = ?") {
				t.Errorf("locked-query: %q", res[1].Line())
			}
			for _, r := range res {
				checkLine(t, r.Line())
			}
			// Quiet again.
			res = runOnce(t, tg, t.TempDir(), long, locked)
			if res[0].Status != OK || res[1].Status != OK || res[1].Message != "no statement waiting for a lock" {
				t.Errorf("after: %q / %q", res[0].Line(), res[1].Line())
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
			smp, err := Fetch(context.Background(), conn, tg.Kind(), "x", time.Now)
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

func TestInnoDBStatus(t *testing.T) {
	for _, tt := range []struct {
		file string
		want map[string]float64
	}{
		{"innodb-mariadb-10.11.txt", map[string]float64{"innodb_history_list_length": 0, "innodb_checkpoint_age": 356,
			"innodb_lsn": 44760, "innodb_pending_fsyncs": 0, "innodb_pending_reads": 0, "innodb_pending_writes": 0}},
		{"innodb-mysql-8.0.txt", map[string]float64{"innodb_history_list_length": 1234, "innodb_checkpoint_age": 1000,
			"innodb_pending_aio_reads": 3, "innodb_pending_aio_writes": 2, "innodb_pending_log_fsyncs": 1,
			"innodb_pending_buffer_pool_fsyncs": 4, "innodb_pending_fsyncs": 5, "innodb_pending_reads": 7, "innodb_pending_writes": 6}},
	} {
		b, err := os.ReadFile(filepath.Join("testdata", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		got := parseInnoDBStatus(string(b))
		for k, v := range tt.want {
			if g, ok := got[k]; !ok || g != v {
				t.Errorf("%s: %s = %v (present %v), want %v", tt.file, k, g, ok, v)
			}
		}
	}
}

func TestPerfString(t *testing.T) {
	zero, hundred := 0.0, 100.0
	for _, tt := range []struct {
		p    Perf
		want string
	}{
		{Perf{Label: "conns", Value: 12.5, UOM: "%", Warn: MustRange("75"), Crit: MustRange("80"), Min: &zero, Max: &hundred}, "'conns'=12.5%;75;80;0;100"},
		{Perf{Label: "lag", Value: 3, UOM: "s"}, "'lag'=3s"},
		{Perf{Label: "x", Value: 1, Crit: MustRange("@10:20")}, "'x'=1;;@10:20"},
		{Perf{Label: "it's", Value: 0.1234567}, "'it''s'=0.123457"},
		{Perf{Label: "big", Value: 1e21}, "'big'=1000000000000000000000"},
		{Perf{Label: "tiny", Value: -1e-9}, "'tiny'=0"},
		{Perf{Label: "a=b", Value: 1}, "'a_b'=1"},
	} {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.p, got, tt.want)
		}
	}
}

func ptrStatus(s Status) *Status { return &s }
