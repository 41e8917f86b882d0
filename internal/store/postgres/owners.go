package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/sqlstore"
)

// owners knows the writers of running runs and experiments by the session advisory
// lock each holds (lockRun or lockExperiment, id) while it writes: a writer on any
// machine lives while its session does.
type owners struct{ s *Store }

func space(kind sqlstore.Kind) int32 {
	if kind == sqlstore.ExperimentKind {
		return lockExperiment
	}
	return lockRun
}

// Create inserts in a transaction on a connection of its own that takes the new
// row's lock before the commit and keeps it after, so no reader sees the run or
// experiment running without a live writer.
func (o owners) Create(ctx context.Context, kind sqlstore.Kind, insert func(*sql.Tx) (int64, error)) (int64, error) {
	c, err := o.s.db.Conn(ctx)
	if err != nil {
		return 0, err
	}
	fail := func(err error) (int64, error) { drop(c); return 0, err }
	tx, err := c.BeginTx(ctx, nil)
	if err != nil {
		return fail(err)
	}
	defer tx.Rollback()
	id, err := insert(tx)
	if err != nil {
		return fail(err)
	}
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_lock($1, $2)`, space(kind), int32(uint32(id))); err != nil {
		return fail(err)
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	if err := o.s.hold(space(kind), id, c); err != nil {
		return 0, err
	}
	return id, nil
}

// Resume takes the experiment's lock: while another fathom, on any machine, runs or
// resumes it, the resume is refused.
func (o owners) Resume(ctx context.Context, id int64) error {
	if err := o.s.lock(ctx, lockExperiment, id); err != nil {
		if errors.Is(err, errHeld) {
			return fmt.Errorf("experiment %d is being run by another fathom (it holds the experiment's lock in %s): wait for it to end, or stop it first", id, o.s.path)
		}
		return err
	}
	return nil
}

// Release lets go of the lock.
func (o owners) Release(ctx context.Context, kind sqlstore.Kind, id int64) {
	o.s.unlock(ctx, space(kind), id)
}

// Gone is which owners' locks no session holds.
func (o owners) Gone(ctx context.Context, kind sqlstore.Kind, own []sqlstore.Owner) (map[int64]bool, error) {
	ids := make([]int64, len(own))
	for i := range own {
		ids[i] = own[i].ID
	}
	live, err := o.s.liveHolders(ctx, space(kind), ids)
	if err != nil {
		return nil, err
	}
	gone := map[int64]bool{}
	for _, id := range ids {
		if !live[id] {
			gone[id] = true
		}
	}
	return gone, nil
}

var _ store.RunEditor = (*Store)(nil)
