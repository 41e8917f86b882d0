package mysql

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/target/targettest"
)

// testDSN is the test server's DSN pointing at this package's own database.
func testDSN(t testing.TB) string {
	t.Helper()
	return dbtest.MySQLDatabase(t, "target_mysql")
}

func testTarget(t testing.TB, cfg target.Config) *Target {
	t.Helper()
	tg, err := Open(testDSN(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// testConn opens a connection closed at the end of the test.
func testConn(t testing.TB, cfg target.Config) (*Target, *conn) {
	t.Helper()
	tg := testTarget(t, cfg)
	return tg, connect(t, tg)
}

func connect(t testing.TB, tg *Target) *conn {
	t.Helper()
	return targettest.Connect(t, tg).(*conn)
}

func uniqueName(what string) string { return targettest.UniqueName(what) }

// table creates an InnoDB table dropped at the end of the test.
func table(t testing.TB, c *conn, what, columns string) string {
	t.Helper()
	return targettest.Table(t, c, func() (target.Target, error) { return Open(testDSN(t), target.Config{}) }, what, columns, "ENGINE=InnoDB")
}

var (
	mustExec  = targettest.MustExec
	query     = targettest.Query
	wantClass = targettest.WantClass
	modes     = targettest.Modes
)

func TestSocketPaths(t *testing.T) {
	targettest.SocketPaths(t, func(cfg target.Config) (target.Target, error) { return Open(testDSN(t), cfg) })
}

func TestConnectTCPAndSocket(t *testing.T) {
	tg, c := testConn(t, target.Config{})
	if tg.Kind() != "mysql" || tg.Dialect().Name != "mysql" {
		t.Errorf("kind %q dialect %q", tg.Kind(), tg.Dialect().Name)
	}
	if c.ID() <= 0 {
		t.Errorf("ID() = %d", c.ID())
	}
	if !c.Alive() {
		t.Error("new connection not alive")
	}
	host := query(t, c, "SELECT HOST FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()")
	if tg.mc.Net == "tcp" && (len(host) != 1 || host[0][0] == "localhost") {
		t.Errorf("TCP connection reports host %v", host)
	}
	attrs, err := c.Query(context.Background(), "SELECT ATTR_VALUE FROM performance_schema.session_connect_attrs WHERE PROCESSLIST_ID = CONNECTION_ID() AND ATTR_NAME = 'program_name'")
	if err == nil && len(attrs) == 1 && attrs[0][0] != "fathom" {
		t.Errorf("program_name = %q", attrs[0][0])
	}

	sock := query(t, c, "SELECT @@socket")[0][0]
	if _, err := os.Stat(sock); err != nil {
		t.Skipf("server socket %s is not on this machine", sock)
	}
	u, _ := url.Parse(testDSN(t))
	q := u.Query()
	q.Set("socket", sock)
	u.RawQuery = q.Encode()
	u.Host = "ignored.invalid"
	stg, err := Open(u.String(), target.Config{})
	if err != nil {
		t.Fatal(err)
	}
	sc := connect(t, stg)
	host = query(t, sc, "SELECT HOST FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()")
	if len(host) != 1 || host[0][0] != "localhost" {
		t.Errorf("socket connection reports host %v, want localhost", host)
	}
	if sc.ID() == c.ID() || sc.ID() <= 0 {
		t.Errorf("socket conn id %d, tcp conn id %d", sc.ID(), c.ID())
	}
	// Each target records the transport its connections took.
	if want := map[string]string{"tcp": "tcp", "unix": "unix"}[tg.mc.Net]; tg.Transport() != want {
		t.Errorf("%s target's transport %q, want %q", tg.mc.Net, tg.Transport(), want)
	}
	if stg.Transport() != "unix" {
		t.Errorf("socket target's transport %q, want unix", stg.Transport())
	}
}

// TestTransportTLS: tls=false records tcp; tls=preferred records TLS exactly when the
// server offers it (have_ssl YES), as the session's Ssl_cipher shows.
func TestTransportTLS(t *testing.T) {
	_, c := testConn(t, target.Config{})
	offered := query(t, c, "SELECT @@have_ssl")[0][0] == "YES"
	for _, mode := range []string{"false", "preferred"} {
		u, _ := url.Parse(testDSN(t))
		if u.Query().Get("socket") != "" {
			t.Skip("the test DSN names a socket: TLS is a TCP matter here")
		}
		q := u.Query()
		q.Set("tls", mode)
		u.RawQuery = q.Encode()
		tg, err := Open(u.String(), target.Config{})
		if err != nil {
			t.Fatal(err)
		}
		sc := connect(t, tg)
		cipher := query(t, sc, "SHOW SESSION STATUS LIKE 'Ssl_cipher'")[0][1]
		want := "tcp"
		if mode == "preferred" && offered {
			want = "tcp+tls"
		}
		if tg.Transport() != want || (cipher != "") != (want == "tcp+tls") {
			t.Errorf("tls=%s (server offers TLS: %v): transport %q, want %q; session cipher %q", mode, offered, tg.Transport(), want, cipher)
		}
	}
}

func TestValues(t *testing.T) {
	for _, m := range modes {
		t.Run(m.Name, func(t *testing.T) {
			ctx := context.Background()
			_, c := testConn(t, m.Cfg)
			tb := table(t, c, "values", "id INTEGER PRIMARY KEY, i BIGINT, s VARCHAR(100), f DOUBLE, ts DATETIME(6), n TEXT")
			ins, err := c.Prepare(ctx, "INSERT INTO "+tb+" (id, i, s, f, ts, n) VALUES (?, ?, ?, ?, ?, ?)")
			if err != nil {
				t.Fatal(err)
			}
			defer ins.Close()
			ts := time.Date(2024, 2, 29, 13, 14, 15, 123456000, time.UTC)
			var res target.Result
			args := []target.Value{target.Int64(1), target.Int64(-9007199254740993), target.Text([]byte("it's \\ \"q\" ü")), target.Float(2.5e-3), target.Time(ts), target.Null()}
			if err := ins.Run(ctx, args, &res); err != nil {
				t.Fatal(err)
			}
			if res.RowsAffected != 1 || res.Rows != 0 {
				t.Errorf("insert: %+v", res)
			}
			args = []target.Value{target.Int64(2), target.Null(), target.Text(nil), target.Null(), target.Null(), target.Text([]byte("x"))}
			if err := ins.Run(ctx, args, &res); err != nil {
				t.Fatal(err)
			}
			sel, err := c.Prepare(ctx, "SELECT i, s, f, ts, n FROM "+tb+" WHERE id = ?")
			if err != nil {
				t.Fatal(err)
			}
			defer sel.Close()
			res = target.Result{Keep: true}
			if err := sel.Run(ctx, []target.Value{target.Int64(1)}, &res); err != nil {
				t.Fatal(err)
			}
			want := []string{"-9007199254740993", "it's \\ \"q\" ü", "0.0025", "2024-02-29 13:14:15.123456", ""}
			if res.Rows != 1 || len(res.First) != 5 {
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
			if res.First[0].Kind != target.KindNull || res.First[1].Kind != target.KindText || len(res.First[1].Text) != 0 || string(res.First[4].Text) != "x" {
				t.Errorf("row 2: %+v", res.First)
			}
			// Setup queries take arguments too.
			rows := query(t, c, "SELECT s FROM "+tb+" WHERE id = ? AND s = ?", target.Int64(1), target.Text([]byte("it's \\ \"q\" ü")))
			if len(rows) != 1 {
				t.Errorf("query with args: %v", rows)
			}
			if err := sel.Run(ctx, nil, &res); err == nil {
				t.Error("running with too few arguments succeeded")
			}
		})
	}
}

func TestRowsKeepAffected(t *testing.T) {
	targettest.RowsKeepAffected(t, func(t *testing.T, cfg target.Config) (target.Conn, string) {
		_, c := testConn(t, cfg)
		return c, table(t, c, "rows", "id INTEGER PRIMARY KEY, v INTEGER")
	})
}

func TestTransactions(t *testing.T) {
	_, c := testConn(t, target.Config{})
	targettest.Transactions(t, c, table(t, c, "txn", "id INTEGER PRIMARY KEY"))
}

var nasty = []string{
	"", "plain", "it's", `"double"`, `back\slash`, `\'`, `\`, "trailing\\",
	"nul\x00byte", "\x00", "new\nline", "cr\rlf\r\n", "tab\t", "unicode: ü 日本語 🎉",
	"%_ wildcards", "; DROP TABLE x; --", "\x1a ctrl-z", strings.Repeat("long ", 2000),
}

func TestLoad(t *testing.T) {
	for _, mode := range []string{"", "NO_BACKSLASH_ESCAPES"} {
		t.Run("sql_mode="+mode, func(t *testing.T) {
			u, _ := url.Parse(testDSN(t))
			q := u.Query()
			q.Set("sql_mode", "'"+mode+"'")
			u.RawQuery = q.Encode()
			tg, err := Open(u.String(), target.Config{})
			if err != nil {
				t.Fatal(err)
			}
			c := connect(t, tg)
			if got := query(t, c, "SELECT @@sql_mode")[0][0]; got != mode {
				t.Fatalf("sql_mode = %q", got)
			}
			tb := table(t, c, "load", "id INTEGER PRIMARY KEY, t LONGBLOB, f DOUBLE, ts DATETIME(6)")
			i := 0
			buf := make([]byte, 0, 64)
			ts := time.Date(2001, 2, 3, 4, 5, 6, 7000, time.UTC)
			n, err := c.Load(context.Background(), tb, []string{"id", "t", "f", "ts"}, func(row []target.Value) bool {
				if i > len(nasty) {
					return false
				}
				i++
				row[0] = target.Int64(int64(i))
				if i > len(nasty) {
					row[1], row[2], row[3] = target.Null(), target.Null(), target.Null()
					return true
				}
				buf = append(buf[:0], nasty[i-1]...) // the loader must copy reused buffers
				row[1], row[2], row[3] = target.Text(buf), target.Float(float64(i)/4), target.Time(ts)
				return true
			})
			if err != nil || n != int64(len(nasty)+1) {
				t.Fatalf("loaded %d, %v", n, err)
			}
			rows := query(t, c, "SELECT id, t, f, ts, t IS NULL FROM "+tb+" ORDER BY id")
			if len(rows) != len(nasty)+1 {
				t.Fatalf("%d rows read back", len(rows))
			}
			for i, s := range nasty {
				r := rows[i]
				if r[1] != s || r[2] != strconv.FormatFloat(float64(i+1)/4, 'g', -1, 64) || r[3] != "2001-02-03 04:05:06.000007" || r[4] != "0" {
					t.Errorf("row %d = %q, want %q", i+1, r, s)
				}
			}
			if last := rows[len(nasty)]; last[4] != "1" {
				t.Errorf("NULL row read back as %q", last)
			}
		})
	}
}

func TestLoadBatches(t *testing.T) {
	ctx := context.Background()
	_, c := testConn(t, target.Config{})
	tb := table(t, c, "batches", "id INTEGER PRIMARY KEY, k INTEGER, c VARCHAR(200)")
	const n = 2*loadRows + 345
	i := 0
	got, err := c.Load(ctx, tb, []string{"id", "k", "c"}, func(row []target.Value) bool {
		if i == n {
			return false
		}
		i++
		row[0], row[1], row[2] = target.Int64(int64(i)), target.Int64(int64(i%7)), target.Text([]byte(strconv.Itoa(i)))
		return true
	})
	if err != nil || got != n {
		t.Fatalf("loaded %d, %v", got, err)
	}
	if r := query(t, c, "SELECT COUNT(*), SUM(id), COUNT(DISTINCT c) FROM "+tb); r[0][0] != strconv.Itoa(n) || r[0][1] != strconv.Itoa(n*(n+1)/2) || r[0][2] != strconv.Itoa(n) {
		t.Errorf("count, sum, distinct = %v", r[0])
	}

	// Rows large enough that the byte budget, not the row count, cuts the batches.
	tb2 := table(t, c, "bigrows", "id INTEGER PRIMARY KEY, b LONGBLOB")
	big := bytes.Repeat([]byte("0123456789abcdef"), 4096) // 64 KiB
	i = 0
	got, err = c.Load(ctx, tb2, []string{"id", "b"}, func(row []target.Value) bool {
		if i == 40 {
			return false
		}
		i++
		row[0], row[1] = target.Int64(int64(i)), target.Text(big)
		return true
	})
	if err != nil || got != 40 {
		t.Fatalf("loaded %d, %v", got, err)
	}
	if r := query(t, c, "SELECT COUNT(*), MIN(LENGTH(b)), MAX(LENGTH(b)) FROM "+tb2); r[0][0] != "40" || r[0][1] != "65536" || r[0][2] != "65536" {
		t.Errorf("count, lengths = %v", r[0])
	}

	// A failing batch returns the rows loaded before it and a classified error.
	i = 0
	got, err = c.Load(ctx, tb, []string{"id"}, func(row []target.Value) bool {
		if i == 5 {
			return false
		}
		i++
		row[0] = target.Int64(int64(i))
		return true
	})
	wantClass(t, err, target.ClassConstraint, "1062")
	if got != 0 {
		t.Errorf("loaded %d before the duplicate", got)
	}
}

func TestErrors(t *testing.T) {
	for _, m := range modes {
		t.Run(m.Name, func(t *testing.T) {
			ctx := context.Background()
			_, c := testConn(t, m.Cfg)
			tb := table(t, c, "errors", "id INTEGER PRIMARY KEY, v INTEGER NOT NULL")
			mustExec(t, c, "INSERT INTO "+tb+" VALUES (1, 1)")
			ins, err := c.Prepare(ctx, "INSERT INTO "+tb+" VALUES (?, ?)")
			if err != nil {
				t.Fatal(err)
			}
			var res target.Result
			err = ins.Run(ctx, []target.Value{target.Int64(1), target.Int64(2)}, &res)
			wantClass(t, err, target.ClassConstraint, "1062")
			err = ins.Run(ctx, []target.Value{target.Int64(2), target.Null()}, &res)
			wantClass(t, err, target.ClassConstraint, "1048")
			if !c.Alive() {
				t.Error("not alive after a constraint error")
			}

			missing := uniqueName("missing")
			st, err := c.Prepare(ctx, "SELECT * FROM "+missing+" WHERE id = ?")
			if err == nil {
				err = st.Run(ctx, []target.Value{target.Int64(1)}, &res) // simple mode: the server sees it here
			}
			wantClass(t, err, target.ClassUndefined, "1146")
			_, err = c.Query(ctx, "SELECT nosuchcolumn FROM "+tb)
			wantClass(t, err, target.ClassUndefined, "1054")
			err = c.Exec(ctx, "SELEC 1")
			wantClass(t, err, target.ClassOther, "1064")
			if !c.Alive() {
				t.Error("not alive after statement errors")
			}
		})
	}
}

func TestDeadlock(t *testing.T) {
	ctx := context.Background()
	tg, c1 := testConn(t, target.Config{})
	c2 := connect(t, tg)
	tb := table(t, c1, "deadlock", "id INTEGER PRIMARY KEY, v INTEGER")
	mustExec(t, c1, "INSERT INTO "+tb+" VALUES (1, 0), (2, 0)")
	for _, c := range []*conn{c1, c2} {
		mustExec(t, c, "SET SESSION innodb_lock_wait_timeout = 10")
		if err := c.Begin(ctx); err != nil {
			t.Fatal(err)
		}
	}
	mustExec(t, c1, "UPDATE "+tb+" SET v = 1 WHERE id = 1")
	mustExec(t, c2, "UPDATE "+tb+" SET v = 2 WHERE id = 2")
	var wg sync.WaitGroup
	var err1, err2 error
	wg.Go(func() { err1 = c1.Exec(ctx, "UPDATE "+tb+" SET v = 1 WHERE id = 2") })
	time.Sleep(200 * time.Millisecond) // let c1 wait for c2's lock
	err2 = c2.Exec(ctx, "UPDATE "+tb+" SET v = 2 WHERE id = 1")
	if err2 == nil {
		_ = c2.Rollback(ctx)
	}
	wg.Wait()
	err := err1
	if err == nil {
		err = err2
	}
	e := wantClass(t, err, target.ClassDeadlock, "1213")
	if !e.Class.Retryable() {
		t.Error("deadlock not retryable")
	}
	for _, c := range []*conn{c1, c2} {
		if err := c.Rollback(ctx); err != nil || !c.Alive() {
			t.Errorf("rollback after deadlock: %v, alive %v", err, c.Alive())
		}
	}
}

func TestKilled(t *testing.T) {
	ctx := context.Background()
	tg, victim := testConn(t, target.Config{})
	killer := connect(t, tg)
	st, err := victim.Prepare(ctx, "SELECT 1")
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, killer, "KILL "+strconv.FormatInt(victim.ID(), 10))
	var res target.Result
	err = st.Run(ctx, nil, &res)
	wantClass(t, err, target.ClassConnection, "")
	if victim.Alive() {
		t.Error("killed connection still alive")
	}
	_ = st.Close()
	if err := victim.Close(); err != nil {
		t.Errorf("closing a killed connection: %v", err)
	}
}

func TestCancel(t *testing.T) {
	_, c := testConn(t, target.Config{})
	// A context that ends after its calls must not hurt the connection.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	mustExec(t, c, "DO 1")
	if err := c.Exec(ctx, "DO 1"); err != nil {
		t.Fatal(err)
	}
	cancel()
	time.Sleep(20 * time.Millisecond)
	if !c.Alive() {
		t.Fatal("connection died when an idle context was canceled")
	}
	mustExec(t, c, "DO 2")
	err := c.Exec(ctx, "DO 3")
	wantClass(t, err, target.ClassCanceled, "")

	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	st, err := c.Prepare(ctx, "SELECT SLEEP(?)")
	if err != nil {
		t.Fatal(err)
	}
	var res target.Result
	err = st.Run(ctx, []target.Value{target.Int64(10)}, &res)
	if time.Since(start) > 5*time.Second {
		t.Errorf("cancel took %v", time.Since(start))
	}
	wantClass(t, err, target.ClassCanceled, "")
	if c.Alive() {
		t.Error("alive after a canceled statement")
	}

	c = connect(t, testTarget(t, target.Config{}))
	dctx, dcancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer dcancel()
	_, err = c.Query(dctx, "SELECT SLEEP(10)")
	wantClass(t, err, target.ClassTimeout, "")
}

func TestAuth(t *testing.T) {
	ctx := context.Background()
	_, admin := testConn(t, target.Config{})
	user := fmt.Sprintf("fathom_u%d", rand.IntN(1e9))
	const right, wrong = "Right-pw-4711", "Wrong-pw-0815"
	mustExec(t, admin, "CREATE USER '"+user+"'@'%' IDENTIFIED BY '"+right+"'")
	t.Cleanup(func() { _ = admin.Exec(context.Background(), "DROP USER '"+user+"'@'%'") })
	mustExec(t, admin, "CREATE USER '"+user+"'@'localhost' IDENTIFIED BY '"+right+"'")
	t.Cleanup(func() { _ = admin.Exec(context.Background(), "DROP USER '"+user+"'@'localhost'") })

	u, _ := url.Parse(testDSN(t))
	u.User = url.UserPassword(user, right)
	u.Path = "/"
	tg, err := Open(u.String(), target.Config{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatalf("right password: %v", err)
	}
	_ = c.Close()

	u.User = url.UserPassword(user, wrong)
	tg, err = Open(u.String(), target.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(tg.Redacted(), wrong) {
		t.Errorf("Redacted() = %q", tg.Redacted())
	}
	_, err = tg.Connect(ctx)
	e := wantClass(t, err, target.ClassAuth, "1045")
	if strings.Contains(err.Error(), wrong) || strings.Contains(fmt.Sprintf("%+v", e), wrong) {
		t.Errorf("auth error shows the password: %v", err)
	}

	// Connecting to a database the user may not use.
	u.User = url.UserPassword(user, right)
	u.Path = "/mysql"
	tg, _ = Open(u.String(), target.Config{})
	_, err = tg.Connect(ctx)
	wantClass(t, err, target.ClassAuth, "1044")
}

func TestRefused(t *testing.T) {
	tg, err := Open("mysql://root:Sekrit-pw-1@127.0.0.1:1/test", target.Config{ConnectTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, err = tg.Connect(context.Background())
	wantClass(t, err, target.ClassConnection, "")
	if strings.Contains(err.Error(), "Sekrit") {
		t.Errorf("error shows the password: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = tg.Connect(ctx)
	wantClass(t, err, target.ClassCanceled, "")

	tg, _ = Open("mysql://root@/test?socket="+url.QueryEscape(t.TempDir()+"/none.sock"), target.Config{})
	_, err = tg.Connect(context.Background())
	wantClass(t, err, target.ClassConnection, "")

	// An address that does not answer (or is unreachable): bounded by ConnectTimeout.
	tg, _ = Open("mysql://root@10.255.255.1:3306/test", target.Config{ConnectTimeout: 200 * time.Millisecond})
	start := time.Now()
	_, err = tg.Connect(context.Background())
	wantClass(t, err, target.ClassConnection, "")
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("connect took %v with a 200ms timeout", d)
	}
}

func TestInfo(t *testing.T) {
	tg := testTarget(t, target.Config{})
	info, err := tg.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.Version == "" {
		t.Error("no version")
	}
	for _, k := range []string{"innodb_buffer_pool_size", "transaction_isolation", "max_connections", "datadir", "version_comment"} {
		if info.Settings[k] == "" {
			t.Errorf("setting %s missing: %v", k, info.Settings)
		}
	}
	if _, ok := info.Settings["tx_isolation"]; ok {
		t.Error("tx_isolation reported beside transaction_isolation")
	}
}

func TestTimeouts(t *testing.T) {
	ctx := context.Background()
	tg, c1 := testConn(t, target.Config{})
	c2 := connect(t, tg)
	tb := table(t, c1, "timeouts", "id INTEGER PRIMARY KEY, v INTEGER")
	mustExec(t, c1, "INSERT INTO "+tb+" VALUES (1, 0)")

	mustExec(t, c1, "BEGIN")
	mustExec(t, c1, "UPDATE "+tb+" SET v = 1 WHERE id = 1")
	mustExec(t, c2, "SET SESSION innodb_lock_wait_timeout = 1")
	err := c2.Exec(ctx, "UPDATE "+tb+" SET v = 2 WHERE id = 1")
	wantClass(t, err, target.ClassTimeout, "1205")
	mustExec(t, c1, "ROLLBACK")

	// Statement time limits: max_statement_time (MariaDB, 1969) or max_execution_time
	// (MySQL, 3024, SELECT only).
	slow := "SELECT COUNT(*) FROM information_schema.columns a, information_schema.columns b, information_schema.columns c"
	if err := c2.Exec(ctx, "SET SESSION max_statement_time = 0.05"); err == nil {
		_, err = c2.Query(ctx, slow)
		wantClass(t, err, target.ClassTimeout, "1969")
	} else if err := c2.Exec(ctx, "SET SESSION max_execution_time = 50"); err == nil {
		_, err = c2.Query(ctx, slow)
		wantClass(t, err, target.ClassTimeout, "3024")
	} else {
		t.Log("no statement time limit variable")
	}
	if !c2.Alive() {
		t.Error("not alive after timeouts")
	}
}

func TestSerialization(t *testing.T) {
	ctx := context.Background()
	tg, c1 := testConn(t, target.Config{})
	if err := c1.Exec(ctx, "SET SESSION innodb_snapshot_isolation = ON"); err != nil {
		t.Skipf("no innodb_snapshot_isolation (MariaDB 10.6.18+): %v", err)
	}
	c2 := connect(t, tg)
	tb := table(t, c1, "snapshot", "id INTEGER PRIMARY KEY, v INTEGER")
	mustExec(t, c1, "INSERT INTO "+tb+" VALUES (1, 0)")
	mustExec(t, c1, "START TRANSACTION WITH CONSISTENT SNAPSHOT")
	query(t, c1, "SELECT v FROM "+tb+" WHERE id = 1")
	mustExec(t, c2, "UPDATE "+tb+" SET v = 2 WHERE id = 1")
	err := c1.Exec(ctx, "UPDATE "+tb+" SET v = v + 1 WHERE id = 1")
	e := wantClass(t, err, target.ClassSerialization, "1020")
	if !e.Class.Retryable() {
		t.Error("not retryable")
	}
	if err := c1.Rollback(ctx); err != nil {
		t.Error(err)
	}
}
