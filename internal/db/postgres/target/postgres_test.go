package postgres

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/target/targettest"
)

func testDSN(t testing.TB) string {
	t.Helper()
	return dbtest.PostgresDatabase(t, "target_postgres")
}

func testTarget(t testing.TB, cfg target.Config) *Target {
	t.Helper()
	if cfg.AppName == "" {
		cfg.AppName = "fathom-test"
	}
	tg, err := Open(testDSN(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

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

// table creates a table dropped at the end of the test.
func table(t testing.TB, c *conn, what, columns string) string {
	t.Helper()
	return targettest.Table(t, c, func() (target.Target, error) { return Open(testDSN(t), target.Config{}) }, what, columns, "")
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

func TestConnect(t *testing.T) {
	tg, c := testConn(t, target.Config{})
	if tg.Kind() != "postgres" || tg.Dialect().Name != "postgres" || c.Dialect().Name != "postgres" {
		t.Errorf("kind %q dialect %q", tg.Kind(), tg.Dialect().Name)
	}
	if c.ID() <= 0 || !c.Alive() {
		t.Errorf("ID() = %d, alive %v", c.ID(), c.Alive())
	}
	if got := query(t, c, "SELECT pg_backend_pid(), current_setting('application_name')"); got[0][0] != strconv.FormatInt(c.ID(), 10) || got[0][1] != "fathom-test" {
		t.Errorf("backend pid, application_name = %v; ID() = %d", got[0], c.ID())
	}
	// The same server over its Unix socket, in key=value form.
	dir := query(t, c, "SELECT current_setting('unix_socket_directories')")[0][0]
	dir, _, _ = strings.Cut(dir, ",")
	u, _ := url.Parse(testDSN(t))
	kv := fmt.Sprintf("host=%s port=%s dbname=%s user=%s", strings.TrimSpace(dir), u.Port(), strings.TrimPrefix(u.Path, "/"), u.User.Username())
	stg, err := Open(kv, target.Config{})
	if err != nil {
		t.Fatal(err)
	}
	sc := connect(t, stg)
	if addr := query(t, sc, "SELECT coalesce(inet_client_addr()::text, 'socket')"); addr[0][0] != "socket" {
		t.Errorf("socket connection reports client address %v", addr)
	}
	// Each target records the transport its connections took, as the server saw it.
	tcp := query(t, c, "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")[0][0] == "t"
	if want := map[bool]string{false: "tcp", true: "tcp+tls"}[tcp]; tg.Transport() != want {
		t.Errorf("TCP target's transport %q, want %q (pg_stat_ssl says ssl %v)", tg.Transport(), want, tcp)
	}
	if stg.Transport() != "unix" {
		t.Errorf("socket target's transport %q, want unix", stg.Transport())
	}
}

// TestTransportTLS: a connection encrypted with TLS is recorded so (sslmode=require),
// one that asked for none is not (sslmode=disable), and the server agrees.
func TestTransportTLS(t *testing.T) {
	_, c := testConn(t, target.Config{})
	if query(t, c, "SHOW ssl")[0][0] != "on" {
		t.Skip("the test server has ssl off: no TLS connection to check")
	}
	for _, mode := range []string{"disable", "require"} {
		u, _ := url.Parse(testDSN(t))
		q := u.Query()
		q.Set("sslmode", mode)
		u.RawQuery = q.Encode()
		tg, err := Open(u.String(), target.Config{})
		if err != nil {
			t.Fatal(err)
		}
		if tg.Transport() != "" {
			t.Errorf("sslmode=%s: transport %q before any connection", mode, tg.Transport())
		}
		sc := connect(t, tg)
		ssl := query(t, sc, "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")[0][0]
		want := map[string]string{"disable": "tcp", "require": "tcp+tls"}[mode]
		if tg.Transport() != want || (ssl == "t") != (mode == "require") {
			t.Errorf("sslmode=%s: transport %q, want %q; the server's pg_stat_ssl.ssl %s", mode, tg.Transport(), want, ssl)
		}
	}
}

func TestValues(t *testing.T) {
	for _, m := range modes {
		t.Run(m.Name, func(t *testing.T) {
			ctx := context.Background()
			_, c := testConn(t, m.Cfg)
			tb := table(t, c, "values", "id integer PRIMARY KEY, i bigint, s varchar(100), f double precision, ts timestamp, n text")
			ins, err := c.Prepare(ctx, "INSERT INTO "+tb+" (id, i, s, f, ts, n) VALUES (?, ?, ?, ?, ?, ?)")
			if err != nil {
				t.Fatal(err)
			}
			defer ins.Close()
			ts := time.Date(2024, 2, 29, 13, 14, 15, 123456000, time.UTC)
			var res target.Result
			args := []target.Value{target.Int64(1), target.Int64(-9007199254740993), target.Text([]byte("it's \\ \"q\" ü ?")), target.Float(2.5e-3), target.Time(ts), target.Null()}
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
			want := []string{"-9007199254740993", "it's \\ \"q\" ü ?", "0.0025", "2024-02-29 13:14:15.123456", ""}
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
			rows := query(t, c, "SELECT s FROM "+tb+" WHERE id = ? AND s = ?", target.Int64(1), target.Text([]byte("it's \\ \"q\" ü ?")))
			if len(rows) != 1 {
				t.Errorf("query with args: %v", rows)
			}
			if err := sel.Run(ctx, nil, &res); err == nil {
				t.Error("running with too few arguments succeeded")
			}
			// RETURNING reads rows from an INSERT.
			ret, err := c.Prepare(ctx, "INSERT INTO "+tb+" (id) VALUES (?) RETURNING id * 10")
			if err != nil {
				t.Fatal(err)
			}
			defer ret.Close()
			if err := ret.Run(ctx, []target.Value{target.Int64(7)}, &res); err != nil || res.Rows != 1 || string(res.First[0].Text) != "70" || res.RowsAffected != 1 {
				t.Errorf("returning: %+v %v", res, err)
			}
		})
	}
}

func TestRowsKeepAffected(t *testing.T) {
	targettest.RowsKeepAffected(t, func(t *testing.T, cfg target.Config) (target.Conn, string) {
		_, c := testConn(t, cfg)
		return c, table(t, c, "rows", "id integer PRIMARY KEY, v integer")
	})
}

func TestTransactions(t *testing.T) {
	ctx := context.Background()
	_, c := testConn(t, target.Config{})
	tb := table(t, c, "txn", "id integer PRIMARY KEY")
	targettest.Transactions(t, c, tb)
	// An error aborts the transaction; Rollback makes the connection usable again.
	if err := c.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	_ = c.Exec(ctx, "INSERT INTO "+tb+" VALUES (2)")
	err := c.Exec(ctx, "SELECT 1")
	wantClass(t, err, target.ClassOther, "25P02")
	if err := c.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	mustExec(t, c, "SELECT 1")
}

var nasty = []string{
	"", "plain", "it's", `"double"`, `back\slash`, `\'`, `\`, "trailing\\", `\N`,
	"new\nline", "cr\rlf\r\n", "tab\t", "unicode: ü 日本語 🎉", "%_ wildcards", "; DROP TABLE x; --",
	"\x1a ctrl-z", strings.Repeat("long ", 20000),
}

func TestLoad(t *testing.T) {
	ctx := context.Background()
	_, c := testConn(t, target.Config{})
	tb := table(t, c, "load", "id integer PRIMARY KEY, t text, f double precision, ts timestamp")
	i := 0
	buf := make([]byte, 0, 64)
	ts := time.Date(2001, 2, 3, 4, 5, 6, 7000, time.UTC)
	n, err := c.Load(ctx, tb, []string{"id", "t", "f", "ts"}, func(row []target.Value) bool {
		if i > len(nasty) {
			return false
		}
		i++
		row[0] = target.Int64(int64(i))
		if i > len(nasty) {
			row[1], row[2], row[3] = target.Null(), target.Null(), target.Null()
			return true
		}
		buf = append(buf[:0], nasty[i-1]...)
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
		if r[1] != s || r[2] != strconv.FormatFloat(float64(i+1)/4, 'g', -1, 64) || r[3] != "2001-02-03 04:05:06.000007" || r[4] != "f" {
			t.Errorf("row %d = %q, want %q", i+1, r, s)
		}
	}
	if last := rows[len(nasty)]; last[4] != "t" {
		t.Errorf("NULL row read back as %q", last)
	}

	// Many rows: several reader buffers.
	tb2 := table(t, c, "many", "id integer, k integer, c varchar(200)")
	const many = 50000
	i = 0
	got, err := c.Load(ctx, tb2, []string{"id", "k", "c"}, func(row []target.Value) bool {
		if i == many {
			return false
		}
		i++
		row[0], row[1], row[2] = target.Int64(int64(i)), target.Int64(int64(i%7)), target.Text([]byte(strconv.Itoa(i)))
		return true
	})
	if err != nil || got != many {
		t.Fatalf("loaded %d, %v", got, err)
	}
	if r := query(t, c, "SELECT count(*), sum(id), count(DISTINCT c) FROM "+tb2); r[0][0] != strconv.Itoa(many) || r[0][1] != strconv.Itoa(many*(many+1)/2) || r[0][2] != strconv.Itoa(many) {
		t.Errorf("count, sum, distinct = %v", r[0])
	}

	// A duplicate key fails the COPY with a classified error; nothing is loaded.
	i = 0
	_, err = c.Load(ctx, tb, []string{"id"}, func(row []target.Value) bool {
		if i == 5 {
			return false
		}
		i++
		row[0] = target.Int64(int64(i))
		return true
	})
	wantClass(t, err, target.ClassConstraint, "23505")
	// A NUL byte cannot be loaded; the message says so.
	_, err = c.Load(ctx, tb2, []string{"c"}, func(row []target.Value) bool {
		row[0] = target.Text([]byte("a\x00b"))
		return true
	})
	if err == nil || !strings.Contains(err.Error(), "NUL") {
		t.Errorf("NUL byte: %v", err)
	}
	if !c.Alive() {
		t.Error("not alive after failed loads")
	}
	mustExec(t, c, "SELECT 1")
}

func TestErrors(t *testing.T) {
	for _, m := range modes {
		t.Run(m.Name, func(t *testing.T) {
			ctx := context.Background()
			_, c := testConn(t, m.Cfg)
			tb := table(t, c, "errors", "id integer PRIMARY KEY, v integer NOT NULL")
			mustExec(t, c, "INSERT INTO "+tb+" VALUES (1, 1)")
			ins, err := c.Prepare(ctx, "INSERT INTO "+tb+" VALUES (?, ?)")
			if err != nil {
				t.Fatal(err)
			}
			var res target.Result
			err = ins.Run(ctx, []target.Value{target.Int64(1), target.Int64(2)}, &res)
			wantClass(t, err, target.ClassConstraint, "23505")
			err = ins.Run(ctx, []target.Value{target.Int64(2), target.Null()}, &res)
			wantClass(t, err, target.ClassConstraint, "23502")
			missing := uniqueName("missing")
			st, err := c.Prepare(ctx, "SELECT * FROM "+missing+" WHERE id = ?")
			if err == nil {
				err = st.Run(ctx, []target.Value{target.Int64(1)}, &res)
			}
			wantClass(t, err, target.ClassUndefined, "42P01")
			_, err = c.Query(ctx, "SELECT nosuchcolumn FROM "+tb)
			wantClass(t, err, target.ClassUndefined, "42703")
			err = c.Exec(ctx, "SELEC 1")
			wantClass(t, err, target.ClassOther, "42601")
			if !c.Alive() {
				t.Error("not alive after statement errors")
			}
		})
	}
}

func TestDeadlockAndSerialization(t *testing.T) {
	ctx := context.Background()
	tg, c1 := testConn(t, target.Config{})
	c2 := connect(t, tg)
	tb := table(t, c1, "deadlock", "id integer PRIMARY KEY, v integer")
	mustExec(t, c1, "INSERT INTO "+tb+" VALUES (1, 0), (2, 0)")
	for _, c := range []*conn{c1, c2} {
		if err := c.Begin(ctx); err != nil {
			t.Fatal(err)
		}
	}
	mustExec(t, c1, "UPDATE "+tb+" SET v = 1 WHERE id = 1")
	mustExec(t, c2, "UPDATE "+tb+" SET v = 2 WHERE id = 2")
	var wg sync.WaitGroup
	var err1, err2 error
	wg.Go(func() { err1 = c1.Exec(ctx, "UPDATE "+tb+" SET v = 1 WHERE id = 2") })
	time.Sleep(200 * time.Millisecond)
	err2 = c2.Exec(ctx, "UPDATE "+tb+" SET v = 2 WHERE id = 1")
	if err2 == nil {
		_ = c2.Rollback(ctx)
	}
	wg.Wait()
	err := err1
	if err == nil {
		err = err2
	}
	e := wantClass(t, err, target.ClassDeadlock, "40P01")
	if !e.Class.Retryable() {
		t.Error("deadlock not retryable")
	}
	for _, c := range []*conn{c1, c2} {
		if err := c.Rollback(ctx); err != nil || !c.Alive() {
			t.Errorf("rollback after deadlock: %v, alive %v", err, c.Alive())
		}
	}

	// Repeatable read: updating a row another transaction changed since the snapshot.
	mustExec(t, c1, "BEGIN ISOLATION LEVEL REPEATABLE READ")
	query(t, c1, "SELECT v FROM "+tb+" WHERE id = 1")
	mustExec(t, c2, "UPDATE "+tb+" SET v = 5 WHERE id = 1")
	err = c1.Exec(ctx, "UPDATE "+tb+" SET v = v + 1 WHERE id = 1")
	e = wantClass(t, err, target.ClassSerialization, "40001")
	if !e.Class.Retryable() {
		t.Error("serialization failure not retryable")
	}
	if err := c1.Rollback(ctx); err != nil {
		t.Error(err)
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
	query(t, killer, "SELECT pg_terminate_backend(?)", target.Int64(victim.ID()))
	time.Sleep(50 * time.Millisecond)
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
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	if err := c.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	cancel()
	time.Sleep(20 * time.Millisecond)
	if !c.Alive() {
		t.Fatal("connection died when an idle context was canceled")
	}
	mustExec(t, c, "SELECT 2")
	err := c.Exec(ctx, "SELECT 3")
	wantClass(t, err, target.ClassCanceled, "")

	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	st, err := c.Prepare(ctx, "SELECT pg_sleep(?)")
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
	_, err = c.Query(dctx, "SELECT pg_sleep(10)")
	wantClass(t, err, target.ClassTimeout, "")

	// statement_timeout is the server's own timeout.
	c = connect(t, testTarget(t, target.Config{}))
	mustExec(t, c, "SET statement_timeout = 50")
	_, err = c.Query(context.Background(), "SELECT pg_sleep(5)")
	wantClass(t, err, target.ClassTimeout, "57014")
	if !c.Alive() {
		t.Error("not alive after statement_timeout")
	}
}

func TestAuth(t *testing.T) {
	ctx := context.Background()
	_, admin := testConn(t, target.Config{})
	user := fmt.Sprintf("fathom_u%d", rand.IntN(1e9))
	const right, wrong = "Right-pw-4711", "Wrong-pw-0815"
	mustExec(t, admin, "CREATE ROLE "+user+" LOGIN PASSWORD '"+right+"'")
	t.Cleanup(func() { _ = admin.Exec(context.Background(), "DROP ROLE "+user) })
	u, _ := url.Parse(testDSN(t))
	u.User = url.UserPassword(user, wrong)
	tg, err := Open(u.String(), target.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(tg.Redacted(), wrong) || !strings.Contains(tg.Redacted(), "xxxxx") {
		t.Errorf("Redacted() = %q", tg.Redacted())
	}
	c, err := tg.Connect(ctx)
	if err != nil {
		// The test server trusts local connections; with password auth this is 28P01.
		wantClass(t, err, target.ClassAuth, "28P01")
		if strings.Contains(err.Error(), wrong) {
			t.Errorf("auth error shows the password: %v", err)
		}
	} else {
		t.Log("the server trusts this connection: no password check")
		_ = c.Close()
	}
	// A database that does not exist.
	u.User = url.User(user)
	u.Path = "/" + uniqueName("nodb")
	tg, _ = Open(u.String(), target.Config{})
	_, err = tg.Connect(ctx)
	wantClass(t, err, target.ClassUndefined, "3D000")
}

func TestRefused(t *testing.T) {
	tg, err := Open("postgres://root:Sekrit-pw-1@127.0.0.1:1/test?sslmode=disable", target.Config{ConnectTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, err = tg.Connect(context.Background())
	e := wantClass(t, err, target.ClassConnection, "")
	if strings.Contains(err.Error(), "Sekrit") || !strings.Contains(e.Msg, "127.0.0.1:1") {
		t.Errorf("error: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = tg.Connect(ctx)
	if c := target.ClassOf(err); c != target.ClassCanceled && c != target.ClassConnection {
		t.Errorf("canceled connect: %v (%v)", err, c)
	}
	tg, _ = Open("host="+t.TempDir()+" dbname=test", target.Config{})
	_, err = tg.Connect(context.Background())
	wantClass(t, err, target.ClassConnection, "")

	tg, _ = Open("postgres://root@10.255.255.1:5432/test", target.Config{ConnectTimeout: 200 * time.Millisecond})
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
	if !strings.HasPrefix(info.Version, "PostgreSQL ") {
		t.Errorf("version %q", info.Version)
	}
	for _, k := range []string{"shared_buffers", "synchronous_commit", "max_wal_size", "max_connections", "server_version_num"} {
		if info.Settings[k] == "" {
			t.Errorf("setting %s missing: %v", k, info.Settings)
		}
	}
	if sb := info.Settings["shared_buffers"]; !strings.HasSuffix(sb, "B") {
		t.Errorf("shared_buffers = %q, want a size with a unit", sb)
	}
}

func TestWithUnit(t *testing.T) {
	for _, c := range []struct{ v, unit, want string }{
		{"16384", "8kB", "128MB"}, {"4096", "kB", "4MB"}, {"1024", "MB", "1GB"}, {"300", "s", "300s"},
		{"on", "", "on"}, {"3", "8kB", "24kB"}, {"100", "ms", "100ms"},
	} {
		if got := withUnit(c.v, c.unit); got != c.want {
			t.Errorf("withUnit(%s, %s) = %s, want %s", c.v, c.unit, got, c.want)
		}
	}
}

// A server that accepts the connection and never answers: Connect gives up after the
// connect timeout, although the socket is a blocking one.
func TestSilentServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	}()
	tg, err := Open("postgres://u@"+ln.Addr().String()+"/db?sslmode=disable", target.Config{ConnectTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = tg.Connect(context.Background())
	e := wantClass(t, err, target.ClassConnection, "")
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("connect to a silent server took %v with a 300ms timeout", d)
	}
	if !strings.Contains(e.Msg, "no answer within 300ms") || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("silent server: %q", e.Msg)
	}
}
