package mysql

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/fathom-lab/fathom/internal/target"
)

// The driver's context-free methods, which this package calls on purpose (see the
// package comment: the context variants cost an allocation and about 10µs of CPU per
// statement). database/sql/driver deprecates them for drivers to implement, not for
// callers; go-sql-driver/mysql implements them and newConn checks. Named here, with
// the same method sets as driver.Execer, driver.Queryer and driver.Stmt, so that the
// choice is made once rather than at every call.
type (
	contextFreeExecer interface {
		Exec(query string, args []driver.Value) (driver.Result, error)
	}
	contextFreeQueryer interface {
		Query(query string, args []driver.Value) (driver.Rows, error)
	}
	preparedStmt interface {
		Close() error
		NumInput() int
		Exec(args []driver.Value) (driver.Result, error)
		Query(args []driver.Value) (driver.Rows, error)
	}
)

// conn is one MySQL connection: one driver connection, used by one goroutine.
type conn struct {
	t  *Target
	dc driver.Conn
	// The driver's connection implements these; newConn checks.
	execer  contextFreeExecer
	queryer contextFreeQueryer
	valid   driver.Validator
	nc      net.Conn // the network connection under dc, closed to cancel a call
	id      int64
	dead    atomic.Bool

	// Cancellation closes the socket (see target.Canceler).
	cancel target.Canceler

	maxPacket int // max_allowed_packet, read by the first Load

	xbuf, rbuf []byte // a statement's request and reply, for RunDirect

	qx    queryExchange // QueryExchanger's
	qcaps int8          // whether texts can be exchanged: 0 not asked yet, 1 yes, -1 no
}

var _ target.Conn = (*conn)(nil)

func newConn(t *Target, dc driver.Conn, nc net.Conn) (*conn, error) {
	c := &conn{t: t, dc: dc, nc: nc}
	c.cancel.Interrupt = c.interrupt
	var ok1, ok2, ok3 bool
	c.execer, ok1 = dc.(contextFreeExecer)
	c.queryer, ok2 = dc.(contextFreeQueryer)
	c.valid, ok3 = dc.(driver.Validator)
	if !ok1 || !ok2 || !ok3 || nc == nil {
		return nil, target.Errorf(target.ClassOther, "", "go-sql-driver/mysql connection lacks an expected interface")
	}
	return c, nil
}

// begin arms cancellation for one call on c. It fails if ctx is already done.
func (c *conn) begin(ctx context.Context) error {
	if !c.cancel.Arm(ctx) {
		return classify(ctx.Err(), "", "")
	}
	return nil
}

// interrupt cancels the call in flight by closing the connection.
func (c *conn) interrupt() {
	c.dead.Store(true)
	_ = c.nc.Close()
}

// end disarms cancellation and turns err into a *target.Error, marking the connection
// dead after connection-class errors and cancellations.
func (c *conn) end(ctx context.Context, err error) error {
	if c.cancel.Disarm() {
		// The context fired during the call and closed the connection.
		c.dead.Store(true)
		if err != nil || ctx.Err() != nil {
			return classify(ctx.Err(), "", "")
		}
	}
	if err == nil {
		return nil
	}
	return c.fail(err, "")
}

func (c *conn) fail(err error, what string) *target.Error {
	e := classify(err, what, c.t.mc.Passwd)
	if e.Class == target.ClassConnection {
		c.dead.Store(true)
	}
	return e
}

// Alive reports whether the connection can still be used.
func (c *conn) Alive() bool { return !c.dead.Load() && c.valid.IsValid() }

// ID is the server's connection id (CONNECTION_ID()).
func (c *conn) ID() int64 { return c.id }

// Close closes the connection; it is safe to call more than once.
func (c *conn) Close() error {
	c.cancel.Stop()
	c.dead.Store(true)
	err := c.dc.Close()
	_ = c.nc.Close()
	if err != nil && !connectionErr(err) {
		return classify(err, "closing", "")
	}
	return nil
}

// Exec runs a statement without arguments or results.
func (c *conn) Exec(ctx context.Context, sql string) error {
	if err := c.begin(ctx); err != nil {
		return err
	}
	_, err := c.execer.Exec(sql, nil)
	return c.end(ctx, err)
}

// Begin starts a transaction.
func (c *conn) Begin(ctx context.Context) error { return c.Exec(ctx, "BEGIN") }

// Commit commits the current transaction.
func (c *conn) Commit(ctx context.Context) error { return c.Exec(ctx, "COMMIT") }

// Rollback rolls back the current transaction; outside one it does nothing.
func (c *conn) Rollback(ctx context.Context) error { return c.Exec(ctx, "ROLLBACK") }

// Query runs a setup statement and returns its rows as text; NULL is "". With
// arguments it is prepared (or interpolated in simple query mode).
func (c *conn) Query(ctx context.Context, sql string, args ...target.Value) ([][]string, error) {
	if err := c.begin(ctx); err != nil {
		return nil, err
	}
	out, err := c.query(sql, args)
	return out, c.end(ctx, err)
}

func (c *conn) query(sql string, args []target.Value) ([][]string, error) {
	dargs := make([]driver.Value, len(args))
	for i := range args {
		dargs[i] = driverValue(&args[i])
	}
	var rows driver.Rows
	var err error
	if len(args) == 0 || c.t.mc.InterpolateParams {
		rows, err = c.queryer.Query(sql, dargs)
	}
	if len(args) > 0 && (!c.t.mc.InterpolateParams || errors.Is(err, driver.ErrSkip)) {
		var st preparedStmt
		st, err = c.dc.Prepare(sql)
		if err != nil {
			return nil, err
		}
		defer st.Close()
		if n := st.NumInput(); n >= 0 && n != len(args) {
			return nil, target.Errorf(target.ClassOther, "", "statement has %d placeholders but %d arguments were given", n, len(args))
		}
		rows, err = st.Query(dargs)
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	dest := make([]driver.Value, len(rows.Columns()))
	var out [][]string
	for {
		if err := rows.Next(dest); err != nil {
			if err == io.EOF {
				break
			}
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

// driverValue converts a Value for the driver. Text is not copied; an empty text is
// sent as an empty string (the driver sends a nil []byte as NULL).
func driverValue(v *target.Value) driver.Value {
	switch v.Kind {
	case target.KindInt:
		return v.Int
	case target.KindText:
		if v.Text == nil {
			return emptyText
		}
		return v.Text
	case target.KindFloat:
		return v.Float
	case target.KindTime:
		return v.Time
	}
	return nil
}

var emptyText = []byte{}

// appendText appends a column value from the driver as text.
func appendText(b []byte, v driver.Value) []byte {
	switch v := v.(type) {
	case nil:
		return b
	case []byte:
		return append(b, v...)
	case string:
		return append(b, v...)
	case int64:
		return strconv.AppendInt(b, v, 10)
	case uint64:
		return strconv.AppendUint(b, v, 10)
	case float64:
		return strconv.AppendFloat(b, v, 'g', -1, 64)
	case float32:
		return strconv.AppendFloat(b, float64(v), 'g', -1, 32)
	case bool:
		if v {
			return append(b, '1')
		}
		return append(b, '0')
	case time.Time:
		return appendTime(b, v)
	}
	return b
}
