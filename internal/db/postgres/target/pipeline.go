package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fathom-lab/fathom/internal/target"
)

// pipeline is a Conn in pipeline mode (pgconn's Pipeline: Bind/Execute messages queued
// in the connection's write buffer, one Flush at End).
type pipeline struct {
	c     *conn
	p     *pgconn.Pipeline
	syncs []bool // what was queued, in order: false a statement, true a sync point
	buf   [][]byte
	args  [][]byte
}

var _ target.Pipeliner = (*conn)(nil)

// StartPipeline enters pipeline mode. Nothing is sent until End, so a statement to be
// sent in it must have been prepared before.
func (c *conn) StartPipeline(ctx context.Context) (target.Pipeline, error) {
	if c.dead.Load() {
		return nil, &target.Error{Class: target.ClassConnection, Msg: "connection lost"}
	}
	if c.pipe == nil {
		c.pipe = &pipeline{c: c}
	}
	pl := c.pipe
	pl.syncs = pl.syncs[:0]
	pl.p = c.pg.StartPipeline(bg)
	return pl, nil
}

// Send queues a Bind and Execute of st (Parse too in -M extended, as pgbench does).
func (pl *pipeline) Send(st target.Stmt, args []target.Value) error {
	s, ok := st.(*stmt)
	if !ok || s.c != pl.c {
		return target.Errorf(target.ClassOther, "", "pipeline: the statement was not prepared on this connection")
	}
	if s.nIn >= 0 && len(args) != s.nIn {
		return target.Errorf(target.ClassOther, "", "statement has %d placeholders but %d arguments were given", s.nIn, len(args))
	}
	for len(pl.buf) < len(args) {
		pl.buf = append(pl.buf, nil)
	}
	pl.args = pl.args[:0]
	for i := range args {
		p := appendParam(pl.buf[i], &args[i])
		if args[i].Kind != target.KindText {
			pl.buf[i] = p
		}
		pl.args = append(pl.args, p)
	}
	// The messages are encoded into the write buffer here, so the arguments may
	// change once Send returns.
	if s.sd != nil {
		pl.p.SendQueryPrepared(s.sd.Name, pl.args, nil, nil)
	} else {
		pl.p.SendQueryParams(s.sql, pl.args, nil, nil, nil)
	}
	clear(pl.args)
	pl.syncs = append(pl.syncs, false)
	return nil
}

// Sync queues a sync point without sending anything (libpq's PQsendPipelineSync).
func (pl *pipeline) Sync() {
	pl.p.SendPipelineSync()
	pl.syncs = append(pl.syncs, true)
}

// End sends everything with a last sync point and reads the results in order. After a
// statement fails, the server skips the rest up to the next sync point and pgconn
// returns no result for them.
func (pl *pipeline) End(ctx context.Context) (int, error) {
	c := pl.c
	if err := c.begin(ctx); err != nil {
		_ = pl.p.Close()
		return 0, err
	}
	pl.Sync()
	err := pl.p.Flush()
	ran, stmt := 0, -1
	var first *target.PipelineError
	skipping := false
	for i := 0; err == nil && i < len(pl.syncs); i++ {
		if !pl.syncs[i] {
			stmt++
			if skipping {
				if first.Failed == 1 {
					first.Skipped++
				}
				continue
			}
		}
		res, e := pl.p.GetResults()
		if rr, ok := res.(*pgconn.ResultReader); ok {
			for rr.NextRow() {
			}
			_, e = rr.Close()
		}
		if e != nil {
			var pgErr *pgconn.PgError
			if !errors.As(e, &pgErr) {
				err = e
				break
			}
			if pl.syncs[i] {
				// An error at a sync point (a deferred constraint at the implicit
				// commit) belongs to the statements before it; the sync point
				// itself is read next.
				i--
			} else {
				ran++
			}
			if first == nil {
				first = &target.PipelineError{Index: max(stmt, 0), Err: c.fail(e, "")}
			}
			first.Failed++
			skipping = true
			continue
		}
		switch res.(type) {
		case *pgconn.ResultReader:
			ran++
		case *pgconn.PipelineSync:
			skipping = false
		default:
			err = errors.New("pipeline: unexpected result from the server")
		}
	}
	if cerr := pl.p.Close(); err == nil && cerr != nil {
		var pgErr *pgconn.PgError
		if !errors.As(cerr, &pgErr) {
			err = cerr
		}
	}
	pl.p = nil
	if err = c.end(ctx, err); err != nil {
		return ran, err
	}
	if first != nil {
		return ran, first
	}
	return ran, nil
}

// Abandon closes the connection with the queued statements unsent (pgconn closes a
// pipeline with unsynced requests that way).
func (pl *pipeline) Abandon() {
	if pl.p == nil {
		return
	}
	pl.c.dead.Store(true)
	_ = pl.p.Close()
	pl.p = nil
}
