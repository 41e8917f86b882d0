package chart

import (
	"encoding/json"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestNinesLabel(t *testing.T) {
	for _, c := range []struct {
		x    float64
		want string
	}{{0, "0%"}, {1, "90%"}, {2, "99%"}, {3, "99.9%"}, {4, "99.99%"}, {7, "99.99999%"}, {1.5, "96.8377%"}} {
		if got := ninesLabel(c.x); got != c.want {
			t.Errorf("ninesLabel(%v) = %q, want %q", c.x, got, c.want)
		}
	}
}

func TestFloatsJSON(t *testing.T) {
	b, err := json.Marshal(Series{Name: "a", X: []float64{1, 2, 3}, Y: []float64{0.5, math.NaN(), math.Inf(1)}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `"x":[1,2,3],"y":[0.5,null,null]`; !strings.Contains(string(b), want) {
		t.Fatalf("%s lacks %s", b, want)
	}
	var s Series
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Y) != 3 || s.Y[0] != 0.5 || !math.IsNaN(s.Y[1]) || !math.IsNaN(s.Y[2]) {
		t.Errorf("read back %v", s.Y)
	}
}

func TestResolve(t *testing.T) {
	c := Chart{Series: []Series{{Name: "a", Style: 1}, {Name: "b", Style: -1}, {Name: "c", Style: 3, Colour: "#123456"}},
		Panels: []Chart{{Series: []Series{{Style: 2}}}}}
	c.Resolve()
	if c.Kind != kindLine || c.XScale != ScaleLinear || c.YScale != ScaleLinear || c.XUnit.Div != 1 || c.YUnit.Div != 1 {
		t.Errorf("defaults: %+v", c)
	}
	if s := c.Series[0]; s.Colour != styles[1].Colour || s.Dash != styles[1].Dash {
		t.Errorf("series 0 styled %q %q", s.Colour, s.Dash)
	}
	if s := c.Series[1]; s.Style != 1 || s.Colour != styles[1].Colour {
		t.Errorf("a series styled by position: %+v", s)
	}
	if s := c.Series[2]; s.Colour != "#123456" || s.Dash != "" {
		t.Errorf("a series with its own colour was restyled: %+v", s)
	}
	if p := c.Panels[0]; p.Kind != kindLine || p.Series[0].Colour != styles[2].Colour {
		t.Errorf("panel not resolved: %+v", p)
	}
}

var yAttr = regexp.MustCompile(`<text class="tick y" x="[^"]*" y="([^"]*)">([^<]*)</text>`)

// A log y axis has ticks at powers of ten, evenly spaced, and leaves out values that
// are not above zero.
func TestSVGLogScale(t *testing.T) {
	c := Chart{ID: "lat", Title: "latency", YScale: ScaleLog, YUnit: Unit{Suffix: "ms", Div: 1},
		Series: []Series{{Name: "p99", X: []float64{0, 1, 2, 3}, Y: []float64{1.5, 0, 120, 3000}}}}
	svg := c.SVG()
	ticks := yAttr.FindAllStringSubmatch(svg, -1)
	var labels []string
	var ys []float64
	for _, m := range ticks {
		labels = append(labels, m[2])
		y, _ := strconv.ParseFloat(m[1], 64)
		ys = append(ys, y)
	}
	if got := strings.Join(labels, ","); got != "1,10,100,1000,10000" {
		t.Fatalf("log ticks %s", got)
	}
	for i := 2; i < len(ys); i++ {
		if d0, d1 := ys[i-1]-ys[i-2], ys[i]-ys[i-1]; math.Abs(d0-d1) > 0.11 {
			t.Errorf("decades not evenly spaced: %v", ys)
		}
	}
	// Three points drawn: the zero is a gap, which breaks the line.
	if n := strings.Count(svg, "M"); !strings.Contains(svg, `<path class="series" d="M`) || n < 2 {
		t.Errorf("line: %s", svg)
	}
	d := regexp.MustCompile(`<path class="series" d="([^"]*)"`).FindStringSubmatch(svg)[1]
	if strings.Count(d, "M") != 2 || strings.Count(d, "L") != 1 {
		t.Errorf("the zero should break the line into a point and a segment: %s", d)
	}
}

func TestSVGKinds(t *testing.T) {
	bars := Chart{Kind: KindBars, ID: "b", Title: "bars", Categories: []string{"1", "2", "4"},
		Series: []Series{{Name: "a", Y: []float64{1, 2, 3}, Lo: []float64{0.5, 1.5, 2.5}, Hi: []float64{1.5, 2.5, 3.5}}, {Name: "b", Y: []float64{2, math.NaN(), 4}}}}
	svg := bars.SVG()
	if n := strings.Count(svg, `<rect class="bar s`); n != 5 {
		t.Errorf("%d bars, want 5 (one NaN)", n)
	}
	if n := strings.Count(svg, `class="whisker"`); n != 3 {
		t.Errorf("%d whiskers, want 3", n)
	}
	box := Chart{Kind: KindBox, ID: "x", Title: "box", Boxes: []Box{{Label: "a", Min: 1, Q1: 2, Median: 3, Q3: 4, Max: 5, Points: []float64{1, 3, 5}},
		{Label: "b", Median: math.NaN()}}}
	svg = box.SVG()
	if n := strings.Count(svg, `<g class="box">`); n != 1 {
		t.Errorf("%d boxes, want 1 (one without data)", n)
	}
	if n := strings.Count(svg, `class="pt"`); n != 3 {
		t.Errorf("%d points", n)
	}
	m := Chart{Kind: KindMultiples, Panels: []Chart{{ID: "p1", Title: "one"}, {ID: "p2", Title: "two"}}}
	if n := strings.Count(m.SVG(), "<svg "); n != 2 {
		t.Errorf("small multiples drew %d charts", n)
	}
}

// A nines axis up to seven nines on a default-width chart labels no two ticks so
// close that their labels run into each other (seen: "99.9999%99.99999%" at the right
// end of a report's percentile chart), keeps a grid line for every nine, and labels 0%.
func TestNinesLabelsApart(t *testing.T) {
	c := Chart{XScale: ScaleNines, Series: []Series{{Name: "p", X: []float64{0, 90, 99, 99.9, 99.99, 99.999, 99.9999, 99.99999}, Y: []float64{1, 2, 3, 4, 5, 6, 7, 8}}}}
	c.Resolve()
	svg := c.SVG()
	ticks := regexp.MustCompile(`<text class="tick x( end)?" x="([0-9.]+)" y="[0-9.]+">([^<]*)</text>`).FindAllStringSubmatch(svg, -1)
	if len(ticks) < 3 || ticks[0][3] != "0%" {
		t.Fatalf("x tick labels %v", ticks)
	}
	// Each label's extent: centred on its tick, or ending at it (class "end").
	extent := func(m []string) (float64, float64) {
		x, _ := strconv.ParseFloat(m[2], 64)
		w := labelCharWidth * float64(len(m[3]))
		if m[1] != "" {
			return x - w, x
		}
		return x - w/2, x + w/2
	}
	for i := 1; i < len(ticks); i++ {
		_, r := extent(ticks[i-1])
		l, _ := extent(ticks[i])
		if l < r+2 {
			t.Errorf("labels %q (ending at %.1f) and %q (starting at %.1f) overlap", ticks[i-1][3], r, ticks[i][3], l)
		}
	}
	if grid := strings.Count(svg, `<line class="grid"`); grid < 8 {
		t.Errorf("%d grid lines for 8 nines and the y ticks", grid)
	}
}

// The y axis of a line chart ends at a round tick above the highest value, so that
// its point sits inside the frame (seen: a 1,230 tps spike drawn on the frame's top
// edge, the axis ending at the value with its last tick at 1,000).
func TestSVGHeadroom(t *testing.T) {
	c := Chart{ID: "t", Title: "tps", YZero: true, Series: []Series{{Name: "a", X: []float64{0, 1, 2}, Y: []float64{200, 1230, 400}, Points: true}}}
	svg := c.SVG()
	var labels []string
	for _, m := range yAttr.FindAllStringSubmatch(svg, -1) {
		labels = append(labels, m[2])
	}
	if got := strings.Join(labels, ","); got != "0,250,500,750,1000,1250,1500" {
		t.Errorf("y ticks %s, want 0 … 1500 (clear above the highest value, 1230)", got)
	}
	frame := regexp.MustCompile(`<rect class="frame" x="[^"]*" y="([^"]*)"`).FindStringSubmatch(svg)
	top, _ := strconv.ParseFloat(frame[1], 64)
	for _, m := range regexp.MustCompile(`<circle cx="[^"]*" cy="([^"]*)" r="3"`).FindAllStringSubmatch(svg, -1) {
		if y, _ := strconv.ParseFloat(m[1], 64); y-3 < top {
			t.Errorf("a point at y=%s reaches above the frame's top (%s)", m[1], frame[1])
		}
	}
}

// Small multiples share one y scale (seen in the held-out rerun: a panel of runs
// up to 1,109 tps ended at 1,250 beside one up to 1,226 that ended at 1,500, the
// same height standing for different throughput).
func TestMultiplesShareY(t *testing.T) {
	m := Chart{Kind: KindMultiples, Panels: []Chart{
		{ID: "p1", Title: "on", YZero: true, Series: []Series{{Name: "a", X: []float64{1, 3}, Y: []float64{1226, 20}}}},
		{ID: "p2", Title: "off", YZero: true, Series: []Series{{Name: "a", X: []float64{2, 4}, Y: []float64{1109, 30}}}},
	}}
	svg := m.SVG()
	var tops []string
	for _, part := range strings.Split(svg, "<svg ")[1:] {
		ticks := yAttr.FindAllStringSubmatch(part, -1)
		if len(ticks) == 0 {
			t.Fatalf("a panel without y ticks: %s", part)
		}
		tops = append(tops, ticks[len(ticks)-1][2])
	}
	if len(tops) != 2 || tops[0] != tops[1] {
		t.Errorf("the panels' y axes end at %v, want one top", tops)
	}
}

// Markers at the x range's ends are drawn whole inside the frame (seen in the held-out
// rerun of the pgbench sweep: the scaling curve's first and last client counts sat
// half over the frame's sides).
func TestSVGMarkersInsideSides(t *testing.T) {
	c := Chart{ID: "t", Title: "tps", YZero: true, Series: []Series{{Name: "a", X: []float64{16, 32, 48, 96}, Y: []float64{500, 900, 1000, 950}, Points: true}}}
	svg := c.SVG()
	frame := regexp.MustCompile(`<rect class="frame" x="([^"]*)" y="[^"]*" width="([^"]*)"`).FindStringSubmatch(svg)
	left, _ := strconv.ParseFloat(frame[1], 64)
	width, _ := strconv.ParseFloat(frame[2], 64)
	circles := regexp.MustCompile(`<circle cx="([^"]*)" cy="[^"]*" r="3"`).FindAllStringSubmatch(svg, -1)
	if len(circles) != 4 {
		t.Fatalf("%d markers drawn, want 4", len(circles))
	}
	for _, m := range circles {
		if x, _ := strconv.ParseFloat(m[1], 64); x-3 < left || x+3 > left+width {
			t.Errorf("a marker at x=%s reaches over the frame's sides (%s to %s)", m[1], f1(left), f1(left+width))
		}
	}
}
