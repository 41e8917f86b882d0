// Package target is fathom's view of a database server: how to open connections, how
// SQL differs between dialects, and how errors are classified. Implementations live in
// the postgres, mysql and sqlite subpackages and are registered in registry.go.
package target

import (
	"context"
	"time"
)

// Target is one database endpoint. It is safe for concurrent use; each client opens its
// own Conn.
type Target interface {
	// Kind is "postgres", "mysql" or "sqlite".
	Kind() string
	// Redacted is the DSN with any password removed; safe to print and store.
	Redacted() string
	Dialect() Dialect
	// Connect opens one new connection. Errors are *Error with a class.
	Connect(ctx context.Context) (Conn, error)
	// Info reports the server version and a snapshot of performance-relevant settings.
	Info(ctx context.Context) (Info, error)
	// Close releases anything the target holds (nothing for most targets).
	Close() error
}

// Config holds connection options common to all targets.
type Config struct {
	// Unprepared sends statement text each time instead of preparing statements.
	Unprepared bool
	// ConnectTimeout bounds one connection attempt (default 10s).
	ConnectTimeout time.Duration
	// AppName is reported to the server where it has a place for it.
	AppName string
}

// Info describes the server behind a target.
type Info struct {
	Version  string            `json:"version"`
	Settings map[string]string `json:"settings,omitempty"`
}

// Conn is one client connection. It is used by a single goroutine.
//
// SQL given to Conn uses '?' placeholders; the target rewrites them for its driver.
type Conn interface {
	// Exec runs one statement without arguments or results (DDL, BEGIN, COMMIT …).
	Exec(ctx context.Context, sql string) error
	// Prepare prepares a statement. With prepared statements disabled the target may
	// return a Stmt that sends the statement text each time.
	Prepare(ctx context.Context, sql string) (Stmt, error)
	Begin(ctx context.Context) error
	Commit(ctx context.Context) error
	// Rollback aborts the current transaction, if any; it is safe to call outside one.
	Rollback(ctx context.Context) error
	// Load bulk-loads rows into a table with the target's fast path (COPY, multi-row
	// INSERT, batched transactions). next fills row with the values of the next row and
	// returns false when there are no more rows.
	Load(ctx context.Context, table string, columns []string, next func(row []Value) bool) (int64, error)
	// Query runs a statement and returns all rows as text; for setup and checks, not
	// the hot path.
	Query(ctx context.Context, sql string, args ...Value) ([][]string, error)
	// Alive reports whether the connection is still usable after an error.
	Alive() bool
	// ID is the server's id for this session (backend pid, connection id), or 0.
	ID() int64
	Close() error
}

// Stmt is a prepared statement bound to one Conn.
type Stmt interface {
	// Run executes the statement with args and fills res. Rows are read and discarded
	// except the first row's columns, which are kept in res.First when res.Keep is set.
	Run(ctx context.Context, args []Value, res *Result) error
	Close() error
}

// Result receives what a statement did.
type Result struct {
	RowsAffected int64
	Rows         int64
	// Keep asks the target to copy the first row's columns into First.
	Keep  bool
	First []Value
}

// Kind of a Value.
type ValueKind uint8

const (
	KindNull ValueKind = iota
	KindInt
	KindText
	KindFloat
	KindTime
)

// Value is a statement argument or a column value. It is a plain struct so that
// workloads can fill argument slices without allocating.
type Value struct {
	Kind  ValueKind
	Int   int64
	Float float64
	Text  []byte
	Time  time.Time
}

// Int64 returns an integer Value.
func Int64(v int64) Value { return Value{Kind: KindInt, Int: v} }

// Text returns a text Value; the bytes are not copied.
func Text(b []byte) Value { return Value{Kind: KindText, Text: b} }

// Float returns a floating point Value.
func Float(f float64) Value { return Value{Kind: KindFloat, Float: f} }

// Time returns a timestamp Value.
func Time(t time.Time) Value { return Value{Kind: KindTime, Time: t} }

// Null returns a NULL Value.
func Null() Value { return Value{} }

// Row sizes First for a row of n columns, keeping the slice and the Text buffers of
// earlier rows, and returns it for the target to fill.
func (r *Result) Row(n int) []Value {
	if cap(r.First) < n {
		f := make([]Value, n)
		copy(f, r.First[:cap(r.First)])
		r.First = f
	}
	r.First = r.First[:n]
	return r.First
}
