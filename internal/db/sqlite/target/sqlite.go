// Package sqlite is fathom's SQLite target, built on modernc.org/sqlite (SQLite
// translated to Go: no cgo, one static binary).
//
// DSNs are sqlite:PATH[?options], PATH relative to the working directory or absolute
// (sqlite:///abs/path is read as /abs/path). The file is created if missing. Options:
// busy_timeout (milliseconds, default 5000), begin (see below), and an allowlist of
// PRAGMAs set on every connection: journal_mode (default WAL), synchronous (default
// NORMAL), cache_size, mmap_size, page_size, auto_vacuum, temp_store, locking_mode,
// foreign_keys, wal_autocheckpoint, journal_size_limit and cache_spill. sqlite::memory:
// is refused: an in-memory database lives in one connection, and fathom's prepare,
// run and clients each use their own.
//
// Each Conn is one raw driver connection used through the database/sql/driver
// interfaces, without database/sql's pool; prepared statements are reused, and the
// hot path allocates only what the driver's interfaces need (boxed arguments, its
// rows object and column values). Measured with BenchmarkPointSelect, three choices
// keep it lean:
//
//   - Calls pass the driver a context without a Done channel. With a cancelable
//     context the driver starts a goroutine per statement to watch it, which cost
//     4 allocations and 2.7µs per point select on an idle machine (7.4µs → 10.1µs;
//     9µs → 19µs of CPU on a busy one).
//   - Cancellation instead uses one context.AfterFunc per connection and context,
//     armed with an atomic store while a call is in flight; when it fires it calls
//     sqlite3_interrupt, and the call returns a ClassCanceled (or ClassTimeout) error.
//     The connection stays usable.
//   - Lock waits use a busy handler of this package (handle.go) with SQLite's own
//     schedule and the busy_timeout option, which also ends the wait when the
//     context is done. SQLite's handler sleeps through cancellation.
//
// Both need the sqlite3 handle, which the driver keeps in an unexported field:
// handle.go reads it by name once per connection. A driver upgrade that renames it
// makes Connect fail with a message saying so, and TestHandle fail.
//
// # Transactions and SQLITE_BUSY
//
// SQLite has one writer at a time. A transaction started with a plain (deferred)
// BEGIN takes the write lock at its first write; if it has read before, SQLite does
// not wait for the lock, since waiting could not help: in WAL mode the snapshot it
// read would be stale by the time it got the lock, and with a rollback journal two
// such readers would deadlock. It returns SQLITE_BUSY at once, busy_timeout or not.
// BEGIN IMMEDIATE takes the write lock up front, waiting for it under the busy
// timeout, so writers queue like row-lock waiters on other databases; but it also
// serializes read-only transactions, which WAL would otherwise run side by side.
//
// Conn.Begin does not know whether the transaction will write, so by default
// (begin=auto) it sends nothing and lets the transaction's first statement decide:
// BEGIN IMMEDIATE before a write, BEGIN before a read. A prepared read whose
// transaction then writes is remembered, and the transactions it begins afterwards
// start with BEGIN IMMEDIATE: the first such transaction on each connection may get
// a retryable error, the later ones queue for the lock. So pgbench's TPC-B (its first
// statement is an UPDATE) queues honestly on the write lock with 4 clients and more,
// without failures; sysbench's oltp_read_write fails about once per client instead of
// on most transactions (measured: 6 of 833 with 4 clients in 3s, against 733 of 1283
// with a plain BEGIN); read-only transactions run side by side. begin=immediate,
// begin=deferred and begin=exclusive send that BEGIN at Begin instead.
//
// Errors are classified by extended result code, never by message text:
// SQLITE_CONSTRAINT_* is a constraint violation; SQLITE_BUSY after the whole busy
// timeout (the busy handler records that) and SQLITE_LOCKED are timeouts; SQLITE_BUSY
// returned without waiting is a serialization failure in WAL mode (so is
// SQLITE_BUSY_SNAPSHOT) and a deadlock with a rollback journal, both retryable;
// SQLITE_INTERRUPT is a cancellation; SQLITE_CANTOPEN a connection error; SQLITE_PERM,
// SQLITE_AUTH and SQLITE_READONLY are authorization errors. SQLite reports a missing
// table with the generic SQLITE_ERROR that syntax errors also get, so after a
// SQLITE_ERROR the tables the statement names are looked up in pragma_table_list:
// ClassUndefined when one of them does not exist. A missing column or function stays
// ClassOther.
package sqlite

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	msqlite "modernc.org/sqlite"

	"github.com/fathom-lab/fathom/internal/target"
)

// drv is this package's own driver instance: functions or hooks registered on the
// driver's global instance do not apply to it.
var drv = &msqlite.Driver{}

// Target is a SQLite database file.
type Target struct {
	cfg  target.Config
	opts *options
	dsn  string
	// setupMu makes a process's connections set their PRAGMAs one at a time: two
	// connections switching a new file to WAL at the same moment each wait for the
	// other's lock, and SQLite answers one of them SQLITE_BUSY at once, without its
	// busy timeout (a client of a run failed to connect so).
	setupMu sync.Mutex
}

var _ target.Target = (*Target)(nil)

// Open parses dsn; it does not open the file. A malformed DSN gives one line that
// names the fix.
func Open(dsn string, cfg target.Config) (*Target, error) {
	opts, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	return &Target{cfg: cfg, opts: opts, dsn: dsn}, nil
}

func (t *Target) Kind() string { return "sqlite" }

// Redacted is the DSN as given: a SQLite DSN holds no password.
func (t *Target) Redacted() string        { return t.dsn }
func (t *Target) Dialect() target.Dialect { return *SQLDialect }
func (t *Target) Close() error            { return nil }

// Connect opens one connection and sets the DSN's PRAGMAs on it.
func (t *Target) Connect(ctx context.Context) (target.Conn, error) {
	return t.connect(ctx)
}

func (t *Target) connect(ctx context.Context) (*conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, classify(err, "", target.ClassTimeout)
	}
	what := "opening " + t.opts.path
	dc, err := drv.Open(t.opts.path)
	if err != nil {
		e := classify(err, what, target.ClassTimeout)
		if hint := openHint(t.opts.path); hint != "" {
			e.Msg += " (" + hint + ")"
		}
		return nil, e
	}
	c, err := newConn(t, dc)
	if err != nil {
		_ = dc.Close()
		return nil, err
	}
	if t.cfg.ConnectTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t.cfg.ConnectTimeout)
		defer cancel()
	}
	t.setupMu.Lock()
	err = c.setup(ctx)
	t.setupMu.Unlock()
	if err != nil {
		_ = c.Close()
		var te *target.Error
		if errors.As(err, &te) {
			te.Msg = what + ": " + te.Msg
		}
		return nil, err
	}
	return c, nil
}

// setup sets the PRAGMAs, notes the journal mode and prepares the transaction
// control statements.
func (c *conn) setup(ctx context.Context) error {
	for _, p := range c.t.opts.pragmas {
		if err := c.Exec(ctx, "PRAGMA "+p.name+" = "+p.value); err != nil {
			return err
		}
	}
	rows, err := c.Query(ctx, "PRAGMA journal_mode")
	if err != nil {
		return err
	}
	c.wal = len(rows) == 1 && len(rows[0]) == 1 && rows[0][0] == "wal"
	return c.prepareControl()
}

// openHint explains why a file cannot be opened when the file system can tell.
func openHint(path string) string {
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "directory " + dir + " does not exist"
	case err == nil && !st.IsDir():
		return dir + " is not a directory"
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return path + " is a directory"
	}
	return ""
}

// synchronousNames are PRAGMA synchronous's values by number.
var synchronousNames = []string{"OFF", "NORMAL", "FULL", "EXTRA"}

// Info reports sqlite_version() and the settings that shape performance, as a new
// connection sees them after the DSN's PRAGMAs.
func (t *Target) Info(ctx context.Context) (target.Info, error) {
	c, err := t.connect(ctx)
	if err != nil {
		return target.Info{}, err
	}
	defer c.Close()
	var info target.Info
	rows, err := c.Query(ctx, "SELECT sqlite_version()")
	if err != nil {
		return info, err
	}
	if len(rows) == 1 && len(rows[0]) == 1 {
		info.Version = rows[0][0]
	}
	info.Settings = map[string]string{
		"busy_timeout": strconv.Itoa(int(t.opts.busyTimeout)),
		"begin":        t.opts.begin,
		"path":         t.opts.path,
	}
	if abs, err := filepath.Abs(t.opts.path); err == nil {
		info.Settings["path"] = abs
	}
	for _, name := range []string{"journal_mode", "synchronous", "cache_size", "page_size", "mmap_size",
		"locking_mode", "temp_store", "foreign_keys", "wal_autocheckpoint", "auto_vacuum"} {
		rows, err := c.Query(ctx, "PRAGMA "+name)
		if err != nil {
			return info, err
		}
		if len(rows) != 1 || len(rows[0]) != 1 {
			continue
		}
		v := rows[0][0]
		if name == "synchronous" {
			if n, err := strconv.Atoi(v); err == nil && n >= 0 && n < len(synchronousNames) {
				v = synchronousNames[n]
			}
		}
		info.Settings[name] = v
	}
	return info, nil
}
