package mysql

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/target/targettest"
)

// exchanger prepares sql on c and returns it as a usable Exchanger and its socket.
func exchanger(t *testing.T, c *conn, sql string) (*stmt, int) {
	t.Helper()
	s, err := c.Prepare(context.Background(), sql)
	if err != nil {
		t.Fatal(err)
	}
	st := s.(*stmt)
	fd, ok := st.Socket()
	if !ok {
		t.Fatalf("no socket for %q: a prepared statement on a blocking connection (exchange state %+v)", sql, st.x)
	}
	return st, fd
}

// A prepared statement runs as a request and a reply on its socket (target.Exchanger),
// read in pieces: every argument kind arrives as the driver would send it, result sets
// of no, one and many rows end where they end, a server error is classified by its
// number and the session goes on, and the connection still works through the driver.
func TestExchange(t *testing.T) {
	tg, c := testConn(t, target.Config{})
	if !tg.Exchanges() {
		t.Fatal("a prepared target does not exchange")
	}
	ctx := context.Background()
	tbl := table(t, c, "exch", "id BIGINT PRIMARY KEY, f DOUBLE, s VARCHAR(300), n INT NULL, d DATETIME(6)")

	ins, fd := exchanger(t, c, fmt.Sprintf("INSERT INTO %s VALUES (?, ?, ?, ?, ?)", tbl))
	when := time.Date(2026, 11, 24, 8, 30, 15, 123456000, time.UTC)
	long := make([]byte, 260) // a length that needs a 3-byte length prefix
	for i := range long {
		long[i] = 'a' + byte(i%26)
	}
	rows := [][]target.Value{
		{target.Int64(1), {Kind: target.KindFloat, Float: 2.5}, target.Text([]byte("it's")), {Kind: target.KindNull}, {Kind: target.KindTime, Time: when}},
		{target.Int64(-7), {Kind: target.KindFloat, Float: -1e-3}, {Kind: target.KindText, Text: long}, target.Int64(42), {Kind: target.KindNull}},
		{target.Int64(1 << 40), {Kind: target.KindNull}, {Kind: target.KindText}, {Kind: target.KindNull}, {Kind: target.KindNull}},
	}
	for i, r := range rows {
		if err := targettest.Exchange(t, ins, fd, r); err != nil {
			t.Fatalf("insert %d: %v", i, err)
		}
	}
	got, err := c.Query(ctx, fmt.Sprintf("SELECT id, f, s, n, d FROM %s ORDER BY id", tbl))
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"-7", "-0.001", string(long), "42", ""},
		{"1", "2.5", "it's", "", "2026-11-24 08:30:15.123456"},
		{"1099511627776", "", "", "", ""},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rows inserted through the exchange:\n got %q\nwant %q", got, want)
	}

	// Result sets of no, one and many rows, many times on one socket (on MariaDB 10.6+
	// the column definitions come with the first reply only: cache metadata).
	t.Logf("cache metadata negotiated: %v", ins.x.cacheMeta)
	sel, fd2 := exchanger(t, c, fmt.Sprintf("SELECT id, s FROM %s WHERE id >= ? ORDER BY id", tbl))
	if fd2 != fd {
		t.Fatalf("two statements of one connection gave sockets %d and %d", fd, fd2)
	}
	for i := range 50 {
		for _, from := range []int64{-100, 0, 2, 1 << 41} {
			if err := targettest.Exchange(t, sel, fd, []target.Value{target.Int64(from)}); err != nil {
				t.Fatalf("select %d from %d: %v", i, from, err)
			}
		}
	}

	// A duplicate key is a constraint error and the session goes on.
	err = targettest.Exchange(t, ins, fd, rows[0])
	var te *target.Error
	if !errors.As(err, &te) || te.Class != target.ClassConstraint || te.Code != "1062" || !c.Alive() {
		t.Fatalf("duplicate key: %v (%#v), alive %v", err, te, c.Alive())
	}
	if err := targettest.Exchange(t, sel, fd, []target.Value{target.Int64(0)}); err != nil {
		t.Fatalf("after an error: %v", err)
	}
	// The driver's own path still works on the connection afterwards.
	var res target.Result
	if err := sel.Run(ctx, []target.Value{target.Int64(-100)}, &res); err != nil || res.Rows != 3 {
		t.Fatalf("through the driver afterwards: %v, %d rows", err, res.Rows)
	}
	if _, err := ins.AppendRequest(nil, nil); err == nil {
		t.Error("a request with too few arguments was made")
	}
	// Unprepared statements, poller connections and TLS are not driven this way.
	for _, cfg := range []target.Config{{Unprepared: true}, {PollerSockets: true}} {
		if testTarget(t, cfg).Exchanges() {
			t.Errorf("%+v: Exchanges() is true", cfg)
		}
	}
	if tls, err := Open(testDSN(t)+"?tls=skip-verify", target.Config{}); err != nil || tls.Exchanges() {
		t.Errorf("tls=skip-verify: Exchanges() is true (%v)", err)
	}
	// A lost connection is a connection error, and the connection is dead.
	_ = syscall.Shutdown(fd, syscall.SHUT_RDWR)
	if err := sel.Lost(syscall.ECONNRESET); target.ClassOf(err) != target.ClassConnection || c.Alive() {
		t.Errorf("lost: %v, alive %v", err, c.Alive())
	}
}
