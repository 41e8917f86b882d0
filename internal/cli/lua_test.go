package cli

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/dbtest"
)

const sysbenchDir = "/usr/share/sysbench"

func needSysbenchScripts(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(sysbenchDir, "oltp_common.lua")); err != nil {
		if dbtest.Required() {
			t.Fatalf("sysbench's scripts are not in %s: install sysbench", sysbenchDir)
		}
		t.Skip("sysbench's scripts are not installed")
	}
}

// TestLuaScriptRoundTrip: a script sysbench ships, with its own options spelt as
// sysbench takes them (--point-selects=3, --range_selects=off), prepares, runs as
// fathom's runner's transactions (one per event(), its statements counted exactly),
// runs its own command and cleans up, on MariaDB and PostgreSQL.
func TestLuaScriptRoundTrip(t *testing.T) {
	needSysbenchScripts(t)
	script := filepath.Join(sysbenchDir, "oltp_read_only.lua")
	for _, srv := range []struct {
		name string
		dsn  func(t *testing.T) string
	}{
		{"mysql", func(t *testing.T) string { return dbtest.MySQLDatabase(t, "clilua") }},
		{"postgres", func(t *testing.T) string { return dbtest.PostgresDatabase(t, "clilua") }},
	} {
		t.Run(srv.name, func(t *testing.T) {
			env := storeEnv(t)
			tgt := "--target=" + srv.dsn(t)
			fathom(t, env, nil, "cleanup", "-w", script, "--tables", "2", tgt)
			// prepare's sysbench table flags are the script's options here.
			r := fathom(t, env, nil, "prepare", "-w", script, "--tables", "2", "--table-size=100", "--threads=2", "--create-secondary=off", tgt)
			if r.code != 0 || !strings.Contains(r.stdout, "Creating table 'sbtest2'...") || !strings.Contains(r.stdout, "Inserting 100 records into 'sbtest1'") ||
				strings.Contains(r.stdout, "Creating a secondary index") {
				t.Fatalf("prepare: %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			r = fathom(t, env, nil, "run", "-w", script, "--tables", "2", "--table-size=100", "--threads", "2", "--events", "40",
				"--point-selects=3", "--range_selects=off", "--json", "-q", tgt)
			if r.code != 0 {
				t.Fatalf("run: %d %s", r.code, r.stderr)
			}
			s := summary(t, r)
			// BEGIN, three point selects, COMMIT.
			if s.Workload != "oltp_read_only.lua" || s.Clients != 2 || s.Transactions != 40 || s.Statements != 200 || s.Errors != 0 {
				t.Errorf("workload %q, %d clients, %d transactions, %d statements, %d errors: want oltp_read_only.lua, 2, 40, 200, 0",
					s.Workload, s.Clients, s.Transactions, s.Statements, s.Errors)
			}
			if srv.name == "mysql" {
				r = fathom(t, env, nil, "run", "-w", script, "--tables", "2", "prewarm", tgt)
				if r.code != 0 || !strings.Contains(r.stdout, "Prewarming table sbtest2") {
					t.Errorf("prewarm: %d\n%s\n%s", r.code, r.stdout, r.stderr)
				}
			} else {
				oneLine(t, fathom(t, env, nil, "run", "-w", script, "--tables", "2", "prewarm", tgt), exitFailure, "prewarm is currently MySQL only")
			}
			oneLine(t, fathom(t, env, nil, "run", "-w", script, "nosuch", tgt), exitUsage, `has no command "nosuch"`)
			r = fathom(t, env, nil, "cleanup", "-w", script, "--tables", "2", tgt)
			if r.code != 0 || !strings.Contains(r.stdout, "Dropping table 'sbtest2'...") {
				t.Errorf("cleanup: %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			oneLine(t, fathom(t, env, nil, "run", "-w", script, "--tables", "2", "--events", "2", tgt), exitFailure, "")
		})
	}
}

// TestLuaScriptMistakes: a script's mistakes and options it does not declare are
// one line with the file and line, exit 2, before anything connects.
func TestLuaScriptMistakes(t *testing.T) {
	needSysbenchScripts(t)
	env := storeEnv(t)
	dir := t.TempDir()
	syntax := filepath.Join(dir, "syntax.lua")
	if err := os.WriteFile(syntax, []byte("function event()\n  local = 1\nend\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	top := filepath.Join(dir, "top.lua")
	if err := os.WriteFile(top, []byte("local x = nil\nprint(x.y)\nfunction event() end\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tgt := "--target=mysql://nobody@127.0.0.1:1/none" // never reached
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "-w", syntax, "--some-option=1", tgt}, "syntax.lua line:2"},
		{[]string{"prepare", "-w", top, tgt}, "top.lua:2: attempt to index a non-table object(nil) with key 'y'"},
		{[]string{"run", "-w", filepath.Join(sysbenchDir, "oltp_read_only.lua"), "--point-selects=many", tgt}, "--point-selects=many: not a number"},
		{[]string{"run", "-w", filepath.Join(sysbenchDir, "oltp_read_only.lua"), "--skip-trx=maybe", tgt}, "--skip-trx=maybe: use on or off"},
		{[]string{"run", "-w", filepath.Join(sysbenchDir, "oltp_read_only.lua"), "--mysql-host=db1", tgt}, "--mysql-host is not a fathom run flag: the server goes in --target"},
		{[]string{"run", "-w", filepath.Join(sysbenchDir, "oltp_read_only.lua"), "--target=sqlite:" + filepath.Join(dir, "x.db")}, "sysbench scripts run on MySQL/MariaDB and PostgreSQL targets"},
		{[]string{"run", "-w", filepath.Join(sysbenchDir, "oltp_read_only.lua"), "a", "b", tgt}, "one command at a time"},
		{[]string{"run", "-w", filepath.Join(sysbenchDir, "oltp_read_only.lua"), "--db-driver=pgsql", tgt}, "--db-driver is not a fathom run flag: the database kind is the --target URL's scheme"},
	} {
		oneLine(t, fathom(t, env, nil, c.args...), exitUsage, c.want)
	}
}

// hooksScript is a sysbench script of our own that uses what the community's TPC-C
// scripts use beyond oltp_*.lua: it counts an error itself on every 4th event
// (ffi.C.sb_counter_inc, SB_CNT_ERROR), makes every 5th event's first attempt insert
// a duplicate key that its sql_error_ignorable hook declares ignorable (so the event
// restarts, after before_restart_event, as sysbench restarts it), uses LuaJIT's bit
// module, and ends its thread after 20 events by returning true from event().
const hooksScript = `
ffi = require("ffi")
ffi.cdef[[void sb_counter_inc(int, sb_counter_type);]]

function prepare()
   local con = sysbench.sql.driver():connect()
   con:query("CREATE TABLE hooks_dup (id INTEGER PRIMARY KEY)")
   con:query("INSERT INTO hooks_dup VALUES (1)")
end

function cleanup()
   sysbench.sql.driver():connect():query("DROP TABLE hooks_dup")
end

function thread_init()
   con = sysbench.sql.driver():connect()
   n, retrying, restarted = 0, false, false
end

function sysbench.hooks.sql_error_ignorable(err)
   return err.sql_errno == 1062 or err.sql_state == "23505"
end

function sysbench.hooks.before_restart_event(err)
   restarted = true
end

function event()
   if not retrying then n = n + 1 end
   if n > 20 then return true end
   assert(bit.band(bit.bor(n, 0x100), 0xff) == n, "bit")
   if n % 5 == 0 and not retrying then
      retrying = true
      con:query("INSERT INTO hooks_dup VALUES (1)")
   end
   if retrying then
      assert(restarted, "before_restart_event was not called before the restart")
      retrying, restarted = false, false
   end
   con:query("SELECT 1")
   if n % 4 == 0 then ffi.C.sb_counter_inc(sysbench.tid, ffi.C.SB_CNT_ERROR) end
end
`

// TestLuaScriptHooks: on MariaDB and PostgreSQL, hooksScript's 2 threads end after
// 20 events each (the run ends long before its -T), the events whose script counted
// an error are measured as the type "event-error", and the restarted events are
// counted once each as a success, their first attempts as retries with the
// duplicate key's class, none failed, whatever --max-tries says.
func TestLuaScriptHooks(t *testing.T) {
	needSysbenchScripts(t)
	script := filepath.Join(t.TempDir(), "hooks.lua")
	if err := os.WriteFile(script, []byte(hooksScript), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, srv := range []struct {
		name string
		dsn  func(t *testing.T) string
	}{
		{"mysql", func(t *testing.T) string { return dbtest.MySQLDatabase(t, "clilua_hooks") }},
		{"postgres", func(t *testing.T) string { return dbtest.PostgresDatabase(t, "clilua_hooks") }},
	} {
		t.Run(srv.name, func(t *testing.T) {
			env := storeEnv(t)
			tgt := "--target=" + srv.dsn(t)
			fathom(t, env, nil, "cleanup", "-w", script, tgt)
			if r := fathom(t, env, nil, "prepare", "-w", script, tgt); r.code != 0 {
				t.Fatalf("prepare: %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			defer fathom(t, env, nil, "cleanup", "-w", script, tgt)
			r := fathom(t, env, nil, "run", "-w", script, "--threads", "2", "-T", "10m", "--json", "-q", tgt)
			if r.code != 0 {
				t.Fatalf("run: %d\n%s", r.code, r.stderr)
			}
			s := summary(t, r)
			ev, everr := s.ByTxn["event"], s.ByTxn["event-error"]
			// Per thread: events 1-20 count, the 21st returns true and is not counted;
			// 4, 8, 12, 16, 20 counted an error; 5, 10, 15, 20 restarted once.
			if s.Status != "complete" || s.Transactions != 40 || ev.Transactions != 30 || everr.Transactions != 10 {
				t.Errorf("status %s, %d transactions (event %d, event-error %d): want complete, 40 (30, 10)",
					s.Status, s.Transactions, ev.Transactions, everr.Transactions)
			}
			if s.Retries != 8 || s.Failed != 0 || s.Errors != 8 || s.ErrorsBy["constraint"] != 8 {
				t.Errorf("%d retries, %d failed, %d errors %v: want 8 retries of the duplicate key's class, none failed", s.Retries, s.Failed, s.Errors, s.ErrorsBy)
			}
			if s.Seconds > 300 {
				t.Errorf("the run measured %.0fs: its threads ended after 20 events each and the run should have ended with them", s.Seconds)
			}
		})
	}
}

// reportScript's hooks print sysbench's statistics tables: each interval's through
// report_intermediate (and sysbench.report_default, sysbench's own line), the run's
// through report_cumulative.
const reportScript = `
function thread_init() con = sysbench.sql.driver():connect() end
function event()
   con:query("BEGIN")
   con:query("SELECT 1")
   con:query("COMMIT")
end
function sysbench.hooks.report_intermediate(stat)
   print(string.format("R %d %d %d %d %d %d", stat.events, stat.reads, stat.writes, stat.other, stat.errors, stat.threads_running))
   sysbench.report_default(stat)
end
function sysbench.hooks.report_cumulative(stat)
   print(string.format("C %d %d %d %d %.9f %.9f %.9f %.9f", stat.events, stat.reads, stat.writes, stat.other,
      stat.latency_min, stat.latency_avg, stat.latency_max, stat.latency_sum))
end
`

// TestLuaReportHooks: with --report-interval, report_intermediate gets every
// interval, whose events and statements by class add up to the run's; report_cumulative
// gets the run's totals and latency (min ≤ avg ≤ max, sum = avg × events); without
// --report-interval only report_cumulative is called, as under sysbench.
func TestLuaReportHooks(t *testing.T) {
	needSysbenchScripts(t)
	script := filepath.Join(t.TempDir(), "report.lua")
	if err := os.WriteFile(script, []byte(reportScript), 0o644); err != nil {
		t.Fatal(err)
	}
	env := storeEnv(t)
	tgt := "--target=" + dbtest.MySQLDatabase(t, "clilua_report")
	line := regexp.MustCompile(`(?m)^\[ \d+s \] thds: \d+ tps: [\d.]+ qps: [\d.]+ \(r/w/o: [\d.]+/[\d.]+/[\d.]+\) lat \(ms,95%\): [\d.]+ err/s [\d.]+ reconn/s: [\d.]+$`)
	r := fathom(t, env, nil, "run", "-w", script, "--threads", "2", "-t", "300", "-P", "50ms", "--json", "-q", tgt)
	if r.code != 0 {
		t.Fatalf("run: %d\n%s", r.code, r.stderr)
	}
	s := summary(t, r)
	var events, reads, other, reports int64
	var cum []string
	for _, l := range strings.Split(r.stderr, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) == 7 && f[0] == "R":
			reports++
			n := make([]int64, 6)
			for i := range n {
				n[i], _ = strconv.ParseInt(f[i+1], 10, 64)
			}
			events, reads, other = events+n[0], reads+n[1], other+n[3]
			if n[2] != 0 || n[4] != 0 || n[5] < 0 || n[5] > 2 {
				t.Errorf("report %q: want no writes, no errors, 0 to 2 threads running", l)
			}
		case len(f) == 9 && f[0] == "C":
			cum = f
		}
	}
	if reports < 1 || reports != int64(s.Intervals) || !line.MatchString(r.stderr) {
		t.Errorf("%d intermediate reports for %d intervals, sysbench's line printed: %v\n%s", reports, s.Intervals, line.MatchString(r.stderr), r.stderr)
	}
	if events != 600 || s.Transactions != 600 || reads != 600 || other != 1200 {
		t.Errorf("the reports add up to %d events, %d reads, %d other; the run %d transactions: want 600, 600, 1200 and 600", events, reads, other, s.Transactions)
	}
	if len(cum) != 9 || cum[1] != "600" || cum[2] != "600" || cum[3] != "0" || cum[4] != "1200" {
		t.Fatalf("report_cumulative: %q, want 600 events, 600 reads, 0 writes, 1200 other\n%s", cum, r.stderr)
	}
	f := make([]float64, 4)
	for i := range f {
		f[i], _ = strconv.ParseFloat(cum[5+i], 64)
	}
	if !(f[0] > 0 && f[0] <= f[1] && f[1] <= f[2]) || math.Abs(f[3]-f[1]*600) > 1e-6*f[3]+1e-6 || math.Abs(f[1]*1000-s.Latency.Mean) > 0.01*s.Latency.Mean+0.001 {
		t.Errorf("cumulative latency min %g avg %g max %g sum %g s; the run's mean %g ms", f[0], f[1], f[2], f[3], s.Latency.Mean)
	}
	r = fathom(t, env, nil, "run", "-w", script, "--threads", "2", "-t", "50", "--json", "-q", tgt)
	if r.code != 0 || strings.Contains(r.stderr, "\nR ") || strings.HasPrefix(r.stderr, "R ") || !strings.Contains(r.stderr, "C 100 100 0 200 ") {
		t.Errorf("without --report-interval: want only the cumulative report\n%s", r.stderr)
	}
}

// TestLuaLegacyScript: a sysbench 0.5 script (no sysbench.cmdline.options; the db_*
// API) takes any option on fathom's command line, as sysbench 1.0 takes it for such
// scripts (--name=value and --name value), while sysbench's connection flags keep
// their one-line hint.
func TestLuaLegacyScript(t *testing.T) {
	needSysbenchScripts(t)
	script := filepath.Join("..", "workload", "sblua", "testdata", "diff", "custom_legacy.lua")
	env := storeEnv(t)
	tgt := "--target=" + dbtest.MySQLDatabase(t, "clilua_legacy")
	fathom(t, env, nil, "cleanup", "-w", script, tgt)
	if r := fathom(t, env, nil, "prepare", "-w", script, "--legacy-rows=20", tgt); r.code != 0 {
		t.Fatalf("prepare: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	defer fathom(t, env, nil, "cleanup", "-w", script, tgt)
	r := fathom(t, env, nil, "run", "-w", script, "--legacy-rows=20", "--legacy_points", "2", "--threads", "2", "--events", "30", "--json", "-q", tgt)
	if r.code != 0 {
		t.Fatalf("run: %d\n%s", r.code, r.stderr)
	}
	// BEGIN, 2 points, the update, a select, COMMIT.
	if s := summary(t, r); s.Transactions != 30 || s.Statements != 180 || s.Errors != 0 {
		t.Errorf("%d transactions, %d statements, %d errors: want 30, 180, 0", s.Transactions, s.Statements, s.Errors)
	}
	oneLine(t, fathom(t, env, nil, "run", "-w", script, "--mysql-host=db1", tgt), exitUsage, "--mysql-host is not a fathom run flag")
}
