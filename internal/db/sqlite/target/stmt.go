package sqlite

import (
	"context"
	"database/sql/driver"
	"io"

	"github.com/fathom-lab/fathom/internal/target"
)

// stmt is a statement prepared on one Conn, or with Config.Unprepared its text,
// prepared and finalized on every Run (what sqlite3_exec does).
type stmt struct {
	c      *conn
	ds     driver.Stmt // nil in unprepared mode or once closed
	q      driver.StmtQueryContext
	x      driver.StmtExecContext
	sql    string
	query  bool // read rows (SELECT …, … RETURNING) rather than rows affected
	writes bool // starts a pending begin=auto transaction with BEGIN IMMEDIATE
	// leadsWrites: a deferred transaction this statement began went on to write,
	// so the transactions it begins from now on start with BEGIN IMMEDIATE.
	leadsWrites bool
	nIn         int // '?' placeholders, -1 if the statement uses numbered or named ones
	closed      bool
	named       []driver.NamedValue
	b           binder
	dest        []driver.Value
}

var _ target.Stmt = (*stmt)(nil)

// Prepare prepares sql, or with Config.Unprepared keeps its text. Whether Run reads
// rows or rows affected is decided here from the statement's text.
func (c *conn) Prepare(ctx context.Context, sql string) (target.Stmt, error) {
	s := &stmt{c: c, sql: sql, query: returnsRows(sql), writes: writes(sql), nIn: countParams(sql)}
	if s.nIn > 0 {
		s.named = make([]driver.NamedValue, s.nIn)
	}
	s.dest = make([]driver.Value, 0, 8)
	if c.t.cfg.Unprepared {
		return s, nil
	}
	if err := c.begin(ctx); err != nil {
		return nil, err
	}
	ds, err := c.dc.Prepare(sql)
	if err = c.end(ctx, err, sql); err != nil {
		return nil, err
	}
	if err := s.use(ds); err != nil {
		_ = ds.Close()
		return nil, err
	}
	c.stmts[s] = struct{}{}
	return s, nil
}

// use makes ds the statement Run executes.
func (s *stmt) use(ds driver.Stmt) error {
	q, ok1 := ds.(driver.StmtQueryContext)
	x, ok2 := ds.(driver.StmtExecContext)
	if !ok1 || !ok2 {
		return target.Errorf(target.ClassOther, "", "modernc.org/sqlite statement lacks StmtQueryContext or StmtExecContext")
	}
	s.ds, s.q, s.x = ds, q, x
	return nil
}

// Run executes the statement. Rows are read one by one into a reused buffer and
// counted; with res.Keep the first row is copied into res.First as text (NULL as
// KindNull), reusing res.First and its buffers.
func (s *stmt) Run(ctx context.Context, args []target.Value, res *target.Result) error {
	if s.closed {
		return target.Errorf(target.ClassOther, "", "statement is closed")
	}
	if s.nIn >= 0 && len(args) != s.nIn {
		return target.Errorf(target.ClassOther, "", "statement has %d placeholders but %d arguments were given", s.nIn, len(args))
	}
	if len(s.named) != len(args) {
		s.named = make([]driver.NamedValue, len(args))
	}
	s.b.bind(s.named, args)
	res.Rows, res.RowsAffected = 0, 0
	c := s.c
	if err := c.begin(ctx); err != nil {
		return err
	}
	if c.lead != nil && s.writes {
		c.wrote()
	}
	err := c.startPending(s.writes, s)
	if err == nil {
		if s.c.t.cfg.Unprepared {
			err = s.runText(res)
		} else {
			err = s.run(res)
		}
	}
	return c.end(ctx, err, s.sql)
}

func (s *stmt) run(res *target.Result) error {
	if s.query {
		return s.runQuery(res)
	}
	r, err := s.x.ExecContext(bg, s.named)
	if err != nil {
		return err
	}
	res.RowsAffected, _ = r.RowsAffected()
	if res.Keep {
		res.First = res.First[:0]
	}
	return nil
}

// runText prepares, runs and finalizes the statement.
func (s *stmt) runText(res *target.Result) error {
	ds, err := s.c.dc.Prepare(s.sql)
	if err != nil {
		return err
	}
	defer func() {
		_ = ds.Close()
		s.ds, s.q, s.x = nil, nil, nil
	}()
	if err := s.use(ds); err != nil {
		return err
	}
	return s.run(res)
}

func (s *stmt) runQuery(res *target.Result) error {
	rows, err := s.q.QueryContext(bg, s.named)
	if err != nil {
		return err
	}
	if res.Names {
		res.Columns = append(res.Columns[:0], rows.Columns()...)
	}
	n := len(rows.Columns())
	if cap(s.dest) < n {
		s.dest = make([]driver.Value, n)
	}
	dest := s.dest[:n]
	var count int64
	for {
		if err = rows.Next(dest); err != nil {
			break
		}
		if res.Keeps(count) {
			keep(res, count, dest)
		}
		count++
	}
	clear(dest) // drop references to the row's strings
	if err != io.EOF {
		_ = rows.Close()
		return err
	}
	res.Rows = count
	if count == 0 && res.Keep {
		res.First = res.First[:0]
	}
	return rows.Close()
}

// keep copies row i into res.First as text values, reusing its slice and buffers.
func keep(res *target.Result, i int64, dest []driver.Value) {
	row := res.RowAt(i, len(dest))
	for i, v := range dest {
		f := &row[i]
		if v == nil {
			*f = target.Value{Kind: target.KindNull, Text: f.Text[:0]}
			continue
		}
		*f = target.Value{Kind: target.KindText, Text: appendText(f.Text[:0], v)}
	}
}

// Close finalizes the statement.
func (s *stmt) Close() error {
	if s.closed {
		return nil
	}
	delete(s.c.stmts, s)
	return s.finalize()
}

func (s *stmt) finalize() error {
	s.closed = true
	ds := s.ds
	s.ds, s.q, s.x = nil, nil, nil
	if ds == nil || s.c.closed {
		return nil
	}
	if err := ds.Close(); err != nil {
		return s.c.fail(err, "")
	}
	return nil
}
