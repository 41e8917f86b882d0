package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/target"
)

// Whole runs and experiments (store.RecordStore), for copies between stores.

// ns is t in unix nanoseconds, NULL for the zero time.
func ns(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().UnixNano()
}

// ExportRun reads run id with everything it carries.
func (s *Store) ExportRun(ctx context.Context, id int64) (*store.RunRecord, error) {
	r, err := s.Run(ctx, id)
	if err != nil {
		return nil, err
	}
	rec := &store.RunRecord{Run: *r}
	if rec.Intervals, err = s.EncodedIntervals(ctx, r); err != nil {
		return nil, err
	}
	if src, err := s.SampleSource(ctx, id); err == nil {
		rec.Source = src
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	if rec.Metrics, err = s.Metrics(ctx, id); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT idx, collector, source, at_ns, took_ns, status, error, reset, n FROM samples WHERE run_id = ? ORDER BY idx, collector`), id)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var s store.SampleRow
		var at, took int64
		if err := rows.Scan(&s.Interval, &s.Collector, &s.Source, &at, &took, &s.Status, &s.Error, &s.Reset, &s.N); err != nil {
			rows.Close()
			return nil, err
		}
		s.At, s.Took = time.Duration(at), time.Duration(took)
		rec.Samples = append(rec.Samples, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = s.db.QueryContext(ctx, s.q(`SELECT metric_id, idx, value, rate, reset, n, lo, hi, span_ns FROM metric_points WHERE run_id = ? ORDER BY metric_id, idx`), id)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var p store.PointRow
		var rate, lo, hi sql.NullFloat64
		var span int64
		if err := rows.Scan(&p.MetricID, &p.Interval, &p.Value, &rate, &p.Reset, &p.N, &lo, &hi, &span); err != nil {
			rows.Close()
			return nil, err
		}
		p.Span, p.Min, p.Max = time.Duration(span), lo.Float64, hi.Float64
		if !lo.Valid { // not downsampled: Min and Max mean nothing
			p.N = 0
		}
		p.Rate, p.HasRate = rate.Float64, rate.Valid
		rec.Points = append(rec.Points, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var analyzed bool
	if rec.Stalls, rec.StallParams, analyzed, err = s.Stalls(ctx, id); err != nil {
		return nil, err
	}
	if !analyzed {
		rec.StallParams = nil
	}
	if rec.Errors, err = s.RunErrors(ctx, id); err != nil {
		return nil, err
	}
	return rec, nil
}

// ImportRun stores rec unless a run with its UUID is there (existed).
func (s *Store) ImportRun(ctx context.Context, rec *store.RunRecord) (id int64, existed bool, err error) {
	r := &rec.Run
	if r.UUID == "" {
		return 0, false, fmt.Errorf("run %d has no UUID: it cannot be copied", r.ID)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, false, err
	}
	defer tx.Rollback()
	switch err := tx.QueryRowContext(ctx, s.q(`SELECT id FROM runs WHERE uuid = ?`), r.UUID).Scan(&id); {
	case err == nil:
		return id, true, nil
	case !errors.Is(err, sql.ErrNoRows):
		return 0, false, err
	}
	warnings := r.Warnings
	if warnings == nil {
		warnings = []string{}
	}
	var summary any
	if len(r.Summary) > 0 {
		summary = string(r.Summary)
	}
	status := r.Status
	if r.Gone { // stored as running by a writer that is gone: what it reads as
		status = "interrupted"
	}
	if err := tx.QueryRowContext(ctx, s.q(`INSERT INTO runs (uuid, tool_version, command, workload, options, seed, target_kind, target,
		server_version, settings, host, clients, rate, duration_ns, transactions, warmup_ns, interval_ns, txn_types, started_at, ended_at,
		status, reason, summary, query_mode, max_tries, latency_limit_ns, pid, process, warnings)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) RETURNING id`),
		r.UUID, r.ToolVersion, r.Command, r.Workload, mustJSON(r.Options), int64(r.Seed), r.TargetKind, r.Target,
		r.ServerVersion, mustJSON(r.Settings), mustJSON(r.Host), r.Clients, r.Rate, int64(r.Duration), r.Transactions,
		int64(r.Warmup), int64(r.Interval), mustJSON(r.TxnTypes), r.StartedAt.UTC().UnixNano(), ns(r.EndedAt),
		status, r.Reason, summary, r.QueryMode, r.MaxTries, int64(r.LatencyLimit), 0, "", mustJSON(warnings)).Scan(&id); err != nil {
		return 0, false, err
	}
	for k, v := range r.Labels {
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO run_labels (run_id, key, value) VALUES (?,?,?)`), id, k, v); err != nil {
			return 0, false, err
		}
	}
	if err := s.importIntervals(ctx, tx, id, rec.Intervals); err != nil {
		return 0, false, err
	}
	if src := rec.Source; src != nil {
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO sample_sources (run_id, server, interval_ns, skipped) VALUES (?,?,?,?)`),
			id, mustJSON(src.Server), int64(src.Interval), src.Skipped); err != nil {
			return 0, false, err
		}
	}
	for _, m := range rec.Metrics {
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO metrics (run_id, id, name, collector, kind, unit) VALUES (?,?,?,?,?,?)`),
			id, m.ID, m.Name, m.Collector, m.Kind, m.Unit); err != nil {
			return 0, false, err
		}
	}
	for _, smp := range rec.Samples {
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO samples (run_id, idx, collector, source, at_ns, took_ns, status, error, reset, n) VALUES (?,?,?,?,?,?,?,?,?,?)`),
			id, smp.Interval, smp.Collector, smp.Source, int64(smp.At), int64(smp.Took), smp.Status, smp.Error, smp.Reset, max(smp.N, 1)); err != nil {
			return 0, false, err
		}
	}
	if err := s.importPoints(ctx, tx, id, rec.Points); err != nil {
		return 0, false, err
	}
	for _, st := range rec.Stalls {
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO stalls (run_id, num, first_idx, last_idx, start_ns, end_ns, stall) VALUES (?,?,?,?,?,?,?)`),
			id, st.Number, st.FirstInterval, st.LastInterval, int64(st.Start), int64(st.End), mustJSON(st)); err != nil {
			return 0, false, err
		}
	}
	if rec.StallParams != nil {
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO stall_params (run_id, params) VALUES (?,?)`), id, string(rec.StallParams)); err != nil {
			return 0, false, err
		}
	}
	if err := insertRunErrors(ctx, tx, s, id, rec.Errors, false); err != nil {
		return 0, false, err
	}
	return id, false, tx.Commit()
}

// importIntervals inserts a copied run's intervals with their per-type counts.
func (s *Store) importIntervals(ctx context.Context, tx *sql.Tx, id int64, intervals []store.EncodedInterval) error {
	for _, iv := range intervals {
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO intervals (run_id, idx, start_ns, end_ns, warmup, reconnects) VALUES (?,?,?,?,?,?)`),
			id, iv.Index, int64(iv.Start), int64(iv.End), iv.Warmup, iv.Reconnects); err != nil {
			return err
		}
		for _, t := range iv.Types {
			errs := map[string]int64{}
			for c, n := range t.Errors {
				if n > 0 {
					errs[target.Class(c).String()] = n
				}
			}
			if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO interval_types (run_id, idx, type, ok, failed, retries, statements, late, dropped,
				errors, latency, service, failed_latency) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`),
				id, iv.Index, t.Name, t.OK, t.Failed, t.Retries, t.Statements, t.Late, t.Dropped, mustJSON(errs),
				t.Latency, t.Service, t.FailedLatency); err != nil {
				return err
			}
		}
	}
	return nil
}

// importPoints inserts a copied run's metric points.
func (s *Store) importPoints(ctx context.Context, tx *sql.Tx, id int64, points []store.PointRow) error {
	for _, p := range points {
		var rate, lo, hi any
		if p.HasRate {
			rate = p.Rate
		}
		if p.N > 0 {
			lo, hi = p.Min, p.Max
		}
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO metric_points (run_id, metric_id, idx, value, rate, reset, n, lo, hi, span_ns) VALUES (?,?,?,?,?,?,?,?,?,?)`),
			id, p.MetricID, p.Interval, p.Value, rate, p.Reset, max(p.N, 1), lo, hi, int64(p.Span)); err != nil {
			return err
		}
	}
	return nil
}

// ExportExperiment reads experiment id with its cells, slots, hooks and run links.
func (s *Store) ExportExperiment(ctx context.Context, id int64) (*store.ExperimentRecord, error) {
	e, err := s.Experiment(ctx, id)
	if err != nil {
		return nil, err
	}
	rec := &store.ExperimentRecord{Experiment: *e}
	if rec.Cells, err = s.ExperimentCells(ctx, id); err != nil {
		return nil, err
	}
	if rec.Slots, err = s.ExperimentSlots(ctx, id); err != nil {
		return nil, err
	}
	if rec.Hooks, err = s.ExperimentHooks(ctx, id); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT r.uuid, x.seq, x.attempt, x.instance FROM experiment_runs x JOIN runs r ON r.id = x.run_id
		WHERE x.experiment_id = ? ORDER BY x.seq, x.attempt, x.instance`), id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var l store.RunLink
		if err := rows.Scan(&l.RunUUID, &l.Seq, &l.Attempt, &l.Instance); err != nil {
			return nil, err
		}
		rec.Links = append(rec.Links, l)
	}
	return rec, rows.Err()
}

// ImportExperiment stores rec, replacing an experiment with its UUID (under the
// same id).
func (s *Store) ImportExperiment(ctx context.Context, rec *store.ExperimentRecord) (int64, error) {
	e := &rec.Experiment
	if e.UUID == "" {
		return 0, fmt.Errorf("experiment %d has no UUID: it cannot be copied", e.ID)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	var id any
	var old int64
	switch err := tx.QueryRowContext(ctx, s.q(`SELECT id FROM experiments WHERE uuid = ?`), e.UUID).Scan(&old); {
	case err == nil:
		id = old
		if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM experiments WHERE id = ?`), old); err != nil {
			return 0, err
		}
	case !errors.Is(err, sql.ErrNoRows):
		return 0, err
	}
	status := e.Status
	if e.Gone {
		status = "interrupted"
	}
	cols := `uuid, name, description, plan_path, plan_dir, plan, axes, repetitions, run_order, target, tool_version, host, pid, process,
		created_at, ended_at, status, reason, judge`
	args := []any{e.UUID, e.Name, e.Description, e.PlanPath, e.PlanDir, e.Plan, mustJSON(e.Axes), e.Repetitions, e.Order, e.Target,
		e.ToolVersion, e.Host, 0, "", e.CreatedAt.UTC().UnixNano(), ns(e.EndedAt), status, e.Reason, e.Judge}
	marks := "?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?"
	if id != nil {
		cols, marks, args = "id, "+cols, "?,"+marks, append([]any{id}, args...)
	}
	var newID int64
	if err := tx.QueryRowContext(ctx, s.q(`INSERT INTO experiments (`+cols+`) VALUES (`+marks+`) RETURNING id`), args...).Scan(&newID); err != nil {
		return 0, err
	}
	for _, c := range rec.Cells {
		params := string(c.Params)
		if params == "" {
			params = "{}"
		}
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO experiment_cells (experiment_id, cell, key, coords, params) VALUES (?,?,?,?,?)`),
			newID, c.Cell, c.Key, mustJSON(c.Coords), params); err != nil {
			return 0, err
		}
	}
	for _, sl := range rec.Slots {
		eff := string(sl.Effective)
		if eff == "" {
			eff = "[]"
		}
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO experiment_slots (experiment_id, seq, cell, repetition, status, reason, attempts,
			started_at, ended_at, server_change, effective) VALUES (?,?,?,?,?,?,?,?,?,?,?)`),
			newID, sl.Seq, sl.Cell, sl.Repetition, sl.Status, sl.Reason, sl.Attempts, ns(sl.StartedAt), ns(sl.EndedAt), sl.Change, eff); err != nil {
			return 0, err
		}
	}
	for _, l := range rec.Links {
		var runID int64
		switch err := tx.QueryRowContext(ctx, s.q(`SELECT id FROM runs WHERE uuid = ?`), l.RunUUID).Scan(&runID); {
		case errors.Is(err, sql.ErrNoRows):
			continue
		case err != nil:
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO experiment_runs (run_id, experiment_id, seq, attempt, instance) VALUES (?,?,?,?,?)
			ON CONFLICT (run_id) DO UPDATE SET experiment_id = excluded.experiment_id, seq = excluded.seq, attempt = excluded.attempt, instance = excluded.instance`),
			runID, newID, l.Seq, l.Attempt, l.Instance); err != nil {
			return 0, err
		}
	}
	for _, h := range rec.Hooks {
		var seq any
		if h.Seq >= 0 {
			seq = h.Seq
		}
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO experiment_hooks (experiment_id, seq, attempt, phase, idx, kind, command, server,
			exit_code, ok, output, error, started_at, elapsed_ns, at_ns) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`),
			newID, seq, h.Attempt, h.Phase, h.Index, h.Kind, h.Command, h.Server, h.ExitCode, h.OK, h.Output, h.Error,
			h.Started.UTC().UnixNano(), int64(h.Elapsed), hookAt(h)); err != nil {
			return 0, err
		}
	}
	return newID, tx.Commit()
}
