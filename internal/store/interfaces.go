package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/sample"
)

// The results store as interfaces, one per role, so that a second implementation (a
// PostgreSQL store shared by several machines, to come) can stand where the SQLite
// file does. Records (Run, Experiment, Stall, MetricSeries …) are this package's
// types; implementations only store and load them.

// RunStore keeps runs and their intervals.
type RunStore interface {
	CreateRun(ctx context.Context, r *Run) (int64, error)
	AddInterval(ctx context.Context, runID int64, iv *measure.Interval) error
	FinishRun(ctx context.Context, runID int64, status, reason string, endedAt time.Time, summary json.RawMessage) error
	AddRunWarning(ctx context.Context, runID int64, warning string) error
	// SaveRunErrors replaces the run's first distinct errors (measure.SeenError) with
	// errs, in the order the run met them: written as each is met and again with the
	// final counts. RunErrors reads them back (nil: none).
	SaveRunErrors(ctx context.Context, runID int64, errs []measure.SeenError) error
	RunErrors(ctx context.Context, runID int64) ([]measure.SeenError, error)
	MarkAbandoned(ctx context.Context, runID int64, reason string) error
	Runs(ctx context.Context, f RunFilter) ([]Run, error)
	// Run returns the run or an error wrapping ErrNotFound.
	Run(ctx context.Context, id int64) (*Run, error)
	LatestRunID(ctx context.Context) (int64, error)
	Intervals(ctx context.Context, runID int64) ([]*measure.Interval, error)
	// EncodedIntervals returns the intervals with their histograms still encoded.
	EncodedIntervals(ctx context.Context, run *Run) ([]EncodedInterval, error)
}

// SampleWriter writes one run's server and OS samples as they come.
type SampleWriter interface {
	// SetOrigin moves the run's clock zero (the first interval's start).
	SetOrigin(t time.Time)
	// Skipped records n samples that were not taken (the sampler fell behind).
	Skipped(ctx context.Context, n int64) error
	Add(ctx context.Context, smp *sample.Sample) error
}

// SampleStore keeps server and OS samples and reads them back as series.
type SampleStore interface {
	SampleWriter(ctx context.Context, runID int64, origin time.Time, src *sample.Server, interval time.Duration) (SampleWriter, error)
	HasSamples(ctx context.Context, runID int64) (bool, error)
	SampleSource(ctx context.Context, runID int64) (*SampleSource, error)
	Metrics(ctx context.Context, runID int64) ([]Metric, error)
	// MetricSeries reads the named metrics ("os.disk.*" for a prefix; none: all).
	MetricSeries(ctx context.Context, runID int64, names ...string) ([]MetricSeries, error)
	Collectors(ctx context.Context, runID int64) ([]CollectorRun, error)
	SampleStatuses(ctx context.Context, runID int64) ([]SampleStatus, error)
	// Downsample merges a run's older samples by tiers (see WatchDownsampling), now
	// being the newest sample's time on the run's clock. It returns how many point
	// rows it removed; running it again with the same arguments removes none.
	Downsample(ctx context.Context, runID int64, now time.Duration, tiers []DownsampleTier) (int64, error)
}

// ExperimentStore keeps experiments: their cells, slots, runs and hooks.
type ExperimentStore interface {
	CreateExperiment(ctx context.Context, e *Experiment, cells []ExperimentCell, slots []ExperimentSlot) (int64, error)
	ResumeExperiment(ctx context.Context, id int64, host string, pid int) error
	FinishExperiment(ctx context.Context, id int64, status, reason string, endedAt time.Time) error
	StartSlot(ctx context.Context, expID int64, seq int, at time.Time) (int, error)
	SlotServer(ctx context.Context, expID int64, seq int, change string, effective json.RawMessage) error
	LinkRun(ctx context.Context, expID int64, seq, attempt, instance int, runID int64) error
	FinishSlot(ctx context.Context, expID int64, seq int, status, reason string, at time.Time) error
	AddHook(ctx context.Context, expID int64, h ExperimentHook) error
	Experiments(ctx context.Context, limit int) ([]Experiment, error)
	Experiment(ctx context.Context, id int64) (*Experiment, error)
	ExperimentByName(ctx context.Context, name string) (*Experiment, error)
	ExperimentCells(ctx context.Context, id int64) ([]ExperimentCell, error)
	ExperimentSlots(ctx context.Context, id int64) ([]ExperimentSlot, error)
	ExperimentRuns(ctx context.Context, id int64) ([]ExperimentRun, error)
	ExperimentHooks(ctx context.Context, id int64) ([]ExperimentHook, error)
}

// StallStore keeps the stalls analysis found in a run.
type StallStore interface {
	SaveStalls(ctx context.Context, runID int64, params any, stalls []Stall) error
	Stalls(ctx context.Context, runID int64) (stalls []Stall, params json.RawMessage, analyzed bool, err error)
}

// Store is an open results store: every role, and where it is.
type Store interface {
	RunStore
	SampleStore
	ExperimentStore
	StallStore
	RecordStore
	// Path is where the store is, as the user gave it (a file today; a URL, with
	// any password removed, for a server store).
	Path() string
	Close() error
}

// ErrUnsupported is wrapped when a --store value names a kind of store this build
// cannot open.
var ErrUnsupported = errors.New("unsupported store")

// RunEditor is an optional ability of a store (found by type assertion): changing a
// run after it ran. SetLabels sets and removes labels in one transaction (a note is
// the label "note"); DeleteRun removes the run with everything it carries
// (intervals, samples, stalls, its link to an experiment). Both wrap ErrNotFound for a
// run that does not exist.
type RunEditor interface {
	SetLabels(ctx context.Context, runID int64, set map[string]string, remove []string) error
	DeleteRun(ctx context.Context, runID int64) error
}

// RunLister is an optional ability of a store (found by type assertion): RunList is
// Runs with only what a list of runs shows — ID, UUID, Workload, TargetKind, Clients,
// Rate, StartedAt, EndedAt, Status, Reason (and Gone), Summary, PID and Labels — and
// the other fields (provenance: command, options, settings, host, types, warnings …)
// left zero, so that a list of thousands of runs reads quickly.
type RunLister interface {
	RunList(ctx context.Context, f RunFilter) ([]Run, error)
}
