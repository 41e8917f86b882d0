package tpcb

import (
	"context"

	"github.com/fathom-lab/fathom/internal/target"
)

// fakeConn records what a worker sends, without a database. With record off it does
// nothing per statement, so allocation tests measure the worker alone.
type fakeConn struct {
	record bool
	log    []call
	begins int
	commit int
}

type call struct {
	sql  string
	args []target.Value
}

type fakeStmt struct {
	c   *fakeConn
	sql string
}

func (s *fakeStmt) Run(ctx context.Context, args []target.Value, res *target.Result) error {
	if s.c.record {
		s.c.log = append(s.c.log, call{s.sql, append([]target.Value(nil), args...)})
	}
	return nil
}
func (s *fakeStmt) Close() error { return nil }

func (c *fakeConn) Exec(ctx context.Context, sql string) error { return nil }
func (c *fakeConn) Prepare(ctx context.Context, sql string) (target.Stmt, error) {
	return &fakeStmt{c, sql}, nil
}
func (c *fakeConn) Begin(ctx context.Context) error {
	c.begins++
	if c.record {
		c.log = append(c.log, call{sql: "BEGIN"})
	}
	return nil
}
func (c *fakeConn) Commit(ctx context.Context) error {
	c.commit++
	if c.record {
		c.log = append(c.log, call{sql: "COMMIT"})
	}
	return nil
}
func (c *fakeConn) Rollback(ctx context.Context) error { return nil }
func (c *fakeConn) Load(ctx context.Context, table string, columns []string, next func(row []target.Value) bool) (int64, error) {
	return 0, nil
}
func (c *fakeConn) Query(ctx context.Context, sql string, args ...target.Value) ([][]string, error) {
	return nil, nil
}
func (c *fakeConn) Alive() bool  { return true }
func (c *fakeConn) ID() int64    { return 0 }
func (c *fakeConn) Close() error { return nil }
