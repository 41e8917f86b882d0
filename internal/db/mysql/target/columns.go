package mysql

import (
	"context"
	"database/sql/driver"
	"io"
)

// QueryColumns is Query for statements whose columns differ between server versions
// (SHOW REPLICA STATUS, SHOW PROCESSLIST): it also returns the column names, so that
// callers pick values by name instead of by position. NULL is "". Used by fathom check.
func (c *conn) QueryColumns(ctx context.Context, sql string) ([]string, [][]string, error) {
	if err := c.begin(ctx); err != nil {
		return nil, nil, err
	}
	cols, out, err := c.queryColumns(sql)
	return cols, out, c.end(ctx, err)
}

func (c *conn) queryColumns(sql string) ([]string, [][]string, error) {
	rows, err := c.queryer.Query(sql, nil)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	cols := rows.Columns()
	dest := make([]driver.Value, len(cols))
	var out [][]string
	for {
		if err := rows.Next(dest); err != nil {
			if err == io.EOF {
				break
			}
			return nil, nil, err
		}
		row := make([]string, len(dest))
		for i, v := range dest {
			row[i] = string(appendText(nil, v))
		}
		out = append(out, row)
	}
	return cols, out, rows.Close()
}
