package redis

import (
	"context"
	"errors"
	"strconv"
	"syscall"
	"testing"

	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/target/targettest"
)

// A batch runs as one request and its replies on the connection's socket
// (target.Exchanger), read in pieces of a few bytes: the commands take effect, nulls
// are counted, an error reply is classified by its code as Send classifies it and the
// connection goes on, and rueidis can use the connection afterwards.
func TestExchange(t *testing.T) {
	tg := open(t)
	if !tg.Exchanges() {
		t.Fatal("a plain TCP target does not exchange")
	}
	c := connect(t, tg)
	ctx := context.Background()
	pfx := dbtest.Prefix() + "xchg:" + strconv.FormatInt(c.ID(), 10) + ":"
	b := c.newBatch()
	x := c.Exchange(b).(*exchange)
	fd, ok := x.Socket()
	if !ok {
		t.Fatal("no socket for a batch on a blocking connection")
	}
	t.Cleanup(func() {
		cl := connect(t, tg)
		cl.Exec(ctx, "DEL "+pfx+"k "+pfx+"n "+pfx+"h "+pfx+"l")
	})

	// Sixteen commands of several reply types in one request, fifty times.
	for i := 1; i <= 50; i++ {
		b.Reset()
		b.Cmd("SET").Arg(pfx + "k").Int(int64(i)).End()
		b.Cmd("GET").Arg(pfx + "k").End()
		b.Cmd("INCR").Arg(pfx + "n").End()
		b.Cmd("GET").Arg(pfx + "missing").End()                             // null
		b.Cmd("HSET").Arg(pfx + "h").Arg("f").Bytes([]byte("a\r\nb")).End() // CRLF inside a value
		b.Cmd("HGETALL").Arg(pfx + "h").End()                               // a map in RESP3
		b.Cmd("RPUSH").Arg(pfx + "l").Arg("x").End()
		b.Cmd("LRANGE").Arg(pfx + "l").Arg("0").Arg("2").End()   // an array
		b.Cmd("PING").End()                                      // a simple string
		b.Cmd("HMGET").Arg(pfx + "h").Arg("f").Arg("nope").End() // an array holding a null
		if x.Statements() != 10 {
			t.Fatalf("Statements() = %d, want 10", x.Statements())
		}
		if err := targettest.Exchange(t, x, fd, nil); err != nil {
			t.Fatalf("exchange %d: %v", i, err)
		}
		if b.Nils != 1 {
			t.Fatalf("exchange %d: %d nil replies, want 1 (the missing key)", i, b.Nils)
		}
	}
	got, err := c.Query(ctx, "GET "+pfx+"n")
	if err != nil || len(got) != 1 || got[0][0] != "50" {
		t.Fatalf("the counter after 50 exchanges: %v, %v", got, err)
	}
	got, err = c.Query(ctx, "HGET "+pfx+"h f")
	if err != nil || len(got) != 1 || got[0][0] != "a\r\nb" {
		t.Fatalf("the value with CRLF inside: %q, %v", got, err)
	}

	// An error reply in the middle: the first error is returned, the commands after it
	// ran, and the connection goes on.
	b.Reset()
	b.Cmd("INCR").Arg(pfx + "k").End()
	b.Cmd("LPUSH").Arg(pfx + "k").Arg("v").End() // WRONGTYPE
	b.Cmd("NOSUCHCOMMAND").End()
	b.Cmd("INCR").Arg(pfx + "n").End()
	err = targettest.Exchange(t, x, fd, nil)
	var te *target.Error
	if !errors.As(err, &te) || te.Code != "WRONGTYPE" || te.Class != target.ClassConstraint || !c.Alive() {
		t.Fatalf("WRONGTYPE in a batch: %v (%#v), alive %v", err, te, c.Alive())
	}
	if got, _ := c.Query(ctx, "GET "+pfx+"n"); len(got) != 1 || got[0][0] != "51" {
		t.Fatalf("the command after the errors did not run: %v", got)
	}
	// The same error through rueidis (Send) is classified the same way.
	b.Reset()
	b.Cmd("LPUSH").Arg(pfx + "k").Arg("v").End()
	err2 := c.Send(ctx, b)
	var te2 *target.Error
	if !errors.As(err2, &te2) || te2.Code != te.Code || te2.Class != te.Class || te2.Msg != te.Msg {
		t.Errorf("Send classifies differently: %#v, the exchange %#v", te2, te)
	}
	b.Reset()
	b.Cmd("NOSUCHCOMMAND").End()
	if err := targettest.Exchange(t, x, fd, nil); target.ClassOf(err) != target.ClassUndefined {
		t.Errorf("an unknown command: %v, class %v", err, target.ClassOf(err))
	}

	// Through rueidis afterwards (the goroutine path: Run).
	b.Reset()
	b.Cmd("INCR").Arg(pfx + "n").End()
	if err := x.Run(ctx, nil, nil); err != nil {
		t.Fatalf("through rueidis afterwards: %v", err)
	}
	if got, _ := c.Query(ctx, "GET "+pfx+"n"); len(got) != 1 || got[0][0] != "52" {
		t.Fatalf("Run did not run the batch: %v", got)
	}

	// Poller connections are not driven this way.
	pt, err := Open(dbtest.RedisURL(t), target.Config{PollerSockets: true})
	if err != nil {
		t.Fatal(err)
	}
	if pt.Exchanges() {
		t.Error("a poller-socket target exchanges")
	}
	// A lost connection is a connection error, and the connection is dead.
	_ = syscall.Shutdown(fd, syscall.SHUT_RDWR)
	if err := x.Lost(syscall.ECONNRESET); target.ClassOf(err) != target.ClassConnection || c.Alive() {
		t.Errorf("lost: %v, alive %v", err, c.Alive())
	}
	if _, ok := x.Socket(); ok {
		t.Error("a dead connection still offers its socket")
	}
}
