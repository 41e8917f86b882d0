package report

import (
	"context"
	"encoding/json"
	"io"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/store"
)

// jsonFormat is for programs: indented JSON documents (docs/json-outputs.md).
var jsonFormat = Format{
	Name: "json", MediaType: "application/json", Ext: ".json",
	Render: map[Kind]Renderer{
		KindRuns: plain(func(w io.Writer, l *RunList) error { return writeJSON(w, l.Runs) }),
		KindRun:  render(writeRunJSON),
		KindIntervals: plain(func(w io.Writer, v *runView) error {
			return writeIntervalsJSON(w, v.Run, intervalRows(v.Run, v.Intervals))
		}),
		KindCommands:   plain(func(w io.Writer, v *runView) error { return writeCommands(w, v.Run, v.Summary, "json") }),
		KindComparison: method((*comparison).WriteJSON),
		KindExperiment: render(func(ctx context.Context, w io.Writer, e *ExperimentView) error {
			v, err := ExperimentJSON(ctx, e.Store, e.Exp)
			if err != nil {
				return err
			}
			return writeJSON(w, v)
		}),
	},
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeRunJSON is `fathom show RUN --json`: the run, its summary and how it was sampled.
func writeRunJSON(ctx context.Context, w io.Writer, v *runView) error {
	var sampling *SamplingJSON
	if v.Store != nil {
		sampling = samplingFor(ctx, v.Store, v.Run)
	}
	return writeJSON(w, struct {
		Run      *store.Run       `json:"run"`
		Summary  *measure.Summary `json:"summary"`
		Sampling *SamplingJSON    `json:"sampling,omitempty"`
	}{v.Run, v.Summary, sampling})
}
