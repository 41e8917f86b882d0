package serve

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"

	"github.com/fathom-lab/fathom/internal/chart"
	"github.com/fathom-lab/fathom/internal/report"
	"github.com/fathom-lab/fathom/internal/store"
)

// maxWindowPoints bounds the points a zoomed chart may ask for.
const maxWindowPoints = 5000

// windowPage is what GET /api/runs/{id}/window answers: the run's time charts over
// [from, to] seconds since its start, at the resolution the zoomed window needs.
type windowPage struct {
	From      float64 `json:"from"`
	To        float64 `json:"to"`
	Intervals int     `json:"intervals"` // intervals in the window
	Group     int     `json:"group"`     // intervals (or samples) merged per point
	// Time and Metrics are the run page's time charts (same ids), drawn from the
	// window's intervals and samples only.
	Time    []chart.Chart `json:"time"`
	Metrics []chart.Group `json:"metrics,omitempty"`
}

func (s *server) apiWindow(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	from, err1 := strconv.ParseFloat(q.Get("from"), 64)
	to, err2 := strconv.ParseFloat(q.Get("to"), 64)
	if err1 != nil || err2 != nil || !(to > from) || math.IsInf(from, 0) || math.IsInf(to, 0) {
		apiError(w, http.StatusBadRequest, "window: give from and to in seconds since the run's start, from < to (e.g. ?from=60&to=120)")
		return
	}
	points := report.DefaultMaxPoints
	if p := q.Get("points"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 2 || n > maxWindowPoints {
			apiError(w, http.StatusBadRequest, fmt.Sprintf("window: points must be a whole number from 2 to %d", maxWindowPoints))
			return
		}
		points = n
	}
	page, err := s.buildWindow(r.Context(), id, from, to, points)
	if err != nil {
		storeError(w, err)
		return
	}
	writeJSON(w, page)
}

// buildWindow reads the intervals that overlap [from, to] and the samples within it,
// and draws them as the run page does, merging at most as many intervals per point
// as it takes to stay within points (one: every stored interval as it is).
func (s *server) buildWindow(ctx context.Context, id int64, from, to float64, points int) (*windowPage, error) {
	run, err := s.o.Store.Run(ctx, id)
	if err != nil {
		return nil, err
	}
	ivs, err := s.o.Store.EncodedIntervals(ctx, run)
	if err != nil {
		return nil, err
	}
	var in []store.EncodedInterval
	for _, iv := range ivs {
		if iv.End.Seconds() > from && iv.Start.Seconds() < to {
			in = append(in, iv)
		}
	}
	d, err := report.NewRunData(run, in, points)
	if err != nil {
		return nil, err
	}
	if err := report.LoadSamples(ctx, s.o.Store, s.o.Figures, []*report.RunData{d}, false); err != nil {
		return nil, err
	}
	samples := 0
	for i := range d.Metrics {
		m := &d.Metrics[i]
		var kept []store.MetricPoint
		for _, p := range m.Points {
			if at := p.At.Seconds(); at >= from && at <= to {
				kept = append(kept, p)
			}
		}
		m.Points = kept
		samples = max(samples, len(kept))
	}
	if len(in) == 0 && samples > points { // a watch session: samples, no intervals
		d.Group = (samples + points - 1) / points
	}
	rep, err := report.New([]*report.RunData{d}, report.Options{})
	if err != nil {
		return nil, err
	}
	f := rep.Figures(d)
	page := &windowPage{From: from, To: to, Intervals: len(in), Group: d.Group, Time: f.Time, Metrics: f.Metrics}
	if page.Time == nil {
		page.Time = []chart.Chart{}
	}
	for i := range page.Time {
		page.Time[i].XRange = chart.Fixed(from, to)
	}
	for _, g := range page.Metrics {
		for i := range g.Charts {
			g.Charts[i].XRange = chart.Fixed(from, to)
		}
	}
	return page, nil
}
