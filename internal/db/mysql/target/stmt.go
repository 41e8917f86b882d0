package mysql

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"

	"github.com/fathom-lab/fathom/internal/target"
)

// stmt is a statement prepared on one Conn, or in simple query mode its text, sent
// with the arguments interpolated by the driver.
type stmt struct {
	c     *conn
	ds    preparedStmt // nil in simple query mode
	sql   string
	query bool // read rows (SELECT …) rather than rows affected
	nIn   int  // placeholders, -1 if unknown (simple mode)
	args  []driver.Value
	dest  []driver.Value
	x     exchange // target.Exchanger's state
}

var _ target.Stmt = (*stmt)(nil)

// Prepare prepares sql on the server, or with Config.Unprepared keeps its text. Whether
// Run reads rows or rows affected is decided here from the statement's first keyword.
func (c *conn) Prepare(ctx context.Context, sql string) (target.Stmt, error) {
	s := &stmt{c: c, sql: sql, query: returnsRows(sql), nIn: -1}
	if c.t.mc.InterpolateParams {
		return s, nil
	}
	if err := c.begin(ctx); err != nil {
		return nil, err
	}
	ds, err := c.dc.Prepare(sql)
	if err = c.end(ctx, err); err != nil {
		return nil, err
	}
	s.ds = ds
	s.nIn = ds.NumInput()
	s.prepareExchange(c.dc, ds)
	s.args = make([]driver.Value, s.nIn)
	s.dest = make([]driver.Value, 0, 8)
	return s, nil
}

// Run executes the statement. Rows are read one by one into a reused buffer and
// counted; with res.Keep the first row is copied into res.First as text (NULL as
// KindNull), reusing res.First and its buffers.
func (s *stmt) Run(ctx context.Context, args []target.Value, res *target.Result) error {
	if s.nIn >= 0 && len(args) != s.nIn {
		return target.Errorf(target.ClassOther, "", "statement has %d placeholders but %d arguments were given", s.nIn, len(args))
	}
	if s.nIn < 0 && len(s.args) != len(args) {
		s.args = make([]driver.Value, len(args))
	}
	for i := range args {
		s.args[i] = driverValue(&args[i])
	}
	res.Rows, res.RowsAffected = 0, 0
	c := s.c
	if err := c.begin(ctx); err != nil {
		return err
	}
	var err error
	if s.query {
		err = s.runQuery(res)
	} else {
		err = s.runExec(res)
	}
	return c.end(ctx, err)
}

func (s *stmt) runExec(res *target.Result) error {
	var r driver.Result
	var err error
	if s.ds != nil {
		r, err = s.ds.Exec(s.args)
	} else {
		r, err = s.c.execer.Exec(s.sql, s.args)
		if errors.Is(err, driver.ErrSkip) {
			r, err = s.fallback(func(ds preparedStmt) (driver.Result, error) { return ds.Exec(s.args) })
		}
	}
	if err != nil {
		return err
	}
	res.RowsAffected, _ = r.RowsAffected()
	if res.Keep {
		res.First = res.First[:0]
	}
	return nil
}

func (s *stmt) runQuery(res *target.Result) error {
	var rows driver.Rows
	var err error
	if s.ds != nil {
		rows, err = s.ds.Query(s.args)
	} else {
		rows, err = s.c.queryer.Query(s.sql, s.args)
		if errors.Is(err, driver.ErrSkip) {
			var st preparedStmt
			if st, err = s.c.dc.Prepare(s.sql); err == nil {
				defer st.Close()
				rows, err = st.Query(s.args)
			}
		}
	}
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

// fallback prepares, runs and closes the statement: simple query mode uses it when the
// driver cannot interpolate the arguments.
func (s *stmt) fallback(run func(preparedStmt) (driver.Result, error)) (driver.Result, error) {
	ds, err := s.c.dc.Prepare(s.sql)
	if err != nil {
		return nil, err
	}
	defer ds.Close()
	return run(ds)
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

// Close releases the statement on the server.
func (s *stmt) Close() error {
	if s.ds == nil {
		return nil
	}
	ds := s.ds
	s.ds = nil
	if !s.c.Alive() {
		return nil
	}
	if err := ds.Close(); err != nil {
		return s.c.fail(err, "closing statement")
	}
	return nil
}

// returnsRows reports whether a statement produces a result set, from its first
// keyword (after comments and opening parentheses) or a RETURNING clause.
func returnsRows(sql string) bool {
	word, rest := firstWord(sql)
	switch upper(word) {
	case "SELECT", "SHOW", "WITH", "VALUES", "TABLE", "DESCRIBE", "DESC", "EXPLAIN",
		"CALL", "HELP", "CHECK", "CHECKSUM", "ANALYZE", "OPTIMIZE", "REPAIR", "EXECUTE":
		return true
	case "INSERT", "REPLACE", "DELETE":
		return hasWord(rest, "RETURNING")
	}
	return false
}

// firstWord returns the first keyword of sql and what follows it.
func firstWord(sql string) (string, string) {
	i := 0
	for i < len(sql) {
		switch c := sql[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '(':
			i++
		case c == '#' || c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			end := indexFrom(sql, "*/", i+2)
			if end < 0 {
				return "", ""
			}
			i = end + 2
		default:
			j := i
			for j < len(sql) && isWordByte(sql[j]) {
				j++
			}
			return sql[i:j], sql[j:]
		}
	}
	return "", ""
}

// hasWord reports whether word (upper case) appears in sql as a whole word outside
// quotes and comments.
func hasWord(sql, word string) bool {
	var quote byte
	for i := 0; i < len(sql); i++ {
		c := sql[i]
		switch {
		case quote != 0:
			if c == '\\' && quote != '`' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"' || c == '`':
			quote = c
		case isWordByte(c):
			j := i
			for j < len(sql) && isWordByte(sql[j]) {
				j++
			}
			if upper(sql[i:j]) == word {
				return true
			}
			i = j - 1
		}
	}
	return false
}

func indexFrom(s, sub string, from int) int {
	for i := from; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func upper(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= 'a' && s[i] <= 'z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'a' && b[j] <= 'z' {
					b[j] -= 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
