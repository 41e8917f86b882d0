package report

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/fathom-lab/fathom/internal/chart"
	"github.com/fathom-lab/fathom/internal/store"
)

//go:embed report.css
var reportCSS string

//go:embed report.html.tmpl
var reportTmpl string

// htmlTmpl is parsed on first use, not at start-up: every fathom process paid for it
// (with historyTmpl, about 6 ms of package initialisation, GODEBUG=inittrace=1).
var htmlTmpl = sync.OnceValue(func() *template.Template { return template.Must(template.New("report").Parse(reportTmpl)) })

type htmlFigure struct {
	SVG     template.HTML
	Caption string
}

// svgFigures draws charts as the page's figures.
func svgFigures(cs ...chart.Chart) []htmlFigure {
	out := make([]htmlFigure, len(cs))
	for i := range cs {
		out[i] = htmlFigure{template.HTML(cs[i].SVG()), cs[i].Caption}
	}
	return out
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
	Errors     *htmlTable // the run's first distinct errors (nil: none)
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
	JudgeNote   string
	Notes       []string
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
	Restarts                    *htmlTable
	SLO                         string
	Knees                       []string
	CompareBy                   string
	Comparisons                 []htmlComparison
	JudgeNote                   string
	Baselines                   string
	Cautions                    []string
	TimeTitle                   string
	TimeFigures                 []htmlFigure
	RunsTable                   htmlTable
	Runs                        []htmlRun
}

// writeHTML writes index.html: one self-contained page (inline SVG, embedded data,
// no scripts or network) that prints well.
func (r *Report) writeHTML(w io.Writer) error {
	p := htmlPage{Title: r.Title, Generated: r.Generated, Selection: r.Selection, CSS: template.CSS(reportCSS), Defs: template.HTML(chart.SVGDefs)}
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
		var bls []string
		for _, a := range e.Axes {
			if len(a.Values) > 1 {
				bls = append(bls, a.Name+"="+a.Baseline)
			}
		}
		if len(bls) > 0 {
			p.Baselines = "Baseline (side A of every comparison, the reference of every change): " + strings.Join(bls, ", ") + "."
		}
		p.Cautions = e.Cautions()
		p.ExpFigures = svgFigures(r.experimentCharts()...)
		var overlays []chart.Chart
		p.TimeTitle, overlays = r.timeOverlays()
		p.TimeFigures = svgFigures(overlays...)
		small := r.smallMultiples()
		chart.ShareY(small.Panels)
		p.SmallTitle, p.SmallMultiples = small.Title, svgFigures(small.Panels...)
		p.Cells = r.cellTable()
		p.Restarts = restartTable(r.Restarts)
		if e.SLO != nil {
			p.SLO = e.SLO.Text
			for _, k := range e.Knees {
				p.Knees = append(p.Knees, k.sentence(e.SLO))
			}
		}
		p.CompareBy = e.CompareBy
		for _, c := range e.Comparisons {
			p.Comparisons = append(p.Comparisons, htmlComparisonOf(c))
		}
	}
	p.JudgeNote = judgeNote(r.Runs)
	if r.Experiment == nil && r.SLO != nil {
		d := r.Runs[0]
		v := r.SLO.value(d.Summary.Latency)
		verdict := "met"
		if !r.SLO.met(v) {
			verdict = "not met"
		}
		p.SLO = r.SLO.Text
		p.Knees = []string{fmt.Sprintf("%s %s: %s %s", r.SLO.Text, verdict, r.SLO.Metric, unitFor(kindMillis, v).Format(v))}
	}
	p.RunsTable = r.runsTable()
	for i, d := range r.Runs {
		p.Runs = append(p.Runs, r.htmlRunOf(d, len(r.Runs) == 1 || i == 0 && len(r.Runs) <= 3))
	}
	return htmlTmpl().Execute(w, p)
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
		Title       string            `json:"title"`
		Runs        []run             `json:"runs"`
		Axes        []string          `json:"axes,omitempty"`
		Baselines   map[string]string `json:"baselines,omitempty"`
		Cautions    []string          `json:"cautions,omitempty"`
		Judge       string            `json:"judge,omitempty"`
		Cells       []cell            `json:"cells,omitempty"`
		Comparisons []jsonComparison  `json:"comparisons,omitempty"`
	}{Title: r.Title, Judge: r.Runs[0].Judge}
	for _, d := range r.Runs {
		out.Runs = append(out.Runs, run{d.Run.ID, d.Run.Labels, d.Summary, jsonFloat(d.ErrorPct), d.Stalls})
	}
	if e := r.Experiment; e != nil {
		out.Cautions = e.Cautions()
		out.Baselines = map[string]string{}
		for _, a := range e.Axes {
			out.Axes = append(out.Axes, a.Name)
			out.Baselines[a.Name] = a.Baseline
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

func htmlComparisonOf(c *comparison) htmlComparison {
	h := htmlComparison{Title: c.Title, A: sideLabel(&c.A), B: sideLabel(&c.B),
		Legend: c.legend(), Warnings: c.warnings(), JudgeNote: c.JudgeNote, Notes: c.Notes}
	for _, d := range c.Differences {
		h.Differences = append(h.Differences, [3]string{d.Key, sideValues(d.A), sideValues(d.B)})
	}
	h.Table = htmlTable{Head: []string{"metric", "A median [95% CI]", "B median [95% CI]", "change", "judgement", "p", "n"},
		Numeric: []bool{false, true, true, true, false, true, true}}
	for _, m := range c.Metrics {
		_, a, b := c.metricCells(m)
		h.Table.Rows = append(h.Table.Rows, []string{metricTitles[m.Metric], a, b, changeCell(m), judgement(m), pValue(m.P), nCell(m)})
		mark := ""
		if m.Significant {
			mark = "significant"
		}
		h.Table.Marks = append(h.Table.Marks, mark)
	}
	return h
}

// member is the run's place in the experiment, nil for a report of one run.
func (r *Report) member(d *RunData) *member {
	if r.Experiment == nil {
		return nil
	}
	for _, m := range r.Experiment.Members {
		if m.Data == d {
			return m
		}
	}
	return nil
}

// cellOf names the run's cell and repetition: "clients=8 durability=relaxed, rep 2".
func (r *Report) cellOf(d *RunData) string {
	m := r.member(d)
	if m == nil || len(r.Experiment.Axes) == 0 {
		return ""
	}
	var parts []string
	for i, a := range r.Experiment.Axes {
		parts = append(parts, a.Name+"="+m.Values[i])
	}
	return strings.Join(parts, " ") + fmt.Sprintf(", rep %d", m.Rep)
}

// lat shows a latency in the unit that suits it: "21.8 ms", not "0.0218 s".
func lat(v float64) string { return unitFor(kindMillis, v).Format(v) }

// perMinText is a per-minute rate, or "–" when the run has none (ok is 0).
func perMinText(v, ok float64) string {
	if ok <= 0 {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

func (r *Report) runsTable() htmlTable {
	t := htmlTable{Head: []string{"run"}, Numeric: []bool{true}}
	var axes []axis
	if r.Experiment != nil {
		axes = r.Experiment.Axes
	}
	for _, a := range axes {
		t.Head = append(t.Head, a.Name)
		t.Numeric = append(t.Numeric, a.Numeric)
	}
	if len(axes) > 0 {
		t.Head = append(t.Head, "rep")
		t.Numeric = append(t.Numeric, true)
	}
	judged := ""
	if j := r.Runs[0].Judge; j != "" {
		judged = " (" + j + ")"
	}
	// The clients column, unless an axis already is the client count.
	clientsCol := !slices.ContainsFunc(axes, func(a axis) bool { return a.Name == "clients" })
	t.Head = append(t.Head, "started (UTC)", "status", "workload")
	t.Numeric = append(t.Numeric, false, false, false)
	if clientsCol {
		t.Head, t.Numeric = append(t.Head, "clients"), append(t.Numeric, true)
	}
	t.Head = append(t.Head, "seconds", "tps"+judged, "p50"+judged, "p95"+judged, "p99"+judged, "max"+judged, "errors")
	t.Numeric = append(t.Numeric, true, true, true, true, true, true, true)
	// TPC-C's units when a run has them: NOPM, the clients' TPM, the server's TPM.
	perMin, server := false, false
	for _, d := range r.Runs {
		perMin = perMin || d.Summary.TPM > 0
		server = server || d.Summary.ServerTPM > 0
	}
	if perMin {
		t.Head, t.Numeric = append(t.Head, "NOPM", "TPM"), append(t.Numeric, true, true)
	}
	if server {
		t.Head, t.Numeric = append(t.Head, "server TPM"), append(t.Numeric, true)
	}
	var tps, v50, v95, v99, vmax []float64
	for _, d := range r.Runs {
		ts, _, _ := d.judged()
		tps = append(tps, ts.TPS)
		v50, v95, v99, vmax = append(v50, ts.Latency.P50), append(v95, ts.Latency.P95), append(v99, ts.Latency.P99), append(vmax, ts.Latency.Max)
	}
	tu := unitFor(kindCount, tps...)
	// One unit per latency column, chosen from all its values.
	u50, u95, u99, umax := columnUnit(v50...), columnUnit(v95...), columnUnit(v99...), columnUnit(vmax...)
	for _, d := range r.Runs {
		s := d.Summary
		ts, _, _ := d.judged()
		s.TPS = ts.TPS
		l := ts.Latency
		row := []string{strconv.FormatInt(d.Run.ID, 10)}
		if m := r.member(d); m != nil && len(axes) > 0 {
			row = append(row, m.Values...)
			row = append(row, strconv.Itoa(m.Rep))
		}
		row = append(row, d.Run.StartedAt.UTC().Format("2006-01-02 15:04:05"), statusText(d), d.Run.Workload)
		if watched(d) { // no workload ran: nothing to show but how long it watched
			if clientsCol {
				row = append(row, "–")
			}
			row = append(row, num(samplesEnd(d)), "–", "–", "–", "–", "–", "–")
		} else {
			if clientsCol {
				row = append(row, strconv.Itoa(d.Run.Clients))
			}
			row = append(row, num(s.Seconds), tu.Format(s.TPS), u50.Format(l.P50), u95.Format(l.P95), u99.Format(l.P99),
				umax.Format(l.Max), errorText(d))
		}
		if perMin {
			row = append(row, perMinText(s.NOPM, s.TPM), perMinText(s.TPM, s.TPM))
		}
		if server {
			row = append(row, perMinText(s.ServerTPM, s.ServerTPM))
		}
		t.Rows = append(t.Rows, row)
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
	var tps []float64
	for _, c := range e.Cells {
		tps = append(tps, c.TPS.Max)
	}
	tu := unitFor(kindCount, tps...)
	open := false
	for _, m := range e.Members {
		open = open || m.Data.Run.Rate > 0
	}
	if open {
		t.Head = append(t.Head, "late starts", "dropped", "service p99")
		t.Numeric = append(t.Numeric, true, true, true)
	}
	if e.SLO != nil {
		t.Head = append(t.Head, e.SLO.Text)
		t.Numeric = append(t.Numeric, false)
	}
	for _, c := range e.Cells {
		row := append([]string{}, c.Values...)
		ci := "n<6"
		if c.TPS.HasCI {
			ci = tu.Number(c.TPS.Lo) + " – " + tu.Number(c.TPS.Hi)
		}
		row = append(row, strconv.Itoa(c.TPS.N), tu.Format(c.TPS.Median), tu.Number(c.TPS.Min)+" – "+tu.Number(c.TPS.Max), ci,
			lat(c.P50.Median), lat(c.P95.Median), lat(c.P99.Median), num(c.Errors.Median)+"%")
		if open {
			row = append(row, num(summarizeMembers(c.Members, metricLate).Median)+"%", num(summarizeMembers(c.Members, metricDropped).Median)+"%",
				lat(summarizeMembers(c.Members, metricSvcP99).Median))
		}
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

// experimentCharts are the experiment's summary charts: TPS per cell as box plots,
// median TPS as grouped bars, and the scaling curves against the sweep axis.
func (r *Report) experimentCharts() []chart.Chart {
	e := r.Experiment
	var figs []chart.Chart
	tpsMax := 0.0
	for _, m := range e.Members {
		tpsMax = math.Max(tpsMax, metricOf(m.Data, metricTPS))
	}
	tu := unitFor(kindCount, tpsMax)
	// Box plot of TPS per cell.
	box := &chart.Chart{Kind: chart.KindBox, ID: "exp-box", Title: "Throughput per cell across repetitions", YLabel: "transactions per second", YUnit: tu,
		Subtitle: "box: quartiles and median; whiskers: min and max; dots: each run", Caption: "TPS of every run, grouped by cell."}
	for _, c := range e.Cells {
		box.Boxes = append(box.Boxes, chart.Box{Label: c.name(e.Axes), Min: c.TPS.Min, Q1: c.TPS.Q1, Median: c.TPS.Median, Q3: c.TPS.Q3, Max: c.TPS.Max,
			Points: metricValues(c.Members, metricTPS)})
	}
	if len(e.Cells) > 1 {
		// Beside the cells, one box over every run: the spread the study saw as a whole.
		all := metricValues(e.Members, metricTPS)
		s := summarize(all)
		box.Boxes = append(box.Boxes, chart.Box{Label: "all runs", Min: s.Min, Q1: s.Q1, Median: s.Median, Q3: s.Q3, Max: s.Max, Points: all})
		box.Caption = "TPS of every run, grouped by cell; the last box is every run together."
	}
	box.Height = 340
	if len(e.Cells) > 8 {
		box.Width = 900
	}
	figs = append(figs, *box)

	// Grouped bars: first axis groups, second axis one bar each.
	if len(e.Axes) >= 1 {
		g := &chart.Chart{Kind: chart.KindBars, ID: "exp-bars", YLabel: "median transactions per second", YUnit: tu, XLabel: e.Axes[0].Name,
			Caption: "Bars grouped by " + e.Axes[0].Name + "."}
		g.Categories = e.Axes[0].Values
		var second *axis
		names := []string{""}
		if len(e.Axes) >= 2 {
			second = &e.Axes[1]
			names = second.Values
			g.Title = fmt.Sprintf("Median throughput by %s and %s", e.Axes[0].Name, second.Name)
			if len(e.Axes) > 2 {
				g.Subtitle = "medians over all other axes' cells"
			}
		} else {
			g.Title = "Median throughput by " + e.Axes[0].Name
		}
		for i, n := range names {
			if second != nil {
				n = second.Name + "=" + n
			}
			g.Series = append(g.Series, chart.Series{Name: n, Style: i})
		}
		g.Subtitle = strings.TrimSpace(g.Subtitle + " whiskers: 95% CI of the median where n ≥ 6")
		for _, gv := range g.Categories {
			for si, sv := range names {
				var ms []*member
				for _, c := range e.Cells {
					if c.Values[0] == gv && (second == nil || c.Values[1] == sv) {
						ms = append(ms, c.Members...)
					}
				}
				s := summarizeMembers(ms, metricTPS)
				ser := &g.Series[si]
				ser.Y, ser.Lo, ser.Hi = append(ser.Y, s.Median), append(ser.Lo, s.Lo), append(ser.Hi, s.Hi)
			}
		}
		figs = append(figs, *g)
	}

	// Scaling curve against the sweep axis.
	if sw := e.sweepAxis(); sw >= 0 {
		names, lines := e.lines(sw)
		ax := e.Axes[sw]
		// A count (clients, transactions) has no fractional ticks: "2.25 clients" is no value of it.
		whole := ax.Kind == kindCount
		tc := &chart.Chart{ID: "exp-scaling-tps", Title: "Throughput against " + ax.Name, XLabel: ax.Label(), XUnit: ax.xUnit(), XWhole: whole,
			YLabel: "median transactions per second", YUnit: tu, YZero: true, Caption: "The scaling curve: median TPS of each cell."}
		var latAll []float64
		for _, c := range e.Cells {
			latAll = append(latAll, c.P95.Median, c.P99.Median)
		}
		if e.SLO != nil {
			latAll = append(latAll, e.SLO.LimitMs)
		}
		lu := unitFor(kindMillis, latAll...)
		lc := &chart.Chart{ID: "exp-scaling-latency", Title: "Latency against " + ax.Name, XLabel: ax.Label(), XUnit: ax.xUnit(), XWhole: whole, YLabel: "median latency",
			YUnit: lu, YZero: true, Subtitle: "p99 solid markers, p95 open markers", Caption: "Median p95 and p99 latency of each cell."}
		for i, cells := range lines {
			var x, y, y95, y99 []float64
			for _, c := range cells {
				x = append(x, ax.Num(c.Values[sw]))
				y, y95, y99 = append(y, c.TPS.Median), append(y95, c.P95.Median), append(y99, c.P99.Median)
			}
			name := names[i]
			tc.Series = append(tc.Series, chart.Series{Name: name, X: x, Y: y, Points: true, Style: i})
			n99, n95 := "p99", "p95"
			if name != "" {
				n99, n95 = name+" p99", name+" p95"
			}
			lc.Series = append(lc.Series, chart.Series{Name: n99, X: x, Y: y99, Points: true, Style: 2 * i},
				chart.Series{Name: n95, X: x, Y: y95, Points: true, Style: 2*i + 5})
		}
		for i := range tc.Series {
			if tc.Series[i].Name == "" {
				tc.Series[i].Name = "median TPS"
			}
		}
		if e.SLO != nil {
			lc.HLines = append(lc.HLines, chart.Ref{At: e.SLO.LimitMs, Label: "objective " + e.SLO.Text})
			for _, k := range e.Knees {
				if k.Value != "" {
					v := ax.Num(k.Value)
					label := "knee " + ax.Name + "=" + k.Value
					if len(e.Knees) > 1 {
						label += " (" + k.Line + ")"
					}
					tc.VLines = append(tc.VLines, chart.Ref{At: v, Label: label})
				}
			}
		}
		figs = append(figs, *tc, *lc)
	}
	return figs
}

func summarizeMembers(ms []*member, metric string) analyzeSummaryAlias {
	return summarize(metricValues(ms, metric))
}

// smallMultiples are one small chart per value of the first axis: TPS of its runs in
// the order they ran, one series per value of the second axis.
func (r *Report) smallMultiples() chart.Chart {
	e := r.Experiment
	tpsMax := 0.0
	for _, m := range e.Members {
		tpsMax = math.Max(tpsMax, metricOf(m.Data, metricTPS))
	}
	tu := unitFor(kindCount, tpsMax)
	// Panel size from the number of panels: a few get room, many stay small enough
	// to sit side by side.
	panels := 1
	if len(e.Axes) > 0 {
		panels = len(e.Axes[0].Values)
	}
	w, h := 300, 200
	switch {
	case panels <= 2:
		w, h = 460, 260
	case panels <= 4:
		w, h = 380, 240
	}
	mk := func(id, title string, ms []*member) chart.Chart {
		// Half a run of padding each side: the first and last runs' dots sit inside
		// the frame, not on it.
		c := chart.Chart{ID: id, Title: title, XLabel: "run order", XUnit: scaleUnit{Suffix: "", Div: 1}, XWhole: true, YLabel: "tps", YUnit: tu, YZero: true, Width: w, Height: h,
			XRange: chart.Fixed(0.5, float64(max(len(e.Members), 2))+0.5)}
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
				c.Series = append(c.Series, chart.Series{Name: key, Points: true, Style: style})
			}
			c.Series[i].X = append(c.Series[i].X, float64(m.Seq))
			c.Series[i].Y = append(c.Series[i].Y, metricOf(m.Data, metricTPS))
		}
		return c
	}
	m := chart.Chart{Kind: chart.KindMultiples, ID: "exp-small", YLabel: "tps", YUnit: tu}
	if len(e.Axes) == 0 {
		m.Title, m.Panels = "Throughput of each run in the order the runs ran", []chart.Chart{mk("exp-small-all", "all runs", e.Members)}
		return m
	}
	for i, v := range e.Axes[0].Values {
		var ms []*member
		for _, m := range e.Members {
			if m.Values[0] == v {
				ms = append(ms, m)
			}
		}
		// The panel's title is the value: the axis is named once, in the group's title.
		m.Panels = append(m.Panels, mk(fmt.Sprintf("exp-small-%d", i), v, ms))
	}
	m.Title = "Throughput of each run in the order the runs ran, one chart per " + e.Axes[0].Name
	return m
}

func (r *Report) htmlRunOf(d *RunData, open bool) htmlRun {
	run := d.Run
	h := htmlRun{ID: run.ID, Anchor: fmt.Sprintf("run-%d", run.ID), Open: open, Provenance: provenanceRows(d)}
	h.Title = fmt.Sprintf("Run %d: %s, %d clients, %s", run.ID, run.Workload, run.Clients, statusText(d))
	if c := r.cellOf(d); c != "" {
		h.Title = fmt.Sprintf("Run %d: %s (%s, %d clients, %s)", run.ID, c, run.Workload, run.Clients, statusText(d))
	}
	s := d.Summary
	lu := unitFor(kindMillis, s.Latency.P50, s.Latency.P99)
	h.Facts = [][2]string{
		{"measured", fmt.Sprintf("%s s in %d intervals", num(s.Seconds), s.Intervals)},
		{"throughput", unitFor(kindCount, s.TPS).Format(s.TPS) + " tx/s, " + unitFor(kindCount, s.QPS).Format(s.QPS) + " statements/s"},
		{"latency", fmt.Sprintf("p50 %s, p95 %s, p99 %s, max %s", lu.Format(s.Latency.P50), lu.Format(s.Latency.P95), lu.Format(s.Latency.P99),
			unitFor(kindMillis, s.Latency.Max).Format(s.Latency.Max))},
		{"errors", fmt.Sprintf("%s; failed %d, retries %d, reconnects %d", errorText(d), s.Failed, s.Retries, s.Reconnects)},
	}
	if j := judgedName(d); j != "" {
		// The headline is what the run is judged by; every transaction follows.
		if js, errPct, ok := d.judged(); ok {
			ju := unitFor(kindMillis, js.Latency.P50, js.Latency.P95, js.Latency.P99, js.Latency.Max)
			h.Facts[1][0], h.Facts[2][0] = "throughput (every transaction)", "latency (every transaction)"
			h.Facts = append([][2]string{h.Facts[0],
				{"judged by", "the " + j + ": the figures below it count every transaction"},
				{"throughput (" + d.Judge + ")", unitFor(kindCount, js.TPS).Format(js.TPS) + " tx/s"},
				{"latency (" + d.Judge + ")", fmt.Sprintf("p50 %s, p95 %s, p99 %s, max %s", ju.Format(js.Latency.P50), ju.Format(js.Latency.P95),
					ju.Format(js.Latency.P99), ju.Format(js.Latency.Max))},
				{"errors (" + d.Judge + ")", fmt.Sprintf("%d (%s%% of attempts)", js.Errors, num(errPct))}}, h.Facts[1:]...)
		}
	}
	if run.Rate > 0 {
		h.Facts = append(h.Facts, [2]string{"open loop", fmt.Sprintf("late %d, dropped %d; latency counts from the intended start", s.Late, s.Dropped)})
	}
	h.Facts = append(h.Facts, errorFacts(d)...)
	if rows := errorRows(&s); len(rows) > 0 {
		h.Errors = &htmlTable{Head: errorHead, Numeric: []bool{true, false, false, false, true, false}, Rows: rows}
	}
	if len(run.TxnTypes) > 1 {
		// One unit per column: each column's unit is chosen from all its values.
		var tpsV, p50V, p95V, p99V, maxV []float64
		for _, n := range run.TxnTypes {
			ts := s.ByTxn[n]
			tpsV, p50V, p95V = append(tpsV, ts.TPS), append(p50V, ts.Latency.P50), append(p95V, ts.Latency.P95)
			p99V, maxV = append(p99V, ts.Latency.P99), append(maxV, ts.Latency.Max)
		}
		tu, u50, u95, u99, umax := unitFor(kindCount, tpsV...), columnUnit(p50V...), columnUnit(p95V...), columnUnit(p99V...), columnUnit(maxV...)
		t := &htmlTable{Head: []string{"type", "tps", "p50", "p95", "p99", "max", "errors"}, Numeric: []bool{false, true, true, true, true, true, true}}
		for _, n := range run.TxnTypes {
			ts := s.ByTxn[n]
			if n == d.Judge {
				n += " (judged)"
			}
			t.Rows = append(t.Rows, []string{n, tu.Format(ts.TPS), u50.Format(ts.Latency.P50), u95.Format(ts.Latency.P95),
				u99.Format(ts.Latency.P99), umax.Format(ts.Latency.Max), strconv.FormatInt(ts.Errors, 10)})
		}
		h.Types = t
	}
	models, ax, bands := r.runCharts(d)
	var charts []string
	for _, c := range models {
		charts = append(charts, c.SVG())
	}
	if watched(d) {
		// A watch session ran no workload: what it watched is the server and the OS.
		n := 0
		for _, m := range d.Metrics {
			n = max(n, len(m.Points))
		}
		h.Facts = [][2]string{{"watched", fmt.Sprintf("%s s: %d samples every %s of %d metrics (no workload ran: no throughput or latency)",
			num(ax.end), n, d.Run.Interval, len(d.Metrics))}}
		charts = nil
		h.Title = fmt.Sprintf("Watch %d: %s, %s", run.ID, run.TargetKind, statusText(d))
	}
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
			kept, folded := foldClientHost(d.Stalls)
			h.StallNote = fmt.Sprintf("Stalls: %d, shaded with diagonal hatching on every time chart (warm-up is plain grey). Details as `fathom show %d` prints them:", len(kept), run.ID)
			if n := clientHostNote(folded); n != "" {
				h.StallNote = "Warning: " + n + ". " + h.StallNote
			}
			h.Stalls = stallRows(d)
		}
		if d.HostWarning != "" {
			h.StallNote = "Warning: " + d.HostWarning + ". " + h.StallNote
		}
		var flat []string
		var mgs []metricGroup
		mgs, flat = r.metricGroups(d, ax, bands)
		for _, g := range mgs {
			hg := htmlMetricGroup{Title: g.Title}
			for _, c := range g.Charts {
				hg.Figures = append(hg.Figures, htmlFigure{SVG: template.HTML(c.SVG())})
			}
			h.MetricGroups = append(h.MetricGroups, hg)
		}
		if len(flat) > 0 {
			h.Flat = "Zero throughout, not drawn: " + strings.Join(flat, ", ") + "."
		}
	}
	return h
}

// timeAxis is the x axis every time chart of a run shares.
type timeAxis struct {
	end   float64 // seconds
	unit  scaleUnit
	label string
	marks []chart.Ref // during_run hooks
}

// runCharts builds the models of a run's time series and distribution charts
// (throughput first), and returns the time axis and bands the metric charts share
// with them.
func (r *Report) runCharts(d *RunData) ([]*chart.Chart, timeAxis, []chart.Band) {
	id := fmt.Sprintf("run-%d", d.Run.ID)
	end := 0.0
	if n := len(d.Points); n > 0 {
		end = d.Points[n-1].End
	}
	if watched(d) {
		end = samplesEnd(d)
	}
	xu, xl := scaleUnit{Suffix: "", Div: 1}, "time since start (s)"
	if end > 1200 {
		xu, xl = scaleUnit{Suffix: "", Div: 60}, "time since start (min)"
	}
	var bands []chart.Band
	for i := 0; i < len(d.Points); i++ {
		if !d.Points[i].Warmup {
			continue
		}
		j := i
		for j+1 < len(d.Points) && d.Points[j+1].Warmup {
			j++
		}
		bands = append(bands, chart.Band{X0: d.Points[i].Start, X1: d.Points[j].End, Kind: "warmup", Label: "warm-up"})
		i = j
	}
	bands = append(bands, stallBands(d)...)
	sub := ""
	if d.Group > 1 {
		sub = fmt.Sprintf("each point merges %d intervals of %s; the CSV keeps every interval", d.Group, d.Run.Interval)
	}
	mid := func(p Point) float64 { return (p.Start + p.End) / 2 }
	series := func(name string, style int, f func(Point) float64) chart.Series {
		s := chart.Series{Name: name, Style: style}
		for _, p := range d.Points {
			s.X = append(s.X, mid(p))
			s.Y = append(s.Y, f(p))
		}
		s.Points = len(d.Points) <= 40
		return s
	}
	base := func(suffix, title, ylabel string, kind int, ss []chart.Series) *chart.Chart {
		var vals []float64
		for _, s := range ss {
			vals = append(vals, s.Y...)
		}
		return &chart.Chart{ID: id + "-" + suffix, Title: title, Subtitle: sub, XLabel: xl, XUnit: xu, YLabel: ylabel,
			YUnit: unitFor(kind, vals...), YZero: true, Bands: bands, VLines: markRefs(d), Series: ss, XRange: chart.Fixed(0, end)}
	}
	var tput []chart.Series
	judged := judgedName(d)
	if judged != "" {
		// The judged figure first, so that it is the one the legend and the eye meet.
		tput = append(tput, series("judged: "+d.Judge, 0, func(p Point) float64 { return judgedTPS(d, p) }))
	}
	if len(d.Run.TxnTypes) > 1 {
		tput = append(tput, series("all types", len(tput), func(p Point) float64 { return p.TPS }))
		for i, n := range d.Run.TxnTypes {
			i := i
			if judged != "" && n == d.Judge {
				continue // drawn above as the judged series
			}
			tput = append(tput, series(n, len(tput), func(p Point) float64 {
				if p.TypeTPS == nil {
					return math.NaN()
				}
				return p.TypeTPS[i]
			}))
		}
	} else {
		tput = append(tput, series("tps", 0, func(p Point) float64 { return p.TPS }))
	}
	var charts []*chart.Chart
	tc := base("tps", "Throughput over time", "transactions per second", kindCount, tput)
	lat := base("latency", "Latency over time", "latency", kindMillis, []chart.Series{
		series("p99", 0, func(p Point) float64 { return judgedLatency(d, p).P99 }),
		series("p95", 1, func(p Point) float64 { return judgedLatency(d, p).P95 }),
		series("p50", 2, func(p Point) float64 { return judgedLatency(d, p).P50 }),
	})
	if judged != "" {
		tc.Subtitle = strings.TrimSpace("judged by the " + judged + " (first series); the others for reference. " + sub)
		lat.Title = "Latency over time of the " + judged
		lat.Subtitle = strings.TrimSpace("judged by the " + judged + ": only its transactions. " + sub)
	}
	charts = append(charts, tc)
	if r.SLO != nil {
		lat.HLines = append(lat.HLines, chart.Ref{At: r.SLO.LimitMs, Label: "objective " + r.SLO.Text})
		lat.YUnit = unitFor(kindMillis, append(lat.Series[0].Y, r.SLO.LimitMs)...)
	}
	charts = append(charts, lat)

	errs := base("errors", "Errors, retries and reconnects over time", "per second", kindCount, []chart.Series{
		series("errors/s", 0, func(p Point) float64 { return p.ErrorsPS }),
		series("retries/s", 1, func(p Point) float64 { return p.RetriesPS }),
		series("failed tx/s", 2, func(p Point) float64 { return p.FailedPS }),
		series("reconnects", 3, func(p Point) float64 { return float64(p.Reconnects) }),
	})
	errs.Subtitle = strings.TrimSpace("reconnects: count per point. " + sub)
	charts = append(charts, errs)

	dist := &chart.Chart{ID: id + "-distribution", Title: "Latency by percentile (measured intervals)", XLabel: "percentile",
		YLabel: "latency", XScale: chart.ScaleNines, YZero: true}
	var x, y []float64
	spectrum := d.Distribution
	if judged != "" {
		spectrum = d.Distributions[d.Judge]
		dist.Title = "Latency by percentile of the " + judged + " (measured intervals)"
	}
	for _, p := range spectrum {
		x, y = append(x, p.Percentile), append(y, p.Ms)
	}
	dist.YUnit = unitFor(kindMillis, y...)
	if logWorthy(y) {
		// A tail more than 100 times the fastest latency flattens the body of the
		// distribution on a linear axis: a log axis shows both.
		dist.YScale, dist.YZero = chart.ScaleLog, false
		dist.Subtitle = "log scale: the slowest percentiles are more than 100 times the fastest"
	}
	dist.Series = []chart.Series{{Name: "latency", X: x, Y: y, Points: true}}
	if r.SLO != nil {
		dist.HLines = append(dist.HLines, chart.Ref{At: r.SLO.LimitMs, Label: "objective " + r.SLO.Text})
	}
	charts = append(charts, dist)

	return charts, timeAxis{end: end, unit: xu, label: xl, marks: markRefs(d)}, bands
}

// logWorthy reports whether positive values span more than two decades.
func logWorthy(vs []float64) bool {
	lo, hi := math.Inf(1), 0.0
	for _, v := range vs {
		if v > 0 && !math.IsInf(v, 0) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	return hi > 100*lo
}

// judgedTPS is a point's throughput of what the run is judged by.
func judgedTPS(d *RunData, p Point) float64 {
	if d.Judge == "" {
		return p.TPS
	}
	if p.TypeTPS == nil {
		return math.NaN()
	}
	v, found := 0.0, false
	for i, n := range d.Run.TxnTypes {
		if n == d.Judge || strings.HasPrefix(n, d.Judge+"/") {
			v += p.TypeTPS[i]
			found = true
		}
	}
	if !found {
		return math.NaN()
	}
	return v
}

// judgedLatency is a point's latency percentiles of what the run is judged by: every
// transaction, or the judged type's or group's own (NaN where the point has none).
func judgedLatency(d *RunData, p Point) pointPercentiles {
	if d.Judge == "" || len(d.Run.TxnTypes) <= 1 {
		return pointPercentiles{p.P50, p.P95, p.P99, p.Max}
	}
	if l, ok := p.GroupLat[d.Judge]; ok {
		return l
	}
	if i := slices.Index(d.Run.TxnTypes, d.Judge); i >= 0 && i < len(p.TypeLat) {
		return p.TypeLat[i]
	}
	return pointPercentiles{math.NaN(), math.NaN(), math.NaN(), math.NaN()}
}

// judgedName says what a judged run's figures count, for chart subtitles: "" when
// the run is judged by every transaction.
func judgedName(d *RunData) string {
	if d.Judge == "" || len(d.Run.TxnTypes) <= 1 {
		return ""
	}
	if _, ok := d.Groups[d.Judge]; ok {
		return "client group " + d.Judge
	}
	return "transaction type " + d.Judge
}

// medianMembers are the runs of a cell whose throughput is the cell's median: the
// middle run of an odd count, both middle runs of an even count (their mean is the
// median, and neither alone is the cell: two repetitions of 98.7 and 1,897 tps have a
// median of 998 that no run had), each with why it was chosen.
func medianMembers(c *cell) ([]*member, []string) {
	ms := slices.Clone(c.Members)
	sort.SliceStable(ms, func(i, j int) bool { return metricOf(ms[i].Data, metricTPS) < metricOf(ms[j].Data, metricTPS) })
	n := len(ms)
	switch {
	case n == 0:
		return nil, nil
	case n == 1:
		return ms, []string{"the only run"}
	case n%2 == 1:
		return ms[n/2 : n/2+1], []string{fmt.Sprintf("median of %d", n)}
	}
	return ms[n/2-1 : n/2+1], []string{fmt.Sprintf("lower middle of %d", n), fmt.Sprintf("upper middle of %d", n)}
}

// timeOverlays draws the cells' time series on one time axis (seconds since each
// run's start): throughput and p99 latency of each cell's median run, so that
// configurations can be compared over time without matching run ids by hand. Up to
// eight cells share a chart; more are split by the first axis.
func (r *Report) timeOverlays() (string, []chart.Chart) {
	e := r.Experiment
	if len(e.Cells) < 2 {
		return "", nil
	}
	groups := [][]*cell{e.Cells}
	var titles []string
	if len(e.Cells) > 8 && len(e.Axes) > 1 {
		groups = nil
		for _, v := range e.Axes[0].Values {
			var g []*cell
			for _, c := range e.Cells {
				if c.Values[0] == v {
					g = append(g, c)
				}
			}
			groups = append(groups, g)
			titles = append(titles, e.Axes[0].Name+"="+v)
		}
	}
	end := 0.0
	var tpsAll, latAll []float64
	for _, c := range e.Cells {
		ms, _ := medianMembers(c)
		for _, m := range ms {
			for _, p := range m.Data.Points {
				end = math.Max(end, p.End)
				if !p.Warmup {
					tpsAll = append(tpsAll, judgedTPS(m.Data, p))
					latAll = append(latAll, judgedLatency(m.Data, p).P99)
				}
			}
		}
	}
	xu, xl := scaleUnit{Suffix: "", Div: 1}, "time since the run's start (s)"
	if end > 1200 {
		xu, xl = scaleUnit{Suffix: "", Div: 60}, "time since the run's start (min)"
	}
	tu, lu := unitFor(kindCount, tpsAll...), unitFor(kindMillis, latAll...)
	var figs []chart.Chart
	for gi, cells := range groups {
		suffix := ""
		if titles != nil {
			suffix = " (" + titles[gi] + ")"
		}
		tc := &chart.Chart{ID: fmt.Sprintf("exp-time-tps-%d", gi), Title: "Throughput over time, median run(s) of each cell" + suffix,
			XLabel: xl, XUnit: xu, YLabel: "transactions per second", YUnit: tu, YZero: true, XRange: chart.Fixed(0, end)}
		lc := &chart.Chart{ID: fmt.Sprintf("exp-time-p99-%d", gi), Title: "p99 latency over time, median run(s) of each cell" + suffix,
			XLabel: xl, XUnit: xu, YLabel: "p99 latency", YUnit: lu, YZero: true, XRange: chart.Fixed(0, end)}
		if e.SLO != nil {
			lc.HLines = append(lc.HLines, chart.Ref{At: e.SLO.LimitMs, Label: "objective " + e.SLO.Text})
			lc.YUnit = unitFor(kindMillis, append(latAll, e.SLO.LimitMs)...)
		}
		if j := judgedName(r.Runs[0]); j != "" {
			tc.Subtitle = "judged by the " + j + ": only its transactions"
			lc.Subtitle = tc.Subtitle
		}
		style := 0
		for _, c := range cells {
			ms, why := medianMembers(c)
			for k, m := range ms {
				name := fmt.Sprintf("%s (run %d, %s)", c.name(e.Axes), m.Data.Run.ID, why[k])
				ts := chart.Series{Name: name, Style: style}
				ls := chart.Series{Name: name, Style: style}
				style++
				for _, p := range m.Data.Points {
					if p.Warmup {
						continue
					}
					x := (p.Start + p.End) / 2
					ts.X, ts.Y = append(ts.X, x), append(ts.Y, judgedTPS(m.Data, p))
					ls.X, ls.Y = append(ls.X, x), append(ls.Y, judgedLatency(m.Data, p).P99)
				}
				ts.Points, ls.Points = len(ts.X) <= 40, len(ls.X) <= 40
				tc.Series, lc.Series = append(tc.Series, ts), append(lc.Series, ls)
			}
		}
		figs = append(figs, *tc, *lc)
	}
	return "The cells over time: each cell's median run by throughput (with an even number of runs, both middle runs, since the median is their mean), warm-up left out, on one time axis", figs
}

// watched reports whether the run is a `fathom watch` session: samples, no workload.
func watched(d *RunData) bool {
	return d.Run.Workload == "watch" && len(d.Points) == 0 && d.Samples != nil
}

// samplesEnd is the time of a run's last sample, in seconds since its start.
func samplesEnd(d *RunData) float64 {
	end := 0.0
	for _, m := range d.Metrics {
		if n := len(m.Points); n > 0 {
			end = math.Max(end, m.Points[n-1].At.Seconds())
		}
	}
	return end
}
