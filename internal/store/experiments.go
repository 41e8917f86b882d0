package store

import (
	"encoding/json"
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
	Judge       string           `json:"judge,omitempty"` // transaction type or group the cells are judged by
	Target      string           `json:"target"`
	ToolVersion string           `json:"tool_version"`
	Host        string           `json:"host"`
	PID         int              `json:"pid,omitempty"`
	CreatedAt   time.Time        `json:"created_at"`
	EndedAt     time.Time        `json:"ended_at"`
	Status      string           `json:"status"` // running|complete|failed|interrupted
	Reason      string           `json:"reason,omitempty"`
	// Gone is set by reads when the experiment was left "running" by a process that no
	// longer exists: Status then reads interrupted and Reason ProcessGone.
	Gone bool `json:"process_gone,omitempty"`
	// Counts of slots (cells × repetitions) by status, filled by reads.
	Slots    int `json:"slots"`
	Complete int `json:"complete"`
	Failed   int `json:"failed"` // failed, or aborted by a threshold
}

// ExperimentAxis is one dimension of an experiment's matrix, values in plan order.
type ExperimentAxis struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
	// Baseline is the value comparisons along the axis start from ("" the first).
	Baseline string `json:"baseline,omitempty"`
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
	Status     string          `json:"status"` // planned|running|complete|failed|interrupted|aborted (by a threshold)
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

// ExperimentHook is what one hook did. Phase "restart" is a measured restart of a
// Redis instance after a run (the plan's measure_restart): Kind is the file it loaded
// (rdb, aof, aof-plain), Elapsed the time from starting redis-server until it
// answered, Output the facts as JSON (RestartFacts).
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
	// At is when a during_run hook fired on its run's clock (since the start of the
	// run's first interval, as intervals and samples count); nil for other phases.
	At *time.Duration `json:"at_ns,omitempty"`
}

// RestartFacts are what a measured restart loaded, stored as a restart hook's output.
type RestartFacts struct {
	Format    string  `json:"format"`     // rdb, aof (with its RDB preamble) or aof-plain
	Seconds   float64 `json:"seconds"`    // from starting redis-server until it answered PING
	FileBytes int64   `json:"file_bytes"` // the RDB file, or the AOF directory's files
	Keys      int64   `json:"keys"`       // keys loaded
	Memory    int64   `json:"used_memory"`
}
