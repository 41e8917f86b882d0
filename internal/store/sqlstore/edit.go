package sqlstore

import (
	"context"
	"fmt"

	"github.com/fathom-lab/fathom/internal/store"
)

var _ store.RunEditor = (*Store)(nil)

// SetLabels sets and removes a run's labels in one transaction.
func (s *Store) SetLabels(ctx context.Context, runID int64, set map[string]string, remove []string) error {
	tx, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var n int
	if err := tx.row(ctx, `SELECT count(*) FROM runs WHERE id = ?`, runID).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("run %d %w in %s", runID, store.ErrNotFound, s.path)
	}
	for _, k := range remove {
		if _, err := tx.exec(ctx, `DELETE FROM run_labels WHERE run_id = ? AND key = ?`, runID, k); err != nil {
			return err
		}
	}
	for k, v := range set {
		if _, err := tx.exec(ctx, `INSERT INTO run_labels (run_id, key, value) VALUES (?, ?, ?)
			ON CONFLICT (run_id, key) DO UPDATE SET value = excluded.value`, runID, k, v); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// DeleteRun deletes a run; the schema's cascades delete what it carries.
func (s *Store) DeleteRun(ctx context.Context, runID int64) error {
	res, err := s.exec(ctx, `DELETE FROM runs WHERE id = ?`, runID)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("run %d %w in %s", runID, store.ErrNotFound, s.path)
	}
	return nil
}
