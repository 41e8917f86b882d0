package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Experiment is a plan run over a matrix of cells, each repeated.
type Experiment struct {
	ID          int64            `json:"id"`
	UUID        string           `json:"uuid"`
	Name        string           `json:"name"`
	Description string           `json:"description,omitempty"`
	PlanPath    string           `json:"plan_path"`
	PlanDir     string           `json:"plan_dir"`
	Plan        string           `json:"plan"` // the plan file's text, passwords masked
	Axes        []ExperimentAxis `json:"axes"`
	Repetitions int              `json:"repetitions"`
	Order       string           `json:"order"`
	Target      string           `json:"target"`
	ToolVersion string           `json:"tool_version"`
	Host        string           `json:"host"`
	PID         int              `json:"pid,omitempty"`
	CreatedAt   time.Time        `json:"created_at"`
	EndedAt     time.Time        `json:"ended_at"`
	Status      string           `json:"status"` // running|complete|failed|interrupted
	Reason      string           `json:"reason,omitempty"`
	// Counts of slots (cells × repetitions) by status, filled by reads.
	Slots    int `json:"slots"`
	Complete int `json:"complete"`
	Failed   int `json:"failed"`
}

// ExperimentAxis is one dimension of an experiment's matrix, values in plan order.
type ExperimentAxis struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
}

// Coord is a cell's value on one axis.
type Coord struct {
	Axis  string `json:"axis"`
	Value string `json:"value"`
}

// ExperimentCell is one combination of axis values.
type ExperimentCell struct {
	Cell   int             `json:"cell"`
	Key    string          `json:"key"`
	Coords []Coord         `json:"coords"`
	Params json.RawMessage `json:"params"`
}

// ExperimentSlot is one cell and repetition of the schedule.
type ExperimentSlot struct {
	Seq        int             `json:"seq"`
	Cell       int             `json:"cell"`
	Repetition int             `json:"repetition"`
	Status     string          `json:"status"` // planned|running|complete|failed|interrupted
	Reason     string          `json:"reason,omitempty"`
	Attempts   int             `json:"attempts"`
	StartedAt  time.Time       `json:"started_at"`
	EndedAt    time.Time       `json:"ended_at"`
	Change     string          `json:"server_change,omitempty"`
	Effective  json.RawMessage `json:"effective,omitempty"`
	// RunID is the slot's run in its latest attempt (the aggregate with several
	// instances), 0 if none; Parts are the per-instance runs, by instance from 1.
	RunID int64   `json:"run_id,omitempty"`
	Parts []int64 `json:"parts,omitempty"`
}

// ExperimentRun places one stored run in its experiment: what a report groups by.
type ExperimentRun struct {
	RunID      int64   `json:"run_id"`
	Seq        int     `json:"seq"`  // position in the schedule, from 0
	Cell       int     `json:"cell"` // index into ExperimentCells
	Coords     []Coord `json:"coords"`
	Repetition int     `json:"repetition"` // from 1
	Attempt    int     `json:"attempt"`    // from 1; a resumed slot runs again
	// Instance is 0 for the run of a slot (the aggregate when the cell ran on several
	// instances) and 1..N for one instance's part.
	Instance int `json:"instance"`
	// Current is set on the runs of a slot's latest attempt when the slot completed:
	// the ones a report counts.
	Current bool `json:"current"`
}

// ExperimentHook is what one hook did.
type ExperimentHook struct {
	Seq      int           `json:"seq"` // -1: before or after the experiment
	Attempt  int           `json:"attempt"`
	Phase    string        `json:"phase"`
	Index    int           `json:"index"`
	Kind     string        `json:"kind"`
	Command  string        `json:"command"`
	Server   string        `json:"server,omitempty"`
	ExitCode int           `json:"exit_code"`
	OK       bool          `json:"ok"`
	Output   string        `json:"output"`
	Error    string        `json:"error,omitempty"`
	Started  time.Time     `json:"started"`
	Elapsed  time.Duration `json:"elapsed_ns"`
}

// CreateExperiment records a new experiment, its cells and its schedule (every slot
// planned) in one transaction, and sets e.ID and e.UUID.
func (s *Store) CreateExperiment(ctx context.Context, e *Experiment, cells []ExperimentCell, slots []ExperimentSlot) (int64, error) {
	if e.UUID == "" {
		e.UUID = newUUID()
	}
	e.Status = "running"
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `INSERT INTO experiments (uuid, name, description, plan_path, plan_dir, plan, axes, repetitions,
		run_order, target, tool_version, host, pid, created_at, status) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		e.UUID, e.Name, e.Description, e.PlanPath, e.PlanDir, e.Plan, mustJSON(e.Axes), e.Repetitions, e.Order, e.Target,
		e.ToolVersion, e.Host, e.PID, e.CreatedAt.UTC().UnixNano(), e.Status)
	if err != nil {
		return 0, err
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, err
	}
	for _, c := range cells {
		params := string(c.Params)
		if params == "" {
			params = "{}"
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO experiment_cells (experiment_id, cell, key, coords, params) VALUES (?,?,?,?,?)`,
			id, c.Cell, c.Key, mustJSON(c.Coords), params); err != nil {
			return 0, err
		}
	}
	for _, sl := range slots {
		if _, err := tx.ExecContext(ctx, `INSERT INTO experiment_slots (experiment_id, seq, cell, repetition) VALUES (?,?,?,?)`,
			id, sl.Seq, sl.Cell, sl.Repetition); err != nil {
			return 0, err
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, err
	}
	e.ID = id
	return id, nil
}

// ResumeExperiment marks an experiment running again in process pid on host.
func (s *Store) ResumeExperiment(ctx context.Context, id int64, host string, pid int) error {
	_, err := s.db.ExecContext(ctx, `UPDATE experiments SET status = 'running', reason = '', ended_at = NULL, host = ?, pid = ? WHERE id = ?`, host, pid, id)
	return err
}

// FinishExperiment records how an experiment ended.
func (s *Store) FinishExperiment(ctx context.Context, id int64, status, reason string, endedAt time.Time) error {
	_, err := s.db.ExecContext(ctx, `UPDATE experiments SET status = ?, reason = ?, ended_at = ?, pid = 0 WHERE id = ?`,
		status, reason, endedAt.UTC().UnixNano(), id)
	return err
}

// StartSlot marks a slot running and returns its attempt number (from 1).
func (s *Store) StartSlot(ctx context.Context, expID int64, seq int, at time.Time) (int, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `UPDATE experiment_slots SET status = 'running', reason = '', attempts = attempts + 1,
		started_at = ?, ended_at = NULL, server_change = '', effective = '[]' WHERE experiment_id = ? AND seq = ?`,
		at.UTC().UnixNano(), expID, seq); err != nil {
		return 0, err
	}
	var attempt int
	if err := tx.QueryRowContext(ctx, `SELECT attempts FROM experiment_slots WHERE experiment_id = ? AND seq = ?`, expID, seq).Scan(&attempt); err != nil {
		return 0, err
	}
	return attempt, tx.Commit()
}

// SlotServer records what was done to the server for a slot and the settings read back.
func (s *Store) SlotServer(ctx context.Context, expID int64, seq int, change string, effective json.RawMessage) error {
	if len(effective) == 0 {
		effective = json.RawMessage("[]")
	}
	_, err := s.db.ExecContext(ctx, `UPDATE experiment_slots SET server_change = ?, effective = ? WHERE experiment_id = ? AND seq = ?`,
		change, string(effective), expID, seq)
	return err
}

// LinkRun records that a run belongs to a slot's attempt (instance 0: the run or the
// aggregate; 1..N: one instance's part).
func (s *Store) LinkRun(ctx context.Context, expID int64, seq, attempt, instance int, runID int64) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO experiment_runs (run_id, experiment_id, seq, attempt, instance) VALUES (?,?,?,?,?)`,
		runID, expID, seq, attempt, instance)
	return err
}

// FinishSlot records how a slot ended.
func (s *Store) FinishSlot(ctx context.Context, expID int64, seq int, status, reason string, at time.Time) error {
	_, err := s.db.ExecContext(ctx, `UPDATE experiment_slots SET status = ?, reason = ?, ended_at = ? WHERE experiment_id = ? AND seq = ?`,
		status, reason, at.UTC().UnixNano(), expID, seq)
	return err
}

// AddHook records a hook's result; seq < 0 for hooks before or after the experiment.
func (s *Store) AddHook(ctx context.Context, expID int64, h ExperimentHook) error {
	var seq any
	if h.Seq >= 0 {
		seq = h.Seq
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO experiment_hooks (experiment_id, seq, attempt, phase, idx, kind, command, server,
		exit_code, ok, output, error, started_at, elapsed_ns) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		expID, seq, h.Attempt, h.Phase, h.Index, h.Kind, h.Command, h.Server, h.ExitCode, h.OK, h.Output, h.Error,
		h.Started.UTC().UnixNano(), int64(h.Elapsed))
	return err
}

const experimentColumns = `e.id, e.uuid, e.name, e.description, e.plan_path, e.plan_dir, e.plan, e.axes, e.repetitions, e.run_order,
	e.target, e.tool_version, e.host, e.pid, e.created_at, e.ended_at, e.status, e.reason,
	(SELECT count(*) FROM experiment_slots s WHERE s.experiment_id = e.id),
	(SELECT count(*) FROM experiment_slots s WHERE s.experiment_id = e.id AND s.status = 'complete'),
	(SELECT count(*) FROM experiment_slots s WHERE s.experiment_id = e.id AND s.status = 'failed')`

func scanExperiment(sc scanner) (*Experiment, error) {
	var (
		e       Experiment
		axes    string
		created int64
		ended   sql.NullInt64
	)
	if err := sc.Scan(&e.ID, &e.UUID, &e.Name, &e.Description, &e.PlanPath, &e.PlanDir, &e.Plan, &axes, &e.Repetitions, &e.Order,
		&e.Target, &e.ToolVersion, &e.Host, &e.PID, &created, &ended, &e.Status, &e.Reason, &e.Slots, &e.Complete, &e.Failed); err != nil {
		return nil, err
	}
	e.CreatedAt = time.Unix(0, created).UTC()
	if ended.Valid {
		e.EndedAt = time.Unix(0, ended.Int64).UTC()
	}
	if err := json.Unmarshal([]byte(axes), &e.Axes); err != nil {
		return nil, fmt.Errorf("experiment %d: corrupt axes: %v", e.ID, err)
	}
	return &e, nil
}

// Experiments lists experiments, newest first (limit 0: all).
func (s *Store) Experiments(ctx context.Context, limit int) ([]Experiment, error) {
	q := "SELECT " + experimentColumns + " FROM experiments e ORDER BY e.id DESC"
	if limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", limit)
	}
	rows, err := s.db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Experiment
	for rows.Next() {
		e, err := scanExperiment(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *e)
	}
	return out, rows.Err()
}

// Experiment returns one experiment; the error wraps ErrNotFound if there is none.
func (s *Store) Experiment(ctx context.Context, id int64) (*Experiment, error) {
	e, err := scanExperiment(s.db.QueryRowContext(ctx, "SELECT "+experimentColumns+" FROM experiments e WHERE e.id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("experiment %d %w in %s", id, ErrNotFound, s.path)
	}
	return e, err
}

// ExperimentByName returns the newest experiment with this name.
func (s *Store) ExperimentByName(ctx context.Context, name string) (*Experiment, error) {
	e, err := scanExperiment(s.db.QueryRowContext(ctx, "SELECT "+experimentColumns+" FROM experiments e WHERE e.name = ? ORDER BY e.id DESC LIMIT 1", name))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("experiment %q %w in %s", name, ErrNotFound, s.path)
	}
	return e, err
}

// ExperimentCells returns an experiment's cells in matrix order.
func (s *Store) ExperimentCells(ctx context.Context, id int64) ([]ExperimentCell, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT cell, key, coords, params FROM experiment_cells WHERE experiment_id = ? ORDER BY cell`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ExperimentCell
	for rows.Next() {
		var c ExperimentCell
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
func (s *Store) ExperimentSlots(ctx context.Context, id int64) ([]ExperimentSlot, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT seq, cell, repetition, status, reason, attempts, started_at, ended_at, server_change, effective
		FROM experiment_slots WHERE experiment_id = ? ORDER BY seq`, id)
	if err != nil {
		return nil, err
	}
	var out []ExperimentSlot
	for rows.Next() {
		var sl ExperimentSlot
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
	runs, err := s.db.QueryContext(ctx, `SELECT r.seq, r.instance, r.run_id FROM experiment_runs r JOIN experiment_slots s
		ON s.experiment_id = r.experiment_id AND s.seq = r.seq AND r.attempt = s.attempts
		WHERE r.experiment_id = ? ORDER BY r.seq, r.instance`, id)
	if err != nil {
		return nil, err
	}
	defer runs.Close()
	bySeq := map[int]*ExperimentSlot{}
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
func (s *Store) ExperimentRuns(ctx context.Context, id int64) ([]ExperimentRun, error) {
	cells, err := s.ExperimentCells(ctx, id)
	if err != nil {
		return nil, err
	}
	coords := map[int][]Coord{}
	for _, c := range cells {
		coords[c.Cell] = c.Coords
	}
	rows, err := s.db.QueryContext(ctx, `SELECT r.run_id, r.seq, s.cell, s.repetition, r.attempt, r.instance,
		r.attempt = s.attempts AND s.status = 'complete'
		FROM experiment_runs r JOIN experiment_slots s ON s.experiment_id = r.experiment_id AND s.seq = r.seq
		WHERE r.experiment_id = ? ORDER BY r.seq, r.attempt, r.instance`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ExperimentRun
	for rows.Next() {
		var r ExperimentRun
		if err := rows.Scan(&r.RunID, &r.Seq, &r.Cell, &r.Repetition, &r.Attempt, &r.Instance, &r.Current); err != nil {
			return nil, err
		}
		r.Coords = coords[r.Cell]
		out = append(out, r)
	}
	return out, rows.Err()
}

// ExperimentHooks returns what the hooks of an experiment did, in order.
func (s *Store) ExperimentHooks(ctx context.Context, id int64) ([]ExperimentHook, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT coalesce(seq, -1), attempt, phase, idx, kind, command, server, exit_code, ok, output, error,
		started_at, elapsed_ns FROM experiment_hooks WHERE experiment_id = ? ORDER BY id`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ExperimentHook
	for rows.Next() {
		var h ExperimentHook
		var started, elapsed int64
		if err := rows.Scan(&h.Seq, &h.Attempt, &h.Phase, &h.Index, &h.Kind, &h.Command, &h.Server, &h.ExitCode, &h.OK, &h.Output,
			&h.Error, &started, &elapsed); err != nil {
			return nil, err
		}
		h.Started, h.Elapsed = time.Unix(0, started).UTC(), time.Duration(elapsed)
		out = append(out, h)
	}
	return out, rows.Err()
}
