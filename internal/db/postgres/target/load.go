package postgres

import (
	"context"
	"io"
	"strconv"
	"strings"

	"github.com/fathom-lab/fathom/internal/target"
)

// Load streams rows with COPY table (columns) FROM STDIN in text format, as pgbench -i
// does. Rows are encoded as pgconn asks for more data, without a goroutine or an
// intermediate file. A text value containing a NUL byte is an error (PostgreSQL text
// cannot hold one).
func (c *conn) Load(ctx context.Context, table string, columns []string, next func(row []target.Value) bool) (int64, error) {
	if len(columns) == 0 {
		return 0, target.Errorf(target.ClassOther, "", "load into %s: no columns", table)
	}
	r := &copyReader{row: make([]target.Value, len(columns)), next: next}
	if err := c.begin(ctx); err != nil {
		return 0, err
	}
	sql := "COPY " + table + " (" + strings.Join(columns, ", ") + ") FROM STDIN"
	tag, err := c.pg.CopyFrom(bg, r, sql)
	if r.err != nil && err != nil {
		err = r.err
	}
	if err = c.end(ctx, err); err != nil {
		return r.rows, err
	}
	return tag.RowsAffected(), nil
}

// copyReader renders rows in COPY text format on demand.
type copyReader struct {
	row  []target.Value
	next func(row []target.Value) bool
	buf  []byte
	off  int
	rows int64
	done bool
	err  error
}

func (r *copyReader) Read(p []byte) (int, error) {
	for r.off == len(r.buf) {
		if r.done {
			return 0, io.EOF
		}
		r.buf, r.off = r.buf[:0], 0
		for len(r.buf) < 64<<10 {
			clear(r.row)
			if !r.next(r.row) {
				r.done = true
				break
			}
			if err := r.encode(); err != nil {
				r.err = err
				return 0, err
			}
			r.rows++
		}
	}
	n := copy(p, r.buf[r.off:])
	r.off += n
	return n, nil
}

func (r *copyReader) encode() error {
	for i := range r.row {
		if i > 0 {
			r.buf = append(r.buf, '\t')
		}
		v := &r.row[i]
		switch v.Kind {
		case target.KindNull:
			r.buf = append(r.buf, '\\', 'N')
		case target.KindInt:
			r.buf = strconv.AppendInt(r.buf, v.Int, 10)
		case target.KindFloat:
			r.buf = strconv.AppendFloat(r.buf, v.Float, 'g', -1, 64)
		case target.KindTime:
			r.buf = v.Time.AppendFormat(r.buf, "2006-01-02 15:04:05.999999")
		case target.KindText:
			for _, b := range v.Text {
				switch b {
				case '\\':
					r.buf = append(r.buf, '\\', '\\')
				case '\t':
					r.buf = append(r.buf, '\\', 't')
				case '\n':
					r.buf = append(r.buf, '\\', 'n')
				case '\r':
					r.buf = append(r.buf, '\\', 'r')
				case 0:
					return target.Errorf(target.ClassOther, "", "row %d column %d: PostgreSQL text cannot contain a NUL byte", r.rows+1, i+1)
				default:
					r.buf = append(r.buf, b)
				}
			}
		}
	}
	r.buf = append(r.buf, '\n')
	return nil
}
