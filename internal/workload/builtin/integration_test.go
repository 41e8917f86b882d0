package builtin

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
)

// testTargets are the three targets, the servers in a database of this package's own
// (the pgbench_* and sbtest* names are fixed, so packages must not share one).
var testTargets = []struct {
	name string
	dsn  func(t *testing.T) string
}{
	{"sqlite", func(t *testing.T) string { return dbtest.SQLiteDSN(t) }},
	{"postgres", func(t *testing.T) string { return dbtest.PostgresDatabase(t, "workload") }},
	{"mysql", func(t *testing.T) string { return dbtest.MySQLDatabase(t, "workload") }},
}

// smallParams prepare a small data set; runParams leave the sizes to be detected.
func smallParams(name string) (prepare, run workload.Params) {
	if strings.HasPrefix(name, "tpcb") {
		return workload.Params{"scale": "1"}, workload.Params{}
	}
	return workload.Params{"tables": "2", "table_size": "1000"}, workload.Params{"tables": "2"}
}

// TestWorkloads runs every built-in on every target: Setup on an empty database,
// Prepare, Setup with size detection, two concurrent workers, the tpcb balance
// invariant under four workers, Cleanup. One top-level test, because all of it uses
// the same fixed table names.
func TestWorkloads(t *testing.T) {
	for _, tg := range testTargets {
		t.Run(tg.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			tgt := openTarget(t, tg.dsn(t))
			conn := connect(t, ctx, tgt)
			for _, name := range Names() {
				if Shipped(name) {
					continue // workload files are tested in package spec
				}
				if name == "tpcc" {
					continue // loads 500,000 rows a warehouse: tested in package tpcc
				}
				if strings.HasPrefix(name, "redis-") {
					continue // Redis workloads need a Redis target: tested in package kv
				}
				t.Run(name, func(t *testing.T) { testWorkload(t, ctx, tgt, conn, name) })
			}
			t.Run("tpcb-balances", func(t *testing.T) { testBalances(t, ctx, tgt, conn) })
		})
	}
}

func connect(t *testing.T, ctx context.Context, tgt target.Target) target.Conn {
	t.Helper()
	c, err := tgt.Connect(ctx)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func newWorkload(t *testing.T, name string, p workload.Params) workload.Workload {
	t.Helper()
	spec, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	w, err := spec.New(p)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func testWorkload(t *testing.T, ctx context.Context, tgt target.Target, conn target.Conn, name string) {
	prepP, runP := smallParams(name)
	w := newWorkload(t, name, prepP)
	if err := w.Cleanup(ctx, conn); err != nil {
		t.Fatalf("cleanup before: %v", err)
	}
	defer func() {
		if err := w.Cleanup(ctx, conn); err != nil {
			t.Errorf("cleanup after: %v", err)
		}
	}()

	// Nothing prepared yet.
	err := newWorkload(t, name, runP).Setup(ctx, conn)
	if !errors.Is(err, workload.ErrNotPrepared) {
		t.Fatalf("Setup on an empty database: %v, want ErrNotPrepared", err)
	}
	if !strings.Contains(err.Error(), "pgbench_accounts") && !strings.Contains(err.Error(), "sbtest1") {
		t.Errorf("Setup error does not name a table: %v", err)
	}

	var mu sync.Mutex
	last := map[string][2]int64{}
	err = w.Prepare(ctx, tgt, func(table string, done, total int64) {
		mu.Lock()
		last[table] = [2]int64{done, total}
		mu.Unlock()
	})
	if err != nil {
		t.Fatalf("prepare: %v", err)
	}
	for table, p := range last {
		if p[0] != p[1] || p[1] == 0 {
			t.Errorf("progress of %s ended at %d of %d", table, p[0], p[1])
		}
	}

	// A fresh workload detects the size.
	w = newWorkload(t, name, runP)
	if err := w.Setup(ctx, conn); err != nil {
		t.Fatalf("setup: %v", err)
	}
	opts := w.Options()
	if strings.HasPrefix(name, "tpcb") {
		if opts["scale"] != "1" {
			t.Errorf("detected scale %q", opts["scale"])
		}
		checkCount(t, ctx, conn, "pgbench_accounts", 100_000)
		checkCount(t, ctx, conn, "pgbench_tellers", 10)
	} else {
		if opts["table_size"] != "1000" {
			t.Errorf("detected table_size %q", opts["table_size"])
		}
		checkCount(t, ctx, conn, "sbtest2", 1000)
	}
	before := rowCount(t, ctx, conn, name)

	const perWorker = 200
	ok, _ := runWorkers(t, ctx, tgt, w, 2, perWorker)
	if ok != 2*perWorker {
		t.Errorf("%d of %d transactions succeeded", ok, 2*perWorker)
	}
	after := rowCount(t, ctx, conn, name)
	switch name {
	case "oltp_insert":
		if after-before != int64(ok) {
			t.Errorf("%d rows inserted by %d transactions", after-before, ok)
		}
	case "oltp_delete":
		if after >= before {
			t.Errorf("rows before %d, after %d", before, after)
		}
	case "tpcb", "tpcb-simple-update":
		if after-before != int64(ok) {
			t.Errorf("%d history rows for %d transactions", after-before, ok)
		}
		if name == "tpcb" {
			checkBalances(t, ctx, conn)
		}
	default:
		if after != before {
			t.Errorf("rows before %d, after %d", before, after)
		}
	}
}

// rowCount counts the rows a workload adds or removes: history for tpcb, sbtest1+2.
func rowCount(t *testing.T, ctx context.Context, conn target.Conn, name string) int64 {
	t.Helper()
	q := "SELECT (SELECT count(*) FROM sbtest1) + (SELECT count(*) FROM sbtest2)"
	if strings.HasPrefix(name, "tpcb") {
		q = "SELECT count(*) FROM pgbench_history"
	}
	return queryInt(t, ctx, conn, q)
}

func queryInt(t *testing.T, ctx context.Context, conn target.Conn, q string) int64 {
	t.Helper()
	rows, err := conn.Query(ctx, q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	n, err := strconv.ParseInt(rows[0][0], 10, 64)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func checkCount(t *testing.T, ctx context.Context, conn target.Conn, table string, want int64) {
	t.Helper()
	if n := queryInt(t, ctx, conn, "SELECT count(*) FROM "+table); n != want {
		t.Errorf("%s has %d rows, want %d", table, n, want)
	}
}

// runWorkers runs n transactions on each of clients workers, each on its own
// connection, concurrently; retryable failures are rolled back and retried with the
// same values, as the runner does.
func runWorkers(t *testing.T, ctx context.Context, tgt target.Target, w workload.Workload, clients, n int) (ok, retries int) {
	t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	errs := make([]error, clients)
	for id := range clients {
		conn := connect(t, ctx, tgt)
		k := w.NewWorker(id, 42)
		if err := k.Bind(ctx, conn); err != nil {
			t.Fatalf("bind: %v", err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			good, tries := 0, 0
			defer func() {
				mu.Lock()
				ok += good
				retries += tries
				mu.Unlock()
			}()
			for range n {
				k.Next()
				for try := 1; ; try++ {
					stmts, err := k.Do(ctx)
					if err == nil {
						if stmts == 0 {
							errs[id] = errors.New("Do sent no statements")
							return
						}
						good++
						break
					}
					_ = conn.Rollback(ctx)
					if !target.ClassOf(err).Retryable() || try == 1000 {
						errs[id] = fmt.Errorf("worker %d: %w (class %v, after %d tries)", id, err, target.ClassOf(err), try)
						return
					}
					tries++
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	t.Logf("%d transactions, %d retries", ok, retries)
	return ok, retries
}

// testBalances: after concurrent tpcb transactions, every balance total equals the
// total of the history's deltas.
func testBalances(t *testing.T, ctx context.Context, tgt target.Target, conn target.Conn) {
	w := newWorkload(t, "tpcb", workload.Params{"scale": "1"})
	if err := w.Cleanup(ctx, conn); err != nil {
		t.Fatal(err)
	}
	defer w.Cleanup(ctx, conn)
	if err := w.Prepare(ctx, tgt, nil); err != nil {
		t.Fatal(err)
	}
	w = newWorkload(t, "tpcb", nil)
	if err := w.Setup(ctx, conn); err != nil {
		t.Fatal(err)
	}
	const clients, n = 4, 300
	ok, _ := runWorkers(t, ctx, tgt, w, clients, n)
	if ok != clients*n {
		t.Errorf("%d of %d transactions succeeded", ok, clients*n)
	}
	if h := queryInt(t, ctx, conn, "SELECT count(*) FROM pgbench_history"); h != int64(ok) {
		t.Errorf("%d history rows for %d transactions", h, ok)
	}
	checkBalances(t, ctx, conn)
}

func checkBalances(t *testing.T, ctx context.Context, conn target.Conn) {
	t.Helper()
	rows, err := conn.Query(ctx, `SELECT
		(SELECT coalesce(sum(abalance), 0) FROM pgbench_accounts),
		(SELECT coalesce(sum(tbalance), 0) FROM pgbench_tellers),
		(SELECT coalesce(sum(bbalance), 0) FROM pgbench_branches),
		(SELECT coalesce(sum(delta), 0) FROM pgbench_history)`)
	if err != nil {
		t.Fatal(err)
	}
	b := rows[0]
	if b[0] != b[1] || b[1] != b[2] || b[2] != b[3] {
		t.Errorf("balances disagree: accounts %s, tellers %s, branches %s, history deltas %s", b[0], b[1], b[2], b[3])
	}
}
