package sqlstore

import (
	"context"
	"database/sql"

	"github.com/fathom-lab/fathom/internal/measure"
)

// SaveRunErrors replaces the run's list of first distinct errors with errs, in order.
func (s *Store) SaveRunErrors(ctx context.Context, runID int64, errs []measure.SeenError) error {
	tx, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := insertRunErrors(ctx, tx.Tx, s, runID, errs, true); err != nil {
		return err
	}
	return tx.Commit()
}

// insertRunErrors writes errs as run runID's list in tx (replacing any first).
func insertRunErrors(ctx context.Context, t *sql.Tx, s *Store, runID int64, errs []measure.SeenError, replace bool) error {
	if replace {
		if _, err := t.ExecContext(ctx, s.q(`DELETE FROM run_errors WHERE run_id = ?`), runID); err != nil {
			return err
		}
	}
	for i, e := range errs {
		if _, err := t.ExecContext(ctx, s.q(`INSERT INTO run_errors (run_id, seq, class, code, message, txn, place, client, at_ns,
			count, warmup_count, aborted) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`),
			runID, i, e.Class, e.Code, e.Message, e.Txn, e.Where, e.Client, e.AtNs, e.Count, e.Warmup, e.Aborted); err != nil {
			return err
		}
	}
	return nil
}

// RunErrors reads the run's first distinct errors (nil: none).
func (s *Store) RunErrors(ctx context.Context, runID int64) ([]measure.SeenError, error) {
	rows, err := s.query(ctx, `SELECT class, code, message, txn, place, client, at_ns, count, warmup_count, aborted
		FROM run_errors WHERE run_id = ? ORDER BY seq`, runID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []measure.SeenError
	for rows.Next() {
		var e measure.SeenError
		if err := rows.Scan(&e.Class, &e.Code, &e.Message, &e.Txn, &e.Where, &e.Client, &e.AtNs, &e.Count, &e.Warmup, &e.Aborted); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}
