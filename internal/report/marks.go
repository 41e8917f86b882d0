package report

import (
	"context"
	"fmt"

	"github.com/fathom-lab/fathom/internal/chart"
	"github.com/fathom-lab/fathom/internal/store"
)

// mark is a moment in a run: a during_run hook of its experiment firing.
type mark struct {
	At    float64 `json:"at_s"` // seconds on the run's clock
	Label string  `json:"label"`
	OK    bool    `json:"ok"`
}

// loadMarks finds the during_run hooks of the experiments the runs belong to (by
// their experiment label and the experiment's links to its runs) and adds the moments
// they fired to each run's Marks.
func loadMarks(ctx context.Context, st store.Store, data []*RunData) error {
	names := map[string]bool{}
	for _, d := range data {
		if n := d.Run.Labels["experiment"]; n != "" {
			names[n] = true
		}
	}
	if len(names) == 0 {
		return nil
	}
	exps, err := st.Experiments(ctx, 0)
	if err != nil {
		return err
	}
	type slot struct {
		exp          int64
		seq, attempt int
	}
	where := map[int64]slot{}
	hooks := map[int64][]store.ExperimentHook{}
	for _, e := range exps {
		if !names[e.Name] {
			continue
		}
		hs, err := st.ExperimentHooks(ctx, e.ID)
		if err != nil {
			return err
		}
		during := false
		for _, h := range hs {
			during = during || h.At != nil
		}
		if !during {
			continue
		}
		hooks[e.ID] = hs
		eruns, err := st.ExperimentRuns(ctx, e.ID)
		if err != nil {
			return err
		}
		for _, er := range eruns {
			where[er.RunID] = slot{e.ID, er.Seq, er.Attempt}
		}
	}
	for _, d := range data {
		sl, ok := where[d.Run.ID]
		if !ok {
			continue
		}
		d.Marks = nil
		for _, h := range hooks[sl.exp] {
			if h.At == nil || h.Seq != sl.seq || h.Attempt != sl.attempt {
				continue
			}
			label := fmt.Sprintf("%s %d: %s", h.Kind, h.Index, h.Command)
			if len(label) > 40 {
				label = label[:37] + "..."
			}
			if !h.OK {
				label += " (failed)"
			}
			d.Marks = append(d.Marks, mark{At: h.At.Seconds(), Label: label, OK: h.OK})
		}
	}
	return nil
}

// markRefs are a run's marks as vertical lines.
func markRefs(d *RunData) []chart.Ref {
	var out []chart.Ref
	for _, m := range d.Marks {
		out = append(out, chart.Ref{At: m.At, Label: m.Label})
	}
	return out
}
