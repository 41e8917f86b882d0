package sqlite

import (
	"database/sql/driver"
	"reflect"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"modernc.org/libc"
	lib "modernc.org/sqlite/lib"

	"github.com/fathom-lab/fathom/internal/target"
)

// This file holds what the database/sql/driver interfaces cannot reach: the sqlite3*
// handle under a driver connection, for sqlite3_interrupt, sqlite3_get_autocommit and
// a busy handler of our own. The driver keeps the handle in its unexported conn.db
// field; dbHandle reads it by name with reflect once per connection and fails Connect
// with a clear message if a driver upgrade renames it (TestHandle checks it too).
// Everything else goes through the driver.

// The driver versions this file was written and checked against. Its reflection
// (the conn.db field) and unsafe cast (cFuncPointer, called back by the transpiled C)
// depend on their internals: TestDriverInternals fails naming these versions when
// an upgrade moves them. Update them with go.mod once the test passes.
const (
	sqliteDriverWrittenFor = "modernc.org/sqlite v1.61.1"
	libcWrittenFor         = "modernc.org/libc v1.79.0"
)

// dbHandle returns the sqlite3* handle of a modernc.org/sqlite connection.
func dbHandle(dc driver.Conn) (uintptr, error) {
	v := reflect.ValueOf(dc)
	if v.Kind() == reflect.Pointer && !v.IsNil() && v.Elem().Kind() == reflect.Struct {
		if f := v.Elem().FieldByName("db"); f.IsValid() && f.Kind() == reflect.Uintptr && f.Uint() != 0 {
			return uintptr(f.Uint()), nil
		}
	}
	return 0, target.Errorf(target.ClassOther, "", "modernc.org/sqlite %T has no sqlite3 handle field \"db\"; this version of the driver is not supported by internal/db/sqlite/target (see handle.go)", dc)
}

// cFuncPointer turns a top-level Go function into the function pointer the transpiled
// C code calls (the representation of https://golang.org/s/go11func, as the driver
// does for its own callbacks). It must not be used with closures.
func cFuncPointer[T any](f T) uintptr {
	return *(*uintptr)(unsafe.Pointer(&struct{ f T }{f}))
}

// conns finds the Conn a busy handler call is for. The key, the handler's argument, is
// Conn.key, so that no Go pointer is handed to C.
var (
	conns   sync.Map // uintptr -> *Conn
	nextKey atomic.Uintptr
)

// busyHandlerPtr is busyHandler as a C function pointer.
var busyHandlerPtr = cFuncPointer(busyHandler)

// The retry schedule of SQLite's own busy handler (sqliteDefaultBusyCallback): the
// delay before the n-th retry and the time waited before it, in milliseconds.
var (
	busyDelays = [...]int32{1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100}
	busyTotals = [...]int32{0, 1, 3, 8, 18, 33, 53, 78, 103, 128, 178, 228}
)

// installBusyHandler makes busyHandler the connection's busy handler. It replaces
// PRAGMA busy_timeout, whose handler sleeps without looking at the context, and it
// records whether a SQLITE_BUSY came after waiting the whole busy timeout.
func (c *conn) installBusyHandler() error {
	c.key = nextKey.Add(1)
	conns.Store(c.key, c)
	if rc := lib.Xsqlite3_busy_handler(c.tls, c.db, busyHandlerPtr, c.key); rc != lib.SQLITE_OK {
		conns.Delete(c.key)
		return target.Errorf(target.ClassOther, codeName(int(rc)), "installing the busy handler failed")
	}
	return nil
}

// busyHandler is SQLite's default busy handler (same schedule, bounded by the
// busy_timeout option) with two additions: the wait ends when the context of the call
// in progress is done, and giving up after the whole timeout is recorded in
// Conn.busyTimedOut, so that classify can tell a lock wait timeout from a SQLITE_BUSY
// that SQLite returned without waiting (see the package comment). It runs on the
// goroutine making the call, so it reads the Conn without locks.
func busyHandler(_ *libc.TLS, key uintptr, count int32) int32 {
	v, ok := conns.Load(key)
	if !ok {
		return 0
	}
	c := v.(*conn)
	tmout := c.t.opts.busyTimeout
	n := int32(len(busyDelays))
	var delay, prior int32
	if count < n {
		delay, prior = busyDelays[count], busyTotals[count]
	} else {
		delay = busyDelays[n-1]
		prior = busyTotals[n-1] + delay*(count-(n-1))
	}
	if prior+delay > tmout {
		if delay = tmout - prior; delay <= 0 {
			c.busyTimedOut = true
			return 0
		}
	}
	d := time.Duration(delay) * time.Millisecond
	done := c.cancel.Done()
	if done == nil {
		time.Sleep(d)
		return 1
	}
	if c.timer == nil {
		c.timer = time.NewTimer(d)
	} else {
		c.timer.Reset(d)
	}
	select {
	case <-done:
		c.timer.Stop()
		return 0
	case <-c.timer.C:
		return 1
	}
}

// interruptDB makes the statement running on db, if any, stop with SQLITE_INTERRUPT.
// It is called from the context's AfterFunc goroutine while the owner may be in a
// call, which is what sqlite3_interrupt is for, with a TLS of its own: the Conn's
// belongs to the owner goroutine. The caller holds Conn.mu, so that Close cannot free
// the handle meanwhile.
func interruptDB(tls *libc.TLS, db uintptr) {
	lib.Xsqlite3_interrupt(tls, db)
}

// inTransaction reports whether an explicit transaction is open on the connection.
func (c *conn) inTransaction() bool {
	return lib.Xsqlite3_get_autocommit(c.tls, c.db) == 0
}

// releaseHandle forgets the busy handler registration and the Conn's TLS; the caller
// holds mu and has closed the driver connection.
func (c *conn) releaseHandle() {
	if c.key != 0 {
		conns.Delete(c.key)
	}
	if c.tls != nil {
		c.tls.Close()
		c.tls = nil
	}
}
