package report

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"github.com/fathom-lab/fathom/internal/chart"
	"io"
	"math"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/fathom-lab/fathom/internal/analyze"
	"github.com/fathom-lab/fathom/internal/collect"
	"github.com/fathom-lab/fathom/internal/store"
)

// Server and OS metrics and stalls in reports: what LoadSamples reads, the charts
// drawn on the throughput chart's time axis, the stall table and the metrics CSV.

// allMetricsRuns is the most runs whose every metric LoadSamples reads when asked for
// all: beyond it (experiments of many runs) only the charted metrics are read.
const allMetricsRuns = 10

// metricChart is one small chart of the "server and OS metrics" section (see
// collect.Chart).
type metricChart = collect.Chart

// hostCharts are the host's charts, drawn after the target kind's (its bundle's
// DefaultCharts: the server's throughput and the work stalls are made of): dirty
// pages, CPU and disk.
var hostCharts = []metricChart{
	{Title: "Dirty and writeback memory", Metrics: []string{collect.OSMemDirtyBytes, collect.OSMemWritebackBytes}},
	{Title: "Dirty pages against the writeback thresholds", Metrics: []string{collect.OSVmDirtyBackgroundThresholdPct, collect.OSVmDirtyThresholdPct}},
	{Title: "CPU", Metrics: []string{collect.OSCPUUserPct, collect.OSCPUSystemPct, collect.OSCPUIowaitPct}},
	{Title: "Disk throughput", Metrics: []string{collect.OSDiskReadBytes, collect.OSDiskWriteBytes}},
	{Title: "Disk operations", Metrics: []string{collect.OSDiskReads, collect.OSDiskWrites, collect.OSDiskFlushes}},
	{Title: "Disk await", Metrics: []string{collect.OSDiskAwaitMs}},
	{Title: "Disk utilisation", Metrics: []string{collect.OSDiskUtilPct}},
	{Title: "I/O pressure", Metrics: []string{collect.OSPressureIOSomePct, collect.OSPressureIOFullPct}},
	{Title: "Server processes' CPU", Metrics: []string{collect.OSServerCPUPct}},
}

// KindFigures is what reports draw of each database kind's server metrics, by kind
// name (db.Figures gives the registered kinds'). A kind missing from it is drawn with
// the host's charts and key metrics only. Reports take it as data: report links no
// kind's code and no database driver.
type KindFigures map[string]collect.Figures

// keyMetrics are the key metrics of a run of the named kind: the kind's, then the
// host's.
func (f KindFigures) keyMetrics(kind string) []string {
	if fg, ok := f[kind]; ok && fg.KeyMetrics != nil {
		return fg.KeyMetrics
	}
	return collect.KeyMetrics(nil)
}

// chartsFor lists the default charts of a target kind, then the host's.
func chartsFor(kindCharts []metricChart) []metricChart {
	return append(slices.Clone(kindCharts), hostCharts...)
}

// chartedNames are the metric names and patterns a run's charts need: the default
// set and every stall's evidence.
func chartedNames(kindCharts []metricChart, stalls []store.Stall) []string {
	var names []string
	for _, c := range chartsFor(kindCharts) {
		names = append(names, c.Metrics...)
	}
	seen := map[string]bool{}
	for _, s := range stalls {
		for _, e := range s.Evidence {
			if !seen[e.Metric] {
				seen[e.Metric] = true
				names = append(names, e.Metric)
			}
		}
	}
	return names
}

// LoadSamples adds each sampled run's stalls and metric series to its data: every
// metric when all is set and there are at most AllMetricsRuns runs (for the metrics
// CSV), otherwise only the charted ones, so that the report of a large experiment
// does not read every metric of every run. Runs without samples are left as they are.
// figs gives each run's kind's default charts (kept in RunData.KindCharts).
func LoadSamples(ctx context.Context, st store.Store, figs KindFigures, data []*RunData, all bool) error {
	all = all && len(data) <= allMetricsRuns
	errs := make([]error, len(data))
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(runtime.GOMAXPROCS(0), len(data)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				data[i].KindCharts = figs[data[i].Run.TargetKind].Charts
				if err := loadSamples(ctx, st, data[i], all); err != nil {
					errs[i] = fmt.Errorf("run %d: %w", data[i].Run.ID, err)
				}
			}
		}()
	}
	for i := range data {
		if ctx.Err() != nil {
			break
		}
		work <- i
	}
	close(work)
	wg.Wait()
	if err := loadMarks(ctx, st, data); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return errors.Join(errs...)
}

func loadSamples(ctx context.Context, st store.Store, d *RunData, all bool) error {
	src, err := st.SampleSource(ctx, d.Run.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	stalls, _, analyzed, err := st.Stalls(ctx, d.Run.ID)
	if err != nil {
		return err
	}
	var names []string
	if !all {
		names = chartedNames(d.KindCharts, stalls)
	}
	ms, err := st.MetricSeries(ctx, d.Run.ID, names...)
	if err != nil {
		return err
	}
	d.Samples, d.Stalls, d.StallsAnalyzed, d.Metrics, d.AllMetrics = src, stalls, analyzed, ms, all
	if h, ok, err := analyze.RunHostLoad(ctx, st, d.Run); err == nil && ok {
		d.HostWarning = h.Warning()
	}
	return nil
}

// stallBands are a run's stalls as shaded stretches of the time axis, with a tooltip
// saying what happened.
func stallBands(d *RunData) []chart.Band {
	var out []chart.Band
	for _, s := range d.Stalls {
		tip := fmt.Sprintf("stall #%d, %s–%s: %s %s → %s (-%.0f%%): %s", s.Number, showSecs(s.Start.Seconds()), showSecs(s.End.Seconds()),
			s.Throughput, FormatNumber(s.Baseline), FormatNumber(s.Mean), s.Depth*100, stallCause(&s))
		out = append(out, chart.Band{X0: s.Start.Seconds(), X1: s.End.Seconds(), Kind: "stall", Label: fmt.Sprintf("stall %d", s.Number), Tip: tip})
	}
	return out
}

func stallCause(s *store.Stall) string {
	if s.Title == "" {
		return "no known cause matches"
	}
	return s.Title
}

func showSecs(s float64) string { return fmt.Sprintf("%.1fs", s) }

// metricLabel is a metric's name as show prints it: counters as rates ("/s"),
// except percentages of time, whose rate is already a percentage.
func metricLabel(name, kind, unit string) string {
	if kind == "counter" && unit != "%" {
		return name + "/s"
	}
	return name
}

// stallRow is one stall of the table under the throughput chart, with the numbers
// `fathom show` prints.
type stallRow struct {
	Number      int
	When        string
	Intervals   string
	Throughput  string
	Depth       string
	Lost        string
	Cause       string
	Explanation string
	Settings    []string
	Evidence    []string
	More        int // evidence not shown
}

// maxSeries is the most series a metric chart draws.
const maxSeries = 6

// maxEvidence is how many evidence metrics a stall's row shows (show lists all).
const maxEvidence = 4

func stallRows(d *RunData) []stallRow {
	var out []stallRow
	kept, _ := foldClientHost(d.Stalls)
	for _, s := range kept {
		r := stallRow{Number: s.Number, When: showSecs(s.Start.Seconds()) + "–" + showSecs(s.End.Seconds()),
			Intervals:  fmt.Sprintf("intervals %d–%d", s.FirstInterval, s.LastInterval),
			Throughput: fmt.Sprintf("%s %s → %s (min %s)", s.Throughput, FormatNumber(s.Baseline), FormatNumber(s.Mean), FormatNumber(s.Min)),
			Depth:      fmt.Sprintf("-%.0f%%", s.Depth*100), Lost: "~" + FormatNumber(s.Lost),
			Cause: stallCause(&s), Explanation: s.Explanation}
		for _, x := range s.Settings {
			v := x.Value
			if v == "" {
				v = "?"
			}
			r.Settings = append(r.Settings, x.Name+"="+v)
		}
		for i, e := range s.Evidence {
			if i == maxEvidence {
				r.More = len(s.Evidence) - i
				break
			}
			line := fmt.Sprintf("%s %s → %s, z=%+.1f", metricLabel(e.Metric, e.Kind, e.Unit), FormatValue(e.Baseline, e.Unit), FormatValue(e.During, e.Unit), e.Score)
			if e.Reset {
				line += " (counter reset)"
			}
			r.Evidence = append(r.Evidence, line)
		}
		out = append(out, r)
	}
	return out
}

// metricGroup is one collector's metric charts.
type metricGroup struct {
	Title  string
	Charts []*chart.Chart
}

// htmlMetricGroup is one collector's small charts.
type htmlMetricGroup struct {
	Title   string
	Figures []htmlFigure
}

// metricGroups draws the run's metric charts, grouped by collector, on the same x axis
// as its throughput chart; flat (always zero) metrics are listed instead of drawn.
func (r *Report) metricGroups(d *RunData, ax timeAxis, bands []chart.Band) (groups []metricGroup, flat []string) {
	order, charts := metricPlots(d)
	n := 0
	for _, col := range order {
		g := metricGroup{Title: col}
		for _, c := range charts[col] {
			ds, fl := drawnMetrics(d, c.series, ax)
			flat = append(flat, fl...)
			if len(ds) == 0 {
				continue
			}
			g.Charts = append(g.Charts, drawMetricChart(d, c, ds, ax, bands, n))
			n++
		}
		if len(g.Charts) > 0 {
			groups = append(groups, g)
		}
	}
	sort.Strings(flat)
	return groups, flat
}

// metricPlot is one metric chart to draw: its title, a note before its subtitle, and
// its series.
type metricPlot struct {
	title, note string
	series      []*store.MetricSeries
}

// metricPlots chooses the run's metric charts, by collector (in order of first use):
// the kind's charts first, then a chart for each stall's evidence not yet drawn. A
// series is drawn once, in the first chart that names it.
func metricPlots(d *RunData) (order []string, charts map[string][]metricPlot) {
	byName := map[string]*store.MetricSeries{}
	for i := range d.Metrics {
		byName[d.Metrics[i].Name] = &d.Metrics[i]
	}
	used := map[string]bool{}
	charts = map[string][]metricPlot{}
	add := func(c metricPlot) {
		col := c.series[0].Collector
		if _, ok := charts[col]; !ok {
			order = append(order, col)
		}
		charts[col] = append(charts[col], c)
	}
	for _, spec := range chartsFor(d.KindCharts) {
		ss := specSeries(d, byName, used, spec.Metrics)
		for _, m := range ss {
			used[m.Name] = true
		}
		if len(ss) > 0 {
			add(metricPlot{title: spec.Title, series: ss})
		}
	}
	for _, s := range d.Stalls {
		for _, e := range s.Evidence {
			if m := byName[e.Metric]; m != nil && !used[m.Name] {
				used[m.Name] = true
				add(metricPlot{title: m.Name, note: "stall evidence", series: []*store.MetricSeries{m}})
			}
		}
	}
	return order, charts
}

// specSeries is the series a chart's patterns match (a name, or a prefix ending in
// *) that no earlier chart drew.
func specSeries(d *RunData, byName map[string]*store.MetricSeries, used map[string]bool, patterns []string) []*store.MetricSeries {
	var ss []*store.MetricSeries
	for _, pat := range patterns {
		if p, ok := strings.CutSuffix(pat, "*"); ok {
			for i := range d.Metrics {
				if m := &d.Metrics[i]; strings.HasPrefix(m.Name, p) && !used[m.Name] {
					ss = append(ss, m)
				}
			}
		} else if m := byName[pat]; m != nil && !used[m.Name] {
			ss = append(ss, m)
		}
	}
	return ss
}

// drawnMetric is one series of a metric chart, with its points and its largest
// absolute value.
type drawnMetric struct {
	m    *store.MetricSeries
	x, y []float64
	peak float64
}

// drawnMetrics is what a chart draws of its series: those that stay zero are listed
// (flat), not drawn.
func drawnMetrics(d *RunData, series []*store.MetricSeries, ax timeAxis) (ds []drawnMetric, flat []string) {
	for _, m := range series {
		x, y := metricXY(m, d.Group, ax.end)
		peak := 0.0
		for _, v := range y {
			if !math.IsNaN(v) {
				peak = math.Max(peak, math.Abs(v))
			}
		}
		if peak == 0 {
			flat = append(flat, metricLabel(m.Name, m.Kind, m.Unit))
			continue
		}
		ds = append(ds, drawnMetric{m, x, y, peak})
	}
	return ds, flat
}

// drawMetricChart draws the n-th metric chart of the run: it keeps its maxSeries busiest
// series (the CSV has the rest).
func drawMetricChart(d *RunData, c metricPlot, ds []drawnMetric, ax timeAxis, bands []chart.Band, n int) *chart.Chart {
	lc := &chart.Chart{Title: c.title, XLabel: ax.label, XUnit: ax.unit, YZero: true, Bands: bands, VLines: ax.marks, XRange: chart.Fixed(0, ax.end),
		Height: 190}
	more := 0
	if len(ds) > maxSeries {
		sort.SliceStable(ds, func(i, j int) bool { return ds[i].peak > ds[j].peak })
		more = len(ds) - maxSeries
		ds = ds[:maxSeries]
	}
	var vals []float64
	var names []string
	for k, dd := range ds {
		name := metricLabel(dd.m.Name, dd.m.Kind, dd.m.Unit)
		names = append(names, name)
		vals = append(vals, dd.y...)
		lc.Series = append(lc.Series, chart.Series{Name: name, X: dd.x, Y: dd.y, Style: k, Points: len(dd.x) <= 40})
	}
	lc.Height += int(chart.LegendRow) * (chart.LegendRows(names, 640) - 1) // keep the plot's height
	lc.ID = fmt.Sprintf("run-%d-metric-%d", d.Run.ID, n)
	// Counts of different things (locks and sessions) share an axis labelled
	// for neither.
	unit := ds[0].m.Unit
	for _, dd := range ds {
		if dd.m.Unit != unit {
			unit = ""
		}
	}
	lc.YLabel, lc.YUnit = metricAxis(unit, ds[0].m.Kind, vals)
	lc.Subtitle = strings.Join(names, ", ")
	if len(lc.Subtitle) > 90 {
		lc.Subtitle = "from " + ds[0].m.Collector
	}
	if c.note != "" {
		lc.Subtitle = c.note + ": " + lc.Subtitle
	}
	if more > 0 {
		lc.Subtitle += fmt.Sprintf("; %d quieter series in the CSV", more)
	}
	return lc
}

// metricAxis is the y label and unit of a metric chart.
func metricAxis(unit, kind string, vals []float64) (string, scaleUnit) {
	per := ""
	if kind == "counter" && unit != "%" {
		per = "/s"
	}
	switch unit {
	case "bytes":
		return "bytes" + per, unitFor(kindBytes, vals...)
	case "%":
		return "percent", scaleUnit{Suffix: "", Div: 1}
	case "ms":
		return "ms" + per, unitFor(kindCount, vals...)
	case "", "bool":
		if per != "" {
			return "per second", unitFor(kindCount, vals...)
		}
		return "value", unitFor(kindCount, vals...)
	}
	return unit + per, unitFor(kindCount, vals...)
}

// metricXY is what to draw of a metric on the run's time axis: a counter's rate at
// the middle of the span it was measured over, a gauge's value when it was read; no
// rate (first reading, counter reset) is a gap (NaN), never a negative rate. With
// group > 1, readings of group intervals are averaged, as the throughput points are.
func metricXY(m *store.MetricSeries, group int, end float64) (xs, ys []float64) {
	var bx, by, bt float64
	var bn, bk int
	bucket := math.MinInt
	gap := false
	flush := func() {
		if bk == 0 {
			return
		}
		switch {
		case bn > 0 && !gap:
			xs, ys = append(xs, bx/float64(bn)), append(ys, by/float64(bn))
		case len(ys) > 0 && !math.IsNaN(ys[len(ys)-1]):
			xs, ys = append(xs, bt/float64(bk)), append(ys, math.NaN())
		}
		bx, by, bt, bn, bk, gap = 0, 0, 0, 0, 0, false
	}
	for i := range m.Points {
		p := &m.Points[i]
		t := p.At.Seconds()
		if m.IsCounter() && i > 0 && m.Points[i-1].Interval == p.Interval-1 {
			t = (m.Points[i-1].At.Seconds() + t) / 2
		}
		if t < 0 || t > end+1e-9 {
			continue
		}
		if b := p.Interval / max(group, 1); b != bucket {
			flush()
			bucket = b
		}
		bk++
		bt += t
		y, ok := m.Y(i)
		if !ok || p.Reset || (m.IsCounter() && y < 0) || math.IsNaN(y) {
			gap = true
			continue
		}
		bx += t
		by += y
		bn++
	}
	flush()
	return xs, ys
}

// writeMetricsCSV writes a run's metric series: one row per reading, with the rate of
// counters (empty at a counter's first reading and where it reset).
func writeMetricsCSV(w io.Writer, ms []store.MetricSeries) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"metric", "collector", "kind", "unit", "interval", "at_s", "value", "rate", "reset"})
	for i := range ms {
		m := &ms[i]
		for _, p := range m.Points {
			rate := ""
			if p.HasRate {
				rate = fmtFloat(p.Rate)
			}
			_ = cw.Write([]string{m.Name, m.Collector, m.Kind, m.Unit, strconv.Itoa(p.Interval), strconv.FormatFloat(p.At.Seconds(), 'f', 3, 64),
				fmtFloat(p.Value), rate, strconv.FormatBool(p.Reset)})
		}
	}
	cw.Flush()
	return cw.Error()
}

// writeStallsMarkdown writes the stalls of sampled runs for summary.md.
func (r *Report) writeStallsMarkdown(out io.Writer) {
	any := false
	for _, d := range r.Runs {
		any = any || d.Samples != nil
	}
	if !any {
		return
	}
	var w strings.Builder
	defer func() { io.WriteString(out, strings.TrimRight(w.String(), "\n")+"\n") }()
	fmt.Fprintf(&w, "\n## Stalls\n\n")
	fmt.Fprintf(&w, "Stretches where throughput fell well below the run's baseline (the median of the healthy intervals around them), with the metrics that rose unusually and materially meanwhile (as `fathom show RUN` lists them).\n\n")
	for _, d := range r.Runs {
		if d.Samples == nil {
			continue
		}
		fmt.Fprintf(&w, "### Run %d\n\n", d.Run.ID)
		if d.HostWarning != "" {
			fmt.Fprintf(&w, "**Warning: %s.**\n\n", mdEsc(d.HostWarning))
		}
		switch {
		case !d.StallsAnalyzed:
			fmt.Fprintf(&w, "Not analysed (the run may still have been going).\n\n")
			continue
		case len(d.Stalls) == 0:
			fmt.Fprintf(&w, "None: throughput never fell below the threshold of its rolling median.\n\n")
			continue
		}
		for _, s := range stallRows(d) {
			fmt.Fprintf(&w, "- **#%d %s** (%s): %s, %s, %s lost. **%s**. %s\n", s.Number, s.When, s.Intervals, mdEsc(s.Throughput), s.Depth, s.Lost,
				mdEsc(s.Cause), mdEsc(s.Explanation))
			if len(s.Settings) > 0 {
				fmt.Fprintf(&w, "  - settings: %s\n", mdEsc(strings.Join(s.Settings, ", ")))
			}
			if len(s.Evidence) > 0 {
				more := ""
				if s.More > 0 {
					more = fmt.Sprintf("; %d more in `fathom show %d`", s.More, d.Run.ID)
				}
				fmt.Fprintf(&w, "  - unusual during it (baseline → during, robust z): %s%s\n", mdEsc(strings.Join(s.Evidence, "; ")), more)
			}
		}
		w.WriteString("\n")
	}
}

// FormatNumber shows a number as `fathom show` does: k, M, G and three significant
// digits.
func FormatNumber(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e9:
		return fmt.Sprintf("%.2fG", v/1e9)
	case a >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case a >= 1e4:
		return fmt.Sprintf("%.1fk", v/1e3)
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a == 0:
		return "0"
	}
	return fmt.Sprintf("%.3g", v)
}

// FormatValue shows a metric's value in its unit as `fathom show` does.
func FormatValue(v float64, unit string) string {
	switch unit {
	case "bytes":
		a := math.Abs(v)
		switch {
		case a >= 1<<30:
			return fmt.Sprintf("%.2fGB", v/(1<<30))
		case a >= 1<<20:
			return fmt.Sprintf("%.1fMB", v/(1<<20))
		case a >= 1<<10:
			return fmt.Sprintf("%.1fkB", v/(1<<10))
		}
		return fmt.Sprintf("%.0fB", v)
	case "%":
		return fmt.Sprintf("%.1f%%", v)
	case "ms":
		return fmt.Sprintf("%.2fms", v)
	case "seconds":
		return fmt.Sprintf("%.1fs", v)
	}
	return FormatNumber(v)
}
