package serve

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fathom-lab/fathom/internal/analyze"
	"github.com/fathom-lab/fathom/internal/chart"
	"github.com/fathom-lab/fathom/internal/fault"
	"github.com/fathom-lab/fathom/internal/report"
	"github.com/fathom-lab/fathom/internal/store"
)

// The history pages: one series over time (fathom history in a browser), drawn on
// the server as SVG so that 10,000 runs chart without a script:
//
//	GET /history/{series}           the page (?metric=tps|p50|…; the changes of every default metric)
//	GET /history/run/{id}           the page of a run's series (linked from the run page)
//	GET /api/history/{series}       the History as JSON

func (s *Server) historyRoutes() {
	s.mux.HandleFunc("GET /history/{series}", s.historyPage)
	s.mux.HandleFunc("GET /history/run/{id}", s.historyOfRun)
	s.mux.HandleFunc("GET /api/history/{series}", s.apiHistory)
}

// historyCache keeps the histories built lately: change detection over a long
// series takes a while, and a page shown again with no new run in its series is the
// same page. An entry is used while its series is as it was when built (no run of it
// stored since, its unfinished runs still running: stillCurrent), for at most
// historyTTL (a label edited elsewhere can move a run to another series). serve's
// change watcher (changes.go) puts the history of each series a run joins here as the
// run arrives, so the page after a run is served from the cache too.
type historyCache struct {
	mu      sync.Mutex
	entries map[string]historyEntry
}

type historyEntry struct {
	latest  int64 // the store's newest run when the entry was built
	built   time.Time
	h       *report.History
	pending []int64 // the series' runs that were not finished then
}

const (
	historyTTL     = 5 * time.Minute
	historyEntries = 32
	// historyGap: when more runs than this were stored since an entry was built,
	// it is rebuilt rather than each new run looked at.
	historyGap = 64
)

func (c *historyCache) get(arg string) (historyEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[arg]
	return e, ok
}

func (c *historyCache) put(arg string, e historyEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= historyEntries {
		c.entries = map[string]historyEntry{}
	}
	c.entries[arg] = e
}

// clear drops every entry (a run was deleted or relabelled).
func (c *historyCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries = nil
}

// loadHistory builds a series' history as `fathom history` does with its defaults,
// or takes it from the cache while it is current.
func (s *Server) loadHistory(r *http.Request, arg string) (*report.History, error) {
	ctx := r.Context()
	latest, err := s.o.Store.LatestRunID(ctx)
	if err != nil {
		return nil, err
	}
	if e, ok := s.hist.get(arg); ok && time.Since(e.built) < historyTTL && s.stillCurrent(ctx, e, latest) {
		return e.h, nil
	}
	e, err := s.buildHistory(ctx, arg, latest)
	if err != nil {
		return nil, err
	}
	return e.h, nil
}

// buildHistory loads and analyses a series and keeps it in the cache; latest is the
// store's newest run, read before the series' runs.
func (s *Server) buildHistory(ctx context.Context, arg string, latest int64) (historyEntry, error) {
	id, key, runs, err := report.LoadSeries(ctx, s.o.Store, arg, nil)
	if err != nil {
		return historyEntry{}, err
	}
	h, err := report.BuildHistory(id, key, runs, report.DefaultHistoryMetrics, analyze.ChangeOptions{})
	if err != nil {
		return historyEntry{}, err
	}
	e := historyEntry{latest: latest, built: time.Now(), h: h}
	for _, r := range runs {
		if r.Status == "running" {
			e.pending = append(e.pending, r.ID)
		}
	}
	s.hist.put(arg, e)
	return e, nil
}

// stillCurrent reports whether e's series is as it was when e was built: each run
// stored since (up to historyGap of them) belongs to another series, and the runs
// that were unfinished then are still running. Each is one read of one run.
func (s *Server) stillCurrent(ctx context.Context, e historyEntry, latest int64) bool {
	if latest-e.latest > historyGap {
		return false
	}
	for id := e.latest + 1; id <= latest; id++ {
		r, err := s.o.Store.Run(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil || report.KeyOf(r, nil).ID() == e.h.ID {
			return false
		}
	}
	for _, id := range e.pending {
		if r, err := s.o.Store.Run(ctx, id); err != nil || r.Status != "running" {
			return false
		}
	}
	return true
}

func historyError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	if fault.KindOf(err) == fault.Usage {
		code = http.StatusNotFound
	}
	http.Error(w, err.Error(), code)
}

func (s *Server) apiHistory(w http.ResponseWriter, r *http.Request) {
	h, err := s.loadHistory(r, r.PathValue("series"))
	if err != nil {
		historyError(w, err)
		return
	}
	writeJSON(w, h)
}

func (s *Server) historyOfRun(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		http.Error(w, "not a run id", http.StatusBadRequest)
		return
	}
	run, err := s.o.Store.Run(r.Context(), id)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	http.Redirect(w, r, "/history/"+url.PathEscape(report.KeyOf(run, nil).ID()), http.StatusFound)
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
	H        *report.History
	Metric   string
	Unit     string
	Metrics  []string
	Points   []historyPoint
	Polyline string
	Linked   bool
	Marks    []historyMark
	YTicks   []historyTick
	XTicks   []historyTick
	Table    []report.HistoryPoint
	Older    int
	W, H2    float64
	Detected bool // changes were looked for in this metric
}

func (s *Server) historyPage(w http.ResponseWriter, r *http.Request) {
	h, err := s.loadHistory(r, r.PathValue("series"))
	if err != nil {
		historyError(w, err)
		return
	}
	metric := r.URL.Query().Get("metric")
	if metric == "" {
		metric = "tps"
	}
	v := historyView{H: h, Metric: metric, W: chartW, H2: chartH}
	for _, m := range report.HistoryMetrics {
		v.Metrics = append(v.Metrics, m.Name)
		if m.Name == metric {
			v.Unit = m.Unit
		}
	}
	if v.Unit == "" {
		http.Error(w, fmt.Sprintf("metric %q: use one of %s", metric, strings.Join(v.Metrics, ", ")), http.StatusBadRequest)
		return
	}
	for _, m := range h.Metrics {
		v.Detected = v.Detected || m == metric
	}
	v.layout()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'self'")
	if err := historyTmpl.Execute(w, &v); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
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
		if val == 0 {
			val = 0 // not -0
		}
		v.YTicks = append(v.YTicks, historyTick{Pos: y(val), Label: strconv.FormatFloat(val, 'f', -1, 64)})
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
	first := max(0, n-tableRuns)
	v.Older = first
	for i := n - 1; i >= first; i-- {
		v.Table = append(v.Table, ps[i])
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

func changeText(c report.HistoryChange) string {
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

func whyText(c report.HistoryChange) string {
	why := "What changed: " + strings.Join(c.Changed, "; ")
	if len(c.Changed) == 0 {
		why = fmt.Sprintf("Nothing recorded differs between runs %d and %d (settings, versions, host, options, labels).", c.PrevRunID, c.RunID)
	}
	if len(c.Nearby) > 0 {
		why += " Nearby: " + strings.Join(c.Nearby, "; ")
	}
	return why
}

var historyTmpl = template.Must(template.New("history").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>fathom · history {{.H.ID}}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/ui/app.css">
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
<header><a href="/#/runs">fathom</a> · history</header>
<main id="history">
<h1>Series <code>{{.H.ID}}</code></h1>
<p class="title">{{.H.Title}}</p>
<p class="count">{{len .H.Points}} complete runs{{if .H.NotComplete}} ({{.H.NotComplete}} more not complete: left out){{end}}.
Changes looked for in {{range $i, $m := .H.Metrics}}{{if $i}}, {{end}}{{$m}}{{end}} by E-Divisive Means with a permutation test
(false-positive level 0.01 per test, minimum change 5%, at least 3 runs a side).</p>
<nav class="metrics">{{range .Metrics}}<a href="?metric={{.}}"{{if eq . $.Metric}} aria-current="page"{{end}}>{{.}}</a> {{end}}</nav>
{{if .H.Points}}
<svg class="history" id="chart" viewBox="0 0 {{.W}} {{.H2}}" role="img" aria-label="{{.Metric}} over {{len .H.Points}} runs">
{{range .YTicks}}<line class="axis" x1="70" x2="1160" y1="{{.Pos}}" y2="{{.Pos}}" stroke-opacity="0.2"/><text x="64" y="{{.Pos}}" text-anchor="end" dominant-baseline="middle">{{.Label}}</text>
{{end}}{{range .XTicks}}<text x="{{.Pos}}" y="{{$.H2}}" dy="-12" text-anchor="middle">{{.Label}}</text>
{{end}}<text x="8" y="14">{{.Metric}} ({{.Unit}})</text>
<polyline class="line" points="{{.Polyline}}"/>
{{range .Marks}}<line class="mark{{if not .Worse}} better{{end}}" data-run="{{.RunID}}" x1="{{.X}}" x2="{{.X}}" y1="34" y2="320"><title>{{.Line}} {{.Why}}</title></line><text x="{{.X}}" y="30" dx="4">{{.N}}</text>
{{end}}{{range .Points}}<a href="/#/run/{{.RunID}}"><circle class="point{{if .Change}} change{{end}}" data-run="{{.RunID}}" cx="{{.X}}" cy="{{.Y}}" r="{{if .Change}}5{{else}}3{{end}}"><title>{{.Title}}</title></circle></a>
{{end}}</svg>
{{if not .Linked}}<p class="note">{{len .H.Points}} runs: drawn as one line; the runs around each change are points you can open.</p>{{end}}
{{end}}
<h2>Changes in {{.Metric}}</h2>
{{if .Marks}}<ol class="changes">{{range .Marks}}
<li data-run="{{.RunID}}"><span class="{{if .Worse}}worse{{else}}better{{end}}">{{if .Worse}}▼{{else}}▲{{end}}</span> at <a href="/#/run/{{.RunID}}">run {{.RunID}}</a>: {{.Line}}<br><span class="why">{{.Why}}</span></li>{{end}}
</ol>{{else if .Detected}}<p class="none">No changes found in {{.Metric}}.</p>{{else}}<p class="none">Changes are looked for in {{range $i, $m := .H.Metrics}}{{if $i}}, {{end}}{{$m}}{{end}}; {{.Metric}} is charted only (fathom history --metric {{.Metric}} looks in it).</p>{{end}}
<h2>Runs{{if .Older}} (the newest {{len .Table}}; {{.Older}} older){{end}}</h2>
<table id="history-runs"><thead><tr><th>run</th><th>started (UTC)</th>{{range .Metrics}}<th>{{.}}</th>{{end}}</tr></thead><tbody>
{{range .Table}}{{$p := .}}<tr><td class="num"><a href="/#/run/{{.RunID}}">{{.RunID}}</a></td><td>{{.StartedAt.UTC.Format "2006-01-02 15:04:05"}}</td>{{range $.Metrics}}<td class="num">{{index $p.Values .}}</td>{{end}}</tr>
{{end}}</tbody></table>
<p><a href="/api/history/{{.H.ID}}">JSON</a></p>
</main></body></html>
`))
