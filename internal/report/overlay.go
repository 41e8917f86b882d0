package report

import (
	"fmt"

	"github.com/fathom-lab/fathom/internal/chart"
)

// Overlays draws every run of both sides on one time axis (seconds since each run's
// start): throughput and p99 latency, side A solid, side B dashed. serve's compare
// page draws these.
func (c *comparison) Overlays() []chart.Chart {
	tps := chart.Chart{ID: "compare-tps", Title: "Throughput over time", XLabel: "time since start (s)", YLabel: "transactions per second", YZero: true}
	p99 := chart.Chart{ID: "compare-p99", Title: "p99 latency over time", XLabel: "time since start (s)", YLabel: "latency", YZero: true}
	var tv, lv []float64
	for si, side := range []*Side{&c.A, &c.B} {
		for _, d := range side.Runs {
			name := fmt.Sprintf("%s: run %d", "AB"[si:si+1], d.Run.ID)
			var x, y1, y2 []float64
			for _, p := range d.Points {
				x = append(x, (p.Start+p.End)/2)
				y1 = append(y1, p.TPS)
				y2 = append(y2, p.P99)
			}
			tv, lv = append(tv, y1...), append(lv, y2...)
			// The run's colour from the style cycle; side A solid, side B dashed.
			st := len(tps.Series)
			colour, dash := chart.StyleOf(st).Colour, ""
			if si == 1 {
				dash = "6 3"
			}
			ts := chart.Series{Name: name, X: x, Y: y1, Style: st, Colour: colour, Dash: dash}
			ls := chart.Series{Name: name, X: x, Y: y2, Style: st, Colour: colour, Dash: dash}
			tps.Series, p99.Series = append(tps.Series, ts), append(p99.Series, ls)
		}
	}
	tps.YUnit = chart.Unit(unitFor(kindCount, tv...))
	p99.YUnit = chart.Unit(unitFor(kindMillis, lv...))
	tps.Resolve()
	p99.Resolve()
	return []chart.Chart{tps, p99}
}
