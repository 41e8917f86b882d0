package tpcc

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mysql "github.com/fathom-lab/fathom/internal/db/mysql/target"
	postgres "github.com/fathom-lab/fathom/internal/db/postgres/target"
	sqlite "github.com/fathom-lab/fathom/internal/db/sqlite/target"
	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/runner"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
)

// The three targets, the servers in a database of this package's own (the table names
// are fixed).
var testTargets = []struct {
	name string
	dsn  func(t *testing.T) string
}{
	{"sqlite", func(t *testing.T) string { return dbtest.SQLiteDSN(t) }},
	{"postgres", func(t *testing.T) string { return dbtest.PostgresDatabase(t, "tpcc") }},
	{"mysql", func(t *testing.T) string { return dbtest.MySQLDatabase(t, "tpcc") }},
}

func openTarget(t *testing.T, dsn string) target.Target {
	t.Helper()
	var (
		tg  target.Target
		err error
	)
	switch {
	case strings.HasPrefix(dsn, "sqlite:"):
		tg, err = sqlite.Open(dsn, target.Config{})
	case strings.HasPrefix(dsn, "mysql://"):
		tg, err = mysql.Open(dsn, target.Config{})
	default:
		tg, err = postgres.Open(dsn, target.Config{})
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tg.Close() })
	return tg
}

func count(t *testing.T, ctx context.Context, conn target.Conn, sql string) int64 {
	t.Helper()
	rows, err := conn.Query(ctx, sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	n, err := oneInt(rows)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// sums reads one row of whole numbers.
func sums(t *testing.T, ctx context.Context, conn target.Conn, sql string) []int64 {
	t.Helper()
	rows, err := conn.Query(ctx, sql)
	if err != nil || len(rows) != 1 {
		t.Fatalf("%s: %v", sql, err)
	}
	out := make([]int64, len(rows[0]))
	for i, v := range rows[0] {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			t.Fatalf("%s: column %d: %q", sql, i, v)
		}
		out[i] = int64(math.Round(f))
	}
	return out
}

// mustCheck runs CheckData and fails the test on a violation.
func mustCheck(t *testing.T, ctx context.Context, conn target.Conn, when string, warehouses int64) {
	t.Helper()
	res, err := checkData(ctx, conn)
	if err != nil {
		t.Fatalf("check %s: %v", when, err)
	}
	if !res.ok() {
		t.Fatalf("check %s: %d violations, first: %v", when, len(res.Violations), res.Violations[0])
	}
	if res.Warehouses != warehouses || len(res.Conditions) < 4 {
		t.Fatalf("check %s: %d warehouses, conditions %v", when, res.Warehouses, res.Conditions)
	}
}

// runTotals runs wl with the real runner and adds up the measured intervals per type.
func runTotals(t *testing.T, ctx context.Context, tg target.Target, wl workload.Workload, cfg runner.Config, stopAfter int64) ([]measure.Counts, runner.Result) {
	t.Helper()
	if cfg.Interval == 0 {
		cfg.Interval = 200 * time.Millisecond
	}
	if cfg.MaxTries == 0 {
		cfg.MaxTries = 10
	}
	r, err := runner.Connect(ctx, tg, wl, cfg)
	if err != nil {
		t.Fatalf("runner: %v", err)
	}
	defer r.Close()
	totals := make([]measure.Counts, len(wl.TxnTypes()))
	var done atomic.Int64
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	res := r.Run(runCtx, func(iv *measure.Interval) error {
		mu.Lock()
		defer mu.Unlock()
		for i := range iv.Types {
			totals[i].Add(&iv.Types[i].Counts)
			done.Add(iv.Types[i].OK)
		}
		if stopAfter > 0 && done.Load() >= stopAfter {
			cancel() // interrupt the run mid-way, as Ctrl-C does
		}
		return nil
	})
	return totals, res
}

// TestTPCC prepares two warehouses on each database, checks the data against clause
// 4.3 and 3.3.2, runs the mix with the real runner and checks again, interrupts a run
// mid-way and checks again, then corrupts the data on purpose and expects each
// condition to catch it. One test per target, because the tables are shared.
func TestTPCC(t *testing.T) {
	for _, tg := range testTargets {
		t.Run(tg.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			tgt := openTarget(t, tg.dsn(t))
			conn, err := tgt.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			testTarget(t, ctx, tgt, conn)
		})
	}
}

func testTarget(t *testing.T, ctx context.Context, tgt target.Target, conn target.Conn) {
	const nw = 2
	wl, err := newWorkload(workload.Params{"warehouses": fmt.Sprint(nw)})
	if err != nil {
		t.Fatal(err)
	}
	if err := wl.Cleanup(ctx, conn); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = wl.Cleanup(context.Background(), conn) })
	if err := New0(t).Setup(ctx, conn); err == nil || !strings.Contains(err.Error(), "fathom prepare -w tpcc") {
		t.Fatalf("Setup before prepare: %v", err)
	}

	var mu sync.Mutex
	last := map[string][2]int64{}
	start := time.Now()
	err = workload.Prepare(ctx, tgt, wl, true, func(table string, done, total int64) {
		mu.Lock()
		last[table] = [2]int64{done, total}
		mu.Unlock()
	})
	if err != nil {
		t.Fatalf("prepare: %v", err)
	}
	t.Logf("prepared %d warehouses in %s", nw, time.Since(start).Round(time.Millisecond))
	if len(last) != 9 {
		t.Errorf("progress of %d tables: %v", len(last), last)
	}
	for table, p := range last {
		if p[0] != p[1] || p[1] == 0 {
			t.Errorf("progress of %s ended at %d of %d", table, p[0], p[1])
		}
	}

	// Cardinalities of clause 4.3.
	for sql, want := range map[string]int64{
		"SELECT count(*) FROM item":                                                    items,
		"SELECT count(*) FROM warehouse":                                               nw,
		"SELECT count(*) FROM stock":                                                   nw * items,
		"SELECT count(*) FROM district":                                                nw * 10,
		"SELECT count(*) FROM customer":                                                nw * 30_000,
		"SELECT count(*) FROM history":                                                 nw * 30_000,
		"SELECT count(*) FROM orders":                                                  nw * 30_000,
		"SELECT count(*) FROM new_order":                                               nw * 9_000,
		"SELECT count(*) FROM order_line":                                              last[tOrderLine][1],
		"SELECT count(DISTINCT o_c_id) FROM orders WHERE o_w_id = 1 AND o_d_id = 3":    3000,
		"SELECT count(*) FROM orders WHERE o_carrier_id IS NULL":                       nw * 9_000,
		"SELECT count(*) FROM order_line WHERE ol_delivery_d IS NULL":                  count(t, ctx, conn, "SELECT sum(o_ol_cnt) FROM orders WHERE o_id >= 2101"),
		"SELECT count(DISTINCT c_last) FROM customer WHERE c_w_id = 2 AND c_d_id = 10": 1000,
		"SELECT count(*) FROM customer WHERE c_id = 1 AND c_last = 'BARBARBAR'":        nw * 10,
		"SELECT count(*) FROM customer WHERE c_id = 1000 AND c_last = 'EINGEINGEING'":  nw * 10,
	} {
		if got := count(t, ctx, conn, sql); got != want {
			t.Errorf("%s = %d, want %d", sql, got, want)
		}
	}
	// About 10% ORIGINAL, 10% bad credit: binomial, 6 standard deviations wide.
	for sql, n := range map[string]int64{
		"SELECT count(*) FROM item WHERE i_data LIKE '%ORIGINAL%'":  items,
		"SELECT count(*) FROM stock WHERE s_data LIKE '%ORIGINAL%'": nw * items,
		"SELECT count(*) FROM customer WHERE c_credit = 'BC'":       nw * 30_000,
	} {
		got := float64(count(t, ctx, conn, sql))
		mean, sd := float64(n)*0.1, math.Sqrt(float64(n)*0.1*0.9)
		if math.Abs(got-mean) > 6*sd {
			t.Errorf("%s = %.0f of %d, want about %.0f", sql, got, n, mean)
		}
	}
	mustCheck(t, ctx, conn, "after prepare", nw)

	// A run: four clients, 150 transactions each.
	run := New0(t)
	if err := run.Setup(ctx, conn); err != nil {
		t.Fatalf("Setup: %v", err)
	}
	if run.warehousesInEffect() != nw || run.Options()["isolation"] == "" {
		t.Errorf("Setup detected %d warehouses, isolation %q", run.warehousesInEffect(), run.Options()["isolation"])
	}
	const stockSums = "SELECT sum(s_ytd), sum(s_order_cnt), sum(s_remote_cnt) FROM stock"
	stock0 := sums(t, ctx, conn, stockSums)
	server0, source, serverErr := run.ServerTransactions(ctx, conn)
	if (serverErr != nil) != (run.dialect == "sqlite") || (serverErr == nil) == (source == "") {
		t.Errorf("server transactions on %s: %q, %v", run.dialect, source, serverErr)
	}
	totals, res := runTotals(t, ctx, tgt, run, runner.Config{Clients: 4, Transactions: 150, Seed: 7}, 0)
	if res.Status != "complete" {
		t.Logf("run: %+v", res)
	}
	var all int64
	for i, c := range totals {
		all += c.OK
		if c.Failed > 0 {
			t.Errorf("%s: %d failed (errors by class %v); run %+v", txnNameList()[i], c.Failed, c.Errors, res.Errors)
		}
	}
	if all != 600 {
		t.Errorf("%d transactions succeeded, want 600 (%+v)", all, res)
	}
	if totals[txnNewOrder].OK == 0 || totals[txnPayment].OK == 0 {
		t.Errorf("no new-order or payment: %+v", totals)
	}
	// Committed new-orders are exactly the orders added.
	if got := count(t, ctx, conn, "SELECT count(*) FROM orders") - nw*30_000; got != totals[txnNewOrder].OK {
		t.Errorf("%d orders added, %d new-orders committed", got, totals[txnNewOrder].OK)
	}
	mustCheck(t, ctx, conn, "after a run", nw)
	if serverErr == nil {
		// The server counted at least the run's transactions (other sessions' too;
		// PostgreSQL publishes a session's counts within a second or at its end).
		want := int64(0)
		for _, c := range totals {
			want += c.OK
		}
		var got int64
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			n, _, err := run.ServerTransactions(ctx, conn)
			if err != nil {
				t.Fatal(err)
			}
			if got = n - server0; got >= want || time.Now().After(deadline) {
				break
			}
		}
		if got < want {
			t.Errorf("the server counted %d transactions (%s), the clients %d", got, source, want)
		}
	}
	// Each committed line updated its stock row once (New-Order reads the stock rows
	// of its lines together; an item twice in one order is updated twice).
	stock1 := sums(t, ctx, conn, stockSums)
	lineSums := sums(t, ctx, conn, "SELECT sum(ol_quantity), count(*), sum(CASE WHEN ol_supply_w_id <> ol_w_id THEN 1 ELSE 0 END) FROM order_line WHERE ol_o_id > 3000")
	for i, what := range []string{"s_ytd", "s_order_cnt", "s_remote_cnt"} {
		if got := stock1[i] - stock0[i]; got != lineSums[i] {
			t.Errorf("%s grew by %d, the new order lines want %d", what, got, lineSums[i])
		}
	}
	// Delivery credited each customer with its delivered order's lines (clause 3.3.2.10
	// summed over every customer: balances = delivered amounts - payments) and counted
	// each delivery once.
	bal := sums(t, ctx, conn, "SELECT sum(c_balance) * 100, sum(c_delivery_cnt) FROM customer")
	paid := sums(t, ctx, conn, "SELECT sum(h_amount) * 100 FROM history")[0]
	delivered := sums(t, ctx, conn, "SELECT sum(ol_amount) * 100 FROM order_line WHERE ol_delivery_d IS NOT NULL")[0]
	if bal[0] != delivered-paid {
		t.Errorf("customers' balances sum to %d cents, delivered lines %d - payments %d = %d", bal[0], delivered, paid, delivered-paid)
	}
	if carried := count(t, ctx, conn, "SELECT count(*) FROM orders WHERE o_carrier_id IS NOT NULL") - nw*10*(firstUndelivered-1); bal[1] != carried {
		t.Errorf("customers' delivery counts sum to %d, %d orders were delivered by the run", bal[1], carried)
	}
	if lo, hi := count(t, ctx, conn, "SELECT min(s_quantity) FROM stock"), count(t, ctx, conn, "SELECT max(s_quantity) FROM stock"); lo < 10 || hi > 100 {
		t.Errorf("s_quantity from %d to %d, clause 2.4.2.2 keeps it from 10 to 100", lo, hi)
	}

	// What reached the server follows the spec's shares (5 standard deviations).
	share := func(what string, k, n int64, p float64) {
		t.Helper()
		mean, sd := float64(n)*p, math.Sqrt(float64(n)*p*(1-p))
		if math.Abs(float64(k)-mean) > 5*sd+0.5 {
			t.Errorf("%s: %d of %d, want about %.1f", what, k, n, mean)
		}
	}
	newOrders := totals[txnNewOrder].OK + totals[txnNewOrderRollback].OK
	for i, p := range []float64{0.45, 0.43, 0.04, 0.04, 0.04} {
		k := totals[i].OK
		if i == txnNewOrder {
			k = newOrders
		}
		share("mix: "+txnNameList()[i], k, all, p)
	}
	share("rolled-back new-orders", totals[txnNewOrderRollback].OK, newOrders, 0.01)
	lines := count(t, ctx, conn, "SELECT count(*) FROM order_line WHERE ol_o_id > 3000")
	share("remote order lines", count(t, ctx, conn, "SELECT count(*) FROM order_line WHERE ol_o_id > 3000 AND ol_supply_w_id <> ol_w_id"), lines, 0.01)
	if a, b := count(t, ctx, conn, "SELECT count(*) FROM orders WHERE o_id > 3000 AND o_all_local = 0"),
		count(t, ctx, conn, "SELECT count(DISTINCT ol_w_id * 100000000 + ol_d_id * 10000000 + ol_o_id) FROM order_line WHERE ol_o_id > 3000 AND ol_supply_w_id <> ol_w_id"); a != b {
		t.Errorf("%d orders not all local, %d orders with a remote line", a, b)
	}
	pays := count(t, ctx, conn, "SELECT count(*) FROM history") - nw*30_000
	if pays != totals[txnPayment].OK {
		t.Errorf("%d history rows added, %d payments committed", pays, totals[txnPayment].OK)
	}
	share("remote payments", count(t, ctx, conn, "SELECT count(*) FROM history WHERE h_c_w_id <> h_w_id"), pays, 0.15)

	// A run interrupted mid-way (the context cancelled, as Ctrl-C does).
	_, res = runTotals(t, ctx, tgt, run, runner.Config{Clients: 4, Duration: time.Hour, Seed: 8}, 100)
	if res.Status == "complete" {
		t.Errorf("the interrupted run says %q", res.Status)
	}
	mustCheck(t, ctx, conn, "after an interrupted run", nw)

	testFailedWrite(t, ctx, tgt, run)
	mustCheck(t, ctx, conn, "after a New-Order that failed", nw)

	testCorruption(t, ctx, conn)
}

// testFailedWrite makes a New-Order's INSERT of its order fail (a duplicate key:
// district 1 of warehouse 1 is set back to an order that exists). On PostgreSQL that
// INSERT goes in a pipeline with the district's update (the batch of New-Order's
// writes): the error must keep its class (a constraint, not retried), the district's
// update must roll back with the transaction, and the connection must serve the next
// transaction.
func testFailedWrite(t *testing.T, ctx context.Context, tgt target.Target, wl *tpccWorkload) {
	t.Helper()
	conn, err := tgt.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const next = "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 1"
	was := count(t, ctx, conn, next)
	if err := conn.Exec(ctx, fmt.Sprintf("UPDATE district SET d_next_o_id = %d WHERE d_w_id = 1 AND d_id = 1", was-1)); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := conn.Exec(ctx, fmt.Sprintf("UPDATE district SET d_next_o_id = %d WHERE d_w_id = 1 AND d_id = 1", was)); err != nil {
			t.Errorf("restoring d_next_o_id: %v", err)
		}
	}()
	k := wl.NewWorker(0, 99).(*worker) // client 0: home warehouse 1
	if err := k.Bind(ctx, conn); err != nil {
		t.Fatal(err)
	}
	if tgt.Dialect().Name == "postgres" && k.pipe == nil {
		t.Fatal("no pipeline mode on PostgreSQL")
	}
	draw := func(district int64) {
		for i := 0; ; i++ {
			if k.Next() == txnNewOrder && k.wid == 1 && k.did == district {
				return
			}
			if i > 100_000 {
				t.Fatalf("no New-Order for district %d drawn", district)
			}
		}
	}
	draw(1)
	_, err = k.Do(ctx)
	if target.ClassOf(err) != target.ClassConstraint {
		t.Fatalf("New-Order on an existing order id: %v (class %v), want a constraint violation", err, target.ClassOf(err))
	}
	if err := conn.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if got := count(t, ctx, conn, next); got != was-1 {
		t.Errorf("d_next_o_id %d after the failed New-Order rolled back, want %d", got, was-1)
	}
	// The connection goes on: a New-Order of another district commits.
	draw(2)
	before := count(t, ctx, conn, "SELECT count(*) FROM orders WHERE o_w_id = 1 AND o_d_id = 2")
	if _, err := k.Do(ctx); err != nil {
		t.Fatalf("the next New-Order on the same connection: %v", err)
	}
	if got := count(t, ctx, conn, "SELECT count(*) FROM orders WHERE o_w_id = 1 AND o_d_id = 2"); got != before+1 {
		t.Errorf("orders of district 2: %d after a New-Order, %d before", got, before)
	}
}

// New0 is a workload with every option left to detection.
func New0(t *testing.T) *tpccWorkload {
	t.Helper()
	w, err := newWorkload(nil)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// testCorruption breaks each condition on purpose, in a transaction rolled back
// afterwards, and expects CheckData to name the condition, warehouse and district.
func testCorruption(t *testing.T, ctx context.Context, conn target.Conn) {
	for _, c := range []struct {
		name string
		sql  []string
		cond int
		w, d int64
	}{
		{"w_ytd", []string{"UPDATE warehouse SET w_ytd = w_ytd + 0.01 WHERE w_id = 2"}, 1, 2, 0},
		{"d_next_o_id", []string{"UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = 1 AND d_id = 4"}, 2, 1, 4},
		{"new_order gap", []string{"DELETE FROM new_order WHERE no_w_id = 2 AND no_d_id = 7 AND no_o_id = 2500"}, 3, 2, 7},
		{"lost order line", []string{"DELETE FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 9 AND ol_o_id = 100 AND ol_number = 1"}, 4, 1, 9},
		{"carrier", []string{"UPDATE orders SET o_carrier_id = 3 WHERE o_w_id = 1 AND o_d_id = 1 AND o_id = 2800"}, 5, 1, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := conn.Begin(ctx); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = conn.Rollback(ctx) }()
			for _, sql := range c.sql {
				if err := conn.Exec(ctx, sql); err != nil {
					t.Fatalf("%s: %v", sql, err)
				}
			}
			res, err := checkData(ctx, conn)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, v := range res.Violations {
				if v.Condition == c.cond && v.Warehouse == c.w && v.District == c.d {
					found = true
				} else if v.Warehouse != c.w {
					t.Errorf("a violation elsewhere: %v", v)
				}
			}
			if !found {
				t.Errorf("condition %d in warehouse %d district %d not caught: %v", c.cond, c.w, c.d, res.Violations)
			}
			if got := res.badWarehouses(); len(got) != 1 || got[0] != c.w {
				t.Errorf("bad warehouses %v", got)
			}
		})
	}
	mustCheck(t, ctx, conn, "after the corruptions were rolled back", 2)
}

// --partitions splits every table but item by warehouse, on PostgreSQL (range) and
// MySQL (hash): the server lists the partitions, each warehouse's rows are where they
// belong (PostgreSQL), a run works on them and the data stays consistent.
func TestPartitions(t *testing.T) {
	for _, tg := range testTargets[1:] {
		t.Run(tg.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			tgt := openTarget(t, tg.dsn(t))
			conn, err := tgt.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			wl, err := newWorkload(workload.Params{"warehouses": "2"})
			if err != nil {
				t.Fatal(err)
			}
			method, parts := "range", "SELECT count(*) FROM pg_inherits WHERE inhparent = 'stock'::regclass"
			if tg.name == "mysql" {
				method, parts = "hash", "SELECT count(*) FROM information_schema.partitions WHERE table_schema = database() AND table_name = 'stock' AND partition_name IS NOT NULL"
			}
			d := tgt.Dialect()
			if err := wl.SetLayout(workload.Layout{Partitions: 2, PartitionMethod: method}, &d); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = wl.Cleanup(context.Background(), conn) })
			if err := workload.Prepare(ctx, tgt, wl, true, nil); err != nil {
				t.Fatalf("prepare: %v", err)
			}
			if n := count(t, ctx, conn, parts); n != 2 {
				t.Errorf("stock has %d partitions, want 2", n)
			}
			if tg.name == "postgres" {
				for sql, want := range map[string]int64{
					"SELECT count(*) FROM stock_p1 WHERE s_w_id = 1":        items,
					"SELECT count(*) FROM stock_p2 WHERE s_w_id = 2":        items,
					"SELECT count(*) FROM order_line_p1 WHERE ol_w_id <> 1": 0,
					"SELECT count(*) FROM item":                             items,
				} {
					if got := count(t, ctx, conn, sql); got != want {
						t.Errorf("%s = %d, want %d", sql, got, want)
					}
				}
			}
			run := New0(t)
			if err := run.Setup(ctx, conn); err != nil {
				t.Fatal(err)
			}
			totals, res := runTotals(t, ctx, tgt, run, runner.Config{Clients: 2, Transactions: 50, Seed: 3}, 0)
			var all int64
			for _, c := range totals {
				all += c.OK
			}
			if all != 100 {
				t.Errorf("%d transactions succeeded, want 100 (%+v)", all, res)
			}
			mustCheck(t, ctx, conn, "after a run on partitions", 2)
		})
	}
	// What cannot be partitioned is refused with the fix.
	wl := New0(t)
	for _, c := range []struct {
		l    workload.Layout
		d    target.Dialect
		want string
	}{
		{workload.Layout{Partitions: 2}, target.Dialect{Name: "sqlite"}, "sqlite has no table partitioning"},
		{workload.Layout{Partitions: 2, ForeignKeys: true}, target.Dialect{Name: "mysql", TableEngine: true}, "take no foreign keys"},
		{workload.Layout{PartitionMethod: "hash"}, target.Dialect{Name: "postgres", TableStorage: true}, "needs --partitions"},
		{workload.Layout{Partitions: 2, PartitionMethod: "list"}, target.Dialect{Name: "postgres", TableStorage: true}, "give range or hash"},
	} {
		if err := wl.SetLayout(c.l, &c.d); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v on %s: %v, want %q", c.l, c.d.Name, err, c.want)
		}
	}
}
