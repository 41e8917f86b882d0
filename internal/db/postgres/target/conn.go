package postgres

import (
	"context"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fathom-lab/fathom/internal/target"
)

// bg is the only context pgconn ever sees: with it pgconn starts no watcher goroutine.
var bg = context.Background()

// conn is one PostgreSQL connection, used by one goroutine.
type conn struct {
	t    *Target
	pg   *pgconn.PgConn
	dead atomic.Bool
	next int       // for statement names
	pipe *pipeline // reused by StartPipeline

	// Cancellation closes the socket (see the package comment and target.Canceler).
	cancel target.Canceler
}

var _ target.Conn = (*conn)(nil)

func newConn(t *Target, pg *pgconn.PgConn) *conn {
	c := &conn{t: t, pg: pg}
	c.cancel.Interrupt = c.interrupt
	return c
}

// Dialect lets workloads that hold only a Conn render SQL for it.
func (c *conn) Dialect() target.Dialect { return *SQLDialect }

// begin arms cancellation for one call on c. It fails if ctx is already done.
func (c *conn) begin(ctx context.Context) error {
	if c.dead.Load() {
		return &target.Error{Class: target.ClassConnection, Msg: "connection lost"}
	}
	if !c.cancel.Arm(ctx) {
		return ctxError(ctx.Err())
	}
	return nil
}

// interrupt cancels the call in flight by closing the connection.
func (c *conn) interrupt() {
	c.dead.Store(true)
	_ = c.pg.Conn().Close()
}

// end disarms cancellation and turns err into a *target.Error, marking the connection
// dead after connection-class errors and cancellations.
func (c *conn) end(ctx context.Context, err error) error {
	if c.cancel.Disarm() {
		c.dead.Store(true)
		if err != nil || ctx.Err() != nil {
			return ctxError(ctx.Err())
		}
	}
	if err == nil {
		return nil
	}
	return c.fail(err, "")
}

func (c *conn) fail(err error, what string) *target.Error {
	e := classify(err, what, c.t.pc.Password, c.pg.IsClosed())
	if e.Class == target.ClassConnection || c.pg.IsClosed() {
		e.Class = target.ClassConnection
		c.dead.Store(true)
	}
	return e
}

func ctxError(err error) *target.Error {
	if err == context.DeadlineExceeded {
		return &target.Error{Class: target.ClassTimeout, Msg: "deadline exceeded", Err: err}
	}
	return &target.Error{Class: target.ClassCanceled, Msg: "canceled", Err: err}
}

// Alive reports whether the connection can still be used.
func (c *conn) Alive() bool { return !c.dead.Load() && !c.pg.IsClosed() }

// ID is the server process id of the session.
func (c *conn) ID() int64 { return int64(c.pg.PID()) }

// Close closes the connection; it is safe to call more than once.
func (c *conn) Close() error {
	c.cancel.Stop()
	if c.dead.Swap(true) && c.pg.IsClosed() {
		return nil
	}
	ctx, cancel := context.WithTimeout(bg, time.Second)
	defer cancel()
	_ = c.pg.Close(ctx)
	return nil
}

// Exec runs statements without arguments or results, with the simple query protocol.
func (c *conn) Exec(ctx context.Context, sql string) error {
	if err := c.begin(ctx); err != nil {
		return err
	}
	return c.end(ctx, c.exec(sql))
}

func (c *conn) exec(sql string) error {
	mr := c.pg.Exec(bg, sql)
	for mr.NextResult() {
		rr := mr.ResultReader()
		for rr.NextRow() {
		}
		if _, err := rr.Close(); err != nil {
			_ = mr.Close()
			return err
		}
	}
	return mr.Close()
}

// Begin starts a transaction.
func (c *conn) Begin(ctx context.Context) error { return c.Exec(ctx, "BEGIN") }

// Commit commits the current transaction.
func (c *conn) Commit(ctx context.Context) error { return c.Exec(ctx, "COMMIT") }

// InTransaction reports whether the session is inside a transaction block (pgbench
// aborts a client whose script ends in one).
func (c *conn) InTransaction() bool { return c.Alive() && c.pg.TxStatus() != 'I' }

// Rollback rolls back the current transaction; outside one it does nothing.
func (c *conn) Rollback(ctx context.Context) error {
	if c.Alive() && c.pg.TxStatus() == 'I' {
		return nil
	}
	return c.Exec(ctx, "ROLLBACK")
}

// Query runs a statement and returns its rows as text; NULL is "". Arguments are sent
// as text parameters ($1 … or '?', which is rewritten).
func (c *conn) Query(ctx context.Context, sql string, args ...target.Value) ([][]string, error) {
	if err := c.begin(ctx); err != nil {
		return nil, err
	}
	out, err := c.query(sql, args)
	return out, c.end(ctx, err)
}

func (c *conn) query(sql string, args []target.Value) ([][]string, error) {
	var out [][]string
	if len(args) == 0 {
		mr := c.pg.Exec(bg, sql)
		for mr.NextResult() {
			rr := mr.ResultReader()
			out = out[:0]
			for rr.NextRow() {
				out = append(out, textRow(rr.Values()))
			}
			if _, err := rr.Close(); err != nil {
				_ = mr.Close()
				return nil, err
			}
		}
		return out, mr.Close()
	}
	params := make([][]byte, len(args))
	for i := range args {
		params[i] = appendParam(nil, &args[i])
	}
	rr := c.pg.ExecParams(bg, SQLDialect.Rebind(sql), params, nil, nil, nil)
	for rr.NextRow() {
		out = append(out, textRow(rr.Values()))
	}
	_, err := rr.Close()
	return out, err
}

func textRow(vals [][]byte) []string {
	row := make([]string, len(vals))
	for i, v := range vals {
		row[i] = string(v)
	}
	return row
}

// emptyText is sent for an empty text value: pgconn sends a nil slice as NULL.
var emptyText = []byte{}

// appendParam renders a value in PostgreSQL's text format into buf; nil is NULL.
func appendParam(buf []byte, v *target.Value) []byte {
	switch v.Kind {
	case target.KindInt:
		return strconv.AppendInt(buf[:0], v.Int, 10)
	case target.KindText:
		if v.Text == nil {
			return emptyText
		}
		return v.Text
	case target.KindFloat:
		return strconv.AppendFloat(buf[:0], v.Float, 'g', -1, 64)
	case target.KindTime:
		return v.Time.AppendFormat(buf[:0], "2006-01-02 15:04:05.999999")
	}
	return nil
}
