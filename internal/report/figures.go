package report

import (
	"github.com/fathom-lab/fathom/internal/chart"
)

// RunFigures are a run's charts as models, the same ones the static report draws as
// SVG: the web UI draws them interactively.
type RunFigures struct {
	// Time holds throughput, latency and errors over time (empty for a watch).
	Time []chart.Chart `json:"time"`
	// Distribution is latency by percentile (nil for a watch).
	Distribution *chart.Chart `json:"distribution,omitempty"`
	// Metrics are the server and OS metric charts by collector.
	Metrics []chart.Group `json:"metrics,omitempty"`
	// Flat lists metrics that stayed zero and are not drawn.
	Flat []string `json:"flat,omitempty"`
	// Watch is true for a watch session (no workload ran).
	Watch bool `json:"watch,omitempty"`
}

// Figures builds the models of a run's charts (the run need not be one of the
// report's), resolved for a renderer other than the report's SVG.
func (r *Report) Figures(d *RunData) RunFigures {
	models, ax, bands := r.runCharts(d)
	var f RunFigures
	f.Watch = watched(d)
	if !f.Watch {
		for _, m := range models {
			m.Resolve()
			if m.XScale == chart.ScaleNines {
				f.Distribution = m
				continue
			}
			f.Time = append(f.Time, *m)
		}
	}
	if d.Samples != nil {
		groups, flat := r.metricGroups(d, ax, bands)
		for _, g := range groups {
			cg := chart.Group{Title: g.Title}
			for _, c := range g.Charts {
				c.Resolve()
				cg.Charts = append(cg.Charts, *c)
			}
			f.Metrics = append(f.Metrics, cg)
		}
		f.Flat = flat
	}
	return f
}

// ExperimentFigures are an experiment's charts as the static report draws them.
type ExperimentFigures struct {
	// Cautions are what to know before reading a difference between cells (runs that
	// differ in more than the axes, too few repetitions): Experiment.Cautions.
	Cautions []string `json:"cautions,omitempty"`
	// Summary holds TPS per cell as box plots, median TPS as grouped bars and the
	// scaling curves against the sweep axis.
	Summary []chart.Chart `json:"summary"`
	// TimeTitle and Time are the cells' median runs over time (none with one cell).
	TimeTitle string        `json:"time_title,omitempty"`
	Time      []chart.Chart `json:"time,omitempty"`
	// Small is the throughput of each run in the order the runs ran, one small chart
	// per value of the first axis.
	Small chart.Chart `json:"small"`
}

// ExperimentFigures builds the experiment's chart models (nil for a report of runs),
// resolved for a renderer other than the report's SVG.
func (r *Report) ExperimentFigures() *ExperimentFigures {
	if r.Experiment == nil {
		return nil
	}
	f := &ExperimentFigures{Summary: r.experimentCharts(), Small: r.smallMultiples(), Cautions: r.Experiment.Cautions()}
	f.TimeTitle, f.Time = r.timeOverlays()
	for i := range f.Summary {
		f.Summary[i].Resolve()
	}
	for i := range f.Time {
		f.Time[i].Resolve()
	}
	f.Small.Resolve()
	return f
}
