package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/fathom-lab/fathom/internal/store"
)

// SaveStalls replaces a run's stalls and records the parameters analysis used.
func (s *Store) SaveStalls(ctx context.Context, runID int64, params any, stalls []store.Stall) error {
	tx, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.exec(ctx, `DELETE FROM stalls WHERE run_id = ?`, runID); err != nil {
		return err
	}
	for i := range stalls {
		st := &stalls[i]
		if _, err := tx.exec(ctx, `INSERT INTO stalls (run_id, num, first_idx, last_idx, start_ns, end_ns, stall) VALUES (?,?,?,?,?,?,?)`,
			runID, st.Number, st.FirstInterval, st.LastInterval, int64(st.Start), int64(st.End), mustJSON(st)); err != nil {
			return err
		}
	}
	if _, err := tx.exec(ctx, `INSERT INTO stall_params (run_id, params) VALUES (?, ?)
		ON CONFLICT (run_id) DO UPDATE SET params = excluded.params`, runID, mustJSON(params)); err != nil {
		return err
	}
	return tx.Commit()
}

// Stalls returns a run's stored stalls in time order and the parameters they were
// found with; analyzed is false when analysis never ran for the run (then there are no
// stalls because nobody looked, not because there were none).
func (s *Store) Stalls(ctx context.Context, runID int64) (stalls []store.Stall, params json.RawMessage, analyzed bool, err error) {
	var p string
	switch err := s.row(ctx, `SELECT params FROM stall_params WHERE run_id = ?`, runID).Scan(&p); {
	case err == nil:
		params, analyzed = json.RawMessage(p), true
	case isNoRows(err):
	default:
		return nil, nil, false, err
	}
	rows, err := s.query(ctx, `SELECT stall FROM stalls WHERE run_id = ? ORDER BY num`, runID)
	if err != nil {
		return nil, nil, false, err
	}
	defer rows.Close()
	for rows.Next() {
		var js string
		if err := rows.Scan(&js); err != nil {
			return nil, nil, false, err
		}
		var st store.Stall
		if err := json.Unmarshal([]byte(js), &st); err != nil {
			return nil, nil, false, fmt.Errorf("run %d: corrupt stall: %v", runID, err)
		}
		stalls = append(stalls, st)
	}
	return stalls, params, analyzed, rows.Err()
}

func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }
