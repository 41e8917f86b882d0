package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/fathom-lab/fathom/internal/store"
	"time"
)

// CreateExperiment records a new experiment, its cells and its schedule (every slot
// planned) in one transaction, and sets e.ID and e.UUID.
func (s *Store) CreateExperiment(ctx context.Context, e *store.Experiment, cells []store.ExperimentCell, slots []store.ExperimentSlot) (int64, error) {
	if e.UUID == "" {
		e.UUID = newUUID()
	}
	e.Status = "running"
	id, err := s.owners.Create(ctx, ExperimentKind, e.UUID, func(t *sql.Tx) (int64, error) {
		tx := tx{t, s}
		var id int64
		// As for runs: a row with this UUID was committed by an earlier try of this
		// call whose acknowledgement was lost, cells and slots with it.
		err := tx.row(ctx, `INSERT INTO experiments (uuid, name, description, plan_path, plan_dir, plan, axes, repetitions,
		run_order, target, tool_version, host, pid, process, created_at, status, judge) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
		ON CONFLICT (uuid) DO NOTHING RETURNING id`,
			e.UUID, e.Name, e.Description, e.PlanPath, e.PlanDir, e.Plan, mustJSON(e.Axes), e.Repetitions, e.Order, e.Target,
			e.ToolVersion, e.Host, e.PID, processOf(e.Host, e.PID), e.CreatedAt.UTC().UnixNano(), e.Status, e.Judge).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			var created int64
			var process string
			if err := tx.row(ctx, `SELECT id, created_at, process FROM experiments WHERE uuid = ?`, e.UUID).Scan(&id, &created, &process); err != nil {
				return 0, err
			}
			if created != e.CreatedAt.UTC().UnixNano() || process != processOf(e.Host, e.PID) {
				return 0, fmt.Errorf("store %s already holds experiment %d with UUID %s, started by %s: a new experiment gets a new UUID", s.path, id, e.UUID, process)
			}
			return id, nil
		}
		if err != nil {
			return 0, err
		}
		for _, c := range cells {
			params := string(c.Params)
			if params == "" {
				params = "{}"
			}
			if _, err := tx.exec(ctx, `INSERT INTO experiment_cells (experiment_id, cell, key, coords, params) VALUES (?,?,?,?,?)`,
				id, c.Cell, c.Key, mustJSON(c.Coords), params); err != nil {
				return 0, err
			}
		}
		for _, sl := range slots {
			if _, err := tx.exec(ctx, `INSERT INTO experiment_slots (experiment_id, seq, cell, repetition) VALUES (?,?,?,?)`,
				id, sl.Seq, sl.Cell, sl.Repetition); err != nil {
				return 0, err
			}
		}
		return id, nil
	})
	if err != nil {
		return 0, err
	}
	e.ID = id
	return id, nil
}

// ResumeExperiment marks an experiment running again in process pid on host, once
// this process may write it (on PostgreSQL: no other fathom, on any machine, does).
func (s *Store) ResumeExperiment(ctx context.Context, id int64, host string, pid int) error {
	if err := s.owners.Resume(ctx, id); err != nil {
		return err
	}
	_, err := s.exec(ctx, `UPDATE experiments SET status = 'running', reason = '', ended_at = NULL, host = ?, pid = ?, process = ? WHERE id = ?`,
		host, pid, processOf(host, pid), id)
	return err
}

// processOf is the stored identity of the process pid on host when that is this
// process (its boot and start time), else just the host.
func processOf(host string, pid int) string {
	if me := store.ThisProcess(); me.Host == host && me.PID == pid {
		return me.String()
	}
	return store.Process{Host: host, PID: pid}.String()
}

// FinishExperiment records how an experiment ended.
func (s *Store) FinishExperiment(ctx context.Context, id int64, status, reason string, endedAt time.Time) error {
	_, err := s.exec(ctx, `UPDATE experiments SET status = ?, reason = ?, ended_at = ?, pid = 0 WHERE id = ?`,
		status, reason, endedAt.UTC().UnixNano(), id)
	if err == nil {
		s.owners.Release(ctx, ExperimentKind, id)
	}
	return err
}

// StartSlot marks a slot running and returns its attempt number (from 1).
func (s *Store) StartSlot(ctx context.Context, expID int64, seq int, at time.Time) (int, error) {
	tx, err := s.begin(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	if _, err := tx.exec(ctx, `UPDATE experiment_slots SET status = 'running', reason = '', attempts = attempts + 1,
		started_at = ?, ended_at = NULL, server_change = '', effective = '[]' WHERE experiment_id = ? AND seq = ?`,
		at.UTC().UnixNano(), expID, seq); err != nil {
		return 0, err
	}
	var attempt int
	if err := tx.row(ctx, `SELECT attempts FROM experiment_slots WHERE experiment_id = ? AND seq = ?`, expID, seq).Scan(&attempt); err != nil {
		return 0, err
	}
	return attempt, tx.Commit()
}

// SlotServer records what was done to the server for a slot and the settings read back.
func (s *Store) SlotServer(ctx context.Context, expID int64, seq int, change string, effective json.RawMessage) error {
	if len(effective) == 0 {
		effective = json.RawMessage("[]")
	}
	_, err := s.exec(ctx, `UPDATE experiment_slots SET server_change = ?, effective = ? WHERE experiment_id = ? AND seq = ?`,
		change, string(effective), expID, seq)
	return err
}

// LinkRun records that a run belongs to a slot's attempt (instance 0: the run or the
// aggregate; 1..N: one instance's part).
func (s *Store) LinkRun(ctx context.Context, expID int64, seq, attempt, instance int, runID int64) error {
	_, err := s.exec(ctx, `INSERT INTO experiment_runs (run_id, experiment_id, seq, attempt, instance) VALUES (?,?,?,?,?)`,
		runID, expID, seq, attempt, instance)
	return err
}

// FinishSlot records how a slot ended.
func (s *Store) FinishSlot(ctx context.Context, expID int64, seq int, status, reason string, at time.Time) error {
	_, err := s.exec(ctx, `UPDATE experiment_slots SET status = ?, reason = ?, ended_at = ? WHERE experiment_id = ? AND seq = ?`,
		status, reason, at.UTC().UnixNano(), expID, seq)
	return err
}

// AddHook records a hook's result; seq < 0 for hooks before or after the experiment.
func (s *Store) AddHook(ctx context.Context, expID int64, h store.ExperimentHook) error {
	var seq any
	if h.Seq >= 0 {
		seq = h.Seq
	}
	_, err := s.exec(ctx, `INSERT INTO experiment_hooks (experiment_id, seq, attempt, phase, idx, kind, command, server,
		exit_code, ok, output, error, started_at, elapsed_ns, at_ns) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		expID, seq, h.Attempt, h.Phase, h.Index, h.Kind, h.Command, h.Server, h.ExitCode, h.OK, h.Output, h.Error,
		h.Started.UTC().UnixNano(), int64(h.Elapsed), hookAt(h))
	return err
}

// hookAt is a hook's moment on its run's clock, or NULL.
func hookAt(h store.ExperimentHook) any {
	if h.At == nil {
		return nil
	}
	return int64(*h.At)
}

const experimentColumns = `e.id, e.uuid, e.name, e.description, e.plan_path, e.plan_dir, e.plan, e.axes, e.repetitions, e.run_order,
	e.target, e.tool_version, e.host, e.pid, e.process, e.created_at, e.ended_at, e.status, e.reason, e.judge,
	(SELECT count(*) FROM experiment_slots s WHERE s.experiment_id = e.id),
	(SELECT count(*) FROM experiment_slots s WHERE s.experiment_id = e.id AND s.status = 'complete'),
	(SELECT count(*) FROM experiment_slots s WHERE s.experiment_id = e.id AND s.status IN ('failed', 'aborted'))`

// scanExperiment reads a row of experimentColumns, and its writer.
func scanExperiment(sc scanner) (store.Experiment, Owner, error) {
	var (
		e       store.Experiment
		axes    string
		created int64
		ended   sql.NullInt64
		process string
	)
	if err := sc.Scan(&e.ID, &e.UUID, &e.Name, &e.Description, &e.PlanPath, &e.PlanDir, &e.Plan, &axes, &e.Repetitions, &e.Order,
		&e.Target, &e.ToolVersion, &e.Host, &e.PID, &process, &created, &ended, &e.Status, &e.Reason, &e.Judge, &e.Slots, &e.Complete, &e.Failed); err != nil {
		return e, Owner{}, err
	}
	e.CreatedAt = time.Unix(0, created).UTC()
	if ended.Valid {
		e.EndedAt = time.Unix(0, ended.Int64).UTC()
	}
	if err := json.Unmarshal([]byte(axes), &e.Axes); err != nil {
		return e, Owner{}, fmt.Errorf("experiment %d: corrupt axes: %v", e.ID, err)
	}
	return e, Owner{ID: e.ID, Host: e.Host, PID: e.PID, Process: process}, nil
}

// experimentsGone reads as interrupted (process gone) the running experiments whose
// writer is gone.
func (s *Store) experimentsGone(ctx context.Context, exps []store.Experiment, owners []Owner) error {
	var running []Owner
	for i := range exps {
		if exps[i].Status == "running" {
			running = append(running, owners[i])
		}
	}
	gone, err := s.gone(ctx, ExperimentKind, running)
	if err != nil {
		return err
	}
	for i := range exps {
		if e := &exps[i]; gone[e.ID] {
			e.Status, e.Reason, e.Gone = "interrupted", store.ProcessGone, true
		}
	}
	return nil
}

// Experiments lists experiments, newest first (limit 0: all).
func (s *Store) Experiments(ctx context.Context, limit int) ([]store.Experiment, error) {
	q := "SELECT " + experimentColumns + " FROM experiments e ORDER BY e.id DESC"
	var args []any
	if limit > 0 {
		q += " LIMIT ?"
		args = append(args, limit)
	}
	rows, err := s.query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	var out []store.Experiment
	var owners []Owner
	for rows.Next() {
		e, o, err := scanExperiment(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		out, owners = append(out, e), append(owners, o)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, s.experimentsGone(ctx, out, owners)
}

// Experiment returns one experiment; the error wraps ErrNotFound if there is none.
func (s *Store) Experiment(ctx context.Context, id int64) (*store.Experiment, error) {
	return s.oneExperiment(ctx, fmt.Sprintf("experiment %d", id), "e.id = ?", id)
}

// ExperimentByName returns the newest experiment with this name.
func (s *Store) ExperimentByName(ctx context.Context, name string) (*store.Experiment, error) {
	return s.oneExperiment(ctx, fmt.Sprintf("experiment %q", name), "e.name = ? ORDER BY e.id DESC LIMIT 1", name)
}

func (s *Store) oneExperiment(ctx context.Context, what, where string, arg any) (*store.Experiment, error) {
	e, o, err := scanExperiment(s.row(ctx, "SELECT "+experimentColumns+" FROM experiments e WHERE "+where, arg))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%s %w in %s", what, store.ErrNotFound, s.path)
	}
	if err != nil {
		return nil, err
	}
	one := []store.Experiment{e}
	if err := s.experimentsGone(ctx, one, []Owner{o}); err != nil {
		return nil, err
	}
	return &one[0], nil
}

// ExperimentCells returns an experiment's cells in matrix order.
func (s *Store) ExperimentCells(ctx context.Context, id int64) ([]store.ExperimentCell, error) {
	rows, err := s.query(ctx, `SELECT cell, key, coords, params FROM experiment_cells WHERE experiment_id = ? ORDER BY cell`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.ExperimentCell
	for rows.Next() {
		var c store.ExperimentCell
		var coords, params string
		if err := rows.Scan(&c.Cell, &c.Key, &coords, &params); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(coords), &c.Coords); err != nil {
			return nil, fmt.Errorf("experiment %d cell %d: corrupt coords: %v", id, c.Cell, err)
		}
		c.Params = json.RawMessage(params)
		out = append(out, c)
	}
	return out, rows.Err()
}

// ExperimentSlots returns an experiment's schedule in order, each slot with the runs
// of its latest attempt.
func (s *Store) ExperimentSlots(ctx context.Context, id int64) ([]store.ExperimentSlot, error) {
	rows, err := s.query(ctx, `SELECT seq, cell, repetition, status, reason, attempts, started_at, ended_at, server_change, effective
		FROM experiment_slots WHERE experiment_id = ? ORDER BY seq`, id)
	if err != nil {
		return nil, err
	}
	var out []store.ExperimentSlot
	for rows.Next() {
		var sl store.ExperimentSlot
		var started, ended sql.NullInt64
		var eff string
		if err := rows.Scan(&sl.Seq, &sl.Cell, &sl.Repetition, &sl.Status, &sl.Reason, &sl.Attempts, &started, &ended, &sl.Change, &eff); err != nil {
			rows.Close()
			return nil, err
		}
		if started.Valid {
			sl.StartedAt = time.Unix(0, started.Int64).UTC()
		}
		if ended.Valid {
			sl.EndedAt = time.Unix(0, ended.Int64).UTC()
		}
		sl.Effective = json.RawMessage(eff)
		out = append(out, sl)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	runs, err := s.query(ctx, `SELECT r.seq, r.instance, r.run_id FROM experiment_runs r JOIN experiment_slots s
		ON s.experiment_id = r.experiment_id AND s.seq = r.seq AND r.attempt = s.attempts
		WHERE r.experiment_id = ? ORDER BY r.seq, r.instance`, id)
	if err != nil {
		return nil, err
	}
	defer runs.Close()
	bySeq := map[int]*store.ExperimentSlot{}
	for i := range out {
		bySeq[out[i].Seq] = &out[i]
	}
	for runs.Next() {
		var seq, inst int
		var runID int64
		if err := runs.Scan(&seq, &inst, &runID); err != nil {
			return nil, err
		}
		sl := bySeq[seq]
		if sl == nil {
			continue
		}
		if inst == 0 {
			sl.RunID = runID
		} else {
			sl.Parts = append(sl.Parts, runID)
		}
	}
	return out, runs.Err()
}

// ExperimentRuns returns every run of an experiment with its cell, axis values,
// repetition and attempt, in schedule order. Runs with Current set are the ones to
// count (the latest attempt of each completed slot); the others are interrupted or
// failed attempts, kept as evidence.
func (s *Store) ExperimentRuns(ctx context.Context, id int64) ([]store.ExperimentRun, error) {
	cells, err := s.ExperimentCells(ctx, id)
	if err != nil {
		return nil, err
	}
	coords := map[int][]store.Coord{}
	for _, c := range cells {
		coords[c.Cell] = c.Coords
	}
	rows, err := s.query(ctx, `SELECT r.run_id, r.seq, s.cell, s.repetition, r.attempt, r.instance,
		r.attempt = s.attempts AND s.status = 'complete'
		FROM experiment_runs r JOIN experiment_slots s ON s.experiment_id = r.experiment_id AND s.seq = r.seq
		WHERE r.experiment_id = ? ORDER BY r.seq, r.attempt, r.instance`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.ExperimentRun
	for rows.Next() {
		var r store.ExperimentRun
		if err := rows.Scan(&r.RunID, &r.Seq, &r.Cell, &r.Repetition, &r.Attempt, &r.Instance, &r.Current); err != nil {
			return nil, err
		}
		r.Coords = coords[r.Cell]
		out = append(out, r)
	}
	return out, rows.Err()
}

// ExperimentHooks returns what the hooks of an experiment did, in order.
func (s *Store) ExperimentHooks(ctx context.Context, id int64) ([]store.ExperimentHook, error) {
	rows, err := s.query(ctx, `SELECT coalesce(seq, -1), attempt, phase, idx, kind, command, server, exit_code, ok, output, error,
		started_at, elapsed_ns, at_ns FROM experiment_hooks WHERE experiment_id = ? ORDER BY id`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.ExperimentHook
	for rows.Next() {
		var h store.ExperimentHook
		var started, elapsed int64
		var at sql.NullInt64
		if err := rows.Scan(&h.Seq, &h.Attempt, &h.Phase, &h.Index, &h.Kind, &h.Command, &h.Server, &h.ExitCode, &h.OK, &h.Output,
			&h.Error, &started, &elapsed, &at); err != nil {
			return nil, err
		}
		h.Started, h.Elapsed = time.Unix(0, started).UTC(), time.Duration(elapsed)
		if at.Valid {
			d := time.Duration(at.Int64)
			h.At = &d
		}
		out = append(out, h)
	}
	return out, rows.Err()
}
