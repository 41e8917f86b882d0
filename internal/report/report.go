package report

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/fathom-lab/fathom/internal/safefile"
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
	// Judge is the transaction type or client group the figures count ("" all); the
	// caller applies it to the runs with SetJudge before building the report.
	Judge string
	// Baseline names the baseline value of axes: "durability=relaxed" (several
	// comma-separated).
	Baseline string
}

// Report is what `fathom report` writes: one run, or an experiment of several.
type Report struct {
	Title      string
	Generated  string
	Selection  string
	Runs       []*RunData  // in the order they ran
	Experiment *experiment // nil for a single run
	SLO        *SLO
	// Restarts are the experiment's measured restarts (measure_restart), set by the
	// caller from the store (ExperimentRestarts).
	Restarts []restartRow
}

// New builds a report over runs (at least one).
func New(data []*RunData, o Options) (*Report, error) {
	if len(data) == 0 {
		return nil, fmt.Errorf("no runs to report")
	}
	r := &Report{Title: o.Title, Generated: o.Generated, Selection: o.Selection, SLO: o.SLO}
	if len(data) == 1 {
		if err := SetJudge(data, o.Judge); err != nil {
			return nil, err
		}
		r.Runs = data
		if r.Title == "" {
			d := data[0].Run
			r.Title = fmt.Sprintf("Run %d: %s, %d clients, %s", d.ID, d.Workload, d.Clients, d.TargetKind)
			if watched(data[0]) {
				r.Title = fmt.Sprintf("Watch %d: %s, %s s of server and OS metrics", d.ID, d.TargetKind, num(samplesEnd(data[0])))
			}
		}
		return r, nil
	}
	if err := SetJudge(data, o.Judge); err != nil {
		return nil, err
	}
	bl, err := ParseBaselines(o.Baseline)
	if err != nil {
		return nil, err
	}
	e, err := groupRuns(o.Title, data, o.Axes, bl)
	if err != nil {
		return nil, err
	}
	return newWithExperiment(e, o)
}

// newWithExperiment builds a report over an experiment whose members are given.
func newWithExperiment(e *experiment, o Options) (*Report, error) {
	r := &Report{Title: o.Title, Generated: o.Generated, Selection: o.Selection, SLO: o.SLO}
	e.applySLO(o.SLO)
	switch o.CompareBy {
	case "-":
	case "":
		if a := e.defaultCompareAxis(); a != "" {
			if err := e.compareAxis(a); err != nil {
				return nil, err
			}
		}
	default:
		if err := e.compareAxis(o.CompareBy); err != nil {
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

// file is one file of a report.
type file struct {
	Name string
	Data []byte
}

// Files renders every file of the report: index.html, summary.md and CSV files.
func (r *Report) Files() ([]file, error) {
	var files []file
	add := func(name string, f func(*bytes.Buffer) error) error {
		var b bytes.Buffer
		if err := f(&b); err != nil {
			return fmt.Errorf("%s: %v", name, err)
		}
		files = append(files, file{name, b.Bytes()})
		return nil
	}
	// The page and the summary through the format registry, as every command renders.
	for _, f := range []struct{ name, format string }{{"index.html", "html"}, {"summary.md", "markdown"}} {
		if err := add(f.name, func(b *bytes.Buffer) error { return renderFormat(context.Background(), b, f.format, kindReport, r) }); err != nil {
			return nil, err
		}
	}
	if err := add("runs.csv", func(b *bytes.Buffer) error { return r.writeRunsCSV(b) }); err != nil {
		return nil, err
	}
	if e := r.Experiment; e != nil {
		if err := add("cells.csv", func(b *bytes.Buffer) error { return r.writeCellsCSV(b) }); err != nil {
			return nil, err
		}
		if len(r.Restarts) > 0 {
			if err := add("restarts.csv", func(b *bytes.Buffer) error { return writeRestartsCSV(b, r.Restarts) }); err != nil {
				return nil, err
			}
		}
		if len(e.Comparisons) > 0 {
			if err := add("comparison.csv", func(b *bytes.Buffer) error { return writeCompareCSV(b, e.Comparisons) }); err != nil {
				return nil, err
			}
		}
	}
	for _, d := range r.Runs {
		id := strconv.FormatInt(d.Run.ID, 10)
		if err := add("run-"+id+"-intervals.csv", func(b *bytes.Buffer) error { return writeIntervalsCSV(b, d.Rows) }); err != nil {
			return nil, err
		}
		if err := add("run-"+id+"-percentiles.csv", func(b *bytes.Buffer) error { return writePercentilesCSV(b, d.Distribution) }); err != nil {
			return nil, err
		}
		if d.Samples != nil {
			if err := add("run-"+id+"-metrics.csv", func(b *bytes.Buffer) error { return writeMetricsCSV(b, d.Metrics) }); err != nil {
				return nil, err
			}
		}
	}
	return files, nil
}

// marker is the file in a report directory listing the files fathom wrote there: a
// later report may replace those, and only those, without --force.
const marker = ".fathom-report"

// WriteDir writes files into dir and returns index.html's path. The directory is
// created private to its owner (0700, files 0600), as reports show command lines,
// settings and hook outputs; an existing one must be the user's own. Each file is
// written atomically (temporary file and rename): a full disk leaves the old file or
// none, never an empty index.html. A file fathom did not write there (not in Marker)
// is not overwritten unless force is set; a symbolic link never is.
func WriteDir(dir string, files []file, force bool) (string, error) {
	if err := safefile.Dir(dir, 0o700); err != nil {
		return "", err
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.Name
	}
	if err := CanWrite(dir, names, force); err != nil {
		return "", err
	}
	wrote := written(dir)
	// The marker first: files of a report cut short are still fathom's to replace.
	names = names[:0]
	for n := range wrote {
		if n != "" {
			names = append(names, n)
		}
	}
	for _, f := range files {
		if !wrote[f.Name] {
			names = append(names, f.Name)
		}
	}
	sort.Strings(names)
	if err := safefile.WriteFile(filepath.Join(dir, marker), []byte(strings.Join(names, "\n")+"\n")); err != nil {
		return "", err
	}
	// index.html last: when it is there and new, so is everything it links to.
	sorted := append([]file(nil), files...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[j].Name == "index.html" && sorted[i].Name != "index.html" })
	for _, f := range sorted {
		if err := safefile.WriteFile(filepath.Join(dir, f.Name), f.Data); err != nil {
			return "", err
		}
	}
	return filepath.Join(dir, "index.html"), nil
}

// written is the set of files the marker of dir lists.
func written(dir string) map[string]bool {
	wrote := map[string]bool{}
	if b, err := os.ReadFile(filepath.Join(dir, marker)); err == nil {
		for _, n := range strings.Split(string(b), "\n") {
			wrote[n] = true
		}
	}
	return wrote
}

// CanWrite says whether WriteDir may write files with these names into dir, so that a
// command can refuse before it spends time building the report. A missing dir is fine.
func CanWrite(dir string, names []string, force bool) error {
	if err := safefile.Check(dir); err != nil {
		return err
	}
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return &safefile.Error{Path: dir, Problem: "it is not a directory", Fix: "give -o a directory"}
	}
	wrote := written(dir)
	for _, n := range names {
		p := filepath.Join(dir, n)
		if err := safefile.Check(p); err != nil {
			return err
		}
		if _, err := os.Lstat(p); err == nil && !wrote[n] && !force {
			return &safefile.Error{Path: p, Problem: "fathom did not write it", Fix: "give --force to replace it, or another -o directory"}
		}
	}
	return nil
}

func fmtFloat(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}
