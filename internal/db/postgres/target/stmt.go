package postgres

import (
	"context"
	"strconv"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fathom-lab/fathom/internal/target"
)

// stmt is a statement prepared on one Conn, or in simple query mode its text.
type stmt struct {
	c      *conn
	sd     *pgconn.StatementDescription // nil in simple query mode
	sql    string                       // with $n placeholders
	nIn    int                          // placeholders, -1 if unknown (simple mode)
	params [][]byte                     // what is sent: scratch or the caller's text
	buf    [][]byte                     // per-parameter scratch for numbers and times
	x      exchange                     // target.Exchanger's state
}

var _ target.Stmt = (*stmt)(nil)

// Prepare prepares sql ('?' placeholders) on the server, or with Config.Unprepared
// keeps its text for unnamed Parse/Bind/Execute on every call.
func (c *conn) Prepare(ctx context.Context, sql string) (target.Stmt, error) {
	s := &stmt{c: c, sql: SQLDialect.Rebind(sql), nIn: -1}
	if c.t.cfg.Unprepared {
		return s, nil
	}
	if err := c.begin(ctx); err != nil {
		return nil, err
	}
	c.next++
	sd, err := c.pg.Prepare(bg, "fathom_"+strconv.Itoa(c.next), s.sql, nil)
	if err = c.end(ctx, err); err != nil {
		return nil, err
	}
	s.sd = sd
	s.nIn = len(sd.ParamOIDs)
	s.params = make([][]byte, s.nIn)
	s.buf = make([][]byte, s.nIn)
	return s, nil
}

// Run executes the statement. Rows are read and counted; with res.Keep the first row
// is copied into res.First as text (NULL as KindNull), reusing its buffers.
func (s *stmt) Run(ctx context.Context, args []target.Value, res *target.Result) error {
	if s.nIn >= 0 && len(args) != s.nIn {
		return target.Errorf(target.ClassOther, "", "statement has %d placeholders but %d arguments were given", s.nIn, len(args))
	}
	if len(s.params) != len(args) {
		s.params = make([][]byte, len(args))
		s.buf = make([][]byte, len(args))
	}
	for i := range args {
		p := appendParam(s.buf[i], &args[i])
		if args[i].Kind != target.KindText {
			s.buf[i] = p
		}
		s.params[i] = p
	}
	res.Rows, res.RowsAffected = 0, 0
	c := s.c
	if err := c.begin(ctx); err != nil {
		return err
	}
	var rr *pgconn.ResultReader
	if s.sd != nil {
		rr = c.pg.ExecStatement(bg, s.sd, s.params, nil, nil)
	} else {
		rr = c.pg.ExecParams(bg, s.sql, s.params, nil, nil, nil)
	}
	if res.Names {
		res.Columns = res.Columns[:0]
		for _, fd := range rr.FieldDescriptions() {
			res.Columns = append(res.Columns, fd.Name)
		}
	}
	var count int64
	for rr.NextRow() {
		if res.Keeps(count) {
			keep(res, count, rr.Values())
		}
		count++
	}
	tag, err := rr.Close()
	clear(s.params)
	if err == nil {
		res.Rows = count
		if tag.Select() {
			res.RowsAffected = 0
		} else {
			res.RowsAffected = tag.RowsAffected()
		}
		if count == 0 && res.Keep {
			res.First = res.First[:0]
		}
	}
	return c.end(ctx, err)
}

// keep copies row i into res.First as text values, reusing its slice and buffers.
func keep(res *target.Result, i int64, vals [][]byte) {
	row := res.RowAt(i, len(vals))
	for i, v := range vals {
		f := &row[i]
		if v == nil {
			*f = target.Value{Kind: target.KindNull, Text: f.Text[:0]}
			continue
		}
		*f = target.Value{Kind: target.KindText, Text: append(f.Text[:0], v...)}
	}
}

// Close releases the statement on the server.
func (s *stmt) Close() error {
	if s.sd == nil {
		return nil
	}
	name := s.sd.Name
	s.sd = nil
	if !s.c.Alive() {
		return nil
	}
	if err := s.c.pg.Deallocate(bg, name); err != nil {
		return s.c.fail(err, "closing statement")
	}
	return nil
}
