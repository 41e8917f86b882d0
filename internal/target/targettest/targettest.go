// Package targettest holds what the target packages' tests share: connecting with
// cleanup, throwaway tables, error-class assertions and the point-select benchmarks
// that compare a target's client CPU with sysbench's. Only tests import it.
package targettest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/target"
)

// Modes are the two ways of sending statements every target supports, and prepared
// statements over Go's network poller (Config.PollerSockets): the socket path every
// system but Linux takes, so that the tests and benchmarks cover it on Linux too.
var Modes = []struct {
	Name string
	Cfg  target.Config
}{{"prepared", target.Config{}}, {"simple", target.Config{Unprepared: true}}, {"poller", target.Config{PollerSockets: true}}}

// SocketPaths checks that a network target reports the socket path its connections
// took (target.Socketer): none before the first, blocking system calls by default on
// Linux (the poller elsewhere), the poller with Config.PollerSockets, and that a
// poller connection works.
func SocketPaths(t *testing.T, open func(cfg target.Config) (target.Target, error)) {
	t.Helper()
	for _, poller := range []bool{false, true} {
		tg, err := open(target.Config{PollerSockets: poller})
		if err != nil {
			t.Fatal(err)
		}
		s, ok := tg.(target.Socketer)
		if !ok {
			t.Fatalf("%T does not report its socket path", tg)
		}
		if got := s.Sockets(); got != "" {
			t.Errorf("poller %v: Sockets() = %q before any connection", poller, got)
		}
		c := Connect(t, tg)
		c2 := Connect(t, tg)
		if rows := Query(t, c2, "SELECT 1"); len(rows) != 1 || rows[0][0] != "1" {
			t.Errorf("poller %v: SELECT 1 = %v", poller, rows)
		}
		_ = c.Close()
		want := target.SocketsPoller
		if !poller && runtime.GOOS == "linux" {
			want = target.SocketsBlocking
		}
		if got := s.Sockets(); got != want {
			t.Errorf("poller %v: Sockets() = %q after two connections, want %q", poller, got, want)
		}
	}
}

// Connect opens a connection on tg, closed at the end of the test.
func Connect(t testing.TB, tg target.Target) target.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// UniqueName is a table name no other test run uses.
func UniqueName(what string) string {
	return fmt.Sprintf("fathom_t_%s_%d_%d", what, time.Now().UnixNano()%1e9, rand.IntN(1e6))
}

// Table creates a table on c with the given column list and table options (such as
// ENGINE=InnoDB), and drops it at the end of the test over a new connection from
// open, since c may be dead by then.
func Table(t testing.TB, c target.Conn, open func() (target.Target, error), what, columns, options string) string {
	t.Helper()
	name := UniqueName(what)
	sql := "CREATE TABLE " + name + " (" + columns + ")"
	if options != "" {
		sql += " " + options
	}
	if err := c.Exec(context.Background(), sql); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		tg, err := open()
		if err != nil {
			return
		}
		if cc, err := tg.Connect(context.Background()); err == nil {
			_ = cc.Exec(context.Background(), "DROP TABLE IF EXISTS "+name)
			_ = cc.Close()
		}
	})
	return name
}

// MustExec runs sql on c or fails the test.
func MustExec(t testing.TB, c target.Conn, sql string) {
	t.Helper()
	if err := c.Exec(context.Background(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// Query runs sql on c and returns its rows, or fails the test.
func Query(t testing.TB, c target.Conn, sql string, args ...target.Value) [][]string {
	t.Helper()
	rows, err := c.Query(context.Background(), sql, args...)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return rows
}

// WantClass checks that err is a *target.Error of class (and code, unless empty) with
// a one-line message, and returns it.
func WantClass(t *testing.T, err error, class target.Class, code string) *target.Error {
	t.Helper()
	var te *target.Error
	if !errors.As(err, &te) {
		t.Fatalf("error %v (%T) is not a *target.Error", err, err)
	}
	if te.Class != class || (code != "" && te.Code != code) {
		t.Fatalf("error %q: class %v code %q, want %v %q", te, te.Class, te.Code, class, code)
	}
	if strings.ContainsAny(te.Msg, "\r\n") {
		t.Errorf("message is not one line: %q", te.Msg)
	}
	return te
}
