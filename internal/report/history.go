package report

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fathom-lab/fathom/internal/analyze"
	"github.com/fathom-lab/fathom/internal/errkind"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/suggest"
)

// The kinds of model history and regressions render.
const (
	KindHistory     Kind = "series history"   // *History: fathom history SERIES
	KindSeriesList  Kind = "list of series"   // *SeriesList: fathom history
	KindRegressions Kind = "regression check" // *Regressions: fathom regressions
)

// historyFigure is a figure followed over a series: its name (what --metric takes),
// unit, and which way is better.
type historyFigure struct {
	Name         string
	Unit         string
	HigherBetter bool
	of           func(s *measure.Summary) float64
}

// historyMetrics are the figures a series can follow, in display order.
var historyMetrics = []historyFigure{
	{"tps", "tx/s", true, func(s *measure.Summary) float64 { return s.TPS }},
	{"p50", "ms", false, func(s *measure.Summary) float64 { return s.Latency.P50 }},
	{"p95", "ms", false, func(s *measure.Summary) float64 { return s.Latency.P95 }},
	{"p99", "ms", false, func(s *measure.Summary) float64 { return s.Latency.P99 }},
	{"p999", "ms", false, func(s *measure.Summary) float64 { return s.Latency.P999 }},
	{"mean", "ms", false, func(s *measure.Summary) float64 { return s.Latency.Mean }},
	{"errors", "%", false, func(s *measure.Summary) float64 { return s.ErrorRate }},
}

// DefaultHistoryMetrics are the figures whose changes are looked for by default.
var DefaultHistoryMetrics = []string{"tps", "p99", "errors"}

// historyMetric finds a metric by name.
func historyMetric(name string) (historyFigure, bool) {
	for _, m := range historyMetrics {
		if m.Name == name {
			return m, true
		}
	}
	return historyFigure{}, false
}

// CheckHistoryMetrics is a usage error naming the metrics that exist when one of
// names does not.
func CheckHistoryMetrics(names []string) error {
	for _, n := range names {
		if _, ok := historyMetric(n); !ok {
			var all []string
			for _, m := range historyMetrics {
				all = append(all, m.Name)
			}
			return errkind.Usagef("--metric %q%s: use %s", n, suggest.Hint(n, all), orList(all))
		}
	}
	return nil
}

// HistoryPoint is one run of a series with its figures.
type HistoryPoint struct {
	RunID     int64              `json:"run_id"`
	StartedAt time.Time          `json:"started_at"`
	Values    map[string]float64 `json:"values"`
	Run       *store.Run         `json:"-"`
}

// HistoryChange is a change point of one metric: the first run after it, the figures
// either side, and what else changed between that run and the one before.
type HistoryChange struct {
	Metric    string `json:"metric"`
	Unit      string `json:"unit"`
	RunID     int64  `json:"run_id"`      // the first run after the change
	PrevRunID int64  `json:"prev_run_id"` // the run before it
	analyze.Change
	// Worse is true when the move is the bad way for the metric (tps down,
	// latency or errors up).
	Worse bool `json:"worse"`
	// Changed is what differs in the stored provenance of the two runs around the
	// change ("setting synchronous_commit: on → off"); empty when nothing recorded did.
	Changed []string `json:"changed"`
	// Nearby is what changed between other consecutive runs within NearbyRuns of the
	// change ("between runs 10 and 11: setting …"): a change point's position is an
	// estimate, and on a noisy series it can land a run away from its cause.
	Nearby []string `json:"nearby"`
}

// NearbyRuns is how far from a change point provenance changes are listed as nearby.
const NearbyRuns = 2

// History is one series over time with its change points.
type History struct {
	ID      string                `json:"series"`
	Key     seriesKey             `json:"key"`
	Title   string                `json:"title"`
	Metrics []string              `json:"metrics"` // the metrics changes were looked for in
	Points  []HistoryPoint        `json:"points"`
	Changes []HistoryChange       `json:"changes"`
	Options analyze.ChangeOptions `json:"detection"`
	// NotComplete counts the series' runs left out: failed, interrupted or running.
	NotComplete int    `json:"not_complete"`
	Store       string `json:"store,omitempty"`
}

// BuildHistory makes the history of runs (one series, any order) and looks for
// changes in metrics with o. Only complete runs with a summary are points.
func BuildHistory(id string, key seriesKey, runs []*store.Run, metrics []string, o analyze.ChangeOptions) (*History, error) {
	if err := CheckHistoryMetrics(metrics); err != nil {
		return nil, err
	}
	h := &History{ID: id, Key: key, Title: key.String(), Metrics: metrics, Options: o, Changes: []HistoryChange{}}
	sorted := slices.Clone(runs)
	slices.SortFunc(sorted, func(a, b *store.Run) int {
		return cmp.Or(a.StartedAt.Compare(b.StartedAt), cmp.Compare(a.ID, b.ID))
	})
	for _, r := range sorted {
		var s measure.Summary
		if r.Status != "complete" || len(r.Summary) == 0 || json.Unmarshal(r.Summary, &s) != nil {
			h.NotComplete++
			continue
		}
		p := HistoryPoint{RunID: r.ID, StartedAt: r.StartedAt, Values: map[string]float64{}, Run: r}
		for _, m := range historyMetrics {
			p.Values[m.Name] = m.of(&s)
		}
		h.Points = append(h.Points, p)
	}
	// Each metric's search is independent (and seeded): they run side by side.
	found := make([][]analyze.Change, len(metrics))
	var wg sync.WaitGroup
	for mi, name := range metrics {
		xs := make([]float64, len(h.Points))
		for i, p := range h.Points {
			xs[i] = p.Values[name]
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			found[mi] = analyze.ChangePoints(xs, o)
		}()
	}
	wg.Wait()
	for mi, name := range metrics {
		m, _ := historyMetric(name)
		for _, c := range found[mi] {
			before, after := h.Points[c.Index-1], h.Points[c.Index]
			worse := c.After.Median < c.Before.Median
			if !m.HigherBetter {
				worse = c.After.Median > c.Before.Median
			}
			h.Changes = append(h.Changes, HistoryChange{Metric: name, Unit: m.Unit, RunID: after.RunID, PrevRunID: before.RunID,
				Change: c, Worse: worse, Changed: nonNil(provenanceDiff(before.Run, after.Run)), Nearby: nearby(h.Points, c.Index)})
		}
	}
	slices.SortStableFunc(h.Changes, func(a, b HistoryChange) int { return cmp.Compare(a.Index, b.Index) })
	return h, nil
}

// nearby lists provenance changes between consecutive points within NearbyRuns of
// the change at index at, other than the pair around it.
func nearby(ps []HistoryPoint, at int) []string {
	out := []string{}
	for i := max(1, at-NearbyRuns+1); i <= min(len(ps)-1, at+NearbyRuns); i++ {
		if i == at {
			continue
		}
		if d := provenanceDiff(ps[i-1].Run, ps[i].Run); len(d) > 0 {
			out = append(out, fmt.Sprintf("between runs %d and %d: %s", ps[i-1].RunID, ps[i].RunID, strings.Join(d, "; ")))
		}
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// seriesSummary is one series in a list of them.
type seriesSummary struct {
	ID        string    `json:"series"`
	Title     string    `json:"title"`
	Runs      int       `json:"runs"`
	FirstRun  int64     `json:"first_run"`
	LastRun   int64     `json:"last_run"`
	LastStart time.Time `json:"last_started_at"`
}

// seriesList is every series in a store, the most recently run first.
type seriesList struct {
	Series []seriesSummary `json:"series"`
	Store  string          `json:"store,omitempty"`
}

var seriesIDPattern = regexp.MustCompile(`^s[0-9a-f]{10}$`)

// ListSeries groups every stored run into its series.
func ListSeries(ctx context.Context, st store.Store, keyLabels []string) (*seriesList, error) {
	runs, err := st.Runs(ctx, store.RunFilter{})
	if err != nil {
		return nil, errkind.WithKind(errkind.Failed, err)
	}
	byID := map[string]*seriesSummary{}
	l := &seriesList{Series: []seriesSummary{}, Store: st.Path()}
	for i := len(runs) - 1; i >= 0; i-- { // oldest first
		r := &runs[i]
		k := KeyOf(r, keyLabels)
		id := k.ID()
		s := byID[id]
		if s == nil {
			s = &seriesSummary{ID: id, Title: k.String(), FirstRun: r.ID}
			byID[id] = s
		}
		s.Runs++
		s.LastRun, s.LastStart = r.ID, r.StartedAt
	}
	for _, s := range byID {
		l.Series = append(l.Series, *s)
	}
	slices.SortFunc(l.Series, func(a, b seriesSummary) int { return cmp.Compare(b.LastRun, a.LastRun) })
	return l, nil
}

// LoadSeries finds a series' runs by what the user gave: a series name (a run's
// --series), a series id (s and 10 hex digits, from `fathom history`), or a run (an
// id or last), meaning that run's series.
func LoadSeries(ctx context.Context, st store.Store, arg string, keyLabels []string) (string, seriesKey, []*store.Run, error) {
	var key seriesKey
	var candidates []store.Run
	var err error
	switch {
	case seriesIDPattern.MatchString(arg):
		candidates, err = st.Runs(ctx, store.RunFilter{})
		if err != nil {
			return "", key, nil, errkind.WithKind(errkind.Failed, err)
		}
		for i := range candidates {
			if k := KeyOf(&candidates[i], keyLabels); k.ID() == arg {
				key = k
				break
			}
		}
	default:
		if id, perr := parseRunArg(ctx, st, arg); perr == nil {
			r, rerr := st.Run(ctx, id)
			if rerr != nil {
				if errors.Is(rerr, store.ErrNotFound) {
					return "", key, nil, errkind.Usagef("%v: see `fathom runs`", rerr)
				}
				return "", key, nil, errkind.WithKind(errkind.Failed, rerr)
			}
			key = KeyOf(r, keyLabels)
			f := store.RunFilter{Workload: r.Workload}
			if key.Name != "" {
				f = store.RunFilter{Labels: map[string]string{SeriesLabel: key.Name}}
			}
			candidates, err = st.Runs(ctx, f)
		} else {
			key = seriesKey{Name: arg}
			candidates, err = st.Runs(ctx, store.RunFilter{Labels: map[string]string{SeriesLabel: arg}})
		}
		if err != nil {
			return "", key, nil, errkind.WithKind(errkind.Failed, err)
		}
	}
	id := key.ID()
	var runs []*store.Run
	for i := range candidates {
		if KeyOf(&candidates[i], keyLabels).ID() == id {
			runs = append(runs, &candidates[i])
		}
	}
	if len(runs) == 0 {
		return "", key, nil, errkind.Usagef("no series %q in %s%s: give a series from `fathom history`, a run id or last", arg, st.Path(), seriesHint(ctx, st, arg))
	}
	return id, key, runs, nil
}

// Regressions answers, for the newest runs of a series, whether they regressed: a
// change for the worse whose first run is one of the newest.
type Regressions struct {
	History *History `json:"history"`
	// Newest is how many of the newest runs were checked.
	Newest int `json:"newest"`
	// NewestRuns are their ids, oldest first.
	NewestRuns []int64 `json:"newest_runs"`
	// Found are the changes for the worse among them; Better those for the better.
	Found  []HistoryChange `json:"regressions"`
	Better []HistoryChange `json:"improvements"`
	// Note says what a reader must know about the answer (e.g. too few runs after a
	// change to see it yet).
	Notes []string `json:"notes,omitempty"`
}

// CheckRegressions looks at the newest n runs of h.
func CheckRegressions(h *History, n int) *Regressions {
	r := &Regressions{History: h, Newest: n, NewestRuns: []int64{}, Found: []HistoryChange{}, Better: []HistoryChange{}}
	if n > len(h.Points) {
		n = len(h.Points)
	}
	first := len(h.Points) - n
	for _, p := range h.Points[first:] {
		r.NewestRuns = append(r.NewestRuns, p.RunID)
	}
	for _, c := range h.Changes {
		if c.Index < first {
			continue
		}
		if c.Worse {
			r.Found = append(r.Found, c)
		} else {
			r.Better = append(r.Better, c)
		}
	}
	minSize := h.Options.MinSize
	if minSize < 2 {
		minSize = 3
	}
	if len(h.Points) < 2*minSize {
		r.Notes = append(r.Notes, fmt.Sprintf("the series has %d complete runs: a change can be seen from %d on (%d either side)", len(h.Points), 2*minSize, minSize))
	} else {
		r.Notes = append(r.Notes, fmt.Sprintf("a change is seen once %d runs follow it: a regression in only the last %d runs is not seen yet", minSize, minSize-1))
	}
	return r
}

// Regressed reports whether any metric regressed in the newest runs.
func (r *Regressions) Regressed() bool { return len(r.Found) > 0 }

// fmtValue writes a figure with the precision its size needs.
func fmtValue(v float64) string {
	switch a := math.Abs(v); {
	case math.IsNaN(v):
		return "–"
	case a >= 10000:
		return fmt.Sprintf("%.0f", v)
	case a >= 100:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3g", v)
	}
}

// fmtRelative writes a relative change as a signed percent.
func fmtRelative(r float64) string {
	if math.IsInf(r, 0) {
		return "from 0"
	}
	return fmt.Sprintf("%+.1f%%", r*100)
}

// changeLine is one change in a line: "tps 512 [505, 520] → 1430 [1400, 1460] tx/s (+179.3%), p 0.005, better".
func changeLine(c HistoryChange) string {
	side := func(s analyze.Summary) string {
		if s.HasCI {
			return fmt.Sprintf("%s [%s, %s]", fmtValue(s.Median), fmtValue(s.Lo), fmtValue(s.Hi))
		}
		return fmtValue(s.Median) + " (no CI: too few runs)"
	}
	way := "better"
	if c.Worse {
		way = "worse"
	}
	return fmt.Sprintf("%s %s → %s %s (%s), p %.3g, %s", c.Metric, side(c.Before), side(c.After), c.Unit, fmtRelative(c.Relative), c.PValue, way)
}

// explainLine says what changed with it, and near it.
func explainLine(c HistoryChange) string {
	line := "what changed: " + strings.Join(c.Changed, "; ")
	if len(c.Changed) == 0 {
		line = fmt.Sprintf("nothing recorded differs between runs %d and %d (settings, versions, host, options, labels)", c.PrevRunID, c.RunID)
	}
	if len(c.Nearby) > 0 {
		line += "; nearby, " + strings.Join(c.Nearby, "; ")
	}
	return line
}

// seriesHint is " (did you mean NAME?)" for the series name nearest to a misspelt one
// among the store's runs, or "".
func seriesHint(ctx context.Context, st store.RunStore, arg string) string {
	runs, err := st.Runs(ctx, store.RunFilter{})
	if err != nil {
		return ""
	}
	var names []string
	for _, r := range runs {
		if n := r.Labels[SeriesLabel]; n != "" && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return suggest.Hint(arg, names)
}
