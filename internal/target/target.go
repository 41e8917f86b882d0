// Package target is fathom's view of a database server: how to open connections, how
// SQL differs between dialects, and how errors are classified. Implementations live in
// each kind's directory (internal/db/KIND/target); internal/db opens one from a DSN
// (its registry of database kinds is the explicit map in internal/db/kinds.go).
package target

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"
)

// Target is one database endpoint. It is safe for concurrent use; each client opens its
// own Conn.
type Target interface {
	// Kind is the name of the target's kind ("postgres", "mysql", "sqlite", "redis").
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
	// PollerSockets keeps network connections on Go's network poller instead of
	// blocking system calls (sock.Blocking): the path every system but Linux takes,
	// forced here to test or compare it on Linux.
	PollerSockets bool
	// Getenv reads the environment for the defaults each ecosystem takes from it
	// (PGPORT; MYSQL_PWD, USER, and HOME for ~/.my.cnf). The front end passes its own;
	// nil reads nothing. (pgx reads libpq's PG* variables and .pgpass itself.)
	Getenv func(string) string
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
	Keep bool
	// KeepLast, with Keep, keeps the last row instead of the first (pgbench's \aset).
	KeepLast bool
	// KeepAll, with Keep, keeps every row (SQL targets): First holds them one after
	// the other, row i's n columns at First[i*n:(i+1)*n], in reused buffers. For
	// multi-row reads of a few rows (TPC-C's items and stocks of an order).
	KeepAll bool
	First   []Value
	// Names asks the target to fill Columns with the result's column names (once:
	// the caller clears Names when it has them).
	Names   bool
	Columns []string
}

// Kind of a Value.
type valueKind uint8

const (
	KindNull valueKind = iota
	KindInt
	KindText
	KindFloat
	KindTime
)

// Value is a statement argument or a column value. It is a plain struct so that
// workloads can fill argument slices without allocating.
type Value struct {
	Kind  valueKind
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
	return r.RowAt(0, n)
}

// RowAt sizes First for row i (counting from 0) of n columns: row 0 unless KeepAll,
// which keeps the rows before it. The slice and the Text buffers of earlier results
// are kept; it returns the row for the target to fill.
func (r *Result) RowAt(i int64, n int) []Value {
	if !r.KeepAll {
		i = 0
	}
	end := (int(i) + 1) * n
	if cap(r.First) < end {
		f := make([]Value, end, max(end, 2*cap(r.First)))
		copy(f[:cap(r.First)], r.First[:cap(r.First)])
		r.First = f
	}
	r.First = r.First[:end]
	return r.First[end-n : end]
}

// Keeps reports whether a target keeps row i (counting from 0) of a result.
func (r *Result) Keeps(i int64) bool {
	return r.Keep && (i == 0 || r.KeepLast || r.KeepAll)
}

// Identifier is implemented by targets that can say whom and what they connect to.
type Identifier interface {
	// Identity is a digest of everything that decides what a connection reads: kind,
	// user, credentials, database, host, port or socket. It is safe to store (the
	// password is hashed together with the rest, never kept) and changes whenever any
	// of them does.
	Identity() string
}

// IdentityOf is t's Identity, or a digest of its kind and redacted DSN.
func IdentityOf(t Target) string {
	if id, ok := t.(Identifier); ok {
		return id.Identity()
	}
	return Digest(t.Kind(), t.Redacted())
}

// Digest is a short hex SHA-256 of parts (joined unambiguously).
func Digest(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s;", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))[:20]
}
