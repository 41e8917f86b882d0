package spec_test

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
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/runner"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
	"github.com/fathom-lab/fathom/internal/workload/builtin"
	"github.com/fathom-lab/fathom/internal/workload/files"
)

// testTargets are the three targets, the servers in a database of this package's own.
var testTargets = []struct {
	name string
	dsn  func(t testing.TB) string
}{
	{"sqlite", func(t testing.TB) string { return dbtest.SQLiteDSN(t) + "?busy_timeout=10000" }},
	{"postgres", func(t testing.TB) string { return dbtest.PostgresDatabase(t, "spec") }},
	{"mysql", func(t testing.TB) string { return dbtest.MySQLDatabase(t, "spec") }},
}

// small are parameters that keep the shipped workloads quick to prepare.
var small = map[string]workload.Params{
	"fanout":  {"a_rows": "20", "fanout": "20", "jitter": "5", "writers": "2", "readers": "2"},
	"seqrand": {"rows": "500"},
	"ycsb":    {"records": "500"},
	// A run keeps to the first 200 customers, so that readers find orders.
	"testdata/example.yaml": {"customers": "200", "reader_rate": "0"},
}

func newWorkload(t testing.TB, name string, p workload.Params) workload.Workload {
	t.Helper()
	s, err := builtin.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.New(p)
	if err != nil {
		t.Fatal(err)
	}
	return w
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

// TestShippedFiles prepares, runs and cleans up every shipped workload file on every
// target; ycsb runs each of its six mixes.
func TestShippedFiles(t *testing.T) {
	for _, tg := range testTargets {
		t.Run(tg.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			tgt := openTarget(t, tg.dsn(t))
			conn := connect(t, ctx, tgt)
			for _, name := range append(files.Names(), "testdata/example.yaml") {
				t.Run(name, func(t *testing.T) {
					mixes := []string{""}
					if name == "ycsb" {
						mixes = []string{"a", "b", "c", "d", "e", "f"}
					}
					p := small[name]
					w := newWorkload(t, name, p)
					if err := w.Cleanup(ctx, conn); err != nil {
						t.Fatalf("cleanup before: %v", err)
					}
					if err := w.Setup(ctx, conn); !errors.Is(err, workload.ErrNotPrepared) {
						t.Fatalf("Setup before prepare: %v, want ErrNotPrepared", err)
					}
					var mu sync.Mutex
					last := map[string][2]int64{}
					if err := w.Prepare(ctx, tgt, func(table string, done, total int64) {
						mu.Lock()
						last[table] = [2]int64{done, total}
						mu.Unlock()
					}); err != nil {
						t.Fatalf("prepare: %v", err)
					}
					if len(last) == 0 {
						t.Errorf("no progress reported")
					}
					for table, pr := range last {
						if pr[0] != pr[1] || pr[1] == 0 {
							t.Errorf("progress of %s ended at %d of %d", table, pr[0], pr[1])
						}
					}
					for _, mix := range mixes {
						q := workload.Params{}
						for k, v := range p {
							q[k] = v
						}
						if mix != "" {
							q["mix"] = mix
						}
						w := newWorkload(t, name, q)
						if err := w.Setup(ctx, conn); err != nil {
							t.Fatalf("setup: %v", err)
						}
						ok := runClients(t, ctx, tgt, w, 2, 30)
						if ok == 0 {
							t.Errorf("mix %q: no transaction succeeded", mix)
						}
					}
					if err := w.Cleanup(ctx, conn); err != nil {
						t.Fatalf("cleanup: %v", err)
					}
					for _, tb := range []string{"fanout_a", "seqrand_seq", "usertable", "shop_order"} {
						if _, err := conn.Query(ctx, "SELECT 1 FROM "+tb+" WHERE 1 = 0"); err == nil {
							t.Errorf("%s still exists after cleanup", tb)
						}
					}
				})
			}
		})
	}
}

// runClients runs n transactions on each client, each on its own connection,
// concurrently; with groups, each group's clients, otherwise clients workers.
// Retryable failures are rolled back and retried with the same values, as the runner
// does. It returns the transactions that succeeded and fails on any other error.
func runClients(t *testing.T, ctx context.Context, tgt target.Target, w workload.Workload, clients, n int) int {
	t.Helper()
	var workers []workload.Worker
	if g, ok := w.(workload.Grouped); ok && len(g.Groups()) > 0 {
		for gi, grp := range g.Groups() {
			for range grp.Clients {
				workers = append(workers, g.NewGroupWorker(gi, len(workers), 42))
			}
		}
	} else {
		for id := range clients {
			workers = append(workers, w.NewWorker(id, 42))
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	total, busy := 0, 0
	errs := make([]error, len(workers))
	for id, k := range workers {
		conn := connect(t, ctx, tgt)
		if err := k.Bind(ctx, conn); err != nil {
			t.Fatalf("bind: %v", err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			good := 0
			defer func() { mu.Lock(); total += good; mu.Unlock() }()
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
					c := target.ClassOf(err)
					if c == target.ClassTimeout && tgt.Kind() == "sqlite" && try == 20 {
						// A deferred SQLite transaction that reads, then writes, fails
						// at once (SQLITE_BUSY) when another client wrote since its read:
						// the busy timeout cannot help. Give up on this transaction only.
						mu.Lock()
						busy++
						mu.Unlock()
						break
					}
					if !(c.Retryable() || c == target.ClassTimeout) || try == 100 {
						errs[id] = fmt.Errorf("client %d: %w (class %v, try %d)", id, err, c, try)
						return
					}
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
	if busy > 0 {
		t.Logf("%d transactions gave up on SQLITE_BUSY after upgrading a read to a write", busy)
	}
	return total
}

func count(t *testing.T, ctx context.Context, conn target.Conn, table string) int64 {
	t.Helper()
	rows, err := conn.Query(ctx, "SELECT count(*) FROM "+table)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseInt(rows[0][0], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestFanoutRatios runs fanout through the runner (client groups, per-group
// transaction types) and checks the row counts against the workload's ratios: about
// fanout fanout_b rows per fanout_a row, one fanout_c or fanout_d row per fanout_b
// row, 5% of them in fanout_d.
func TestFanoutRatios(t *testing.T) {
	for _, tg := range testTargets {
		t.Run(tg.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			tgt := openTarget(t, tg.dsn(t))
			conn := connect(t, ctx, tgt)
			p := workload.Params{"a_rows": "10", "fanout": "100", "jitter": "10", "writers": "3", "readers": "2"}
			w := newWorkload(t, "fanout", p)
			if err := w.Prepare(ctx, tgt, nil); err != nil {
				t.Fatal(err)
			}
			defer w.Cleanup(ctx, conn)
			if err := w.Setup(ctx, conn); err != nil {
				t.Fatal(err)
			}
			before := map[string]int64{}
			for _, tb := range []string{"fanout_a", "fanout_b", "fanout_c", "fanout_d"} {
				before[tb] = count(t, ctx, conn, tb)
			}
			if before["fanout_a"] != 10 || before["fanout_b"] != 1000 || before["fanout_c"] != 0 {
				t.Errorf("prepared %v", before)
			}
			types := w.TxnTypes()
			want := []string{"writers/write", "readers/read_a", "readers/read_b"}
			if fmt.Sprint(types) != fmt.Sprint(want) {
				t.Errorf("TxnTypes %v, want %v", types, want)
			}
			r, err := runner.Connect(ctx, tgt, w, runner.Config{Clients: 1, Transactions: 40, Interval: 200 * time.Millisecond, MaxTries: 100, Seed: 7})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var totals measure.Counts
			byType := make([]measure.Counts, len(types))
			res := r.Run(ctx, func(iv *measure.Interval) error {
				for i := range iv.Types {
					byType[i].Add(&iv.Types[i].Counts)
					totals.Add(&iv.Types[i].Counts)
				}
				return nil
			})
			if res.Status != runner.StatusComplete {
				t.Fatalf("run %s: %s", res.Status, res.Reason)
			}
			if byType[0].OK != 3*40 || byType[1].OK+byType[2].OK != 2*40 || totals.Failed != 0 {
				t.Errorf("by type %+v", byType)
			}
			d := map[string]int64{}
			for tb, n := range before {
				d[tb] = count(t, ctx, conn, tb) - n
			}
			t.Logf("rows added: %v; statements %d", d, totals.Statements)
			if d["fanout_a"] != 120 {
				t.Errorf("%d rows in fanout_a, want 120 (one per write)", d["fanout_a"])
			}
			if ratio := float64(d["fanout_b"]) / float64(d["fanout_a"]); ratio < 97 || ratio > 103 {
				t.Errorf("fanout_b/fanout_a = %.1f, want ~100", ratio)
			}
			if d["fanout_c"]+d["fanout_d"] != d["fanout_b"] {
				t.Errorf("fanout_c + fanout_d = %d, want fanout_b = %d", d["fanout_c"]+d["fanout_d"], d["fanout_b"])
			}
			// 12,000 draws at 5%: sd 0.2 points.
			if share := float64(d["fanout_d"]) / float64(d["fanout_b"]); share < 0.04 || share > 0.06 {
				t.Errorf("fanout_d share %.3f, want ~0.05", share)
			}
			// Each fanout_c/d row points at a fanout_b row of the same fanout_a row.
			rows, err := conn.Query(ctx, `SELECT count(*) FROM fanout_c c JOIN fanout_b b ON b.id = c.b_id AND b.a_id = c.a_id`)
			if err != nil {
				t.Fatal(err)
			}
			if rows[0][0] != strconv.FormatInt(d["fanout_c"], 10) {
				t.Errorf("%s of %d fanout_c rows match their fanout_b row", rows[0][0], d["fanout_c"])
			}
		})
	}
}

// TestRetrySendsSameValues: Do after Do sends the drawn transaction again, values and
// all: a second Do of the same sequential insert collides with the first row.
func TestRetrySendsSameValues(t *testing.T) {
	for _, tg := range testTargets {
		t.Run(tg.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			tgt := openTarget(t, tg.dsn(t))
			conn := connect(t, ctx, tgt)
			p := workload.Params{"rows": "10", "rand_insert": "0", "seq_select": "0", "rand_select": "0"}
			w := newWorkload(t, "seqrand", p)
			if err := w.Prepare(ctx, tgt, nil); err != nil {
				t.Fatal(err)
			}
			defer w.Cleanup(ctx, conn)
			if err := w.Setup(ctx, conn); err != nil {
				t.Fatal(err)
			}
			k := w.NewWorker(0, 1)
			if err := k.Bind(ctx, conn); err != nil {
				t.Fatal(err)
			}
			if typ := k.Next(); w.TxnTypes()[typ] != "seq_insert" {
				t.Fatalf("drew %s", w.TxnTypes()[typ])
			}
			if n, err := k.Do(ctx); err != nil || n != 1 {
				t.Fatalf("first Do: %d statements, %v", n, err)
			}
			_, err := k.Do(ctx)
			if target.ClassOf(err) != target.ClassConstraint {
				t.Fatalf("second Do: %v (class %v), want a duplicate key", err, target.ClassOf(err))
			}
			if !strings.Contains(err.Error(), "seq_insert step 1 (line") {
				t.Errorf("error does not name the statement: %v", err)
			}
			// The next transaction continues after the largest id (11).
			k.Next()
			if _, err := k.Do(ctx); err != nil {
				t.Fatal(err)
			}
			rows, err := conn.Query(ctx, "SELECT max(id), count(*) FROM seqrand_seq")
			if err != nil {
				t.Fatal(err)
			}
			if rows[0][0] != "12" || rows[0][1] != "12" {
				t.Errorf("max id, rows = %v, want 12, 12", rows[0])
			}
		})
	}
}
