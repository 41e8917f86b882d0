package sblua_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/runner"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
	"github.com/fathom-lab/fathom/internal/workload/sblua"
)

// runScript runs the script through the runner, as `fathom run -w script.lua` does:
// the result, the totals and how the runner drove the clients.
func runScript(t *testing.T, tgt target.Target, path string, cfg runner.Config) (runner.Result, measure.Summary, string) {
	res, sum, tuning, _ := runScriptYields(t, tgt, path, cfg)
	return res, sum, tuning
}

// runScriptYields is runScript, also giving how many statements were yielded to the
// multiplexed path.
func runScriptYields(t *testing.T, tgt target.Target, path string, cfg runner.Config) (runner.Result, measure.Summary, string, int64) {
	return runScriptParams(t, tgt, path, workload.Params{}, cfg)
}

// runScriptParams is runScriptYields with the script's options.
func runScriptParams(t *testing.T, tgt target.Target, path string, params workload.Params, cfg runner.Config) (runner.Result, measure.Summary, string, int64) {
	t.Helper()
	ctx := context.Background()
	sp, err := sblua.Spec(path)
	if err != nil {
		t.Fatal(err)
	}
	wl, err := sp.New(params)
	if err != nil {
		t.Fatal(err)
	}
	if err := wl.(*sblua.Workload).UseTarget(tgt); err != nil {
		t.Fatal(err)
	}
	conn, err := tgt.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := wl.Setup(ctx, conn); err != nil {
		t.Fatal(err)
	}
	cfg.Interval, cfg.MaxTries, cfg.Seed = 250*time.Millisecond, 1, 1
	r, err := runner.Connect(ctx, tgt, wl, cfg)
	if err != nil {
		t.Fatal(err)
	}
	tot := measure.NewTotals(wl.TxnTypes())
	res := r.Run(ctx, func(iv *measure.Interval) error { tot.Add(iv); return nil })
	tuning := r.Tuning()
	r.Close()
	return res, tot.Summary(), tuning, sblua.Yielded(wl.(*sblua.Workload))
}

// TestSteppedEvents: with several clients on MySQL, a script's events run as
// coroutines on the runner's multiplexed threads, a statement at a time. What reached
// the server is what the script says, event by event: every client's rows 1..N, once
// each, and its counter at N; the duplicate key every fifth event is restarted as
// sysbench restarts it (a retry each, the rolled-back transaction gone); the statement
// inside pcall ran too. One client (the goroutine path) gives the same.
func TestSteppedEvents(t *testing.T) {
	tgt := open(t, dbtest.MySQLDatabase(t, "sblua"))
	ctx := context.Background()
	conn, err := tgt.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, clients := range []int{1, 4} {
		t.Run(strconv.Itoa(clients), func(t *testing.T) {
			for _, q := range []string{
				"DROP TABLE IF EXISTS steps", "DROP TABLE IF EXISTS steps_total",
				"CREATE TABLE steps (client INT, n INT, note VARCHAR(20), PRIMARY KEY (client, n)) ENGINE=InnoDB",
				"CREATE TABLE steps_total (client INT PRIMARY KEY, events INT, nested INT) ENGINE=InnoDB",
			} {
				if err := conn.Exec(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			for c := range clients {
				if err := conn.Exec(ctx, "INSERT INTO steps_total VALUES ("+strconv.Itoa(c)+", 0, 0)"); err != nil {
					t.Fatal(err)
				}
			}
			const events = 40
			res, sum, tuning, yields := runScriptYields(t, tgt, "testdata/stepped.lua", runner.Config{Clients: clients, Transactions: events})
			t.Logf("%d clients: %s; %d events, %d statements (%d yielded), %d retries, %d errors (%s)", clients, res.Status, sum.Transactions, sum.Statements, yields, sum.Retries, sum.Errors, tuning)
			if res.Status != runner.StatusComplete {
				t.Fatalf("run %s: %s", res.Status, res.Reason)
			}
			if stepped := strings.HasPrefix(tuning, "epoll"); stepped != (clients > 1) {
				t.Fatalf("%d clients ran as %q", clients, tuning)
			}
			// Stepped, every statement but the one inside pcall was yielded to the
			// runner; in a goroutine of its own, none.
			if want := (sum.Statements - int64(clients*events)) * int64(min(clients-1, 1)); yields != want {
				t.Errorf("%d statements yielded, want %d", yields, want)
			}
			if sum.Transactions != int64(clients*events) || sum.Failed != 0 {
				t.Errorf("%d events, %d failed; want %d, none", sum.Transactions, sum.Failed, clients*events)
			}
			// Each restart is counted as a retry (and its error as an error).
			if want := int64(clients * events / 5); sum.Retries != want || sum.Errors != want {
				t.Errorf("%d retries, %d errors; want %d each (a duplicate key every fifth event)", sum.Retries, sum.Errors, want)
			}
			// Statements: BEGIN, INSERT, UPDATE, the nested UPDATE and COMMIT per
			// event; a restarted try sent BEGIN and the failed INSERT.
			if want := int64(clients*events*5) + 2*sum.Retries; sum.Statements != want {
				t.Errorf("%d statements, want %d", sum.Statements, want)
			}
			rows, err := conn.Query(ctx, "SELECT client, COUNT(*), MIN(n), MAX(n) FROM steps GROUP BY client ORDER BY client")
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != clients {
				t.Fatalf("rows of %d clients, want %d: %v", len(rows), clients, rows)
			}
			for _, r := range rows {
				if r[1] != strconv.Itoa(events) || r[2] != "1" || r[3] != strconv.Itoa(events) {
					t.Errorf("client %s: %s rows from %s to %s, want %d from 1 to %d", r[0], r[1], r[2], r[3], events, events)
				}
			}
			totals, err := conn.Query(ctx, "SELECT client, events, nested FROM steps_total ORDER BY client")
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range totals {
				if r[1] != strconv.Itoa(events) || r[2] != strconv.Itoa(events) {
					t.Errorf("client %s: counters %s and %s, want %d each", r[0], r[1], r[2], events)
				}
			}
		})
	}
	_ = conn.Exec(ctx, "DROP TABLE IF EXISTS steps")
	_ = conn.Exec(ctx, "DROP TABLE IF EXISTS steps_total")
}

// TestSteppedErrors: a statement that fails on the server is the same error, from
// the same script line, whether the event ran in a goroutine of its own (one client)
// or stepped on the multiplexed threads (three); the clients go on, every event
// failing. An event() that returns true ends its client in both, that event
// uncounted, and the run ends when no client is left.
func TestSteppedErrors(t *testing.T) {
	tgt := open(t, dbtest.MySQLDatabase(t, "sblua"))
	var where []string
	for _, clients := range []int{1, 3} {
		res, sum, tuning := runScript(t, tgt, "testdata/stepped_fail.lua", runner.Config{Clients: clients, Transactions: 5})
		t.Logf("%d clients: %s %s; %d failed (%s)", clients, res.Status, res.Reason, sum.Failed, tuning)
		if sum.Failed != int64(5*clients) || sum.Transactions != 0 {
			t.Errorf("%d clients: %d failed, %d succeeded; want %d, 0", clients, sum.Failed, sum.Transactions, 5*clients)
		}
		if len(res.Errors) != 1 || res.Errors[0].Code != "1146" || res.Errors[0].Count != int64(5*clients) {
			t.Fatalf("%d clients: errors %+v, want one: 1146 × %d", clients, res.Errors, 5*clients)
		}
		where = append(where, res.Errors[0].Where)
	}
	if where[0] != where[1] || !strings.HasSuffix(where[0], "stepped_fail.lua:6") {
		t.Errorf("the error's place: %q (one client) and %q (stepped); want both at stepped_fail.lua:6", where[0], where[1])
	}

	// A script's own coroutine.yield() in event() aborts its client on both paths, with
	// the same line (stepped, it would otherwise suspend the runner's coroutine as if
	// for a statement).
	var yieldErr []string
	for _, clients := range []int{1, 3} {
		res, sum, tuning := runScript(t, tgt, "testdata/stepped_yield.lua", runner.Config{Clients: clients, Transactions: 5})
		t.Logf("%d clients: %s %s; %d aborted (%s)", clients, res.Status, res.Reason, res.Aborted, tuning)
		if res.Aborted != clients || sum.Transactions != 0 || len(res.Errors) != 1 || !strings.Contains(res.Errors[0].Message, "yield") {
			t.Errorf("%d clients: %d aborted, %d events, errors %+v; want every client aborted on its yield", clients, res.Aborted, sum.Transactions, res.Errors)
		}
		if len(res.Errors) > 0 {
			yieldErr = append(yieldErr, res.Errors[0].Message)
		}
	}
	if len(yieldErr) == 2 && (yieldErr[0] != yieldErr[1] || !strings.HasPrefix(yieldErr[0], "testdata/stepped_yield.lua:8:")) {
		t.Errorf("the yield's error: %q (one client), %q (stepped); want the same, at stepped_yield.lua:8", yieldErr[0], yieldErr[1])
	}

	for _, clients := range []int{1, 3} {
		began := time.Now()
		res, sum, tuning := runScript(t, tgt, "testdata/stepped_end.lua", runner.Config{Clients: clients, Duration: time.Minute})
		t.Logf("%d clients: %s; %d events in %s (%s)", clients, res.Status, sum.Transactions, time.Since(began), tuning)
		if res.Status != runner.StatusComplete || sum.Transactions != int64(6*clients) {
			t.Errorf("%d clients: %s, %d events; want complete, %d", clients, res.Status, sum.Transactions, 6*clients)
		}
		if time.Since(began) > 50*time.Second {
			t.Errorf("%d clients: the run lasted %s: it did not end when its clients did", clients, time.Since(began))
		}
	}
}
