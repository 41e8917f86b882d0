package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fathom-lab/fathom/internal/analyze"
	"github.com/fathom-lab/fathom/internal/chart"
)

// A series' history as an HTML page: serve's /history/SERIES (one metric's chart,
// its runs linked to serve's pages) and `fathom history SERIES -f html` (a file of
// its own: every metric's chart, no links, no stylesheet to fetch).

// HistoryPage says how WriteHistoryHTML draws a history.
type HistoryPage struct {
	// Metric is the one metric charted (serve's page); "" charts every metric (a file).
	Metric string
	// Static: a file read on its own, without serve: no links to serve's pages.
	Static bool
}

// historyPage is the page's data: its charts and the newest runs.
type historyPage struct {
	H       *History
	Static  bool
	Metric  string
	Metrics []string
	Heads   []string // the runs table's column heads: each metric with its unit
	Views   []*historyView
	Table   []HistoryPoint
	Older   int
}

// historyHead is a metric's column head with its unit: "p99 (ms)", and "errors (%
// failed)": the failed transactions' share, which a run's page lists beside the errors
// retried (a run with 6 deadlocks, all retried, showed "errors 0" here, unlabelled).
func historyHead(m historyFigure) string {
	if m.Name == "errors" {
		return "errors (% failed)"
	}
	return m.Name + " (" + m.Unit + ")"
}

// WriteHistoryHTML writes h's page. An unknown metric is an error naming the known.
func WriteHistoryHTML(w io.Writer, h *History, o HistoryPage) error {
	p := historyPage{H: h, Static: o.Static, Metric: o.Metric}
	units := map[string]string{}
	var heads []string
	for _, m := range historyMetrics {
		p.Metrics = append(p.Metrics, m.Name)
		units[m.Name] = m.Unit
		heads = append(heads, historyHead(m))
	}
	p.Heads = heads
	charted := p.Metrics
	if o.Metric != "" {
		if units[o.Metric] == "" {
			return fmt.Errorf("metric %q: use one of %s", o.Metric, strings.Join(p.Metrics, ", "))
		}
		charted = []string{o.Metric}
	}
	for _, m := range charted {
		v := &historyView{H: h, Static: o.Static, Metric: m, Unit: units[m], Metrics: p.Metrics, W: chartW, H2: chartH}
		for _, d := range h.Metrics {
			v.Detected = v.Detected || d == m
		}
		v.layout()
		p.Views = append(p.Views, v)
	}
	n := len(h.Points)
	first := max(0, n-tableRuns)
	p.Older = first
	for i := n - 1; i >= first; i-- {
		p.Table = append(p.Table, h.Points[i])
	}
	return historyTmpl().Execute(w, &p)
}

func (h *History) writeHTMLFile(w io.Writer) error {
	return WriteHistoryHTML(w, h, HistoryPage{Static: true})
}

// chart geometry, in SVG user units.
const (
	chartW, chartH         = 1200.0, 360.0
	padL, padR, padT, padB = 70.0, 40.0, 34.0, 40.0
	linkedPoints           = 2000 // above this many runs, points are drawn as one line
	tableRuns              = 100  // the newest runs listed under the chart
)

type historyPoint struct {
	X, Y   float64
	RunID  int64
	Title  string
	Change bool
}

type historyMark struct {
	X      float64
	N      int
	Metric string
	RunID  int64
	Worse  bool
	Line   string
	Why    string
}

type historyTick struct {
	Pos   float64
	Label string
}

type historyView struct {
	Static   bool // a file, not serve's page: no links to serve, no stylesheet
	H        *History
	Metric   string
	Unit     string
	Metrics  []string
	Points   []historyPoint
	Polyline string
	Linked   bool
	Marks    []historyMark
	YTicks   []historyTick
	XTicks   []historyTick
	W, H2    float64
	Detected bool // changes were looked for in this metric
}

// layout places the points, the change marks and the axes.
func (v *historyView) layout() {
	ps := v.H.Points
	n := len(ps)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range ps {
		lo, hi = min(lo, p.Values[v.Metric]), max(hi, p.Values[v.Metric])
	}
	if n == 0 {
		return
	}
	lo = min(lo, 0) // figures are read against zero
	if hi <= lo {
		hi = lo + 1
	}
	hi *= 1.05
	// Round ticks, the axis ending at the first one above the data.
	ticks := chart.NiceTicks(lo, hi, 4)
	if len(ticks) > 1 {
		step := ticks[1] - ticks[0]
		if top := math.Ceil(hi/step-1e-9) * step; top > ticks[len(ticks)-1] {
			ticks = append(ticks, math.Round(top/step)*step)
		}
		hi = ticks[len(ticks)-1]
	}
	x := func(i int) float64 {
		if n == 1 {
			return padL + (chartW-padL-padR)/2
		}
		return padL + float64(i)*(chartW-padL-padR)/float64(n-1)
	}
	y := func(val float64) float64 { return padT + (hi-val)/(hi-lo)*(chartH-padT-padB) }
	changed := map[int64]bool{}
	for _, c := range v.H.Changes {
		if c.Metric == v.Metric {
			changed[c.RunID] = true
		}
	}
	var b strings.Builder
	v.Linked = n <= linkedPoints
	for i, p := range ps {
		px, py := x(i), y(p.Values[v.Metric])
		fmt.Fprintf(&b, "%.1f,%.1f ", px, py)
		if v.Linked || changed[p.RunID] {
			v.Points = append(v.Points, historyPoint{X: px, Y: py, RunID: p.RunID, Change: changed[p.RunID],
				Title: fmt.Sprintf("run %d, %s: %s %s", p.RunID, p.StartedAt.UTC().Format("2006-01-02 15:04"), fmtFigure(p.Values[v.Metric]), v.Unit)})
		}
	}
	v.Polyline = strings.TrimSpace(b.String())
	index := map[int64]int{}
	for i, p := range ps {
		index[p.RunID] = i
	}
	for _, c := range v.H.Changes {
		if c.Metric != v.Metric {
			continue
		}
		// The mark stands between the last run before the change and the first after.
		mx := (x(index[c.RunID]-1) + x(index[c.RunID])) / 2
		v.Marks = append(v.Marks, historyMark{X: mx, N: len(v.Marks) + 1, Metric: c.Metric, RunID: c.RunID, Worse: c.Worse,
			Line: changeText(c), Why: whyText(c)})
	}
	for _, val := range ticks {
		// chart.Num, as the other charts' ticks: 0.075 for 3 × 0.025, not
		// 0.07500000000000001, and 0 for -0.
		v.YTicks = append(v.YTicks, historyTick{Pos: y(val), Label: chart.Num(val)})
	}
	// Dates for a long series, minutes within three days, seconds within an hour (a
	// series of short runs); a label that repeats its left neighbour is left out.
	span := ps[n-1].StartedAt.Sub(ps[0].StartedAt)
	layout := "2006-01-02"
	switch {
	case span < time.Hour:
		layout = "15:04:05"
	case span < 72*time.Hour:
		layout = "01-02 15:04"
	}
	last := ""
	for k := 0; k < min(n, 6); k++ {
		i := k * (n - 1) / max(1, min(n, 6)-1)
		if label := ps[i].StartedAt.UTC().Format(layout); label != last {
			v.XTicks = append(v.XTicks, historyTick{Pos: x(i), Label: label})
			last = label
		}
	}
}

func fmtFigure(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

func changeText(c HistoryChange) string {
	side := func(s analyze.Summary) string {
		if s.HasCI {
			return fmt.Sprintf("%s [%s, %s]", fmtFigure(s.Median), fmtFigure(s.Lo), fmtFigure(s.Hi))
		}
		return fmtFigure(s.Median) + " (too few runs for an interval)"
	}
	rel := fmt.Sprintf("%+.1f%%", c.Relative*100)
	if math.IsInf(c.Relative, 0) {
		rel = "from 0"
	}
	way := "better"
	if c.Worse {
		way = "worse"
	}
	return fmt.Sprintf("%s %s → %s %s (%s, %s), p = %.3g", c.Metric, side(c.Before), side(c.After), c.Unit, rel, way, c.PValue)
}

func whyText(c HistoryChange) string {
	why := "What changed: " + strings.Join(c.Changed, "; ")
	if len(c.Changed) == 0 {
		why = fmt.Sprintf("Nothing recorded differs between runs %d and %d (settings, versions, host, options, labels).", c.PrevRunID, c.RunID)
	}
	if len(c.Nearby) > 0 {
		why += " Nearby: " + strings.Join(c.Nearby, "; ")
	}
	return why
}

var historyTmpl = sync.OnceValue(func() *template.Template { return template.Must(template.New("page").Parse(historyPageTmpl)) })

// historyPageTmpl is the history page's template text (historyTmpl).
const historyPageTmpl = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>fathom · history {{.H.ID}}</title>
<link rel="icon" href="data:,">
{{if .Static}}<style>
body { font-family: sans-serif; margin: 1em 2em; color: #222; }
table { border-collapse: collapse; } th, td { padding: .2em .7em; border-bottom: 1px solid #eee; } td.num { text-align: right; }
</style>{{else}}<link rel="stylesheet" href="/ui/app.css">{{end}}
<style>
svg.history { width: 100%; height: auto; background: #fff; border: 1px solid #ddd; }
svg.history .line { fill: none; stroke: #3367d6; stroke-width: 1.5; }
svg.history circle { fill: #3367d6; }
svg.history circle.change { fill: #d93025; }
svg.history .mark { stroke: #d93025; stroke-dasharray: 4 3; }
svg.history .mark.better { stroke: #188038; }
svg.history text { font: 12px sans-serif; fill: #444; }
svg.history .axis { stroke: #999; }
ol.changes li { margin: .4em 0; }
ol.changes .worse { color: #b3261e; font-weight: bold; }
ol.changes .better { color: #188038; font-weight: bold; }
</style></head>
<body data-ready="history">
{{if .Static}}<header>fathom · history</header>{{else}}<header><a href="/#/runs">fathom</a> · history</header>{{end}}
<main id="history">
<h1>Series <code>{{.H.ID}}</code></h1>
<p class="title">{{.H.Title}}</p>
<p class="count">{{len .H.Points}} complete runs{{if .H.NotComplete}} ({{.H.NotComplete}} more not complete: left out){{end}}.
Changes looked for in {{range $i, $m := .H.Metrics}}{{if $i}}, {{end}}{{$m}}{{end}} by E-Divisive Means with a permutation test
(false-positive level 0.01 per test, minimum change 5%, at least 3 runs a side).</p>
{{if not .Static}}<nav class="metrics">{{range .Metrics}}<a href="?metric={{.}}"{{if eq . $.Metric}} aria-current="page"{{end}}>{{.}}</a> {{end}}</nav>{{end}}
{{range .Views}}{{template "chart" .}}{{end}}
<h2>Runs{{if .Older}} (the newest {{len .Table}}; {{.Older}} older){{end}}</h2>
<table id="history-runs"><thead><tr><th>run</th><th>started (UTC)</th>{{range .Heads}}<th>{{.}}</th>{{end}}</tr></thead><tbody>
{{range .Table}}{{$p := .}}<tr><td class="num">{{if $.Static}}{{.RunID}}{{else}}<a href="/#/run/{{.RunID}}">{{.RunID}}</a>{{end}}</td><td>{{.StartedAt.UTC.Format "2006-01-02 15:04:05"}}</td>{{range $.Metrics}}<td class="num">{{index $p.Values .}}</td>{{end}}</tr>
{{end}}</tbody></table>
{{if not .Static}}<p><a href="/api/history/{{.H.ID}}">JSON</a></p>{{end}}
</main></body></html>
{{define "chart"}}{{if .Static}}<h2>{{.Metric}} ({{.Unit}})</h2>{{end}}
{{if .H.Points}}
<svg class="history" id="chart{{if .Static}}-{{.Metric}}{{end}}" viewBox="0 0 {{.W}} {{.H2}}" role="img" aria-label="{{.Metric}} over {{len .H.Points}} runs">
{{range .YTicks}}<line class="axis" x1="70" x2="1160" y1="{{.Pos}}" y2="{{.Pos}}" stroke-opacity="0.2"/><text x="64" y="{{.Pos}}" text-anchor="end" dominant-baseline="middle">{{.Label}}</text>
{{end}}{{range .XTicks}}<text x="{{.Pos}}" y="{{$.H2}}" dy="-12" text-anchor="middle">{{.Label}}</text>
{{end}}<text x="8" y="14">{{.Metric}} ({{.Unit}})</text>
<polyline class="line" points="{{.Polyline}}"/>
{{range .Marks}}<line class="mark{{if not .Worse}} better{{end}}" data-run="{{.RunID}}" x1="{{.X}}" x2="{{.X}}" y1="34" y2="320"><title>{{.Line}} {{.Why}}</title></line><text x="{{.X}}" y="30" dx="4">{{.N}}</text>
{{end}}{{range .Points}}{{if not $.Static}}<a href="/#/run/{{.RunID}}">{{end}}<circle class="point{{if .Change}} change{{end}}" data-run="{{.RunID}}" cx="{{.X}}" cy="{{.Y}}" r="{{if .Change}}5{{else}}3{{end}}"><title>{{.Title}}</title></circle>{{if not $.Static}}</a>{{end}}
{{end}}</svg>
<p class="note">The runs stand in the order they started, evenly spaced: the dates below the chart name the runs above them, and the distances between runs are not time.{{if not .Linked}} {{len .H.Points}} runs: drawn as one line; the runs around each change are points{{if not .Static}} you can open{{end}}.{{end}}</p>
{{end}}
<h{{if .Static}}3{{else}}2{{end}}>Changes in {{.Metric}}</h{{if .Static}}3{{else}}2{{end}}>
{{if .Marks}}<ol class="changes">{{range .Marks}}
<li data-run="{{.RunID}}"><span class="{{if .Worse}}worse{{else}}better{{end}}">{{if .Worse}}▼{{else}}▲{{end}}</span> at {{if $.Static}}run {{.RunID}}{{else}}<a href="/#/run/{{.RunID}}">run {{.RunID}}</a>{{end}}: {{.Line}}<br><span class="why">{{.Why}}</span></li>{{end}}
</ol>{{else if .Detected}}<p class="none">No changes found in {{.Metric}}.</p>{{else}}<p class="none">Changes are looked for in {{range $i, $m := .H.Metrics}}{{if $i}}, {{end}}{{$m}}{{end}}; {{.Metric}} is charted only (fathom history --metric {{.Metric}} looks in it).</p>{{end}}
{{end}}`
