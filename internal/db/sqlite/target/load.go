package sqlite

import (
	"context"
	"database/sql/driver"
	"strings"

	"github.com/fathom-lab/fathom/internal/target"
)

// Load limits: rows per transaction, rows per INSERT statement, and SQLite's limit on
// parameters in one statement (SQLITE_MAX_VARIABLE_NUMBER).
//
// Measured with BenchmarkLoad (100,000 sbtest rows, 2 busy cores): a prepared
// single-row INSERT loaded 175,000 rows/s; a prepared 10-row INSERT 290,000, 200-row
// 300,000 and 1000-row 285,000 rows/s, in 10,000-row transactions alike.
const (
	loadBatch     = 10_000
	loadRows      = 100
	maxParameters = 32766
)

// Load inserts rows with a prepared multi-row INSERT INTO table (columns) VALUES
// (?, …), (?, …) of loadRows rows (the last, shorter one prepared for its size), in
// transactions of loadBatch rows (BEGIN IMMEDIATE … COMMIT), or inside the caller's
// transaction if one is open. Values are bound, never spliced into SQL, so quotes and
// NUL bytes are safe by construction. This holds whatever Config.Unprepared says:
// loading is setup, not measurement. It returns the rows committed (in the caller's
// transaction: inserted) before any error.
func (c *conn) Load(ctx context.Context, table string, columns []string, next func(row []target.Value) bool) (int64, error) {
	if len(columns) == 0 {
		return 0, target.Errorf(target.ClassOther, "", "load into %s: no columns", table)
	}
	l := &loader{
		c:       c,
		prefix:  "INSERT INTO " + table + " (" + strings.Join(columns, ", ") + ") VALUES ",
		tuple:   "(" + strings.Repeat("?, ", len(columns)-1) + "?)",
		ncols:   len(columns),
		perStmt: max(1, min(loadRows, maxParameters/len(columns))),
	}
	defer l.close()
	if err := c.begin(ctx); err != nil {
		return 0, err
	}
	err := c.startPending(true, nil)
	if err == nil {
		l.own = !c.inTransaction()
		l.full, err = l.prepare(l.perStmt)
	}
	if err = c.end(ctx, err, l.sql(1)); err != nil {
		return 0, err
	}

	row := make([]target.Value, len(columns))
	var total int64
	more := true
	for more {
		n, err := l.batch(ctx, row, next)
		if !l.own {
			total += n
		}
		if err != nil {
			return total, err
		}
		if l.own {
			total += n
		}
		more = n == loadBatch
	}
	return total, nil
}

// loader holds one Load's statements and the rows of the statement being filled.
type loader struct {
	c       *conn
	prefix  string
	tuple   string
	ncols   int
	perStmt int
	own     bool // Load commits its own transactions

	full  driver.StmtExecContext // prepared for perStmt rows
	named []driver.NamedValue
	refs  []textRef // text and time values in arena, turned into strings at exec
	arena []byte
	rows  int
}

type textRef struct{ idx, start, end int }

func (l *loader) sql(n int) string {
	var b strings.Builder
	b.Grow(len(l.prefix) + n*(len(l.tuple)+2))
	b.WriteString(l.prefix)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(l.tuple)
	}
	return b.String()
}

func (l *loader) prepare(n int) (driver.StmtExecContext, error) {
	ds, err := l.c.dc.Prepare(l.sql(n))
	if err != nil {
		return nil, err
	}
	return ds.(driver.StmtExecContext), nil
}

// batch loads up to loadBatch rows in one transaction (or the caller's) and returns
// how many it inserted; with an error, those of its own transaction are rolled back.
func (l *loader) batch(ctx context.Context, row []target.Value, next func([]target.Value) bool) (int64, error) {
	c := l.c
	if err := c.begin(ctx); err != nil {
		return 0, err
	}
	var err error
	if l.own {
		_, err = c.beginImmediate.ExecContext(bg, nil)
	}
	var n int64
	for err == nil && n < loadBatch && next(row) {
		l.add(row)
		clear(row)
		n++
		if l.rows == l.perStmt {
			err = l.flush(ctx)
		}
	}
	if err == nil && l.rows > 0 {
		err = l.flush(ctx)
	}
	if err == nil && l.own {
		_, err = c.commit.ExecContext(bg, nil)
	}
	if err != nil {
		if l.own {
			if c.inTransaction() {
				_, _ = c.rollback.ExecContext(bg, nil)
			}
			n = 0
		} else {
			n -= int64(l.rows) // added but not inserted
		}
		l.reset()
		return n, c.end(ctx, err, l.sql(1))
	}
	return n, c.end(ctx, nil, "")
}

// add appends a row to the statement being filled. Text is copied into the arena: the
// caller may reuse its buffers.
func (l *loader) add(row []target.Value) {
	for i := range row {
		v := &row[i]
		idx := len(l.named)
		nv := driver.NamedValue{Ordinal: idx + 1}
		switch v.Kind {
		case target.KindInt:
			nv.Value = v.Int
		case target.KindFloat:
			nv.Value = v.Float
		case target.KindText, target.KindTime:
			start := len(l.arena)
			if v.Kind == target.KindText {
				l.arena = append(l.arena, v.Text...)
			} else {
				l.arena = v.Time.AppendFormat(l.arena, timeLayout)
			}
			l.refs = append(l.refs, textRef{idx, start, len(l.arena)})
			nv.Value = ""
		}
		l.named = append(l.named, nv)
	}
	l.rows++
}

// flush inserts the rows added since the last flush.
func (l *loader) flush(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		// An interrupt that came between statements is lost when the next one
		// starts, so look (once per statement of loadRows rows, not per row).
		return err
	}
	for _, r := range l.refs {
		l.named[r.idx].Value = bytesString(l.arena[r.start:r.end])
	}
	st := l.full
	if l.rows != l.perStmt {
		var err error
		if st, err = l.prepare(l.rows); err != nil {
			return err
		}
		defer st.(driver.Stmt).Close()
	}
	_, err := st.ExecContext(bg, l.named)
	if err == nil {
		l.reset()
	}
	return err
}

func (l *loader) reset() {
	clear(l.named)
	l.named, l.refs, l.arena, l.rows = l.named[:0], l.refs[:0], l.arena[:0], 0
}

func (l *loader) close() {
	if l.full != nil && !l.c.closed {
		_ = l.full.(driver.Stmt).Close()
	}
}
