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
//
// The connection is named after the row's UUID (application_name "fathom run UUID"),
// and first ends any other session of that name: one left by an earlier try of this
// creation whose acknowledgement was lost. The server may not have seen that
// connection go (a network cut): its session would hold the row's lock, or the row
// itself uncommitted, and this try would wait for it for ever.
func (o owners) Create(ctx context.Context, kind sqlstore.Kind, uuid string, insert func(*sql.Tx) (int64, error)) (int64, error) {
	c, err := o.s.db.Conn(ctx)
	if err != nil {
		return 0, err
	}
	fail := func(err error) (int64, error) { drop(c); return 0, err }
	tag := sessionName(kind, uuid)
	if err := endEarlierTries(ctx, c, tag); err != nil {
		return fail(err)
	}
	tx, err := c.BeginTx(ctx, nil)
	if err != nil {
		return fail(err)
	}
	defer tx.Rollback()
	// The transaction ends before its connection is dropped: database/sql waits for
	// it to end, for ever if it is still open.
	failTx := func(err error) (int64, error) { _ = tx.Rollback(); return fail(err) }
	id, err := insert(tx)
	if err != nil {
		return failTx(err)
	}
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_lock($1, $2)`, space(kind), int32(uint32(id))); err != nil {
		return failTx(err)
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	if err := o.s.hold(space(kind), id, c, tag); err != nil {
		return 0, err
	}
	return id, nil
}

// sessionName is the application_name of the session that holds the lock of the run
// or experiment with that UUID (at most 63 bytes: a UUID is 36).
func sessionName(kind sqlstore.Kind, uuid string) string {
	if kind == sqlstore.ExperimentKind {
		return "fathom experiment " + uuid
	}
	return "fathom run " + uuid
}

// endEarlierTries names c's session tag and terminates every other session of that
// name (they are this process's, of the same user, so no privilege is needed). Their
// locks and open transactions go when they have ended, which the statements that
// follow wait for.
func endEarlierTries(ctx context.Context, c *sql.Conn, tag string) error {
	_, err := c.ExecContext(ctx, `SELECT set_config('application_name', $1, false),
		(SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid())`, tag)
	return err
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
