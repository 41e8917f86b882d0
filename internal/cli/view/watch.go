package view

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/fathom-lab/fathom/internal/collect"
	"github.com/fathom-lab/fathom/internal/db"
	"github.com/fathom-lab/fathom/internal/report"
	"github.com/fathom-lab/fathom/internal/sample"
)

// watchColumn is one figure of the live view (see collect.WatchColumn).
type watchColumn = collect.WatchColumn

// hostColumns are the host's columns, shown after the target kind's (its bundle's
// WatchColumns).
var hostColumns = []watchColumn{
	{Head: "usr%", Metrics: []string{collect.OSCPUUserPct}, Unit: ""},
	{Head: "sys%", Metrics: []string{collect.OSCPUSystemPct}, Unit: ""},
	{Head: "wa%", Metrics: []string{collect.OSCPUIowaitPct}, Unit: ""},
	{Head: "dirty", Metrics: []string{collect.OSMemDirtyBytes}, Unit: "bytes"},
	{Head: "wback", Metrics: []string{collect.OSMemWritebackBytes}, Unit: "bytes"},
	{Head: "w/s", Metrics: []string{collect.OSDiskWrites}, Unit: ""},
	{Head: "wMB/s", Metrics: []string{collect.OSDiskWriteBytes}, Unit: "MB"},
	{Head: "await", Metrics: []string{collect.OSDiskAwaitMs}, Unit: ""},
	{Head: "util%", Metrics: []string{collect.OSDiskUtilPct}, Unit: ""},
	{Head: "io_psi%", Metrics: []string{collect.OSPressureIOSomePct}, Unit: ""},
}

// watchLines is a run.WatchListener for a terminal or a log: a redrawn panel on Panel
// when it is set (a terminal), plain lines on Out otherwise.
type watchLines struct {
	Header  func(id int64, target string) // prints the first line (nil: none)
	Out     io.Writer                     // plain lines
	Panel   io.Writer                     // the redrawn panel (nil: plain lines)
	Err     io.Writer                     // warnings
	cols    []watchColumn
	quiet   bool
	lines   int
	hist    map[string][]float64
	present []watchColumn
}

// NewWatchLines shows the key columns of a target kind and the OS (quiet: nothing).
func NewWatchLines(kind string, out, errw io.Writer, quiet bool) *watchLines {
	cols := append(db.WatchColumnsOf(kind), hostColumns...)
	return &watchLines{Out: out, Err: errw, cols: cols, quiet: quiet, hist: map[string][]float64{}}
}

func columnValue(c *watchColumn, s *sample.Sample) (float64, bool) {
	var sum float64
	found := false
	for _, m := range c.Metrics {
		for i := range s.Readings {
			r := &s.Readings[i]
			if r.Name != m {
				continue
			}
			if v, ok := r.Plot(); ok {
				sum += v
				found = true
			}
			if c.Unit == "first%" && found {
				return sum, true
			}
		}
	}
	return sum, found
}

func columnFormat(c *watchColumn, v float64) string {
	switch c.Unit {
	case "bytes":
		return report.FormatValue(v, "bytes")
	case "MB":
		return fmt.Sprintf("%.1f", v/(1<<20))
	case "first%":
		return fmt.Sprintf("%.0f%%", v)
	case "events":
		if v > 0 {
			return "yes"
		}
		return "-"
	}
	return report.FormatNumber(v)
}

func (v *watchLines) show(s *sample.Sample, elapsed time.Duration) {
	if v.quiet {
		return
	}
	if v.Panel != nil {
		v.drawPanel(s, elapsed)
		return
	}
	// The columns are those the first sample had, kept for the whole session so that
	// they stay under their header ("-" when a collector failed).
	if v.present == nil {
		for _, c := range v.cols {
			if _, ok := columnValue(&c, s); ok {
				v.present = append(v.present, c)
			}
		}
	}
	present := v.present
	w := v.Out
	if v.lines%20 == 0 {
		fmt.Fprintf(w, "%8s", "time")
		for _, c := range present {
			fmt.Fprintf(w, " %8s", c.Head)
		}
		fmt.Fprintln(w)
	}
	v.lines++
	fmt.Fprintf(w, "%8s", fmtElapsed(elapsed.Round(time.Second)))
	for _, c := range present {
		if x, ok := columnValue(&c, s); ok {
			fmt.Fprintf(w, " %8s", columnFormat(&c, x))
		} else {
			fmt.Fprintf(w, " %8s", "-")
		}
	}
	var bad []string
	for _, r := range s.Results {
		if r.Status == sample.StatusFailed || r.Status == sample.StatusTimeout {
			bad = append(bad, r.Collector)
		}
	}
	if len(bad) > 0 {
		fmt.Fprintf(w, "  (failed: %s)", strings.Join(bad, ","))
	}
	fmt.Fprintln(w)
}

var sparks = []rune("▁▂▃▄▅▆▇█")

func sparkline(vals []float64) string {
	lo, hi := vals[0], vals[0]
	for _, x := range vals {
		lo, hi = min(lo, x), max(hi, x)
	}
	var b strings.Builder
	for _, x := range vals {
		i := 0
		if hi > lo {
			i = int((x - lo) / (hi - lo) * float64(len(sparks)-1))
		}
		b.WriteRune(sparks[i])
	}
	return b.String()
}

func (v *watchLines) drawPanel(s *sample.Sample, elapsed time.Duration) {
	var b strings.Builder
	b.WriteString("\033[H\033[2J")
	fmt.Fprintf(&b, "fathom watch  %s  (Ctrl-C to stop)\n\n", fmtElapsed(elapsed.Round(time.Second)))
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "metric\tnow\tmin\tmax\tlast 40")
	for _, c := range v.cols {
		x, ok := columnValue(&c, s)
		if !ok {
			continue
		}
		h := append(v.hist[c.Head], x)
		if len(h) > 40 {
			h = h[len(h)-40:]
		}
		v.hist[c.Head] = h
		lo, hi := h[0], h[0]
		for _, y := range h {
			lo, hi = min(lo, y), max(hi, y)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Head, columnFormat(&c, x), columnFormat(&c, lo), columnFormat(&c, hi), sparkline(h))
	}
	tw.Flush()
	for _, r := range s.Results {
		if r.Status == sample.StatusFailed || r.Status == sample.StatusTimeout {
			fmt.Fprintf(&b, "! %s %s: %s\n", r.Collector, r.Status, r.Error)
		}
	}
	io.WriteString(v.Panel, b.String())
}

// WatchStarted, Sample, Finished and Warning make WatchLines a run.WatchListener.
func (v *watchLines) WatchStarted(id int64, target string) {
	if v.Header != nil {
		v.Header(id, target)
	}
}
func (v *watchLines) Sample(s *sample.Sample, elapsed time.Duration) { v.show(s, elapsed) }
func (v *watchLines) Finished()                                      { v.done() }
func (v *watchLines) Warning(msg string)                             { fmt.Fprintf(v.Err, "fathom: warning: %s\n", msg) }

func (v *watchLines) done() {
	if v.Panel != nil && !v.quiet {
		fmt.Fprintln(v.Panel)
	}
}
