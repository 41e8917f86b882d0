package cli

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/db"
	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/store/stores"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload/builtin"
)

// cliTargets are the three targets, each in a database of this package's own.
var cliTargets = []struct {
	name string
	dsn  func(t *testing.T) string
}{
	{"sqlite", func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "t.db") }},
	{"postgres", func(t *testing.T) string { return dbtest.PostgresDatabase(t, "cli") }},
	{"mysql", func(t *testing.T) string { return dbtest.MySQLDatabase(t, "cli") }},
}

// withRedis are cliTargets and Redis, for the tests of every workload.
var withRedis = append(cliTargets[:len(cliTargets):len(cliTargets)], struct {
	name string
	dsn  func(t *testing.T) string
}{"redis", func(t *testing.T) string { return dbtest.RedisURL(t) }})

func smallOpts(wl string) []string {
	switch {
	case strings.HasPrefix(wl, "tpcb"):
		return []string{"--scale", "1"}
	case wl == "fanout":
		return []string{"--set", "writers=1", "--set", "readers=1", "--set", "a_rows=200", "--set", "fanout=10", "--set", "jitter=2"}
	case wl == "seqrand":
		return []string{"--set", "rows=2000"}
	case wl == "ycsb":
		return []string{"--set", "records=2000"}
	case strings.HasPrefix(wl, "redis-"):
		return []string{"--set", "keys=2000", "--set", "prefix=fathom:cli:" + wl + ":"}
	}
	return []string{"--tables", "2", "--table-size", "2000"}
}

// Every built-in workload prepares, runs and cleans up on every target, and the run is
// stored with its intervals.
func TestEveryWorkloadOnEveryTarget(t *testing.T) {
	for _, tg := range withRedis {
		t.Run(tg.name, func(t *testing.T) {
			dsn := tg.dsn(t)
			env := storeEnv(t)
			for _, wl := range builtin.Names() {
				if strings.HasPrefix(wl, "redis-") != (tg.name == "redis") {
					continue // Redis workloads run on Redis only, SQL ones on the SQL targets
				}
				if wl == "tpcc" {
					// Its smallest data set (one warehouse, 100,000 items) takes a minute to
					// load per target: TestTPCC (workload/tpcc) prepares, runs and checks it
					// on all three SQL targets, and TestCheckDataTPCC through this CLI.
					continue
				}
				t.Run(wl, func(t *testing.T) {
					base := append([]string{"--target", dsn, "--workload", wl}, smallOpts(wl)...)
					if r := fathom(t, env, nil, append([]string{"prepare"}, base...)...); r.code != 0 {
						t.Fatalf("prepare: exit %d\n%s%s", r.code, r.stdout, r.stderr)
					}
					// --max-tries: oltp's DELETE+INSERT of one id by two clients collides now and
					// then, which is retried as sysbench restarts it.
					r := fathom(t, env, nil, append([]string{"run", "-c", "2", "-T", "1s", "-P", "250ms", "--json", "--seed", "7", "--max-tries", "10"}, base...)...)
					if r.code != 0 {
						t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
					}
					s := summary(t, r)
					if s.Status != "complete" || s.Transactions == 0 || s.Latency.P50 <= 0 || s.Intervals < 1 || (s.Intervals < 4 && len(s.Warnings) == 0) {
						t.Fatalf("summary: status %s, %d transactions, p50 %v, %d intervals (%v)", s.Status, s.Transactions, s.Latency.P50, s.Intervals, s.Warnings)
					}
					if wl == "fanout" && s.Clients != 2 {
						t.Errorf("fanout with one writer and one reader reports %d clients", s.Clients)
					}
					if s.Failed > 0 && tg.name != "sqlite" {
						t.Errorf("%d transactions failed: %v", s.Failed, s.ErrorsBy)
					}
					if !strings.Contains(r.stderr, "tps:") {
						t.Errorf("no live interval lines on stderr:\n%s", r.stderr)
					}
					if r := fathom(t, env, nil, append([]string{"cleanup"}, base...)...); r.code != 0 {
						t.Fatalf("cleanup: exit %d\n%s", r.code, r.stderr)
					}
				})
			}
		})
	}
}

// After concurrent tpcb with retried serialization failures, all balances agree.
func TestTPCBBalancesWithRetries(t *testing.T) {
	for _, tg := range cliTargets {
		t.Run(tg.name, func(t *testing.T) {
			dsn := tg.dsn(t)
			runDSN := dsn
			switch tg.name {
			case "postgres":
				// Repeatable read makes concurrent updates of the one branch row fail
				// with serialization errors, which --max-tries retries.
				runDSN = dsnWithQuery(t, dsn, "options", "-c default_transaction_isolation=repeatable\\ read")
				// libpq (and pgconn) do not read '+' as a space in URLs.
				runDSN = strings.ReplaceAll(runDSN, "+", "%20")
			case "sqlite":
				runDSN = dsn + "?busy_timeout=10000"
			}
			env := storeEnv(t)
			if r := fathom(t, env, nil, "prepare", "--target", dsn, "--workload", "tpcb", "--scale", "1"); r.code != 0 {
				t.Fatalf("prepare: %s", r.stderr)
			}
			r := fathom(t, env, nil, "run", "--target", runDSN, "--workload", "tpcb", "-c", "4", "-T", "3s", "--max-tries", "100", "--json", "-q")
			if r.code != 0 {
				t.Fatalf("run: exit %d: %s", r.code, r.stderr)
			}
			s := summary(t, r)
			if s.Transactions < 50 {
				t.Fatalf("only %d transactions", s.Transactions)
			}
			if tg.name == "postgres" && s.Retries == 0 {
				t.Errorf("no retries under repeatable read with 4 clients on one branch: %+v", s.ErrorsBy)
			}
			// Retried serialization failures are a benchmark's expected errors: the
			// run is complete (exit 0 above) and lists them, counted as the summary
			// counts them.
			n := s.ErrorsUnlisted
			for _, e := range s.FirstErrors {
				n += e.Count
			}
			if s.Status != "complete" || n != s.Errors || (tg.name == "postgres" && (len(s.FirstErrors) == 0 || s.FirstErrors[0].Code != "40001")) {
				t.Errorf("status %s, first errors %+v (unlisted %d) for %d errors", s.Status, s.FirstErrors, s.ErrorsUnlisted, s.Errors)
			}
			tgt, err := db.Open(dsn, target.Config{})
			if err != nil {
				t.Fatal(err)
			}
			conn, err := tgt.Connect(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			rows, err := conn.Query(context.Background(), `SELECT
				(SELECT coalesce(sum(abalance),0) FROM pgbench_accounts),
				(SELECT coalesce(sum(tbalance),0) FROM pgbench_tellers),
				(SELECT coalesce(sum(bbalance),0) FROM pgbench_branches),
				(SELECT coalesce(sum(delta),0) FROM pgbench_history),
				(SELECT count(*) FROM pgbench_history)`)
			if err != nil {
				t.Fatal(err)
			}
			b := rows[0]
			if b[0] != b[1] || b[1] != b[2] || b[2] != b[3] {
				t.Fatalf("balances disagree: accounts %s tellers %s branches %s history %s", b[0], b[1], b[2], b[3])
			}
			// Every successful transaction, and no failed one, left a history row.
			if b[4] != fmt.Sprint(s.Transactions) && s.Failed == 0 {
				t.Logf("history rows %s vs %d measured transactions (warm-up and tail excluded)", b[4], s.Transactions)
			}
		})
	}
}

func dsnWithQuery(t *testing.T, dsn, k, v string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set(k, v)
	u.RawQuery = q.Encode()
	return u.String()
}

// Killing the clients' sessions mid-run: the clients reconnect and the run completes.
func TestRunSurvivesKilledConnections(t *testing.T) {
	for _, tg := range cliTargets[1:] {
		t.Run(tg.name, func(t *testing.T) {
			dsn := tg.dsn(t)
			env := storeEnv(t)
			if r := fathom(t, env, nil, "prepare", "--target", dsn, "--workload", "oltp_point_select", "--table-size", "1000"); r.code != 0 {
				t.Fatalf("prepare: %s", r.stderr)
			}
			tgt, err := db.Open(dsn, target.Config{})
			if err != nil {
				t.Fatal(err)
			}
			admin, err := tgt.Connect(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer admin.Close()
			done := make(chan result)
			go func() {
				done <- fathom(t, env, nil, "run", "--target", dsn, "--workload", "oltp_point_select", "-c", "3", "-T", "6s", "-P", "500ms", "--json")
			}()
			// Kill once the clients are measuring (an interval with transactions is
			// stored), however long connecting took on a busy machine.
			waitFor(t, "the run's first measured interval", func() bool {
				_, txns := storedIntervals(env["FATHOM_STORE"], 1)
				return txns > 0
			})
			killed := killOthers(t, tg.name, admin)
			if killed < 3 {
				t.Fatalf("killed %d sessions, want the 3 clients", killed)
			}
			r := <-done
			if r.code != 0 {
				t.Fatalf("run did not survive: exit %d: %s", r.code, r.stderr)
			}
			s := summary(t, r)
			if s.Reconnects < 3 || s.Status != "complete" {
				t.Fatalf("status %s, %d reconnects after killing 3 sessions", s.Status, s.Reconnects)
			}
			if s.ErrorsBy["connection"] == 0 {
				t.Errorf("the lost connections were not counted as connection errors: %v", s.ErrorsBy)
			}
		})
	}
}

// killOthers kills every other session of the test database's clients.
func killOthers(t *testing.T, kind string, admin target.Conn) int {
	ctx := context.Background()
	var q string
	switch kind {
	case "postgres":
		q = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'fathom' AND datname = current_database() AND pid <> pg_backend_pid()"
		rows, err := admin.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		return len(rows)
	default:
		rows, err := admin.Query(ctx, "SELECT id FROM information_schema.processlist WHERE db = DATABASE() AND id <> CONNECTION_ID() AND command <> 'Daemon'")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if _, err := admin.Query(ctx, "KILL "+r[0]); err != nil {
				t.Logf("KILL %s: %v", r[0], err)
			}
		}
		return len(rows)
	}
}

// SIGINT stops the run within a couple of seconds, keeps its intervals and marks it
// interrupted.
func TestInterruptKeepsIntervals(t *testing.T) {
	env := storeEnv(t)
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "t.db")
	if r := fathom(t, env, nil, "prepare", "--target", dsn, "--workload", "oltp_point_select", "--table-size", "1000"); r.code != 0 {
		t.Fatalf("prepare: %s", r.stderr)
	}
	stop := make(chan struct{})
	stopped := make(chan time.Time, 1)
	go func() {
		// Interrupt once three intervals are stored, however slow the start.
		if err := poll("three stored intervals", func() bool { n, _ := storedIntervals(env["FATHOM_STORE"], 1); return n >= 3 }); err != nil {
			t.Error(err)
		}
		stopped <- time.Now()
		close(stop)
	}()
	r := fathom(t, env, stop, "run", "--target", dsn, "--workload", "oltp_point_select", "-c", "2", "-T", "10m", "-P", "500ms", "--json")
	if took := time.Since(<-stopped); took > 10*time.Second {
		t.Errorf("took %s to stop after the interrupt", took)
	}
	if r.code != exitInterrupted {
		t.Fatalf("exit %d, want %d: %s", r.code, exitInterrupted, r.stderr)
	}
	s := summary(t, r)
	if s.Status != "interrupted" || s.Intervals < 3 || s.Transactions == 0 {
		t.Fatalf("status %s with %d intervals and %d transactions", s.Status, s.Intervals, s.Transactions)
	}
	st, err := stores.Open(env["FATHOM_STORE"])
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	run, err := st.Run(context.Background(), s.RunID)
	if err != nil {
		t.Fatal(err)
	}
	ivs, err := st.Intervals(context.Background(), s.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != "interrupted" || len(ivs) != s.Intervals {
		t.Fatalf("store: status %s, %d intervals; summary said %d", run.Status, len(ivs), s.Intervals)
	}
	// show and export read it back.
	if r := fathom(t, env, nil, "show", fmt.Sprint(s.RunID)); r.code != 0 || !strings.Contains(r.stdout, "interrupted") {
		t.Fatalf("show: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = fathom(t, env, nil, "export", "last", "--format", "csv")
	if r.code != 0 || strings.Count(r.stdout, "\n") != len(ivs)+1 || !strings.HasPrefix(r.stdout, "interval,start_s,end_s") {
		t.Fatalf("export csv: exit %d, %d lines for %d intervals\n%s", r.code, strings.Count(r.stdout, "\n"), len(ivs), r.stdout)
	}
	if r := fathom(t, env, nil, "runs"); r.code != 0 || !strings.Contains(r.stdout, "interrupted") {
		t.Fatalf("runs: %s", r.stdout)
	}
}
