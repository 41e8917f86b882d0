package report

import (
	"context"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/store"
)

// The models commands render (see Kind); Comparison and Report are models too.

// RunList is the runs `fathom runs` lists (KindRuns).
type RunList struct {
	Runs []store.Run
	// Filter is what selected them and Store where they are: the text of an
	// empty list says which filter matched nothing in which store.
	Filter store.RunFilter
	Store  string
}

// runView is one stored run (KindRun, KindIntervals, KindCommands): its record, its
// finished intervals and their summary.
type runView struct {
	Run       *store.Run
	Intervals []*measure.Interval
	Summary   *measure.Summary
	// Store is read for what a sampled run adds (collectors, key metrics, stalls);
	// nil leaves that out.
	Store store.Store
	// KeyMetrics are the metrics a sampled run's text shows first: its kind's, then
	// the host's (KindFigures).
	KeyMetrics []string
}

// LoadRunView reads a run (an id, or last) as show and export render it; figs gives
// its kind's key metrics.
func LoadRunView(ctx context.Context, st store.Store, figs KindFigures, arg string) (*runView, error) {
	run, ivs, sum, err := LoadRun(ctx, st, arg)
	if err != nil {
		return nil, err
	}
	return &runView{Run: run, Intervals: ivs, Summary: sum, Store: st, KeyMetrics: figs.keyMetrics(run.TargetKind)}, nil
}

// ExperimentView is a stored experiment as `fathom show` renders it (KindExperiment);
// its cells are read from Store as it renders.
type ExperimentView struct {
	Exp   *store.Experiment
	Store store.Store
}

// watchWorkload is run.WatchWorkload: a `fathom watch` session, which has no
// transactions to summarise.
const watchWorkload = "watch"
