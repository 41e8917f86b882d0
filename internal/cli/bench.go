package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/fathom-lab/fathom/internal/store"
)

// benchHooks let an experiment drive the run path of `fathom run` (runOpts.execute)
// for each of its runs, so that a cell is measured, stored and reported exactly like
// a run by hand. A nil *benchHooks (fathom run) changes nothing.
type benchHooks struct {
	// settings read back from the server before the run, recorded with the run's
	// settings (they win over the target's snapshot).
	settings map[string]string
	// onCreate links the run to its experiment as soon as it exists, so that a run
	// interrupted by anything is found again.
	onCreate func(ctx context.Context, st *store.Store, runID int64) error
	// live receives the live lines instead of stdout (nil: as fathom run).
	live io.Writer
	// noSummary leaves out the summary at the end of the run (the experiment prints
	// one line per run instead).
	noSummary bool
}

// record adds the experiment's provenance to the run before it is stored.
func (b *benchHooks) record(r *store.Run) {
	if b == nil || len(b.settings) == 0 {
		return
	}
	if r.Settings == nil {
		r.Settings = map[string]string{}
	}
	for k, v := range b.settings {
		r.Settings[k] = v
	}
}

// created is called with the new run's id.
func (b *benchHooks) created(ctx context.Context, st *store.Store, id int64) error {
	if b == nil || b.onCreate == nil {
		return nil
	}
	if err := b.onCreate(ctx, st, id); err != nil {
		_ = st.MarkAbandoned(context.WithoutCancel(ctx), id, "could not be linked to its experiment: "+err.Error())
		return fmt.Errorf("linking run %d to its experiment in %s: %v", id, st.Path(), err)
	}
	return nil
}

func (b *benchHooks) liveWriter(w io.Writer) io.Writer {
	if b == nil || b.live == nil {
		return w
	}
	return b.live
}

func (b *benchHooks) summary() bool { return b == nil || !b.noSummary }
