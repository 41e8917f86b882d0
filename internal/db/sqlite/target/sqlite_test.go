package sqlite

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/target/targettest"
)

// testTarget opens a target on a new database file in the test's temp directory;
// options is the DSN's query string, without '?'.
func testTarget(t testing.TB, cfg target.Config, options string) *Target {
	t.Helper()
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "t.db")
	if options != "" {
		dsn += "?" + options
	}
	tg, err := Open(dsn, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func testConn(t testing.TB, cfg target.Config, options string) (*Target, *conn) {
	t.Helper()
	tg := testTarget(t, cfg, options)
	return tg, connect(t, tg)
}

func connect(t testing.TB, tg *Target) *conn {
	t.Helper()
	return targettest.Connect(t, tg).(*conn)
}

var (
	mustExec  = targettest.MustExec
	query     = targettest.Query
	wantClass = targettest.WantClass
	modes     = targettest.Modes
)

func prepare(t testing.TB, c target.Conn, sql string) target.Stmt {
	t.Helper()
	st, err := c.Prepare(context.Background(), sql)
	if err != nil {
		t.Fatalf("prepare %s: %v", sql, err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func TestConnect(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sub")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	dsn := "sqlite:" + filepath.Join(dir, "new.db") + "?busy_timeout=250"
	tg, err := Open(dsn, target.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if tg.Kind() != "sqlite" || tg.Dialect().Name != "sqlite" || tg.Redacted() != dsn {
		t.Errorf("kind %q dialect %q redacted %q", tg.Kind(), tg.Dialect().Name, tg.Redacted())
	}
	c := connect(t, tg)
	if _, err := os.Stat(filepath.Join(dir, "new.db")); err != nil {
		t.Errorf("database file not created: %v", err)
	}
	if c.ID() != 0 || !c.Alive() || c.Dialect().Name != "sqlite" {
		t.Errorf("id %d alive %v dialect %q", c.ID(), c.Alive(), c.Dialect().Name)
	}
	var _ interface{ Dialect() target.Dialect } = c // found by spec workloads
	if got := query(t, c, "PRAGMA journal_mode")[0][0]; got != "wal" || !c.wal {
		t.Errorf("journal_mode %q, wal %v", got, c.wal)
	}
	if got := query(t, c, "PRAGMA synchronous")[0][0]; got != "1" {
		t.Errorf("synchronous = %s, want 1 (NORMAL)", got)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
	if c.Alive() {
		t.Error("alive after close")
	}
	wantClass(t, c.Exec(context.Background(), "SELECT 1"), target.ClassConnection, "")
}

func TestValues(t *testing.T) {
	for _, m := range modes {
		t.Run(m.Name, func(t *testing.T) {
			ctx := context.Background()
			_, c := testConn(t, m.Cfg, "")
			mustExec(t, c, "CREATE TABLE v (id INTEGER PRIMARY KEY, i INTEGER, s VARCHAR(100), f REAL, ts TIMESTAMP, n TEXT)")
			ins := prepare(t, c, "INSERT INTO v (id, i, s, f, ts, n) VALUES (?, ?, ?, ?, ?, ?)")
			ts := time.Date(2024, 2, 29, 13, 14, 15, 123456000, time.UTC)
			var res target.Result
			text := "it's \\ \"q\" ü ? -- /*"
			args := []target.Value{target.Int64(1), target.Int64(-9007199254740993), target.Text([]byte(text)), target.Float(2.5e-3), target.Time(ts), target.Null()}
			if err := ins.Run(ctx, args, &res); err != nil {
				t.Fatal(err)
			}
			if res.RowsAffected != 1 || res.Rows != 0 {
				t.Errorf("insert: %+v", res)
			}
			args = []target.Value{target.Int64(2), target.Null(), target.Text(nil), target.Null(), target.Time(time.Date(1999, 12, 31, 23, 59, 59, 0, time.UTC)), target.Text([]byte("x"))}
			if err := ins.Run(ctx, args, &res); err != nil {
				t.Fatal(err)
			}
			sel := prepare(t, c, "SELECT i, s, f, ts, n, typeof(s), typeof(ts) FROM v WHERE id = ?")
			res = target.Result{Keep: true}
			if err := sel.Run(ctx, []target.Value{target.Int64(1)}, &res); err != nil {
				t.Fatal(err)
			}
			want := []string{"-9007199254740993", text, "0.0025", "2024-02-29 13:14:15.123456", "", "text", "text"}
			if res.Rows != 1 || len(res.First) != len(want) {
				t.Fatalf("select: %+v", res)
			}
			for i, w := range want {
				f := res.First[i]
				if i == 4 {
					if f.Kind != target.KindNull {
						t.Errorf("column %d: kind %v, want NULL", i, f.Kind)
					}
					continue
				}
				if f.Kind != target.KindText || string(f.Text) != w {
					t.Errorf("column %d = %v %q, want %q", i, f.Kind, f.Text, w)
				}
			}
			if err := sel.Run(ctx, []target.Value{target.Int64(2)}, &res); err != nil {
				t.Fatal(err)
			}
			if res.First[0].Kind != target.KindNull || res.First[1].Kind != target.KindText || len(res.First[1].Text) != 0 ||
				string(res.First[3].Text) != "1999-12-31 23:59:59.000000" || string(res.First[4].Text) != "x" {
				t.Errorf("row 2: %+v", res.First)
			}
			// Timestamps compare as text in time order and work with SQLite's date functions.
			rows := query(t, c, "SELECT id, julianday(ts) > 2451544 FROM v ORDER BY ts")
			if len(rows) != 2 || rows[0][0] != "2" || rows[0][1] != "1" {
				t.Errorf("ordered by ts: %v", rows)
			}
			// Setup queries take arguments too; text compares equal to stored text.
			rows = query(t, c, "SELECT s, n FROM v WHERE id = ? AND s = ?", target.Int64(1), target.Text([]byte(text)))
			if len(rows) != 1 || rows[0][0] != text || rows[0][1] != "" {
				t.Errorf("query with args: %q", rows)
			}
			err := sel.Run(ctx, nil, &res)
			wantClass(t, err, target.ClassOther, "")
			if !strings.Contains(err.Error(), "1 placeholders but 0") {
				t.Errorf("arity error: %v", err)
			}
			if _, err := c.Query(ctx, "SELECT ?", target.Int64(1), target.Int64(2)); err == nil {
				t.Error("query with too many arguments succeeded")
			}
			// Numbered parameters take the argument of that position.
			rows = query(t, c, "SELECT ?2, ?1, ?2", target.Int64(10), target.Int64(20))
			if len(rows) != 1 || strings.Join(rows[0], ",") != "20,10,20" {
				t.Errorf("numbered parameters: %v", rows)
			}
		})
	}
}

func TestRowsKeepAffected(t *testing.T) {
	targettest.RowsKeepAffected(t, func(t *testing.T, cfg target.Config) (target.Conn, string) {
		_, c := testConn(t, cfg, "")
		mustExec(t, c, "CREATE TABLE r (id INTEGER PRIMARY KEY, v INTEGER)")
		return c, "r"
	})
}

// INSERT … RETURNING reads rows; a closed statement does not run.
func TestReturningAndClosed(t *testing.T) {
	for _, m := range modes {
		t.Run(m.Name, func(t *testing.T) {
			ctx := context.Background()
			_, c := testConn(t, m.Cfg, "")
			mustExec(t, c, "CREATE TABLE r (id INTEGER PRIMARY KEY, v INTEGER)")
			mustExec(t, c, "INSERT INTO r VALUES (1, 10), (2, 20), (3, 30), (4, NULL)")
			res := target.Result{Keep: true}
			ret := prepare(t, c, "INSERT INTO r (v) VALUES (?) RETURNING id")
			if err := ret.Run(ctx, []target.Value{target.Int64(50)}, &res); err != nil {
				t.Fatal(err)
			}
			if res.Rows != 1 || len(res.First) != 1 || string(res.First[0].Text) != "5" {
				t.Errorf("insert returning: %+v", res)
			}
			del := prepare(t, c, "DELETE FROM r WHERE v IS NULL")
			if err := del.Close(); err != nil {
				t.Fatal(err)
			}
			if err := del.Run(ctx, nil, &res); err == nil {
				t.Error("closed statement ran")
			}
		})
	}
}

func TestTransactions(t *testing.T) {
	for _, begin := range []string{"auto", "deferred", "immediate", "exclusive"} {
		t.Run(begin, func(t *testing.T) {
			ctx := context.Background()
			_, c := testConn(t, target.Config{}, "begin="+begin)
			if err := c.Rollback(ctx); err != nil {
				t.Fatalf("rollback outside a transaction: %v", err)
			}
			mustExec(t, c, "CREATE TABLE x (id INTEGER PRIMARY KEY)")
			ins := prepare(t, c, "INSERT INTO x VALUES (?)")
			var res target.Result
			for _, commit := range []bool{false, true} {
				if err := c.Begin(ctx); err != nil {
					t.Fatal(err)
				}
				if err := ins.Run(ctx, []target.Value{target.Int64(1)}, &res); err != nil {
					t.Fatal(err)
				}
				if !c.inTransaction() {
					t.Fatal("no transaction open after Begin and INSERT")
				}
				if commit {
					err := c.Commit(ctx)
					if err != nil {
						t.Fatal(err)
					}
				} else if err := c.Rollback(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if rows := query(t, c, "SELECT count(*) FROM x"); rows[0][0] != "1" {
				t.Errorf("after rollback and commit: %v", rows)
			}
			// A transaction without statements commits and rolls back.
			for _, end := range []func(context.Context) error{c.Commit, c.Rollback} {
				if err := c.Begin(ctx); err != nil {
					t.Fatal(err)
				}
				if err := end(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if c.inTransaction() || c.pending {
				t.Error("transaction left open")
			}
			// A second Begin inside a transaction is an error, except when nothing was sent yet.
			if err := c.Begin(ctx); err != nil {
				t.Fatal(err)
			}
			mustExec(t, c, "SELECT 1 FROM x")
			if err := c.Begin(ctx); err == nil && begin != "auto" {
				t.Error("nested BEGIN succeeded")
			}
			if err := c.Rollback(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestBeginAuto checks how begin=auto starts transactions: a writing first statement
// takes the write lock at once (so another writer waits), a reading one does not (so
// a reader and a writer proceed side by side in WAL mode).
func TestBeginAuto(t *testing.T) {
	ctx := context.Background()
	tg, c1 := testConn(t, target.Config{}, "busy_timeout=50")
	c2 := connect(t, tg)
	mustExec(t, c1, "CREATE TABLE a (id INTEGER PRIMARY KEY, v INTEGER)")
	mustExec(t, c1, "INSERT INTO a VALUES (1, 0), (2, 0)")

	// Read first: deferred; c2 may still write.
	if err := c1.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	if rows := query(t, c1, "SELECT v FROM a WHERE id = 1"); rows[0][0] != "0" {
		t.Fatal(rows)
	}
	mustExec(t, c2, "UPDATE a SET v = 5 WHERE id = 2")
	// c1's snapshot is older than c2's commit: it cannot write any more.
	err := c1.Exec(ctx, "UPDATE a SET v = 1 WHERE id = 1")
	e := wantClass(t, err, target.ClassSerialization, "SQLITE_BUSY_SNAPSHOT")
	if !e.Class.Retryable() {
		t.Error("not retryable")
	}
	if err := c1.Rollback(ctx); err != nil {
		t.Fatal(err)
	}

	// Write first: BEGIN IMMEDIATE; c2's write waits for the busy timeout.
	if err := c1.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	mustExec(t, c1, "UPDATE a SET v = v + 1 WHERE id = 1")
	start := time.Now()
	err = c2.Exec(ctx, "UPDATE a SET v = 7 WHERE id = 2")
	wantClass(t, err, target.ClassTimeout, "SQLITE_BUSY")
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Errorf("busy after %v, before the 50ms busy timeout", d)
	}
	if err := c1.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if rows := query(t, c2, "SELECT v FROM a ORDER BY id"); rows[0][0] != "1" || rows[1][0] != "5" {
		t.Errorf("values %v", rows)
	}

	// A prepared read whose transaction went on to write begins the next one with
	// BEGIN IMMEDIATE; a read whose transaction did not still begins deferred.
	sel := prepare(t, c1, "SELECT v FROM a WHERE id = ?")
	other := prepare(t, c1, "SELECT v FROM a WHERE id = ? + 0")
	upd := prepare(t, c1, "UPDATE a SET v = v + 1 WHERE id = ?")
	var res target.Result
	one := []target.Value{target.Int64(1)}
	for i, st := range []target.Stmt{sel, sel, other} {
		if err := c1.Begin(ctx); err != nil {
			t.Fatal(err)
		}
		if err := st.Run(ctx, one, &res); err != nil {
			t.Fatal(err)
		}
		err := c2.Exec(ctx, "UPDATE a SET v = 9 WHERE id = 2")
		if i == 1 {
			wantClass(t, err, target.ClassTimeout, "SQLITE_BUSY")
		} else if err != nil {
			t.Fatalf("transaction %d: a deferred reader blocked a writer: %v", i, err)
		}
		if i == 0 {
			err := upd.Run(ctx, one, &res)
			wantClass(t, err, target.ClassSerialization, "SQLITE_BUSY_SNAPSHOT")
			if !sel.(*stmt).leadsWrites || other.(*stmt).leadsWrites {
				t.Error("leadsWrites not learned")
			}
		} else if err := upd.Run(ctx, one, &res); err != nil && i == 1 {
			t.Fatal(err)
		}
		if err := c1.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBusy checks the classes of SQLITE_BUSY: after the whole busy timeout (a lock
// wait timeout) and without waiting, when a transaction that has read tries to write
// while another holds the write lock (serialization in WAL mode, deadlock with a
// rollback journal).
func TestBusy(t *testing.T) {
	for _, jm := range []struct{ mode, class string }{{"WAL", "serialization"}, {"DELETE", "deadlock"}} {
		t.Run(jm.mode, func(t *testing.T) {
			ctx := context.Background()
			tg, c1 := testConn(t, target.Config{}, "busy_timeout=200&begin=deferred&journal_mode="+jm.mode)
			c2 := connect(t, tg)
			mustExec(t, c1, "CREATE TABLE b (id INTEGER PRIMARY KEY, v INTEGER)")
			mustExec(t, c1, "INSERT INTO b VALUES (1, 0)")

			// c2 holds the write lock.
			mustExec(t, c2, "BEGIN IMMEDIATE")
			mustExec(t, c2, "UPDATE b SET v = 2")
			start := time.Now()
			err := c1.Exec(ctx, "UPDATE b SET v = 1")
			wantClass(t, err, target.ClassTimeout, "SQLITE_BUSY")
			if d := time.Since(start); d < 200*time.Millisecond || d > 5*time.Second {
				t.Errorf("autocommit write gave up after %v with busy_timeout=200", d)
			}

			// c1 read in a deferred transaction, then writes: SQLite does not wait.
			if jm.mode == "DELETE" {
				mustExec(t, c2, "ROLLBACK")
			}
			if err := c1.Begin(ctx); err != nil {
				t.Fatal(err)
			}
			query(t, c1, "SELECT v FROM b")
			if jm.mode == "DELETE" {
				mustExec(t, c2, "BEGIN IMMEDIATE")
				mustExec(t, c2, "UPDATE b SET v = 2")
			}
			start = time.Now()
			err = c1.Exec(ctx, "UPDATE b SET v = 1")
			e := wantClass(t, err, map[string]target.Class{"serialization": target.ClassSerialization, "deadlock": target.ClassDeadlock}[jm.class], "SQLITE_BUSY")
			if d := time.Since(start); d > 150*time.Millisecond {
				t.Errorf("upgrade refused after %v, expected at once", d)
			}
			if !e.Class.Retryable() {
				t.Error("not retryable")
			}
			for _, c := range []*conn{c1, c2} {
				if err := c.Rollback(ctx); err != nil || !c.Alive() {
					t.Errorf("rollback: %v, alive %v", err, c.Alive())
				}
			}
		})
	}
}

// TestConcurrentWriters runs pgbench's TPC-B transaction from four connections on one
// file, as `fathom run -c 4 --workload tpcb` does, and checks that no transaction fails
// and the balances agree.
func TestConcurrentWriters(t *testing.T) {
	const clients, txns = 4, 150
	ctx := context.Background()
	tg, setup := testConn(t, target.Config{}, "busy_timeout=10000")
	for _, s := range []string{
		"CREATE TABLE acc (aid INTEGER PRIMARY KEY, bid INTEGER, abalance INTEGER)",
		"CREATE TABLE tel (tid INTEGER PRIMARY KEY, bid INTEGER, tbalance INTEGER)",
		"CREATE TABLE br (bid INTEGER PRIMARY KEY, bbalance INTEGER)",
		"CREATE TABLE hist (tid INTEGER, bid INTEGER, aid INTEGER, delta INTEGER, mtime TIMESTAMP)",
		"INSERT INTO br VALUES (1, 0)",
		"INSERT INTO tel WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10) SELECT i, 1, 0 FROM n",
		"INSERT INTO acc WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000) SELECT i, 1, 0 FROM n",
	} {
		mustExec(t, setup, s)
	}
	var wg sync.WaitGroup
	errs := make([]error, clients)
	for w := range clients {
		c := connect(t, tg)
		wg.Go(func() {
			var sts []target.Stmt
			for _, q := range []string{
				"UPDATE acc SET abalance = abalance + ? WHERE aid = ?",
				"SELECT abalance FROM acc WHERE aid = ?",
				"UPDATE tel SET tbalance = tbalance + ? WHERE tid = ?",
				"UPDATE br SET bbalance = bbalance + ? WHERE bid = ?",
				"INSERT INTO hist (tid, bid, aid, delta, mtime) VALUES (?, ?, ?, ?, ?)",
			} {
				st, err := c.Prepare(ctx, q)
				if err != nil {
					errs[w] = err
					return
				}
				sts = append(sts, st)
			}
			var res target.Result
			for i := range txns {
				aid, tid, delta := int64((w*txns+i)*7%1000+1), int64(i%10+1), int64(i%11-5)
				err := c.Begin(ctx)
				for j, args := range [][]target.Value{
					{target.Int64(delta), target.Int64(aid)},
					{target.Int64(aid)},
					{target.Int64(delta), target.Int64(tid)},
					{target.Int64(delta), target.Int64(1)},
					{target.Int64(tid), target.Int64(1), target.Int64(aid), target.Int64(delta), target.Time(time.Now())},
				} {
					if err == nil {
						err = sts[j].Run(ctx, args, &res)
					}
				}
				if err == nil {
					err = c.Commit(ctx)
				}
				if err != nil {
					errs[w] = err
					_ = c.Rollback(ctx)
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	b := query(t, setup, `SELECT (SELECT sum(abalance) FROM acc), (SELECT sum(tbalance) FROM tel),
		(SELECT sum(bbalance) FROM br), (SELECT sum(delta) FROM hist), (SELECT count(*) FROM hist)`)[0]
	if b[0] != b[1] || b[1] != b[2] || b[2] != b[3] || b[4] != strconv.Itoa(clients*txns) {
		t.Errorf("balances %v", b)
	}
}

var nasty = []string{
	"", "plain", "it's", `"double"`, `back\slash`, `\'`, `\`, "trailing\\", "nul\x00byte", "\x00",
	"new\nline", "cr\rlf\r\n", "tab\t", "unicode: ü 日本語 🎉", "%_ wildcards", "; DROP TABLE x; --",
	"?", "\x1a ctrl-z", strings.Repeat("long ", 2000),
}

func TestLoad(t *testing.T) {
	ctx := context.Background()
	_, c := testConn(t, target.Config{}, "")
	mustExec(t, c, "CREATE TABLE l (id INTEGER PRIMARY KEY, t TEXT, f REAL, ts TIMESTAMP)")
	i := 0
	buf := make([]byte, 0, 64)
	ts := time.Date(2001, 2, 3, 4, 5, 6, 7000, time.UTC)
	n, err := c.Load(ctx, "l", []string{"id", "t", "f", "ts"}, func(row []target.Value) bool {
		if i > len(nasty) {
			return false
		}
		i++
		row[0] = target.Int64(int64(i))
		if i > len(nasty) {
			row[1], row[2], row[3] = target.Null(), target.Null(), target.Null()
			return true
		}
		buf = append(buf[:0], nasty[i-1]...) // the loader must not keep reused buffers
		row[1], row[2], row[3] = target.Text(buf), target.Float(float64(i)/4), target.Time(ts)
		return true
	})
	if err != nil || n != int64(len(nasty)+1) {
		t.Fatalf("loaded %d, %v", n, err)
	}
	rows := query(t, c, "SELECT id, t, f, ts, t IS NULL, typeof(t), length(CAST(t AS BLOB)) FROM l ORDER BY id")
	if len(rows) != len(nasty)+1 {
		t.Fatalf("%d rows read back", len(rows))
	}
	for i, s := range nasty {
		r := rows[i]
		if r[1] != s || r[2] != strconv.FormatFloat(float64(i+1)/4, 'g', -1, 64) || r[3] != "2001-02-03 04:05:06.000007" ||
			r[4] != "0" || r[5] != "text" || r[6] != strconv.Itoa(len(s)) {
			t.Errorf("row %d = %q, want %q", i+1, r, s)
		}
	}
	if last := rows[len(nasty)]; last[4] != "1" {
		t.Errorf("NULL row read back as %q", last)
	}
	if c.inTransaction() {
		t.Error("Load left a transaction open")
	}
}

func TestLoadBatches(t *testing.T) {
	ctx := context.Background()
	_, c := testConn(t, target.Config{}, "")
	mustExec(t, c, "CREATE TABLE lb (id INTEGER PRIMARY KEY, k INTEGER, c VARCHAR(200))")
	const n = 2*loadBatch + 345
	gen := func(n int, from int) func(row []target.Value) bool {
		i := from
		return func(row []target.Value) bool {
			if i == from+n {
				return false
			}
			i++
			row[0], row[1], row[2] = target.Int64(int64(i)), target.Int64(int64(i%7)), target.Text([]byte(strconv.Itoa(i)))
			return true
		}
	}
	got, err := c.Load(ctx, "lb", []string{"id", "k", "c"}, gen(n, 0))
	if err != nil || got != n {
		t.Fatalf("loaded %d, %v", got, err)
	}
	if r := query(t, c, "SELECT COUNT(*), SUM(id), COUNT(DISTINCT c) FROM lb"); r[0][0] != strconv.Itoa(n) || r[0][1] != strconv.Itoa(n*(n+1)/2) || r[0][2] != strconv.Itoa(n) {
		t.Errorf("count, sum, distinct = %v", r[0])
	}

	// A failing batch is rolled back; the batches before it stay, and are counted.
	got, err = c.Load(ctx, "lb", []string{"id", "k", "c"}, gen(loadBatch+10, -loadBatch))
	wantClass(t, err, target.ClassConstraint, "SQLITE_CONSTRAINT_PRIMARYKEY")
	if got != loadBatch {
		t.Errorf("loaded %d before the duplicate, want %d", got, loadBatch)
	}
	if r := query(t, c, "SELECT COUNT(*) FROM lb"); r[0][0] != strconv.Itoa(n+loadBatch) {
		t.Errorf("count after failed load = %v", r[0][0])
	}
	if c.inTransaction() {
		t.Error("failed Load left a transaction open")
	}

	// Inside the caller's transaction Load neither commits nor rolls back.
	if err := c.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	got, err = c.Load(ctx, "lb", []string{"id", "k", "c"}, gen(100, 10*n))
	if err != nil || got != 100 || !c.inTransaction() {
		t.Fatalf("loaded %d in a transaction: %v", got, err)
	}
	if err := c.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if r := query(t, c, "SELECT COUNT(*) FROM lb"); r[0][0] != strconv.Itoa(n+loadBatch) {
		t.Errorf("rollback kept loaded rows: %v", r[0][0])
	}
	_, err = c.Load(ctx, "lb", nil, gen(1, 0))
	wantClass(t, err, target.ClassOther, "")
	_, err = c.Load(ctx, "nosuch", []string{"id"}, gen(1, 0))
	wantClass(t, err, target.ClassUndefined, "SQLITE_ERROR")
}

func TestErrors(t *testing.T) {
	for _, m := range modes {
		t.Run(m.Name, func(t *testing.T) {
			ctx := context.Background()
			_, c := testConn(t, m.Cfg, "")
			mustExec(t, c, "CREATE TABLE e (id INTEGER PRIMARY KEY, v INTEGER NOT NULL UNIQUE, w INTEGER CHECK (w > 0))")
			mustExec(t, c, "INSERT INTO e VALUES (1, 1, 1)")
			ins := prepare(t, c, "INSERT INTO e VALUES (?, ?, ?)")
			var res target.Result
			for _, tc := range []struct {
				args []target.Value
				code string
			}{
				{[]target.Value{target.Int64(1), target.Int64(2), target.Int64(1)}, "SQLITE_CONSTRAINT_PRIMARYKEY"},
				{[]target.Value{target.Int64(2), target.Int64(1), target.Int64(1)}, "SQLITE_CONSTRAINT_UNIQUE"},
				{[]target.Value{target.Int64(2), target.Null(), target.Int64(1)}, "SQLITE_CONSTRAINT_NOTNULL"},
				{[]target.Value{target.Int64(2), target.Int64(2), target.Int64(0)}, "SQLITE_CONSTRAINT_CHECK"},
			} {
				err := ins.Run(ctx, tc.args, &res)
				e := wantClass(t, err, target.ClassConstraint, tc.code)
				if strings.Contains(e.Msg, "(") && strings.HasSuffix(e.Msg, ")") {
					t.Errorf("message keeps the driver's code suffix: %q", e.Msg)
				}
			}

			// The probe workloads' Setup uses to find missing tables.
			_, err := c.Query(ctx, "SELECT 1 FROM pgbench_nosuch WHERE 1 = 0")
			e := wantClass(t, err, target.ClassUndefined, "SQLITE_ERROR")
			if !strings.Contains(e.Error(), "pgbench_nosuch") {
				t.Errorf("message %q", e.Error())
			}
			st, err := c.Prepare(ctx, "UPDATE nosuch SET v = ? WHERE id = ?")
			if err == nil {
				err = st.Run(ctx, []target.Value{target.Int64(1), target.Int64(1)}, &res) // unprepared: SQLite sees it here
			}
			wantClass(t, err, target.ClassUndefined, "SQLITE_ERROR")
			err = c.Exec(ctx, "INSERT INTO main.nosuch SELECT * FROM e")
			wantClass(t, err, target.ClassUndefined, "SQLITE_ERROR")
			// Same code, but every named table exists: not "undefined".
			_, err = c.Query(ctx, "SELECT nosuchcolumn FROM e")
			wantClass(t, err, target.ClassOther, "SQLITE_ERROR")
			// A statement that names a missing table is "undefined" whatever else is wrong.
			err = c.Exec(ctx, "SELEC 1 FROM nosuch")
			wantClass(t, err, target.ClassUndefined, "SQLITE_ERROR")
			err = c.Exec(ctx, "SELEC 1")
			wantClass(t, err, target.ClassOther, "SQLITE_ERROR")
			err = c.Exec(ctx, "WITH nosuch AS (SELECT 1) SELECT nocol FROM nosuch")
			wantClass(t, err, target.ClassOther, "SQLITE_ERROR")
			_, err = c.Query(ctx, "SELECT abs('a', 'b')")
			wantClass(t, err, target.ClassOther, "SQLITE_ERROR")
			if !c.Alive() {
				t.Error("not alive after statement errors")
			}
			if rows := query(t, c, "SELECT count(*) FROM e"); rows[0][0] != "1" {
				t.Errorf("rows %v", rows)
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	tg, err := Open("sqlite:"+filepath.Join(dir, "no", "such", "dir.db"), target.Config{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = tg.Connect(context.Background())
	e := wantClass(t, err, target.ClassConnection, "SQLITE_CANTOPEN")
	if !strings.Contains(e.Msg, "does not exist") || !strings.Contains(e.Msg, "opening ") {
		t.Errorf("message %q", e.Msg)
	}

	notDB := filepath.Join(dir, "text.db")
	if err := os.WriteFile(notDB, bytes.Repeat([]byte("not a database file\n"), 100), 0o644); err != nil {
		t.Fatal(err)
	}
	tg, _ = Open("sqlite:"+notDB, target.Config{})
	_, err = tg.Connect(context.Background())
	wantClass(t, err, target.ClassOther, "SQLITE_NOTADB")

	tg, _ = Open("sqlite:"+dir, target.Config{})
	_, err = tg.Connect(context.Background())
	if err == nil {
		t.Fatal("opened a directory")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = testTarget(t, target.Config{}, "").Connect(ctx)
	wantClass(t, err, target.ClassCanceled, "")
}

func TestCancel(t *testing.T) {
	_, c := testConn(t, target.Config{}, "")
	// A context that ends after its calls must not hurt the connection.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	if err := c.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	cancel()
	time.Sleep(20 * time.Millisecond)
	mustExec(t, c, "SELECT 2")
	wantClass(t, c.Exec(ctx, "SELECT 3"), target.ClassCanceled, "")
	wantClass(t, c.Begin(ctx), target.ClassCanceled, "")

	// A long statement is interrupted promptly; the connection stays usable.
	const slow = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000000000) SELECT count(*) FROM n"
	for _, m := range []string{"query", "stmt", "exec"} {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		var err error
		switch m {
		case "query":
			_, err = c.Query(ctx, slow)
		case "stmt":
			st := prepare(t, c, slow)
			var res target.Result
			err = st.Run(ctx, nil, &res)
		case "exec":
			err = c.Exec(ctx, slow)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: cancel took %v", m, d)
		}
		wantClass(t, err, target.ClassCanceled, "")
		if !c.Alive() {
			t.Fatalf("%s: not alive after a canceled statement", m)
		}
		if rows := query(t, c, "SELECT 42"); rows[0][0] != "42" {
			t.Fatalf("%s: after cancel: %v", m, rows)
		}
	}
	dctx, dcancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer dcancel()
	_, err := c.Query(dctx, slow)
	wantClass(t, err, target.ClassTimeout, "")

	// A canceled write in a transaction: SQLite rolls it back; Rollback is still safe.
	mustExec(t, c, "CREATE TABLE cx (id INTEGER PRIMARY KEY)")
	ctx, cancel = context.WithCancel(context.Background())
	if err := c.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	mustExec(t, c, "INSERT INTO cx VALUES (1)")
	time.AfterFunc(100*time.Millisecond, cancel)
	err = c.Exec(ctx, "INSERT INTO cx "+strings.Replace(slow, "count(*)", "i + 1", 1))
	wantClass(t, err, target.ClassCanceled, "")
	if err := c.Rollback(context.Background()); err != nil {
		t.Fatalf("rollback after cancel: %v", err)
	}
	if rows := query(t, c, "SELECT count(*) FROM cx"); rows[0][0] != "0" {
		t.Errorf("rows after canceled transaction: %v", rows)
	}
}

// TestCancelBusyWait checks that a statement waiting for a lock under a long busy
// timeout returns soon after its context ends.
func TestCancelBusyWait(t *testing.T) {
	tg, c1 := testConn(t, target.Config{}, "busy_timeout=30000")
	c2 := connect(t, tg)
	mustExec(t, c1, "CREATE TABLE w (id INTEGER PRIMARY KEY)")
	mustExec(t, c1, "BEGIN IMMEDIATE")
	mustExec(t, c1, "INSERT INTO w VALUES (1)")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(150*time.Millisecond, cancel)
	start := time.Now()
	err := c2.Exec(ctx, "INSERT INTO w VALUES (2)")
	if d := time.Since(start); d < 100*time.Millisecond || d > 2*time.Second {
		t.Errorf("busy wait ended after %v", d)
	}
	wantClass(t, err, target.ClassCanceled, "")
	mustExec(t, c1, "COMMIT")
	mustExec(t, c2, "INSERT INTO w VALUES (2)")
	if rows := query(t, c2, "SELECT count(*) FROM w"); rows[0][0] != "2" {
		t.Errorf("rows %v", rows)
	}
}

func TestInfo(t *testing.T) {
	tg := testTarget(t, target.Config{}, "cache_size=-4000&mmap_size=1048576")
	info, err := tg.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(info.Version, "3.") {
		t.Errorf("version %q", info.Version)
	}
	want := map[string]string{
		"journal_mode": "wal", "synchronous": "NORMAL", "busy_timeout": "5000", "cache_size": "-4000",
		"mmap_size": "1048576", "page_size": "4096", "path": tg.opts.path, "begin": "auto",
	}
	for k, v := range want {
		if info.Settings[k] != v {
			t.Errorf("setting %s = %q, want %q", k, info.Settings[k], v)
		}
	}
}

// TestHandle guards the fast path: the driver must still expose its sqlite3 handle
// where handle.go looks for it.
func TestHandle(t *testing.T) {
	_, c := testConn(t, target.Config{}, "")
	if c.db == 0 {
		t.Fatal("no handle")
	}
	if _, err := dbHandle(nil); err == nil {
		t.Error("handle of nil")
	}
}

func TestLoadCancel(t *testing.T) {
	_, c := testConn(t, target.Config{}, "")
	mustExec(t, c, "CREATE TABLE lc (id INTEGER PRIMARY KEY)")
	ctx, cancel := context.WithCancel(context.Background())
	i := 0
	n, err := c.Load(ctx, "lc", []string{"id"}, func(row []target.Value) bool {
		i++
		if i == loadBatch+loadRows/2 {
			cancel()
		}
		row[0] = target.Int64(int64(i))
		return i <= 3*loadBatch
	})
	wantClass(t, err, target.ClassCanceled, "")
	if n != loadBatch {
		t.Errorf("loaded %d, want the first batch (%d)", n, loadBatch)
	}
	if rows := query(t, c, "SELECT count(*) FROM lc"); rows[0][0] != strconv.Itoa(loadBatch) || c.inTransaction() {
		t.Errorf("count %v, in transaction %v", rows, c.inTransaction())
	}
}

func TestCloseOrder(t *testing.T) {
	ctx := context.Background()
	_, c := testConn(t, target.Config{}, "")
	st := prepare(t, c, "SELECT 1")
	var res target.Result
	if err := st.Run(ctx, nil, &res); err != nil || res.Rows != 1 {
		t.Fatalf("run: %v %+v", err, res)
	}
	if err := c.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	// The statement was finalized with its connection.
	if err := st.Run(ctx, nil, &res); err == nil {
		t.Error("statement ran after its connection closed")
	}
	if err := st.Close(); err != nil {
		t.Errorf("closing a statement after its connection: %v", err)
	}
	if err := c.Rollback(ctx); err != nil {
		t.Errorf("rollback after close: %v", err)
	}
	wantClass(t, c.Begin(ctx), target.ClassConnection, "")
	_, err := c.Prepare(ctx, "SELECT 1")
	wantClass(t, err, target.ClassConnection, "")
}

// Clients connecting at once to a new file all connect (seen in the runner's tests: one
// of three clients failed with "opening e.db: database is locked (SQLITE_BUSY)": two
// connections switching a new file to WAL at the same moment each wait for the other's
// lock, and SQLite answers one of them busy at once, without the busy timeout).
func TestConcurrentConnectNewFile(t *testing.T) {
	for round := range 20 {
		tg := testTarget(t, target.Config{}, "")
		var wg sync.WaitGroup
		errs := make([]error, 16)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c, err := tg.Connect(context.Background())
				if err != nil {
					errs[i] = err
					return
				}
				errs[i] = c.Close()
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d, client %d: %v", round, i, err)
			}
		}
	}
}
