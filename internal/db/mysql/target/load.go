package mysql

import (
	"context"
	"database/sql/driver"
	"strings"

	"github.com/fathom-lab/fathom/internal/target"
)

// Load limits: rows per INSERT, bytes of values per INSERT (further capped at a quarter
// of max_allowed_packet), and the server's limit on placeholders in one statement.
const (
	loadRows        = 1000
	loadBytes       = 1 << 20
	maxPlaceholders = 65535
)

// Load inserts rows with multi-row INSERT INTO table (columns) VALUES (?, …), (?, …)
// statements, each its own autocommit statement unless the caller opened a transaction.
//
// Values travel as prepared-statement parameters in the binary protocol, so no text is
// ever escaped: quotes, backslashes, NUL bytes and any sql_mode (NO_BACKSLASH_ESCAPES
// included) are safe by construction. A batch ends at loadRows rows or loadBytes of
// values, whichever comes first; the statement for a full batch is prepared once, one
// for a shorter batch (the last one, or one cut by size) is prepared for that batch.
// This holds whatever Config.Unprepared says: loading is setup, not measurement.
func (c *conn) Load(ctx context.Context, table string, columns []string, next func(row []target.Value) bool) (int64, error) {
	if len(columns) == 0 {
		return 0, target.Errorf(target.ClassOther, "", "load into %s: no columns", table)
	}
	if c.maxPacket == 0 {
		rows, err := c.Query(ctx, "SELECT @@max_allowed_packet")
		if err != nil {
			return 0, err
		}
		c.maxPacket = 4 << 20
		if len(rows) == 1 && len(rows[0]) == 1 {
			if n := parseInt(rows[0][0]); n > 0 {
				c.maxPacket = int(n)
			}
		}
	}
	l := loader{
		c:       c,
		prefix:  "INSERT INTO " + table + " (" + strings.Join(columns, ", ") + ") VALUES ",
		tuple:   "(" + strings.Repeat("?, ", len(columns)-1) + "?)",
		ncols:   len(columns),
		perStmt: min(loadRows, maxPlaceholders/len(columns)),
		budget:  min(loadBytes, c.maxPacket/4),
	}
	defer l.close()
	row := make([]target.Value, len(columns))
	var total int64
	for next(row) {
		l.add(row)
		if l.rows == l.perStmt || len(l.arena) >= l.budget {
			if err := l.flush(ctx); err != nil {
				return total, err
			}
			total += int64(l.done)
		}
		clear(row)
	}
	if l.rows > 0 {
		if err := l.flush(ctx); err != nil {
			return total, err
		}
		total += int64(l.done)
	}
	return total, nil
}

// loader accumulates one batch. Text values are copied into arena (the caller may
// reuse its buffers) and turned into slices of it at flush.
type loader struct {
	c       *conn
	prefix  string
	tuple   string
	ncols   int
	perStmt int
	budget  int

	vals  []driver.Value
	texts []textRef
	arena []byte
	rows  int
	done  int // rows inserted by the last flush

	full preparedStmt // prepared for perStmt rows
}

type textRef struct{ idx, start, end int }

func (l *loader) add(row []target.Value) {
	for i := range row {
		v := &row[i]
		if v.Kind == target.KindText {
			start := len(l.arena)
			l.arena = append(l.arena, v.Text...)
			l.texts = append(l.texts, textRef{len(l.vals), start, len(l.arena)})
			l.vals = append(l.vals, nil)
			continue
		}
		l.vals = append(l.vals, driverValue(v))
	}
	l.rows++
}

func (l *loader) sql(n int) string {
	var b strings.Builder
	b.Grow(len(l.prefix) + n*(len(l.tuple)+2))
	b.WriteString(l.prefix)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(l.tuple)
	}
	return b.String()
}

func (l *loader) flush(ctx context.Context) error {
	for _, t := range l.texts {
		if t.start == t.end {
			l.vals[t.idx] = emptyText
		} else {
			l.vals[t.idx] = l.arena[t.start:t.end:t.end]
		}
	}
	c := l.c
	if err := c.begin(ctx); err != nil {
		return err
	}
	err := l.exec()
	if err = c.end(ctx, err); err != nil {
		return err
	}
	l.done = l.rows
	l.rows = 0
	clear(l.vals)
	l.vals = l.vals[:0]
	l.texts = l.texts[:0]
	l.arena = l.arena[:0]
	return nil
}

func (l *loader) exec() error {
	ds := l.full
	if l.rows != l.perStmt || ds == nil {
		var err error
		ds, err = l.c.dc.Prepare(l.sql(l.rows))
		if err != nil {
			return err
		}
		if l.rows == l.perStmt {
			l.full = ds
		} else {
			defer ds.Close()
		}
	}
	_, err := ds.Exec(l.vals)
	return err
}

func (l *loader) close() {
	if l.full != nil && l.c.Alive() {
		_ = l.full.Close()
	}
}
