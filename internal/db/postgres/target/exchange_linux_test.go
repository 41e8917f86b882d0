package postgres

import (
	"context"
	"errors"
	"syscall"
	"testing"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/target/targettest"
)

// A prepared statement runs as a request and a reply on its socket (target.Exchanger),
// read in pieces: its result arrives whole, a server error is classified by its
// SQLSTATE and the session goes on, and the connection still works through pgconn.
func TestExchange(t *testing.T) {
	tg, c := testConn(t, target.Config{})
	if !tg.Exchanges() {
		t.Fatal("a prepared target does not exchange")
	}
	ctx := context.Background()
	s, err := c.Prepare(ctx, "SELECT 100 / ?::int")
	if err != nil {
		t.Fatal(err)
	}
	st := s.(*stmt)
	fd, ok := st.Socket()
	if !ok {
		t.Fatal("no socket for a prepared statement on a blocking connection")
	}
	for i := 1; i <= 50; i++ {
		if err := targettest.Exchange(t, st, fd, []target.Value{target.Int64(int64(i))}); err != nil {
			t.Fatalf("exchange %d: %v", i, err)
		}
	}
	err = targettest.Exchange(t, st, fd, []target.Value{target.Int64(0)})
	var te *target.Error
	if !errors.As(err, &te) || te.Code != "22012" || te.Class != target.ClassOther || !c.Alive() {
		t.Fatalf("division by zero: %v (%#v), alive %v", err, te, c.Alive())
	}
	if err := targettest.Exchange(t, st, fd, []target.Value{target.Int64(5)}); err != nil {
		t.Fatalf("after an error: %v", err)
	}
	var res target.Result
	if err := s.Run(ctx, []target.Value{target.Int64(4)}, &res); err != nil || res.Rows != 1 {
		t.Fatalf("through pgconn afterwards: %v, %d rows", err, res.Rows)
	}
	if _, err := st.AppendRequest(nil, nil); err == nil {
		t.Error("a request with too few arguments was made")
	}
	// Unprepared statements and poller connections are not driven this way.
	for _, cfg := range []target.Config{{Unprepared: true}, {PollerSockets: true}} {
		if testTarget(t, cfg).Exchanges() {
			t.Errorf("%+v: Exchanges() is true", cfg)
		}
	}
	// A lost connection is a connection error, and the connection is dead.
	_ = syscall.Shutdown(fd, syscall.SHUT_RDWR)
	if err := st.Lost(syscall.ECONNRESET); target.ClassOf(err) != target.ClassConnection || c.Alive() {
		t.Errorf("lost: %v, alive %v", err, c.Alive())
	}
}
