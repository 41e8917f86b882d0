package charttest

import (
	"math"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/chart"
)

// near reports whether got is want within what the drawing's rounding (a tenth of a
// pixel, on the mark and on the tick labels' positions) allows.
func near(ax *axis, p, got, want float64) bool {
	return math.Abs(got-want) <= 3*ax.resolution(p)+1e-9
}

// The numbers read back from a drawn chart are the data it was given: lines (linear
// and log y, a nines x axis, gaps), bars with whiskers, and boxes.
func TestReadBack(t *testing.T) {
	lines := []*chart.Chart{
		{ID: "lin", Title: "t", Series: []chart.Series{
			{Name: "a", X: chart.Floats{0.5, 1.5, 2.5, 3.5, 4.5}, Y: chart.Floats{300, 301.5, math.NaN(), 120, 299}, Points: true},
			{Name: "b", X: chart.Floats{0.5, 1.5, 2.5, 3.5, 4.5}, Y: chart.Floats{10, 20, 30, 40, 55}},
		}, HLines: []chart.Ref{{At: 250, Label: "slo"}}, Bands: []chart.Band{{X0: 0, X1: 1, Kind: "warmup", Label: "w"}}},
		{ID: "log", Title: "t", YScale: chart.ScaleLog, YUnit: chart.Unit{Suffix: "ms", Div: 1e6}, Series: []chart.Series{
			{Name: "p", X: chart.Floats{1, 2, 3, 4}, Y: chart.Floats{0.8e6, 3e6, 47e6, 120e6}},
		}},
		{ID: "nines", Title: "t", XScale: chart.ScaleNines, Series: []chart.Series{
			{Name: "q", X: chart.Floats{0, 50, 90, 99, 99.9}, Y: chart.Floats{1, 2, 4, 9, 30}, NoLine: true},
		}},
	}
	for _, c := range lines {
		r, err := parse(c.SVG())
		if err != nil {
			t.Fatal(err)
		}
		var got [][][2]float64
		for _, m := range r.Marks {
			if m.Tag == "path" && m.Class == "series" {
				got = append(got, points(m.Attr["d"]))
			}
		}
		var markers [][2]float64
		for _, m := range r.Marks {
			if m.Group == "points" {
				if x, y, ok := markerCentre(m); ok {
					markers = append(markers, [2]float64{x, y})
				}
			}
		}
		k, mk := 0, 0
		for _, s := range c.Series {
			check := func(what string, ps [][2]float64) {
				j := 0
				for i := range s.X {
					if math.IsNaN(s.Y[i]) {
						continue
					}
					for j < len(ps) && math.IsNaN(ps[j][0]) {
						j++
					}
					if j >= len(ps) {
						t.Fatalf("%s %s %s: %d points read back, fewer than given", c.ID, s.Name, what, j)
					}
					x, _ := r.X.value(ps[j][0])
					y, _ := r.Y.value(ps[j][1])
					wantY := s.Y[i] / c.YUnit.Div
					if c.YUnit.Div == 0 {
						wantY = s.Y[i]
					}
					xok := near(&r.X, ps[j][0], x, s.X[i]) || c.XScale == chart.ScaleNines && math.Abs(x-s.X[i]) <= 0.02*(100-s.X[i])+1e-9
					yok := near(&r.Y, ps[j][1], y, wantY) || r.Y.Log && math.Abs(y/wantY-1) < 0.01
					if !xok || !yok {
						t.Errorf("%s %s %s point %d: read back %v,%v, drawn from %v,%v", c.ID, s.Name, what, i, x, y, s.X[i], wantY)
					}
					j++
				}
			}
			if !s.NoLine {
				check("line", got[k])
				k++
			}
			if s.Points || s.NoLine {
				n := 0
				for _, y := range s.Y {
					if !math.IsNaN(y) {
						n++
					}
				}
				check("markers", markers[mk:mk+n])
				mk += n
			}
		}
		if c.ID == "lin" {
			out := r.Numbers("")
			for _, want := range []string{"hline: y 250", `band warmup "w": x 0–1.000`, " | 3.500,120"} {
				if !strings.Contains(out, want) {
					t.Errorf("lin: numbers lack %q:\n%s", want, out)
				}
			}
		}
	}

	bars := &chart.Chart{ID: "bars", Kind: chart.KindBars, Title: "t", Categories: []string{"8", "16", "32"}, Series: []chart.Series{
		{Name: "off", Y: chart.Floats{102, 198, 390}, Lo: chart.Floats{99, 195, 387}, Hi: chart.Floats{105, 201, 393}},
		{Name: "on", Y: chart.Floats{82, math.NaN(), 313}},
	}}
	r, err := parse(bars.SVG())
	if err != nil {
		t.Fatal(err)
	}
	out := r.Numbers("")
	for _, want := range []string{`bar "off, 8: 102": 102 (whisker 99–105)`, `bar "off, 32: 390": 390 (whisker 387–393)`, `bar "on, 32: 313": 313`} {
		if !strings.Contains(out, want) {
			t.Errorf("bars: numbers lack %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, `"on, 16`) {
		t.Errorf("bars: a NaN bar drawn:\n%s", out)
	}

	box := &chart.Chart{ID: "box", Kind: chart.KindBox, Title: "t", Boxes: []chart.Box{
		{Label: "a", Min: 10, Q1: 20, Median: 25, Q3: 30, Max: 50, Points: chart.Floats{10, 25, 50}},
		{Label: "b", Min: 100, Q1: 120, Median: 150, Q3: 160, Max: 200, Points: chart.Floats{100, 200}},
	}}
	if r, err = parse(box.SVG()); err != nil {
		t.Fatal(err)
	}
	out = r.Numbers("")
	for _, want := range []string{`box "a": min 10, q1 20, q3 30, max 50, body 20–30, median 25; points 10 25 50`,
		`box "b": min 100, q1 120, q3 160, max 200, body 120–160, median 150; points 100 200`} {
		if !strings.Contains(out, want) {
			t.Errorf("box: numbers lack %q:\n%s", want, out)
		}
	}
}

// A chart that draws a wrong number reads back differently: a bar 10 px too short, a
// tick labelled wrongly.
func TestWrongNumberShows(t *testing.T) {
	c := &chart.Chart{ID: "bars", Kind: chart.KindBars, Title: "t", Categories: []string{"x"}, Series: []chart.Series{{Name: "s", Y: chart.Floats{300}}}}
	svg := c.SVG()
	p, err := parse(svg)
	if err != nil {
		t.Fatal(err)
	}
	right := p.Numbers("")
	if !strings.Contains(right, `bar "s, x: 300": 300`) {
		t.Fatalf("read back:\n%s", right)
	}
	var y string
	var yv float64
	for _, m := range p.Marks {
		if strings.HasPrefix(m.Class, "bar ") {
			y, yv = m.Attr["y"], m.f("y")
		}
	}
	for name, bad := range map[string]string{
		"short bar":  strings.Replace(svg, `y="`+y+`"`, `y="`+round(yv+10, 0.1)+`"`, 1),
		"wrong tick": strings.Replace(svg, `>300</text>`, `>350</text>`, 1),
	} {
		if bad == svg {
			t.Fatalf("%s: the change did not apply", name)
		}
		q, err := parse(bad)
		if err != nil {
			t.Fatal(err)
		}
		if got := q.Numbers(""); got == right {
			t.Errorf("%s: reads back the same:\n%s", name, got)
		}
	}
}
