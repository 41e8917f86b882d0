package sqlite

import (
	"context"
	"database/sql/driver"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"modernc.org/libc"

	"github.com/fathom-lab/fathom/internal/target"
)

// bg is the context given to the driver: one without a Done channel, so that the
// driver neither starts a goroutine per call nor installs its own busy handler.
// Cancellation is the Conn's (see begin).
var bg = context.Background()

// conn is one SQLite connection: one driver connection, used by one goroutine.
type conn struct {
	t       *Target
	dc      driver.Conn
	execer  driver.ExecerContext
	db      uintptr   // the sqlite3* handle under dc
	tls     *libc.TLS // for the few direct calls into SQLite, on the owner goroutine
	key     uintptr   // this Conn in conns, for busyHandler
	wal     bool      // journal_mode is WAL
	dead    atomic.Bool
	mu      sync.Mutex // held by interrupt and Close: Close must not free db under it
	closed  bool       // under mu
	pending bool       // begin=auto: Begin was called, BEGIN is not sent yet
	lead    *stmt      // begin=auto: the reading statement that began the current deferred transaction
	stmts   map[*stmt]struct{}

	// Transaction control, prepared once.
	beginStmt, beginDeferred, beginImmediate, commit, rollback driver.StmtExecContext

	// Cancellation interrupts the statement (see target.Canceler), under mu, so that
	// end waits until the interrupt has been delivered: it must not land on a later,
	// unrelated statement.
	cancel target.Canceler

	// Set by busyHandler during the current call: it gave up after the whole busy
	// timeout. timer is its reusable sleep.
	busyTimedOut bool
	timer        *time.Timer
}

var _ target.Conn = (*conn)(nil)

// errClosed is the error of calls on a closed connection.
func errClosed() error {
	return target.Errorf(target.ClassConnection, "", "the SQLite connection is closed")
}

func newConn(t *Target, dc driver.Conn) (*conn, error) {
	c := &conn{t: t, dc: dc, stmts: map[*stmt]struct{}{}}
	c.cancel.Mu, c.cancel.Interrupt = &c.mu, c.interrupt
	var ok bool
	if c.execer, ok = dc.(driver.ExecerContext); !ok {
		return nil, target.Errorf(target.ClassOther, "", "modernc.org/sqlite connection lacks ExecerContext")
	}
	db, err := dbHandle(dc)
	if err != nil {
		return nil, err
	}
	c.db = db
	c.tls = libc.NewTLS()
	if err := c.installBusyHandler(); err != nil {
		c.releaseHandle()
		return nil, err
	}
	return c, nil
}

// prepareControl prepares the transaction control statements.
func (c *conn) prepareControl() error {
	begin := "BEGIN"
	switch c.t.opts.begin {
	case beginImmediate:
		begin = "BEGIN IMMEDIATE"
	case beginExclusive:
		begin = "BEGIN EXCLUSIVE"
	}
	for _, p := range []struct {
		sql string
		st  *driver.StmtExecContext
	}{
		{begin, &c.beginStmt}, {"BEGIN", &c.beginDeferred}, {"BEGIN IMMEDIATE", &c.beginImmediate},
		{"COMMIT", &c.commit}, {"ROLLBACK", &c.rollback},
	} {
		ds, err := c.dc.Prepare(p.sql)
		if err != nil {
			return c.fail(err, p.sql)
		}
		x, ok := ds.(driver.StmtExecContext)
		if !ok {
			_ = ds.Close()
			return target.Errorf(target.ClassOther, "", "modernc.org/sqlite statement lacks StmtExecContext")
		}
		*p.st = x
	}
	return nil
}

// Dialect is SQLite's; workloads that only get a Conn find it here.
func (c *conn) Dialect() target.Dialect { return *SQLDialect }

// begin arms cancellation for one call on c. It fails if ctx is already done or the
// connection is closed.
func (c *conn) begin(ctx context.Context) error {
	if c.closed {
		return errClosed()
	}
	c.busyTimedOut = false
	if !c.cancel.Arm(ctx) {
		return classify(ctx.Err(), "", target.ClassTimeout)
	}
	return nil
}

// interrupt stops the statement in flight; the Canceler calls it holding mu.
func (c *conn) interrupt() {
	if !c.closed {
		c.interruptLocked()
	}
}

// end disarms cancellation and turns err into a *target.Error. sql is the statement
// the call ran, for telling a missing table from other errors.
func (c *conn) end(ctx context.Context, err error, sql string) error {
	if c.cancel.Armed() {
		if c.cancel.Disarm() {
			// The context ended during the call and the statement was interrupted
			// (or had just finished). SQLite clears the interrupt when the next
			// statement starts; the connection stays usable.
			c.waitInterrupt()
			if err != nil {
				return classify(ctx.Err(), "", target.ClassTimeout)
			}
			return nil
		}
		if err != nil && ctx.Err() != nil {
			// busyHandler gave up because ctx ended, before the AfterFunc ran.
			return classify(ctx.Err(), "", target.ClassTimeout)
		}
	}
	if err == nil {
		return nil
	}
	return c.fail(err, sql)
}

// fail classifies err from running sql. A plain SQLITE_BUSY is a lock wait timeout
// only if busyHandler waited the whole busy timeout; otherwise SQLite refused to wait
// because waiting could not help (see the package comment). A SQLITE_ERROR is
// ClassUndefined when a table the statement names does not exist.
func (c *conn) fail(err error, sql string) *target.Error {
	busy := target.ClassTimeout
	if !c.busyTimedOut {
		busy = target.ClassDeadlock
		if c.wal {
			busy = target.ClassSerialization
		}
	}
	e := classify(err, "", busy)
	if e.Class == target.ClassOther && sqliteCode(err) == codeError && sql != "" && !c.closed {
		if name := c.missingTable(sql); name != "" {
			e.Class = target.ClassUndefined
		}
	}
	return e
}

// codeError is SQLITE_ERROR, the generic code SQLite gives syntax errors and missing
// tables, columns and functions alike.
const codeError = 1

// missingTable returns the first table that sql names and the database does not have,
// or "" if there is none (or checking failed).
func (c *conn) missingTable(sql string) string {
	for _, name := range referencedTables(sql) {
		q := "SELECT count(*) FROM pragma_table_list WHERE name = ? COLLATE NOCASE"
		args := []target.Value{target.Text([]byte(name.table))}
		if name.schema != "" {
			q += " AND schema = ? COLLATE NOCASE"
			args = append(args, target.Text([]byte(name.schema)))
		}
		rows, err := c.query(q, args)
		if err != nil || len(rows) != 1 || len(rows[0]) != 1 {
			return ""
		}
		if rows[0][0] == "0" {
			return name.table
		}
	}
	return ""
}

// Alive reports whether the connection can still be used. An interrupted or failed
// statement leaves a SQLite connection usable; only Close ends it.
func (c *conn) Alive() bool { return !c.dead.Load() }

// ID is 0: a SQLite connection has no server-side id.
func (c *conn) ID() int64 { return 0 }

// Close finalizes the connection's statements and closes it; it is safe to call more
// than once.
func (c *conn) Close() error {
	if c.closed {
		return nil
	}
	c.cancel.Stop()
	c.dead.Store(true)
	for s := range c.stmts {
		s.finalize()
	}
	for _, st := range []driver.StmtExecContext{c.beginStmt, c.beginDeferred, c.beginImmediate, c.commit, c.rollback} {
		if ds, ok := st.(driver.Stmt); ok && ds != nil {
			_ = ds.Close()
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	err := c.dc.Close()
	c.releaseHandle()
	if c.timer != nil {
		c.timer.Stop()
	}
	if err != nil {
		return classify(err, "closing", target.ClassTimeout)
	}
	return nil
}

// waitInterrupt returns once an AfterFunc that has claimed the call (Disarm reported it)
// has delivered its interrupt: it holds mu while it does.
func (c *conn) waitInterrupt() {
	c.mu.Lock()
	defer c.mu.Unlock()
}

// interruptLocked interrupts the running statement; the caller holds mu.
func (c *conn) interruptLocked() {
	tls := libc.NewTLS()
	defer tls.Close()
	interruptDB(tls, c.db)
}

// startPending sends the BEGIN that Begin left for the first statement (begin=auto):
// BEGIN IMMEDIATE when that statement writes, or when it is a prepared statement
// whose transactions went on to write before (see the package comment), BEGIN
// (deferred) otherwise. lead is that statement, nil for Exec, Query and Load.
func (c *conn) startPending(writes bool, lead *stmt) error {
	if !c.pending {
		return nil
	}
	c.pending = false
	st := c.beginImmediate
	if !writes && (lead == nil || !lead.leadsWrites) {
		st = c.beginDeferred
		c.lead = lead
	}
	_, err := st.ExecContext(bg, nil)
	return err
}

// wrote notes that the current transaction writes: the statement that began it
// starts its later transactions with BEGIN IMMEDIATE.
func (c *conn) wrote() {
	c.lead.leadsWrites = true
	c.lead = nil
}

// Exec runs a statement (or several separated by semicolons) without arguments.
func (c *conn) Exec(ctx context.Context, sql string) error {
	if err := c.begin(ctx); err != nil {
		return err
	}
	if c.lead != nil && writes(sql) {
		c.wrote()
	}
	err := c.startPending(c.pending && writes(sql), nil)
	if err == nil {
		_, err = c.execer.ExecContext(bg, sql, nil)
	}
	return c.end(ctx, err, sql)
}

// Begin starts a transaction in the mode of the begin option. With begin=auto (the
// default) nothing is sent yet: the first statement decides between BEGIN IMMEDIATE
// and BEGIN.
func (c *conn) Begin(ctx context.Context) error {
	if c.t.opts.begin == beginAuto {
		if c.closed {
			return errClosed()
		}
		if err := ctx.Err(); err != nil {
			return classify(err, "", target.ClassTimeout)
		}
		c.pending, c.lead = true, nil
		return nil
	}
	return c.control(ctx, c.beginStmt, "BEGIN")
}

// Commit commits the current transaction. A transaction begun with begin=auto that
// ran no statement has nothing to commit.
func (c *conn) Commit(ctx context.Context) error {
	c.lead = nil
	if c.pending {
		c.pending = false
		return nil
	}
	return c.control(ctx, c.commit, "COMMIT")
}

// Rollback rolls back the current transaction; outside one it does nothing. SQLite
// may already have rolled back after an error (an interrupt, a full disk), so it asks
// SQLite rather than keeping its own account.
func (c *conn) Rollback(ctx context.Context) error {
	c.pending, c.lead = false, nil
	if c.closed || !c.inTransaction() {
		return nil
	}
	return c.control(ctx, c.rollback, "ROLLBACK")
}

func (c *conn) control(ctx context.Context, st driver.StmtExecContext, sql string) error {
	if err := c.begin(ctx); err != nil {
		return err
	}
	_, err := st.ExecContext(bg, nil)
	return c.end(ctx, err, "")
}

// Query runs a setup statement and returns its rows as text; NULL is "".
func (c *conn) Query(ctx context.Context, sql string, args ...target.Value) ([][]string, error) {
	if err := c.begin(ctx); err != nil {
		return nil, err
	}
	if c.lead != nil && writes(sql) {
		c.wrote()
	}
	err := c.startPending(c.pending && writes(sql), nil)
	var out [][]string
	if err == nil {
		out, err = c.query(sql, args)
	}
	return out, c.end(ctx, err, sql)
}

func (c *conn) query(sql string, args []target.Value) ([][]string, error) {
	ds, err := c.dc.Prepare(sql)
	if err != nil {
		return nil, err
	}
	defer ds.Close()
	if n := countParams(sql); n >= 0 && n != len(args) {
		return nil, target.Errorf(target.ClassOther, "", "statement has %d placeholders but %d arguments were given", n, len(args))
	}
	var b binder
	named := b.bind(make([]driver.NamedValue, len(args)), args)
	rows, err := ds.(driver.StmtQueryContext).QueryContext(bg, named)
	if err != nil {
		return nil, err
	}
	dest := make([]driver.Value, len(rows.Columns()))
	var out [][]string
	for {
		if err := rows.Next(dest); err != nil {
			if err == io.EOF {
				break
			}
			_ = rows.Close()
			return nil, err
		}
		row := make([]string, len(dest))
		for i, v := range dest {
			row[i] = string(appendText(nil, v))
		}
		out = append(out, row)
	}
	return out, rows.Close()
}

// binder turns Values into driver arguments. Text is passed as a string so that
// SQLite stores TEXT, not BLOB; the string shares the Value's bytes, which the driver
// copies into SQLite before the call returns. Times are rendered into buf.
type binder struct {
	buf   []byte
	times []timeRef
}

// timeRef is where buf holds the rendering of argument idx.
type timeRef struct{ idx, start, end int }

// timeLayout is how timestamps are stored: text that sorts in time order and that
// SQLite's date and time functions read.
const timeLayout = "2006-01-02 15:04:05.000000"

func (b *binder) bind(named []driver.NamedValue, args []target.Value) []driver.NamedValue {
	b.buf, b.times = b.buf[:0], b.times[:0]
	for i := range args {
		v := &args[i]
		named[i].Ordinal = i + 1
		switch v.Kind {
		case target.KindInt:
			named[i].Value = v.Int
		case target.KindFloat:
			named[i].Value = v.Float
		case target.KindText:
			named[i].Value = bytesString(v.Text)
		case target.KindTime:
			start := len(b.buf)
			b.buf = v.Time.AppendFormat(b.buf, timeLayout)
			b.times = append(b.times, timeRef{i, start, len(b.buf)})
			named[i].Value = nil
		default:
			named[i].Value = nil
		}
	}
	// Only now: appending may have moved buf.
	for _, t := range b.times {
		named[t.idx].Value = bytesString(b.buf[t.start:t.end])
	}
	return named
}

// bytesString views b as a string without copying; see binder.
func bytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// appendText appends a column value from the driver as text.
func appendText(b []byte, v driver.Value) []byte {
	switch v := v.(type) {
	case nil:
		return b
	case string:
		return append(b, v...)
	case []byte:
		return append(b, v...)
	case int64:
		return strconv.AppendInt(b, v, 10)
	case float64:
		return strconv.AppendFloat(b, v, 'g', -1, 64)
	case bool:
		if v {
			return append(b, '1')
		}
		return append(b, '0')
	case time.Time:
		// The driver parses text in columns declared DATE, DATETIME or TIMESTAMP;
		// render it back as it was stored.
		return v.AppendFormat(b, timeLayout)
	}
	return b
}
