package report

import (
	"context"
	"fmt"
	"io"
)

// textFormat is what a person reads on a terminal.
var textFormat = Format{
	Name: "text", MediaType: "text/plain; charset=utf-8", Ext: ".txt",
	Render: map[Kind]Renderer{
		KindRuns:       plain(writeRunListText),
		KindRun:        render(writeRunText),
		KindComparison: method((*comparison).WriteText),
		KindExperiment: render(func(ctx context.Context, w io.Writer, e *ExperimentView) error {
			return WriteExperiment(ctx, w, e.Store, e.Exp, ExperimentStatus(e.Exp))
		}),
	},
}

// writeRunListText is `fathom runs`: one line a run, or what to do when there is none.
func writeRunListText(w io.Writer, l *RunList) error {
	if len(l.Runs) == 0 {
		f := l.Filter
		if f.Workload != "" || f.Status != "" || len(f.Labels) > 0 {
			_, err := fmt.Fprintf(w, "no runs in %s match %s: see `fathom runs` for all\n", l.Store, describeFilter(f))
			return err
		}
		_, err := fmt.Fprintf(w, "no runs in %s yet: try `fathom quickstart`\n", l.Store)
		return err
	}
	writeRuns(w, l.Runs)
	return nil
}

// writeRunText is `fathom show RUN`: provenance, warnings, summary and, for a sampled
// run, its collectors, key metrics and stalls.
func writeRunText(ctx context.Context, w io.Writer, v *runView) error {
	writeProvenance(w, v.Run)
	for _, s := range v.Run.Warnings {
		fmt.Fprintf(w, "  warning:  %s\n", s)
	}
	if v.Run.Workload != watchWorkload {
		WriteSummary(w, v.Run, v.Summary)
	}
	if v.Store == nil {
		return nil
	}
	keys := v.KeyMetrics
	if keys == nil {
		keys = KindFigures(nil).keyMetrics(v.Run.TargetKind)
	}
	return writeSampling(ctx, w, v.Store, v.Run, keys)
}
