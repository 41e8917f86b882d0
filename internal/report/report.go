package report

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Options shape a report.
type Options struct {
	Title     string
	Axes      []string // experiment axes in order; empty: every label that varies
	SLO       *SLO
	CompareBy string // axis with two values to compare; "" picks one, "-" none
	// Generated says who made the report and when; empty leaves it out (tests).
	Generated string
	// Selection describes how the runs were chosen, e.g. "label clients=16".
	Selection string
}

// Report is what `fathom report` writes: one run, or an experiment of several.
type Report struct {
	Title      string
	Generated  string
	Selection  string
	Runs       []*RunData  // in the order they ran
	Experiment *Experiment // nil for a single run
	SLO        *SLO
}

// New builds a report over runs (at least one).
func New(data []*RunData, o Options) (*Report, error) {
	if len(data) == 0 {
		return nil, fmt.Errorf("no runs to report")
	}
	r := &Report{Title: o.Title, Generated: o.Generated, Selection: o.Selection, SLO: o.SLO}
	if len(data) == 1 {
		r.Runs = data
		if r.Title == "" {
			d := data[0].Run
			r.Title = fmt.Sprintf("Run %d: %s, %d clients, %s", d.ID, d.Workload, d.Clients, d.TargetKind)
		}
		return r, nil
	}
	e, err := GroupRuns(o.Title, data, o.Axes)
	if err != nil {
		return nil, err
	}
	return NewWithExperiment(e, o)
}

// NewWithExperiment builds a report over an experiment whose members are given.
func NewWithExperiment(e *Experiment, o Options) (*Report, error) {
	r := &Report{Title: o.Title, Generated: o.Generated, Selection: o.Selection, SLO: o.SLO}
	e.ApplySLO(o.SLO)
	switch o.CompareBy {
	case "-":
	case "":
		if a := e.DefaultCompareAxis(); a != "" {
			if err := e.CompareAxis(a); err != nil {
				return nil, err
			}
		}
	default:
		if err := e.CompareAxis(o.CompareBy); err != nil {
			return nil, err
		}
	}
	r.Experiment = e
	for _, m := range e.Members {
		r.Runs = append(r.Runs, m.Data)
	}
	if r.Title == "" {
		var axes []string
		for _, a := range e.Axes {
			axes = append(axes, a.Name)
		}
		r.Title = fmt.Sprintf("Experiment: %d runs of %s", len(r.Runs), r.Runs[0].Run.Workload)
		if len(axes) > 0 {
			r.Title += " over " + strings.Join(axes, " × ")
		}
	}
	return r, nil
}

// File is one file of a report.
type File struct {
	Name string
	Data []byte
}

// Files renders every file of the report: index.html, summary.md and CSV files.
func (r *Report) Files() ([]File, error) {
	var files []File
	add := func(name string, f func(*bytes.Buffer) error) error {
		var b bytes.Buffer
		if err := f(&b); err != nil {
			return fmt.Errorf("%s: %v", name, err)
		}
		files = append(files, File{name, b.Bytes()})
		return nil
	}
	if err := add("index.html", func(b *bytes.Buffer) error { return r.WriteHTML(b) }); err != nil {
		return nil, err
	}
	if err := add("summary.md", func(b *bytes.Buffer) error { return r.WriteMarkdown(b) }); err != nil {
		return nil, err
	}
	if err := add("runs.csv", func(b *bytes.Buffer) error { return r.WriteRunsCSV(b) }); err != nil {
		return nil, err
	}
	if e := r.Experiment; e != nil {
		if err := add("cells.csv", func(b *bytes.Buffer) error { return r.WriteCellsCSV(b) }); err != nil {
			return nil, err
		}
		if len(e.Comparisons) > 0 {
			if err := add("comparison.csv", func(b *bytes.Buffer) error { return WriteCompareCSV(b, e.Comparisons) }); err != nil {
				return nil, err
			}
		}
	}
	for _, d := range r.Runs {
		id := strconv.FormatInt(d.Run.ID, 10)
		if err := add("run-"+id+"-intervals.csv", func(b *bytes.Buffer) error { return WriteIntervalsCSV(b, d.Rows) }); err != nil {
			return nil, err
		}
		if err := add("run-"+id+"-percentiles.csv", func(b *bytes.Buffer) error { return writePercentilesCSV(b, d.Distribution) }); err != nil {
			return nil, err
		}
		if d.Samples != nil {
			if err := add("run-"+id+"-metrics.csv", func(b *bytes.Buffer) error { return WriteMetricsCSV(b, d.Metrics) }); err != nil {
				return nil, err
			}
		}
	}
	return files, nil
}

// WriteDir writes files into dir (created if needed) and returns index.html's path.
func WriteDir(dir string, files []File) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644); err != nil {
			return "", err
		}
	}
	return filepath.Join(dir, "index.html"), nil
}

func fmtFloat(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}
