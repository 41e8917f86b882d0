package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/fathom-lab/fathom/internal/measure"
)

// RunRecord is one run with everything it carries (intervals with their histograms as
// stored, server and OS samples, stalls), as `fathom store copy` moves it between
// stores.
type RunRecord struct {
	Run       Run
	Intervals []EncodedInterval
	Source    *SampleSource // nil: the run was not sampled
	Metrics   []Metric
	Samples   []SampleRow
	Points    []PointRow
	Stalls    []Stall
	// StallParams are the thresholds stall analysis used; nil when it never ran.
	StallParams json.RawMessage
	// Errors are the run's first distinct errors (RunStore.RunErrors).
	Errors []measure.SeenError
}

// SampleRow is one collector's outcome in one sample, as stored.
type SampleRow struct {
	Interval          int
	Collector, Source string
	At, Took          time.Duration
	Status, Error     string
	Reset             bool
	N                 int // samples a downsampled row stands for (1: one)
}

// PointRow is one stored reading of a run's metric (Metric.ID).
type PointRow struct {
	MetricID int64
	MetricPoint
}

// ExperimentRecord is one experiment with its cells, schedule, hooks and the links to
// its runs (by run UUID: run ids differ between stores).
type ExperimentRecord struct {
	Experiment Experiment
	Cells      []ExperimentCell
	Slots      []ExperimentSlot
	Links      []RunLink
	Hooks      []ExperimentHook
}

// RunLink places a run (by UUID) in an experiment's slot and attempt.
type RunLink struct {
	RunUUID                string
	Seq, Attempt, Instance int
}

// RecordStore reads and writes whole runs and experiments, for copies between stores.
type RecordStore interface {
	// ExportRun reads run id with everything it carries.
	ExportRun(ctx context.Context, id int64) (*RunRecord, error)
	// ImportRun stores rec as it is (status, times, UUID), unless a run with its UUID
	// is there already: then nothing changes and existed is true. id is the run's id
	// in this store.
	ImportRun(ctx context.Context, rec *RunRecord) (id int64, existed bool, err error)
	// ExportExperiment reads experiment id with its cells, slots, hooks and run links.
	ExportExperiment(ctx context.Context, id int64) (*ExperimentRecord, error)
	// ImportExperiment stores rec, replacing an experiment with its UUID (so a copy
	// made again brings it up to date); links to runs this store lacks are left out.
	ImportExperiment(ctx context.Context, rec *ExperimentRecord) (id int64, err error)
}
