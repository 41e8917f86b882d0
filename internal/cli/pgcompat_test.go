package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/run"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/stores"
)

// pgbenchLog reads a pgbench transaction log as PostgreSQL's documentation describes
// it (Per-Transaction Logging): client_id transaction_no time script_no time_epoch
// time_us [schedule_lag] [retries], where time is "failed" or "skipped" for those.
type pgbenchLog struct {
	ok, failed, skipped int64
	clients             map[int64]int64 // last transaction_no per client
}

func readPgbenchLog(t *testing.T, path string, fields int) pgbenchLog {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l := pgbenchLog{clients: map[int64]int64{}}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		fs := strings.Fields(sc.Text())
		if len(fs) != fields {
			t.Fatalf("%s:%d: %d fields, want %d: %q", path, line, len(fs), fields, sc.Text())
		}
		n := make([]int64, len(fs))
		for i, s := range fs {
			if i == 2 && (s == "failed" || s == "skipped") {
				continue
			}
			if n[i], err = strconv.ParseInt(s, 10, 64); err != nil {
				t.Fatalf("%s:%d: field %d %q is not a number", path, line, i+1, s)
			}
		}
		if n[0] < 0 || n[3] != 0 || n[4] < 1_600_000_000 || n[5] < 0 || n[5] > 999_999 {
			t.Fatalf("%s:%d: implausible client, script or time stamp: %q", path, line, sc.Text())
		}
		switch fs[2] {
		case "failed":
			l.failed++
		case "skipped":
			l.skipped++
			continue // pgbench repeats the next transaction's number
		default:
			if n[2] < 0 {
				t.Fatalf("%s:%d: negative latency", path, line)
			}
			l.ok++
		}
		if prev := l.clients[n[0]]; n[1] <= prev {
			t.Fatalf("%s:%d: client %d's transaction_no %d does not follow %d", path, line, n[0], n[1], prev)
		}
		l.clients[n[0]] = n[1]
	}
	return l
}

// pgbenchAgg sums an aggregated log (Aggregated Logging, PostgreSQL 15 to 18):
// interval_start num_transactions sum_latency sum_latency_2 min_latency max_latency
// sum_lag sum_lag_2 min_lag max_lag skipped retried retries serialization_failures
// deadlock_failures.
func pgbenchAgg(t *testing.T, path string) (txns, skipped, lines int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	prev := int64(0)
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		fs := strings.Fields(line)
		if len(fs) != 15 {
			t.Fatalf("%s:%d: %d fields, want 15: %q", path, i+1, len(fs), line)
		}
		var v [15]int64
		for j, s := range fs {
			if v[j], err = strconv.ParseInt(s, 10, 64); err != nil {
				t.Fatalf("%s:%d: field %d %q is not a number", path, i+1, j+1, s)
			}
		}
		if i > 0 && v[0] != prev+1 {
			t.Fatalf("%s:%d: interval_start %d does not follow %d by the 1s interval", path, i+1, v[0], prev)
		}
		prev = v[0]
		if n := v[1]; n > 0 && (v[4] > v[5] || v[2] < n*v[4] || v[2] > n*v[5] || float64(v[3])*float64(n) < float64(v[2])*float64(v[2])*(1-1e-9)) {
			t.Fatalf("%s:%d: sums and extremes disagree: %q", path, i+1, line)
		}
		txns += v[1]
		skipped += v[10]
		lines++
	}
	return txns, skipped, lines
}

func storedRun(t *testing.T, env map[string]string, id int64) *store.Run {
	t.Helper()
	st, err := stores.Open(env["FATHOM_STORE"])
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r, err := st.Run(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func runJSON(t *testing.T, env map[string]string, args ...string) measure.Summary {
	t.Helper()
	r := fathom(t, env, nil, append([]string{"run", "--json", "-q"}, args...)...)
	if r.code != 0 {
		t.Fatalf("run %v: exit %d\n%s", args, r.code, r.stderr)
	}
	return summary(t, r)
}

// pgbench's flags on every target: -l writes its per-transaction and aggregated logs,
// which a reader that follows the documented format reads with the counts the store
// keeps; -n and the pre-run vacuum, -C, --threads and --events do what they say.
func TestPgbenchFlags(t *testing.T) {
	for _, tg := range cliTargets {
		t.Run(tg.name, func(t *testing.T) {
			dsn := tg.dsn(t)
			env := storeEnv(t)
			dir := t.TempDir()
			base := []string{"--target", dsn, "--workload", "tpcb"}
			if r := fathom(t, env, nil, append([]string{"prepare", "--scale", "1"}, base...)...); r.code != 0 {
				t.Fatalf("prepare: %s", r.stderr)
			}

			// Closed loop, by count: 6 fields, every transaction once.
			s := runJSON(t, env, append(base, "-c", "2", "-t", "40", "-l", "--log-prefix", filepath.Join(dir, "a"), "--seed", "1")...)
			l := readPgbenchLog(t, logFile(t, dir, "a"), 6)
			if l.ok != s.Transactions || l.failed != s.Failed || l.ok+l.failed != 80 || len(l.clients) != 2 {
				t.Errorf("closed loop: log has %d ok, %d failed over %d clients; the run stored %d and %d", l.ok, l.failed, len(l.clients), s.Transactions, s.Failed)
			}
			// The history holds this run's rows only: the pre-run truncate emptied it.
			if n := queryInt(t, dsn, "SELECT count(*) FROM pgbench_history"); int64(n) != s.Transactions {
				t.Errorf("pgbench_history has %d rows after a run of %d transactions with the pre-run truncate", n, s.Transactions)
			}
			if o := storedRun(t, env, s.RunID).Options[run.OptionPreRun]; !strings.Contains(o, "pgbench_history") {
				t.Errorf("pre_run option %q does not name what was done", o)
			}

			// -n keeps the history; --threads and --events are sysbench's -c and total count.
			s2 := runJSON(t, env, append(base, "-n", "--threads", "2", "--events", "20")...)
			if s2.Clients != 2 || s2.Transactions+s2.Failed != 20 {
				t.Errorf("--threads 2 --events 20: %d clients, %d transactions", s2.Clients, s2.Transactions+s2.Failed)
			}
			if n := queryInt(t, dsn, "SELECT count(*) FROM pgbench_history"); int64(n) != s.Transactions+s2.Transactions {
				t.Errorf("-n: pgbench_history has %d rows, want %d (kept) + %d", n, s.Transactions, s2.Transactions)
			}
			if o := storedRun(t, env, s2.RunID).Options[run.OptionPreRun]; o != "skipped (-n)" {
				t.Errorf("-n: pre_run option %q", o)
			}

			// Open loop beyond what the target can do with a latency limit and retries:
			// 8 fields, skipped lines for the dropped starts.
			s3 := runJSON(t, env, append(base, "-n", "-c", "2", "-T", "1", "-R", "5000", "-L", "1ms", "--max-tries", "3", "-l", "--log-prefix", filepath.Join(dir, "b"))...)
			l = readPgbenchLog(t, logFile(t, dir, "b"), 8)
			if l.ok != s3.Transactions || l.failed != s3.Failed || l.skipped != s3.Dropped || s3.Dropped == 0 {
				t.Errorf("open loop: log has %d ok, %d failed, %d skipped; the run stored %d, %d, %d dropped", l.ok, l.failed, l.skipped, s3.Transactions, s3.Failed, s3.Dropped)
			}

			// Aggregated: 15 fields a second; the intervals add up to the run's count.
			s4 := runJSON(t, env, append(base, "-n", "-c", "2", "-T", "2", "-l", "--aggregate-interval", "1", "--log-prefix", filepath.Join(dir, "c"))...)
			txns, _, lines := pgbenchAgg(t, logFile(t, dir, "c"))
			if txns != s4.Transactions || lines < 2 {
				t.Errorf("aggregated: %d transactions in %d lines; the run stored %d", txns, lines, s4.Transactions)
			}

			// Sampling: a part of the transactions, none twice.
			s5 := runJSON(t, env, append(base, "-n", "-c", "2", "-t", "200", "-l", "--sampling-rate", "0.5", "--log-prefix", filepath.Join(dir, "d"))...)
			l = readPgbenchLog(t, logFile(t, dir, "d"), 6)
			if n := l.ok + l.failed; n == 0 || n >= s5.Transactions+s5.Failed {
				t.Errorf("--sampling-rate 0.5 logged %d of %d transactions", n, s5.Transactions+s5.Failed)
			}

			// -C: a connection per transaction, recorded with the run; on the servers the
			// connection counters show them.
			before := connections(t, tg.name, dsn)
			s6 := runJSON(t, env, append(base, "-n", "-C", "-c", "2", "-t", "25")...)
			if s6.Transactions+s6.Failed != 50 || s6.Failed > 0 {
				t.Errorf("-C: %d transactions, %d failed", s6.Transactions, s6.Failed)
			}
			if after := connections(t, tg.name, dsn); after >= 0 && after-before < 50 {
				t.Errorf("-C: the server counted %d new connections for 50 transactions", after-before)
			}
			if o := storedRun(t, env, s6.RunID).Options[run.OptionConnectPerTxn]; o != "on" {
				t.Errorf("-C: connect_per_transaction option %q", o)
			}
		})
	}
}

// connections is the server's count of connections made so far (-1: not kept).
func connections(t *testing.T, kind, dsn string) int {
	switch kind {
	case "postgres":
		return queryInt(t, dsn, "SELECT sessions FROM pg_stat_database WHERE datname = current_database()")
	case "mysql":
		return queryInt(t, dsn, "SELECT variable_value FROM information_schema.global_status WHERE variable_name = 'CONNECTIONS'")
	}
	return -1
}

func logFile(t *testing.T, dir, prefix string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, prefix+".*"))
	if err != nil || len(m) != 1 {
		t.Fatalf("want one log file %s.PID in %s, found %v", prefix, dir, m)
	}
	return m[0]
}

// Flags of pgbench and sysbench that fathom spells otherwise get one line naming the
// equivalent, exit 2; misuses of the ones it takes, too.
func TestForeignFlags(t *testing.T) {
	env := storeEnv(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "-i"}, "fathom prepare --workload tpcb"},
		{[]string{"run", "--initialize"}, "fathom prepare --workload tpcb"},
		{[]string{"run", "--progress-timestamp"}, "-P lines show the time since the start"},
		{[]string{"run", "--random-seed", "soon"}, "use an integer, time or rand"},
		{[]string{"run", "--random-seed", "5", "--seed", "5"}, "the same seed: give one of them"},
		{[]string{"run", "--db-ps-mode", "disable", "-M", "prepared"}, "give one of them"},
		{[]string{"run", "--db-ps-mode", "never"}, "use auto (prepared statements) or disable"},
		{[]string{"run", "--percentile", "101"}, "from 1 to 100, or 0"},
		{[]string{"run", "--warmup-time", "5", "--warmup", "3s"}, "sysbench's name for --warmup"},
		{[]string{"run", "-j", "0"}, "give 1 or more threads"},
		{[]string{"run", "-S", "--rate", "0"}, "--rate 0: give a rate above 0"},
		{[]string{"run", "-w", "tpcb", "-R", "0"}, "--rate 0: give a rate above 0"},
		{[]string{"run", "-S", "-t", "5", "--max-tries", "0"}, "--max-tries 0 (unlimited tries) needs -T or -L"},
		{[]string{"run", "-S", "-T", "3", "-l", "--aggregate-interval", "2"}, "not a multiple of --aggregate-interval 2"},
		{[]string{"run", "-S", "-T", "1", "-l", "--aggregate-interval", "2"}, "longer than -T 1s"},
		{[]string{"run", "--mysql-host=db1"}, "--target mysql://"},
		{[]string{"run", "--pgsql-password", "x"}, "~/.pgpass"},
		{[]string{"run", "--point-selects", "5"}, "--set point_selects"},
		{[]string{"run", "--fillfactor", "90"}, "fathom prepare --fillfactor"},
		{[]string{"run", "-U", "bob"}, "--target postgres://USER@"},
		{[]string{"prepare", "--max-time", "5"}, "-T/--time"},
		{[]string{"run", "--clinets", "2"}, "did you mean --clients"},
		{[]string{"run", "--aggregate-interval", "1"}, "add -l"},
		{[]string{"run", "-l", "--aggregate-interval", "1", "--sampling-rate", "0.5"}, "cannot be combined"},
		{[]string{"run", "-l", "--sampling-rate", "2"}, "at most 1"},
		{[]string{"run", "--threads", "3", "-c", "2"}, "sysbench's name for -c"},
		{[]string{"run", "--events", "10", "-c", "3"}, "multiple of 3"},
		{[]string{"run", "--events", "10", "-T", "5"}, "without -t and -T"},
		{[]string{"prepare", "--fillfactor", "5"}, "10 to 100"},
		{[]string{"prepare", "--partition-method", "hash"}, "needs --partitions"},
		{[]string{"prepare", "--unlogged-tables"}, "PostgreSQL table options"},
		{[]string{"prepare", "--auto-inc=maybe"}, "use on or off"},
		{[]string{"prepare", "--secondary"}, "sysbench's (oltp workloads)"},
		{[]string{"prepare", "-w", "oltp_read_only", "--foreign-keys"}, "pgbench's (tpcb workloads)"},
		{[]string{"prepare", "-w", "oltp_read_only", "--mysql-storage-engine", "MyISAM"}, "for MySQL and MariaDB"},
		{[]string{"prepare", "-w", "ycsb", "--fillfactor", "90"}, "takes no table options"},
	} {
		args := append(c.args, "--target", "sqlite:"+filepath.Join(t.TempDir(), "t.db"))
		oneLine(t, fathom(t, env, nil, args...), exitUsage, c.want)
	}
	// -j is accepted, with a note.
	r := fathom(t, env, nil, "run", "-j", "4", "-t", "5", "-q", "--target", "sqlite:"+filepath.Join(t.TempDir(), "t.db"))
	if !strings.Contains(r.stderr, "-j is not needed") {
		t.Errorf("-j: no note on stderr: %q", r.stderr)
	}
}

// prepare lays the tables out as pgbench -i and sysbench prepare do with their
// options, on the servers that have them; runs on the result work.
func TestPrepareLayout(t *testing.T) {
	env := storeEnv(t)
	t.Run("postgres", func(t *testing.T) {
		dsn := cliTargets[1].dsn(t)
		for _, method := range []string{"range", "hash"} {
			args := []string{"prepare", "--target", dsn, "-w", "tpcb", "--fillfactor", "80", "--unlogged-tables", "--partitions", "3", "--partition-method", method, "--foreign-keys"}
			if r := fathom(t, env, nil, args...); r.code != 0 {
				t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
			}
			if n := queryInt(t, dsn, "SELECT count(*) FROM pg_inherits WHERE inhparent = 'pgbench_accounts'::regclass"); n != 3 {
				t.Errorf("%s: %d partitions of pgbench_accounts, want 3", method, n)
			}
			if n := queryInt(t, dsn, "SELECT count(*) FROM pg_class WHERE relname LIKE 'pgbench\\_%' AND relpersistence <> 'u'"); n != 0 {
				t.Errorf("%s: %d pgbench tables or indexes are not unlogged", method, n)
			}
			if n := queryInt(t, dsn, "SELECT count(*) FROM pg_class WHERE relname IN ('pgbench_branches', 'pgbench_tellers', 'pgbench_accounts_1') AND reloptions::text LIKE '%fillfactor=80%'"); n != 3 {
				t.Errorf("%s: %d of branches, tellers, accounts_1 have fillfactor 80", method, n)
			}
			if n := queryInt(t, dsn, "SELECT count(DISTINCT conname) FROM pg_constraint WHERE contype = 'f' AND conname LIKE 'pgbench\\_%'"); n < 5 {
				t.Errorf("%s: %d foreign keys, want pgbench's 5", method, n)
			}
			if n := queryInt(t, dsn, "SELECT count(*) FROM pgbench_accounts"); n != 100000 {
				t.Errorf("%s: %d accounts", method, n)
			}
			s := runJSON(t, env, "--target", dsn, "-w", "tpcb", "-c", "2", "-t", "50")
			if s.Failed > 0 || s.Transactions != 100 {
				t.Errorf("%s: run on the laid-out tables: %d transactions, %d failed (%v)", method, s.Transactions, s.Failed, s.ErrorsBy)
			}
		}
		// Prepared again without the options: the foreign keys do not stop the drop.
		if r := fathom(t, env, nil, "prepare", "--target", dsn, "-w", "tpcb"); r.code != 0 {
			t.Fatalf("prepare after --foreign-keys: %s", r.stderr)
		}
	})
	t.Run("mysql", func(t *testing.T) {
		dsn := cliTargets[2].dsn(t)
		base := []string{"--target", dsn, "-w", "oltp_read_write", "--tables", "2", "--table-size", "1000"}
		for _, c := range []struct {
			flags []string
			ddl   []string // in SHOW CREATE TABLE sbtest2
			not   []string
		}{
			{[]string{"--mysql-storage-engine", "MyISAM", "--secondary", "--create-secondary=off"}, []string{"ENGINE=MyISAM", "AUTO_INCREMENT", "KEY `xid_2` (`id`)"}, []string{"PRIMARY KEY", "`k_2`"}},
			{[]string{"--auto-inc=off"}, []string{"ENGINE=InnoDB", "PRIMARY KEY (`id`)", "KEY `k_2`"}, []string{"AUTO_INCREMENT"}},
		} {
			if r := fathom(t, env, nil, append(append([]string{"prepare"}, base...), c.flags...)...); r.code != 0 {
				t.Fatalf("%v: exit %d: %s", c.flags, r.code, r.stderr)
			}
			rows := rowsOf(t, dsn, "SHOW CREATE TABLE sbtest2")
			for _, w := range c.ddl {
				if !strings.Contains(rows[0][1], w) {
					t.Errorf("%v: %q not in %s", c.flags, w, rows[0][1])
				}
			}
			for _, w := range c.not {
				if strings.Contains(rows[0][1], w) {
					t.Errorf("%v: %q in %s", c.flags, w, rows[0][1])
				}
			}
			if n := queryInt(t, dsn, "SELECT max(id) FROM sbtest2"); n != 1000 {
				t.Errorf("%v: ids up to %d, want 1000", c.flags, n)
			}
			s := runJSON(t, env, "--target", dsn, "-w", "oltp_read_write", "-c", "2", "-t", "20", "--max-tries", "10")
			if s.Failed > 0 || s.Transactions != 40 {
				t.Errorf("%v: run: %d transactions, %d failed (%v)", c.flags, s.Transactions, s.Failed, s.ErrorsBy)
			}
		}
	})
}

// A run finds the number of sbtest tables in the data (data prepared with --tables 2
// used to run on 1), runs on fewer when told, and refuses a --tables or a
// --table-size the data does not have.
func TestTablesDetected(t *testing.T) {
	for _, tg := range cliTargets {
		if tg.name == "postgres" {
			continue // the same code as on the other two
		}
		t.Run(tg.name, func(t *testing.T) {
			dsn := tg.dsn(t)
			env := storeEnv(t)
			base := []string{"--target", dsn, "-w", "oltp_point_select"}
			if r := fathom(t, env, nil, append([]string{"prepare", "--tables", "3", "--table-size", "500"}, base...)...); r.code != 0 {
				t.Fatalf("prepare: %s", r.stderr)
			}
			s := runJSON(t, env, append(base, "-t", "5")...)
			if o := storedRun(t, env, s.RunID).Options; o["tables"] != "3" || o["table_size"] != "500" {
				t.Errorf("detected tables %q and table_size %q, want 3 and 500", o["tables"], o["table_size"])
			}
			s = runJSON(t, env, append(base, "--tables", "2", "-t", "5")...)
			if o := storedRun(t, env, s.RunID).Options; o["tables"] != "2" {
				t.Errorf("--tables 2 on 3 tables ran with tables %q", o["tables"])
			}
			oneLine(t, fathom(t, env, nil, append([]string{"run", "--table-size", "600", "-t", "5"}, base...)...), exitUsage, "sbtest1 has ids up to 500")
			if r := fathom(t, env, nil, append([]string{"run", "--tables", "4", "-t", "5"}, base...)...); r.code != exitFailure || !strings.Contains(r.stderr, "sbtest4") {
				t.Errorf("--tables 4 on 3 tables: exit %d: %s", r.code, r.stderr)
			}
		})
	}
}

// pgbench's and sysbench's run options with their meaning, on SQLite: -L counts
// milliseconds, scripts default to 10 transactions per client and the simple protocol,
// sysbench's seed, warm-up, prepared-statement mode, percentile and histogram, and
// `runs --workload` finds a benchmark under both its spellings.
func TestPgbenchSysbenchOptions(t *testing.T) {
	env := storeEnv(t)
	tgt := "--target=sqlite:" + filepath.Join(t.TempDir(), "t.db")
	if r := fathom(t, env, nil, "prepare", "--workload", "tpcb", "--scale", "1", tgt); r.code != 0 {
		t.Fatalf("prepare: %s", r.stderr)
	}
	s := runJSON(t, env, "-S", "-c", "2", tgt)
	if s.Transactions != 20 || s.QueryMode != "simple" || s.Workload != "pgbench:select-only" {
		t.Errorf("-S -c 2: %d transactions in %s mode as %s, want pgbench's 10 per client, simple", s.Transactions, s.QueryMode, s.Workload)
	}
	s = runJSON(t, env, "-w", "tpcb-select", "-R", "200", "-L", "5", "-t", "3", "--rand-seed", "5", tgt)
	if r := storedRun(t, env, s.RunID); r.LatencyLimit != 5*time.Millisecond || r.Seed != 5 || r.QueryMode != "prepared" || r.Options[run.OptionQueryMode] != "prepared" {
		t.Errorf("-L 5 --rand-seed 5: stored limit %s, seed %d, mode %q/%q; want 5ms, 5, prepared", r.LatencyLimit, r.Seed, r.QueryMode, r.Options[run.OptionQueryMode])
	}
	s = runJSON(t, env, "-S", "--random-seed", "9", "--warmup-time", "1", "-T", "1", "--db-ps-mode", "auto", tgt)
	if r := storedRun(t, env, s.RunID); r.Seed != 9 || r.Warmup != time.Second || s.QueryMode != "prepared" {
		t.Errorf("--random-seed 9 --warmup-time 1 --db-ps-mode auto: seed %d, warm-up %s, mode %s", r.Seed, r.Warmup, s.QueryMode)
	}
	r := fathom(t, env, nil, "run", "-w", "tpcb-select", "-t", "50", "--percentile", "99", "--histogram", "--db-ps-mode", "disable", "-q", tgt)
	if r.code != 0 || !strings.Contains(r.stdout, "latency 99th percentile: ") || !strings.Contains(r.stdout, "Latency histogram (values are in milliseconds)") {
		t.Errorf("--percentile 99 --histogram: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var bars int64
	for _, l := range strings.Split(r.stdout, "\n") {
		if f := strings.Fields(l); len(f) == 3 && strings.HasPrefix(f[1], "|*") {
			n, _ := strconv.ParseInt(f[2], 10, 64)
			bars += n
		}
	}
	if bars != 50 {
		t.Errorf("the histogram's buckets hold %d transactions, want 50:\n%s", bars, r.stdout)
	}
	if r := fathom(t, env, nil, "run", "-w", "tpcb-select", "-t", "5", "--percentile", "0", "-q", tgt); strings.Contains(r.stdout, "percentile:") {
		t.Errorf("--percentile 0 printed one:\n%s", r.stdout)
	}
	for _, w := range []string{"tpcb-select", "pgbench:select-only"} {
		out := fathom(t, env, nil, "runs", "-w", w, "--json")
		var runs []store.Run
		if err := json.Unmarshal([]byte(out.stdout), &runs); err != nil {
			t.Fatalf("runs -w %s: %v %s", w, err, out.stderr)
		}
		names := map[string]int{}
		for _, r := range runs {
			names[r.Workload]++
		}
		if names["tpcb-select"] != 3 || names["pgbench:select-only"] != 2 {
			t.Errorf("runs -w %s: %v, want 3 tpcb-select and 2 pgbench:select-only", w, names)
		}
	}
	// A script on a database without pgbench's tables: the pre-run steps fail, are
	// said in one warning, and the run goes on (as pgbench's).
	empty := "--target=sqlite:" + filepath.Join(t.TempDir(), "empty.db")
	r = fathom(t, env, nil, "run", "-f", scriptFile(t, "one.sql", "SELECT 1;\n"), "-t", "3", "--json", "-q", empty)
	if s := summary(t, r); r.code != 0 || s.Transactions != 3 || !strings.Contains(r.stderr, "pre-run") || !strings.Contains(r.stderr, "pgbench_history") {
		t.Errorf("-f on an empty database: exit %d, %d transactions, stderr %q", r.code, s.Transactions, r.stderr)
	}
	r = fathom(t, env, nil, "run", "-f", scriptFile(t, "one.sql", "SELECT 1;\n"), "-t", "3", "-n", "--json", "-q", empty)
	if r.code != 0 || strings.Contains(r.stderr, "pre-run") {
		t.Errorf("-f -n on an empty database: exit %d, stderr %q", r.code, r.stderr)
	}
}
