package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Stall is a stretch of intervals where throughput fell well below the run's rolling
// median, with what changed most unusually meanwhile and, where the pattern is known,
// its name and the settings that usually govern it. Package analyze finds them.
type Stall struct {
	Number int `json:"number"`
	// FirstInterval..LastInterval are the report intervals it covers; Start and End
	// are on the run's clock (the intervals' own bounds).
	FirstInterval int           `json:"first_interval"`
	LastInterval  int           `json:"last_interval"`
	Start         time.Duration `json:"start_ns"`
	End           time.Duration `json:"end_ns"`
	// Throughput is what was measured: "tps" (the client's transactions per second)
	// or a server rate for watch sessions ("pg.xact_commit", "mysql.Questions").
	Throughput string `json:"throughput"`
	// Baseline is the rolling median throughput around the stall, Mean and Min the
	// throughput during it; Depth = 1 - Mean/Baseline.
	Baseline float64 `json:"baseline"`
	Mean     float64 `json:"mean"`
	Min      float64 `json:"min"`
	Depth    float64 `json:"depth"`
	// Lost is the work not done against the baseline (transactions, or the server
	// rate's units).
	Lost float64 `json:"lost"`
	// Cause is the best matching known pattern's key ("checkpoint",
	// "os_writeback", "innodb_checkpoint", "binlog_rotation", "lock_waits",
	// "autovacuum", "restart"), or "" when none matches.
	Cause string `json:"cause,omitempty"`
	// Title names the cause in plain words; Explanation says what happened and why.
	Title       string `json:"title,omitempty"`
	Explanation string `json:"explanation,omitempty"`
	// Settings are the settings that usually govern the cause, with their values.
	Settings []StallSetting `json:"settings,omitempty"`
	// Causes are every pattern that matched, best first (Cause is the first).
	Causes []StallCause `json:"causes,omitempty"`
	// Evidence are the metrics that changed most unusually during the stall (against
	// the run's own baseline), most unusual first.
	Evidence []StallEvidence `json:"evidence"`
}

// StallSetting is a setting that governs a stall's cause.
type StallSetting struct {
	Name  string `json:"name"`
	Value string `json:"value,omitempty"` // as recorded for the run; "" when unknown
	Hint  string `json:"hint,omitempty"`
}

// StallCause is one known pattern that matched a stall.
type StallCause struct {
	Key   string  `json:"key"`
	Title string  `json:"title"`
	Score float64 `json:"score"`
	// Metrics are the evidence metrics that made the pattern match.
	Metrics []string `json:"metrics"`
}

// StallEvidence is one metric's behaviour during a stall against the baseline.
type StallEvidence struct {
	Metric string `json:"metric"`
	Kind   string `json:"kind"` // counter (rates compared) or gauge
	Unit   string `json:"unit,omitempty"`
	// Baseline is the metric's median outside stalls; During its mean over the stall
	// (and the interval before it, where causes often begin).
	Baseline float64 `json:"baseline"`
	During   float64 `json:"during"`
	Peak     float64 `json:"peak"`
	// Score is the robust z-score (distance from the baseline median in MADs).
	Score float64 `json:"score"`
	// Reset: the metric's counter restarted during the stall.
	Reset bool `json:"reset,omitempty"`
}

// SaveStalls replaces a run's stalls and records the parameters analysis used.
func (s *Store) SaveStalls(ctx context.Context, runID int64, params any, stalls []Stall) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM stalls WHERE run_id = ?`, runID); err != nil {
		return err
	}
	for i := range stalls {
		st := &stalls[i]
		if _, err := tx.ExecContext(ctx, `INSERT INTO stalls (run_id, num, first_idx, last_idx, start_ns, end_ns, stall) VALUES (?,?,?,?,?,?,?)`,
			runID, st.Number, st.FirstInterval, st.LastInterval, int64(st.Start), int64(st.End), mustJSON(st)); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO stall_params (run_id, params) VALUES (?, ?)
		ON CONFLICT (run_id) DO UPDATE SET params = excluded.params`, runID, mustJSON(params)); err != nil {
		return err
	}
	return tx.Commit()
}

// Stalls returns a run's stored stalls in time order and the parameters they were
// found with; analyzed is false when analysis never ran for the run (then there are no
// stalls because nobody looked, not because there were none).
func (s *Store) Stalls(ctx context.Context, runID int64) (stalls []Stall, params json.RawMessage, analyzed bool, err error) {
	var p string
	switch err := s.db.QueryRowContext(ctx, `SELECT params FROM stall_params WHERE run_id = ?`, runID).Scan(&p); {
	case err == nil:
		params, analyzed = json.RawMessage(p), true
	case isNoRows(err):
	default:
		return nil, nil, false, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT stall FROM stalls WHERE run_id = ? ORDER BY num`, runID)
	if err != nil {
		return nil, nil, false, err
	}
	defer rows.Close()
	for rows.Next() {
		var js string
		if err := rows.Scan(&js); err != nil {
			return nil, nil, false, err
		}
		var st Stall
		if err := json.Unmarshal([]byte(js), &st); err != nil {
			return nil, nil, false, fmt.Errorf("run %d: corrupt stall: %v", runID, err)
		}
		stalls = append(stalls, st)
	}
	return stalls, params, analyzed, rows.Err()
}

func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }
