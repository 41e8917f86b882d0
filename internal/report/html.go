package report

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/fathom-lab/fathom/internal/store"
)

//go:embed report.css
var reportCSS string

//go:embed report.html.tmpl
var reportTmpl string

var htmlTmpl = template.Must(template.New("report").Parse(reportTmpl))

type htmlFigure struct {
	SVG     template.HTML
	Caption string
}

type htmlTable struct {
	Head    []string
	Numeric []bool
	Rows    [][]string
	Marks   []string // per row CSS class
}

// Num reports whether column i holds numbers (right-aligned).
func (t htmlTable) Num(i int) bool { return i < len(t.Numeric) && t.Numeric[i] }

// Mark is row i's CSS class.
func (t htmlTable) Mark(i int) string {
	if i < len(t.Marks) {
		return t.Marks[i]
	}
	return ""
}

type htmlRun struct {
	ID         int64
	Anchor     string
	Title      string
	Open       bool
	Facts      [][2]string
	Provenance [][2]string
	Figures    []htmlFigure // the throughput chart first
	Types      *htmlTable
	// Sampled runs only: the stall table under the throughput chart and the server
	// and OS metrics on the same time axis.
	Sampled      bool
	SampleNote   string
	StallNote    string
	Stalls       []stallRow
	MetricGroups []htmlMetricGroup
	Flat         string
}

type htmlComparison struct {
	Title       string
	A, B        string
	Differences [][3]string
	Table       htmlTable
	Legend      string
	Warnings    []string
}

type htmlPage struct {
	Title, Generated, Selection string
	CSS                         template.CSS
	Defs                        template.HTML
	Data                        template.HTML
	Experiment                  bool
	Axes                        string
	ExpFigures                  []htmlFigure
	SmallMultiples              []htmlFigure
	SmallTitle                  string
	Cells                       *htmlTable
	SLO                         string
	Knees                       []string
	CompareBy                   string
	Comparisons                 []htmlComparison
	RunsTable                   htmlTable
	Runs                        []htmlRun
}

// WriteHTML writes index.html: one self-contained page (inline SVG, embedded data,
// no scripts or network) that prints well.
func (r *Report) WriteHTML(w io.Writer) error {
	p := htmlPage{Title: r.Title, Generated: r.Generated, Selection: r.Selection, CSS: template.CSS(reportCSS), Defs: template.HTML(svgDefs)}
	data, err := json.Marshal(r.embeddedData())
	if err != nil {
		return err
	}
	// json.Marshal escapes <, > and &, so the data cannot end the script element.
	p.Data = template.HTML(`<script type="application/json" id="fathom-data">` + string(data) + `</script>`)
	if e := r.Experiment; e != nil {
		p.Experiment = true
		var axes []string
		for _, a := range e.Axes {
			axes = append(axes, fmt.Sprintf("%s (%s)", a.Name, strings.Join(a.Values, ", ")))
		}
		p.Axes = strings.Join(axes, "; ")
		p.ExpFigures = r.experimentFigures()
		p.SmallTitle, p.SmallMultiples = r.smallMultiples()
		p.Cells = r.cellTable()
		if e.SLO != nil {
			p.SLO = e.SLO.Text
			for _, k := range e.Knees {
				p.Knees = append(p.Knees, k.Sentence(e.SLO))
			}
		}
		p.CompareBy = e.CompareBy
		for _, c := range e.Comparisons {
			p.Comparisons = append(p.Comparisons, htmlComparisonOf(c))
		}
	} else if r.SLO != nil {
		d := r.Runs[0]
		v := r.SLO.Value(d.Summary.Latency)
		verdict := "met"
		if !r.SLO.Met(v) {
			verdict = "not met"
		}
		p.SLO = r.SLO.Text
		p.Knees = []string{fmt.Sprintf("%s %s: %s %s", r.SLO.Text, verdict, r.SLO.Metric, UnitFor(KindMillis, v).Format(v))}
	}
	p.RunsTable = r.runsTable()
	for i, d := range r.Runs {
		p.Runs = append(p.Runs, r.htmlRunOf(d, len(r.Runs) == 1 || i == 0 && len(r.Runs) <= 3))
	}
	return htmlTmpl.Execute(w, p)
}

func (r *Report) embeddedData() any {
	type run struct {
		ID       int64             `json:"id"`
		Labels   map[string]string `json:"labels"`
		Summary  any               `json:"summary"`
		ErrorPct jsonFloat         `json:"error_pct"`
		Stalls   []store.Stall     `json:"stalls,omitempty"`
	}
	type cell struct {
		Values []string    `json:"values"`
		Runs   []int64     `json:"runs"`
		TPS    jsonSummary `json:"tps"`
		P95    jsonSummary `json:"p95_ms"`
		P99    jsonSummary `json:"p99_ms"`
	}
	out := struct {
		Title       string           `json:"title"`
		Runs        []run            `json:"runs"`
		Axes        []string         `json:"axes,omitempty"`
		Cells       []cell           `json:"cells,omitempty"`
		Comparisons []jsonComparison `json:"comparisons,omitempty"`
	}{Title: r.Title}
	for _, d := range r.Runs {
		out.Runs = append(out.Runs, run{d.Run.ID, d.Run.Labels, d.Summary, jsonFloat(d.ErrorPct), d.Stalls})
	}
	if e := r.Experiment; e != nil {
		for _, a := range e.Axes {
			out.Axes = append(out.Axes, a.Name)
		}
		for _, c := range e.Cells {
			var ids []int64
			for _, m := range c.Members {
				ids = append(ids, m.Data.Run.ID)
			}
			out.Cells = append(out.Cells, cell{c.Values, ids, toJSONSummary(c.TPS), toJSONSummary(c.P95), toJSONSummary(c.P99)})
		}
		for _, c := range e.Comparisons {
			out.Comparisons = append(out.Comparisons, c.toJSON())
		}
	}
	return out
}

func htmlComparisonOf(c *Comparison) htmlComparison {
	h := htmlComparison{Title: c.Title, A: sideLabel(&c.A), B: sideLabel(&c.B),
		Legend: c.legend(), Warnings: c.warnings()}
	for _, d := range c.Differences {
		h.Differences = append(h.Differences, [3]string{d.Key, sideValues(d.A), sideValues(d.B)})
	}
	h.Table = htmlTable{Head: []string{"metric", "A median [95% CI]", "B median [95% CI]", "change", "p", "n"},
		Numeric: []bool{false, true, true, true, true, true}}
	for _, m := range c.Metrics {
		_, a, b := metricCells(m)
		h.Table.Rows = append(h.Table.Rows, []string{metricTitles[m.Metric], a, b, changeCell(m), pValue(m.P), nCell(m)})
		mark := ""
		if m.Significant {
			mark = "significant"
		}
		h.Table.Marks = append(h.Table.Marks, mark)
	}
	return h
}

func (r *Report) runsTable() htmlTable {
	t := htmlTable{Head: []string{"run", "started (UTC)", "status", "workload", "clients", "seconds", "tps", "p50", "p95", "p99", "max", "errors"},
		Numeric: []bool{true, false, false, false, true, true, true, true, true, true, true, true}}
	var tps, lat []float64
	for _, d := range r.Runs {
		tps = append(tps, d.Summary.TPS)
		lat = append(lat, d.Summary.Latency.P50, d.Summary.Latency.P99)
	}
	tu, lu := UnitFor(KindCount, tps...), UnitFor(KindMillis, lat...)
	for _, d := range r.Runs {
		s, l := d.Summary, d.Summary.Latency
		t.Rows = append(t.Rows, []string{strconv.FormatInt(d.Run.ID, 10), d.Run.StartedAt.UTC().Format("2006-01-02 15:04:05"), statusText(d),
			d.Run.Workload, strconv.Itoa(d.Run.Clients), num(s.Seconds), tu.Format(s.TPS), lu.Format(l.P50), lu.Format(l.P95), lu.Format(l.P99),
			lu.Format(l.Max), errorText(d)})
		mark := ""
		if d.Run.Status != "complete" {
			mark = "bad"
		}
		t.Marks = append(t.Marks, mark)
	}
	return t
}

func (r *Report) cellTable() *htmlTable {
	e := r.Experiment
	t := &htmlTable{}
	for _, a := range e.Axes {
		t.Head = append(t.Head, a.Name)
		t.Numeric = append(t.Numeric, a.Numeric)
	}
	t.Head = append(t.Head, "n", "tps median", "tps min – max", "tps 95% CI", "p50 median", "p95 median", "p99 median", "errors")
	t.Numeric = append(t.Numeric, true, true, true, true, true, true, true, true)
	if e.SLO != nil {
		t.Head = append(t.Head, e.SLO.Text)
		t.Numeric = append(t.Numeric, false)
	}
	var tps, lat []float64
	for _, c := range e.Cells {
		tps = append(tps, c.TPS.Max)
		lat = append(lat, c.P50.Median, c.P99.Median)
	}
	tu, lu := UnitFor(KindCount, tps...), UnitFor(KindMillis, lat...)
	for _, c := range e.Cells {
		row := append([]string{}, c.Values...)
		ci := "n<6"
		if c.TPS.HasCI {
			ci = tu.Number(c.TPS.Lo) + " – " + tu.Number(c.TPS.Hi)
		}
		row = append(row, strconv.Itoa(c.TPS.N), tu.Format(c.TPS.Median), tu.Number(c.TPS.Min)+" – "+tu.Number(c.TPS.Max), ci,
			lu.Format(c.P50.Median), lu.Format(c.P95.Median), lu.Format(c.P99.Median), num(c.Errors.Median)+"%")
		mark := ""
		if c.MeetsSLO != nil {
			if *c.MeetsSLO {
				row = append(row, "yes")
			} else {
				row = append(row, "no")
				mark = "bad"
			}
		}
		t.Rows = append(t.Rows, row)
		t.Marks = append(t.Marks, mark)
	}
	return t
}

func (r *Report) experimentFigures() []htmlFigure {
	e := r.Experiment
	var figs []htmlFigure
	tpsMax := 0.0
	for _, m := range e.Members {
		tpsMax = math.Max(tpsMax, m.Data.Summary.TPS)
	}
	tu := UnitFor(KindCount, tpsMax)
	// Box plot of TPS per cell.
	box := &BoxChart{ID: "exp-box", Title: "Throughput per cell across repetitions", YLabel: "transactions per second", YUnit: tu,
		Subtitle: "box: quartiles and median; whiskers: min and max; dots: each run"}
	for _, c := range e.Cells {
		box.Boxes = append(box.Boxes, Box{Label: c.Name(e.Axes), Min: c.TPS.Min, Q1: c.TPS.Q1, Median: c.TPS.Median, Q3: c.TPS.Q3, Max: c.TPS.Max,
			Points: metricValues(c.Members, MetricTPS)})
	}
	box.Height = 340
	if len(e.Cells) > 8 {
		box.Width = 900
	}
	figs = append(figs, htmlFigure{template.HTML(box.SVG()), "TPS of every run, grouped by cell."})

	// Grouped bars: first axis groups, second axis one bar each.
	if len(e.Axes) >= 1 {
		g := &BarChart{ID: "exp-bars", YLabel: "median transactions per second", YUnit: tu, XLabel: e.Axes[0].Name}
		g.Groups = e.Axes[0].Values
		var second *Axis
		if len(e.Axes) >= 2 {
			second = &e.Axes[1]
			g.SeriesNames = append([]string(nil), second.Values...)
			g.Title = fmt.Sprintf("Median throughput by %s and %s", e.Axes[0].Name, second.Name)
			if len(e.Axes) > 2 {
				g.Subtitle = "medians over all other axes' cells"
			}
		} else {
			g.SeriesNames = []string{""}
			g.Title = "Median throughput by " + e.Axes[0].Name
		}
		g.Subtitle = strings.TrimSpace(g.Subtitle + " whiskers: 95% CI of the median where n ≥ 6")
		for _, gv := range g.Groups {
			var vals, lo, hi []float64
			for _, sv := range g.SeriesNames {
				var ms []*Member
				for _, c := range e.Cells {
					if c.Values[0] == gv && (second == nil || c.Values[1] == sv) {
						ms = append(ms, c.Members...)
					}
				}
				s := summarizeMembers(ms, MetricTPS)
				vals, lo, hi = append(vals, s.Median), append(lo, s.Lo), append(hi, s.Hi)
			}
			g.Values, g.Lo, g.Hi = append(g.Values, vals), append(g.Lo, lo), append(g.Hi, hi)
		}
		if second != nil {
			for i := range g.SeriesNames {
				g.SeriesNames[i] = second.Name + "=" + g.SeriesNames[i]
			}
		}
		figs = append(figs, htmlFigure{template.HTML(g.SVG()), "Bars grouped by " + e.Axes[0].Name + "."})
	}

	// Scaling curve against the sweep axis.
	if sw := e.SweepAxis(); sw >= 0 {
		names, lines := e.lines(sw)
		ax := e.Axes[sw]
		tc := &LineChart{ID: "exp-scaling-tps", Title: "Throughput against " + ax.Name, XLabel: ax.Name, YLabel: "median transactions per second",
			YUnit: tu, YZero: true}
		var latAll []float64
		for _, c := range e.Cells {
			latAll = append(latAll, c.P95.Median, c.P99.Median)
		}
		if e.SLO != nil {
			latAll = append(latAll, e.SLO.LimitMs)
		}
		lu := UnitFor(KindMillis, latAll...)
		lc := &LineChart{ID: "exp-scaling-latency", Title: "Latency against " + ax.Name, XLabel: ax.Name, YLabel: "median latency",
			YUnit: lu, YZero: true, Subtitle: "p99 solid markers, p95 open markers"}
		for i, cells := range lines {
			var x, y, y95, y99 []float64
			for _, c := range cells {
				v, _ := strconv.ParseFloat(c.Values[sw], 64)
				x = append(x, v)
				y, y95, y99 = append(y, c.TPS.Median), append(y95, c.P95.Median), append(y99, c.P99.Median)
			}
			name := names[i]
			tc.Series = append(tc.Series, Series{Name: name, X: x, Y: y, Points: true, Style: i})
			n99, n95 := "p99", "p95"
			if name != "" {
				n99, n95 = name+" p99", name+" p95"
			}
			lc.Series = append(lc.Series, Series{Name: n99, X: x, Y: y99, Points: true, Style: 2 * i},
				Series{Name: n95, X: x, Y: y95, Points: true, Style: 2*i + 5})
		}
		for i := range tc.Series {
			if tc.Series[i].Name == "" {
				tc.Series[i].Name = "median TPS"
			}
		}
		if e.SLO != nil {
			lc.HLines = append(lc.HLines, RefLine{At: e.SLO.LimitMs, Label: "objective " + e.SLO.Text})
			for _, k := range e.Knees {
				if k.Value != "" {
					v, _ := strconv.ParseFloat(k.Value, 64)
					label := "knee " + ax.Name + "=" + k.Value
					if len(e.Knees) > 1 {
						label += " (" + k.Line + ")"
					}
					tc.VLines = append(tc.VLines, RefLine{At: v, Label: label})
				}
			}
		}
		figs = append(figs, htmlFigure{template.HTML(tc.SVG()), "The scaling curve: median TPS of each cell."},
			htmlFigure{template.HTML(lc.SVG()), "Median p95 and p99 latency of each cell."})
	}
	return figs
}

func summarizeMembers(ms []*Member, metric string) analyzeSummaryAlias {
	return summarize(metricValues(ms, metric))
}

// smallMultiples draws one small chart per value of the first axis: TPS of its runs
// in the order they ran, one series per value of the second axis.
func (r *Report) smallMultiples() (string, []htmlFigure) {
	e := r.Experiment
	tpsMax := 0.0
	for _, m := range e.Members {
		tpsMax = math.Max(tpsMax, m.Data.Summary.TPS)
	}
	tu := UnitFor(KindCount, tpsMax)
	mk := func(id, title string, ms []*Member) htmlFigure {
		c := &LineChart{ID: id, Title: title, XLabel: "run order", YLabel: "tps", YUnit: tu, YZero: true, Width: 300, Height: 200,
			XFixed: true, XMin: 1, XMax: float64(max(len(e.Members), 2))}
		series := map[string]int{}
		for _, m := range ms {
			key := ""
			if len(e.Axes) >= 2 {
				key = e.Axes[1].Name + "=" + m.Values[1]
			}
			i, ok := series[key]
			if !ok {
				i = len(c.Series)
				series[key] = i
				style := 0
				if len(e.Axes) >= 2 {
					for k, v := range e.Axes[1].Values {
						if v == m.Values[1] {
							style = k
						}
					}
				}
				c.Series = append(c.Series, Series{Name: key, Points: true, Style: style})
			}
			c.Series[i].X = append(c.Series[i].X, float64(m.Seq))
			c.Series[i].Y = append(c.Series[i].Y, m.Data.Summary.TPS)
		}
		return htmlFigure{SVG: template.HTML(c.SVG())}
	}
	if len(e.Axes) == 0 {
		return "Throughput of each run in the order the runs ran", []htmlFigure{mk("exp-small-all", "all runs", e.Members)}
	}
	var figs []htmlFigure
	for i, v := range e.Axes[0].Values {
		var ms []*Member
		for _, m := range e.Members {
			if m.Values[0] == v {
				ms = append(ms, m)
			}
		}
		figs = append(figs, mk(fmt.Sprintf("exp-small-%d", i), e.Axes[0].Name+"="+v, ms))
	}
	return "Throughput of each run in the order the runs ran, one chart per " + e.Axes[0].Name, figs
}

func (r *Report) htmlRunOf(d *RunData, open bool) htmlRun {
	run := d.Run
	h := htmlRun{ID: run.ID, Anchor: fmt.Sprintf("run-%d", run.ID), Open: open, Provenance: provenanceRows(d)}
	h.Title = fmt.Sprintf("Run %d: %s, %d clients, %s", run.ID, run.Workload, run.Clients, statusText(d))
	s := d.Summary
	lu := UnitFor(KindMillis, s.Latency.P50, s.Latency.P99)
	h.Facts = [][2]string{
		{"measured", fmt.Sprintf("%s s in %d intervals", num(s.Seconds), s.Intervals)},
		{"throughput", UnitFor(KindCount, s.TPS).Format(s.TPS) + " tx/s, " + UnitFor(KindCount, s.QPS).Format(s.QPS) + " statements/s"},
		{"latency", fmt.Sprintf("p50 %s, p95 %s, p99 %s, max %s", lu.Format(s.Latency.P50), lu.Format(s.Latency.P95), lu.Format(s.Latency.P99),
			UnitFor(KindMillis, s.Latency.Max).Format(s.Latency.Max))},
		{"errors", fmt.Sprintf("%s; failed %d, retries %d, reconnects %d", errorText(d), s.Failed, s.Retries, s.Reconnects)},
	}
	if run.Rate > 0 {
		h.Facts = append(h.Facts, [2]string{"open loop", fmt.Sprintf("late %d, dropped %d; latency counts from the intended start", s.Late, s.Dropped)})
	}
	if len(run.TxnTypes) > 1 {
		t := &htmlTable{Head: []string{"type", "tps", "p50", "p95", "p99", "max", "errors"}, Numeric: []bool{false, true, true, true, true, true, true}}
		for _, n := range run.TxnTypes {
			ts := s.ByTxn[n]
			t.Rows = append(t.Rows, []string{n, UnitFor(KindCount, ts.TPS).Format(ts.TPS), lu.Format(ts.Latency.P50), lu.Format(ts.Latency.P95),
				lu.Format(ts.Latency.P99), UnitFor(KindMillis, ts.Latency.Max).Format(ts.Latency.Max), strconv.FormatInt(ts.Errors, 10)})
		}
		h.Types = t
	}
	charts, ax, bands := r.runCharts(d)
	for _, c := range charts {
		h.Figures = append(h.Figures, htmlFigure{SVG: template.HTML(c)})
	}
	if d.Samples != nil {
		h.Sampled = true
		h.SampleNote = fmt.Sprintf("Sampled every %s on the run's clock: counters as per-second rates (at the middle of the span each rate covers), gauges as read; a gap is a counter's first reading or a reset, never a negative rate.", d.Samples.Interval)
		if !d.Samples.Server.Local {
			h.SampleNote += " The server is remote: OS metrics describe the benchmark's host."
		}
		if d.AllMetrics {
			h.SampleNote += fmt.Sprintf(" Every metric's readings are in run-%d-metrics.csv.", run.ID)
		} else {
			h.SampleNote += fmt.Sprintf(" run-%d-metrics.csv holds the charted metrics; `fathom report %d` writes every metric.", run.ID, run.ID)
		}
		switch {
		case !d.StallsAnalyzed:
			h.StallNote = "Stalls: not analysed (the run may still have been going)."
		case len(d.Stalls) == 0:
			h.StallNote = "Stalls: none (throughput never fell below the threshold of its rolling median)."
		default:
			h.StallNote = fmt.Sprintf("Stalls: %d, shaded with diagonal hatching on every time chart (warm-up is plain grey). Details as `fathom show %d` prints them:", len(d.Stalls), run.ID)
			h.Stalls = stallRows(d)
		}
		var flat []string
		h.MetricGroups, flat = r.metricGroups(d, ax, bands)
		if len(flat) > 0 {
			h.Flat = "Zero throughout, not drawn: " + strings.Join(flat, ", ") + "."
		}
	}
	return h
}

// timeAxis is the x axis every time chart of a run shares.
type timeAxis struct {
	end   float64 // seconds
	unit  Unit
	label string
}

// runCharts draws a run's time series and distribution (throughput first), and
// returns the time axis and bands the metric charts share with them.
func (r *Report) runCharts(d *RunData) ([]string, timeAxis, []Band) {
	id := fmt.Sprintf("run-%d", d.Run.ID)
	end := 0.0
	if n := len(d.Points); n > 0 {
		end = d.Points[n-1].End
	}
	xu, xl := Unit{"", 1}, "time since start (s)"
	if end > 1200 {
		xu, xl = Unit{"", 60}, "time since start (min)"
	}
	var bands []Band
	for i := 0; i < len(d.Points); i++ {
		if !d.Points[i].Warmup {
			continue
		}
		j := i
		for j+1 < len(d.Points) && d.Points[j+1].Warmup {
			j++
		}
		bands = append(bands, Band{X0: d.Points[i].Start, X1: d.Points[j].End, Kind: "warmup", Label: "warm-up"})
		i = j
	}
	bands = append(bands, stallBands(d)...)
	sub := ""
	if d.Group > 1 {
		sub = fmt.Sprintf("each point merges %d intervals of %s; the CSV keeps every interval", d.Group, d.Run.Interval)
	}
	mid := func(p Point) float64 { return (p.Start + p.End) / 2 }
	series := func(name string, style int, f func(Point) float64) Series {
		s := Series{Name: name, Style: style}
		for _, p := range d.Points {
			s.X = append(s.X, mid(p))
			s.Y = append(s.Y, f(p))
		}
		s.Points = len(d.Points) <= 40
		return s
	}
	base := func(suffix, title, ylabel string, kind int, ss []Series) *LineChart {
		var vals []float64
		for _, s := range ss {
			vals = append(vals, s.Y...)
		}
		return &LineChart{ID: id + "-" + suffix, Title: title, Subtitle: sub, XLabel: xl, XUnit: xu, YLabel: ylabel,
			YUnit: UnitFor(kind, vals...), YZero: true, Bands: bands, Series: ss, XFixed: true, XMin: 0, XMax: end}
	}
	var tput []Series
	if len(d.Run.TxnTypes) > 1 {
		tput = append(tput, series("all types", 0, func(p Point) float64 { return p.TPS }))
		for i, n := range d.Run.TxnTypes {
			i := i
			tput = append(tput, series(n, i+1, func(p Point) float64 {
				if p.TypeTPS == nil {
					return math.NaN()
				}
				return p.TypeTPS[i]
			}))
		}
	} else {
		tput = append(tput, series("tps", 0, func(p Point) float64 { return p.TPS }))
	}
	var charts []string
	charts = append(charts, base("tps", "Throughput over time", "transactions per second", KindCount, tput).SVG())

	lat := base("latency", "Latency over time", "latency", KindMillis, []Series{
		series("p99", 0, func(p Point) float64 { return p.P99 }),
		series("p95", 1, func(p Point) float64 { return p.P95 }),
		series("p50", 2, func(p Point) float64 { return p.P50 }),
	})
	if r.SLO != nil {
		lat.HLines = append(lat.HLines, RefLine{At: r.SLO.LimitMs, Label: "objective " + r.SLO.Text})
		lat.YUnit = UnitFor(KindMillis, append(lat.Series[0].Y, r.SLO.LimitMs)...)
	}
	charts = append(charts, lat.SVG())

	errs := base("errors", "Errors, retries and reconnects over time", "per second", KindCount, []Series{
		series("errors/s", 0, func(p Point) float64 { return p.ErrorsPS }),
		series("retries/s", 1, func(p Point) float64 { return p.RetriesPS }),
		series("failed tx/s", 2, func(p Point) float64 { return p.FailedPS }),
		series("reconnects", 3, func(p Point) float64 { return float64(p.Reconnects) }),
	})
	errs.Subtitle = strings.TrimSpace("reconnects: count per point. " + sub)
	charts = append(charts, errs.SVG())

	dist := &LineChart{ID: id + "-distribution", Title: "Latency by percentile (measured intervals)", XLabel: "percentile",
		YLabel: "latency", XScale: ScaleNines, YZero: true}
	var x, y []float64
	for _, p := range d.Distribution {
		x, y = append(x, p.Percentile), append(y, p.Ms)
	}
	dist.YUnit = UnitFor(KindMillis, y...)
	dist.Series = []Series{{Name: "latency", X: x, Y: y, Points: true}}
	if r.SLO != nil {
		dist.HLines = append(dist.HLines, RefLine{At: r.SLO.LimitMs, Label: "objective " + r.SLO.Text})
	}
	charts = append(charts, dist.SVG())

	return charts, timeAxis{end: end, unit: xu, label: xl}, bands
}
