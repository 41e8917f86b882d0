package sqlite

import (
	"context"
	"database/sql"

	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/sqlstore"
)

// owners knows the writers of a SQLite store's running runs and experiments by their
// stored process (host, pid, boot and start time): the file is on one machine, so a
// writer lives while its process does.
type owners struct{ db *sql.DB }

// Create inserts in one transaction; the stored process is what says it lives.
func (o owners) Create(ctx context.Context, _ sqlstore.Kind, _ string, insert func(*sql.Tx) (int64, error)) (int64, error) {
	tx, err := o.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	id, err := insert(tx)
	if err != nil {
		return 0, err
	}
	return id, tx.Commit()
}

// Resume needs nothing: the resumed experiment stores its new process.
func (owners) Resume(context.Context, int64) error { return nil }

// Release needs nothing: a finished run or experiment is not running.
func (owners) Release(context.Context, sqlstore.Kind, int64) {}

// Gone is which owners' processes no longer run.
func (owners) Gone(_ context.Context, _ sqlstore.Kind, own []sqlstore.Owner) (map[int64]bool, error) {
	gone := map[int64]bool{}
	for _, o := range own {
		if store.ParseProcess(o.Host, o.PID, o.Process).Gone() {
			gone[o.ID] = true
		}
	}
	return gone, nil
}
