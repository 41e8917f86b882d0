// Package chart is the one model of a chart in fathom: the static report draws it as
// inline SVG (SVG in this package) and the web UI of `fathom serve` draws the same
// model, sent as JSON, with the vendored uPlot. Package report builds every chart of
// a run or an experiment as a Chart, so the two front ends never show different
// numbers, units, scales or annotations.
//
// A Chart is one of four kinds: lines over an x axis (time series, percentile
// spectra, scaling curves), grouped bars with optional whiskers, box plots, and
// small multiples (a titled set of small charts that share their y unit).
package chart

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// Kinds of chart.
const (
	kindLine      = "line"
	KindBars      = "bars"
	KindBox       = "box"
	KindMultiples = "multiples"
)

// Scales of an axis.
const (
	ScaleLinear = "linear"
	ScaleNines  = "nines" // x only: percentiles on a log scale of 1/(1-q): 0, 90, 99, 99.9 … evenly spaced
	ScaleLog    = "log"   // y only: base 10, for values above zero
)

// Floats are a series' numbers; NaN (a gap) and ±Inf marshal as null.
type Floats []float64

// MarshalJSON writes null for NaN and infinities.
func (fs Floats) MarshalJSON() ([]byte, error) {
	if fs == nil {
		return []byte("[]"), nil
	}
	b := make([]byte, 0, 2+8*len(fs))
	b = append(b, '[')
	for i, f := range fs {
		if i > 0 {
			b = append(b, ',')
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			b = append(b, "null"...)
			continue
		}
		b = strconv.AppendFloat(b, f, 'g', -1, 64)
	}
	return append(b, ']'), nil
}

// UnmarshalJSON reads null as NaN.
func (fs *Floats) UnmarshalJSON(b []byte) error {
	var vs []*float64
	if err := json.Unmarshal(b, &vs); err != nil {
		return err
	}
	*fs = make(Floats, len(vs))
	for i, v := range vs {
		if v == nil {
			(*fs)[i] = math.NaN()
		} else {
			(*fs)[i] = *v
		}
	}
	return nil
}

// Unit is how an axis shows its numbers: value / Div, then Suffix. Every value on
// one axis is shown in the same unit.
type Unit struct {
	Suffix string  `json:"suffix"` // "ms", "K", "" …
	Div    float64 `json:"div"`    // value / Div is shown
}

// Format shows v in the unit with three significant digits (whole numbers as such).
func (u Unit) Format(v float64) string {
	return Num(v/u.div()) + u.sep() + u.Suffix
}

// Number shows v in the unit without the suffix (for tables whose header names it).
func (u Unit) Number(v float64) string { return Num(v / u.div()) }

func (u Unit) div() float64 {
	if u.Div == 0 {
		return 1
	}
	return u.Div
}

func (u Unit) sep() string {
	if u.Suffix == "ms" || u.Suffix == "µs" || u.Suffix == "s" {
		return " "
	}
	return ""
}

// Label is an axis label with the unit's suffix: "latency (ms)".
func (u Unit) Label(label string) string {
	if u.Suffix == "" || label == "" {
		return label
	}
	return label + " (" + u.Suffix + ")"
}

// Num formats with three significant digits, without exponent, trimming zeros.
func Num(v float64) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case math.IsInf(v, 0):
		return "∞"
	case v == 0:
		return "0"
	}
	a := math.Abs(v)
	digits := 2 - int(math.Floor(math.Log10(a)))
	if digits < 0 {
		digits = 0
	}
	s := strconv.FormatFloat(v, 'f', digits, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// Series is one line or set of points (kind line), or one bar of every category
// (kind bars: Y[i] is category i's bar, Lo and Hi its optional whisker).
type Series struct {
	Name   string `json:"name"`
	X      Floats `json:"x"`
	Y      Floats `json:"y"` // NaN breaks the line; no bar
	Lo     Floats `json:"lo,omitempty"`
	Hi     Floats `json:"hi,omitempty"`
	Points bool   `json:"points,omitempty"` // draw markers
	NoLine bool   `json:"noline,omitempty"` // markers only
	// Style is the index into the style cycle (-1 picks by position); Colour and
	// Dash (an SVG dash array, "" solid) are the style's, set by Resolve, so that
	// every renderer draws the series alike.
	Style  int    `json:"style"`
	Colour string `json:"colour,omitempty"`
	Dash   string `json:"dash,omitempty"`
}

// Band is a shaded stretch of the x axis: warm-up, or a detected stall.
type Band struct {
	X0    float64 `json:"x0"`
	X1    float64 `json:"x1"`
	Kind  string  `json:"kind"` // "warmup" or "stall"
	Label string  `json:"label"`
	Tip   string  `json:"tip,omitempty"` // the tooltip; "" shows Label
}

// Ref is a labelled horizontal or vertical reference line (an objective, a knee).
type Ref struct {
	At    float64 `json:"at"`
	Label string  `json:"label"`
}

// Box is one box of a box plot: quartiles, whiskers at min and max, and the points.
type Box struct {
	Label  string  `json:"label"`
	Min    float64 `json:"min"`
	Q1     float64 `json:"q1"`
	Median float64 `json:"median"`
	Q3     float64 `json:"q3"`
	Max    float64 `json:"max"`
	Points Floats  `json:"points"`
}

// axisRange is a fixed stretch of an axis.
type axisRange struct {
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

// Fixed is the range lo–hi.
func Fixed(lo, hi float64) *axisRange { return &axisRange{lo, hi} }

// Chart is one chart of any kind.
type Chart struct {
	Kind     string     `json:"kind"` // KindLine when ""
	ID       string     `json:"id"`
	Title    string     `json:"title"`
	Subtitle string     `json:"subtitle,omitempty"`
	Caption  string     `json:"caption,omitempty"` // the sentence under the chart (not drawn in it)
	XLabel   string     `json:"xlabel"`
	YLabel   string     `json:"ylabel"`
	XScale   string     `json:"xscale"` // ScaleLinear when ""
	YScale   string     `json:"yscale"` // ScaleLinear when ""
	XUnit    Unit       `json:"xunit"`
	YUnit    Unit       `json:"yunit"`
	XRange   *axisRange `json:"xrange,omitempty"` // fixed x range; nil: the data's
	YZero    bool       `json:"yzero,omitempty"`  // the y axis starts at 0
	XWhole   bool       `json:"xwhole,omitempty"` // x values are counts (run order): no fractional ticks
	Series   []Series   `json:"series"`
	// Annotations: shaded bands (warm-up, stalls) and reference lines.
	Bands  []Band `json:"bands,omitempty"`
	HLines []Ref  `json:"hlines,omitempty"`
	VLines []Ref  `json:"vlines,omitempty"`
	// Categories name the groups of bars (kind bars).
	Categories []string `json:"categories,omitempty"`
	Boxes      []Box    `json:"boxes,omitempty"` // kind box
	// Panels are the small charts of kind multiples, drawn side by side.
	Panels []Chart `json:"panels,omitempty"`
	// Width and Height are the drawing size the chart was designed for (0: default).
	Width  int `json:"width,omitempty"`
	Height int `json:"height,omitempty"`

	// yReach is how high the y axis reaches at least (the highest value of the
	// panels of small multiples, which share one scale).
	yReach float64
}

// Resolve fills what a renderer needs and the builder may leave out: the kind and
// scales, units, and each series' style index, colour and dash. The SVG renderer
// resolves a copy; call it before sending a chart elsewhere.
func (c *Chart) Resolve() {
	if c.Kind == "" {
		c.Kind = kindLine
	}
	if c.XScale == "" {
		c.XScale = ScaleLinear
	}
	if c.YScale == "" {
		c.YScale = ScaleLinear
	}
	if c.XUnit.Div == 0 {
		c.XUnit.Div = 1
	}
	if c.YUnit.Div == 0 {
		c.YUnit.Div = 1
	}
	for i := range c.Series {
		s := &c.Series[i]
		if s.Style < 0 {
			s.Style = i
		}
		if s.Colour == "" { // (a series given its own colour keeps its dash, solid or not)
			st := StyleOf(s.Style)
			s.Colour, s.Dash = st.Colour, st.Dash
		}
	}
	for i := range c.Panels {
		c.Panels[i].Resolve()
	}
}

// Group is a titled set of charts (one collector's metrics).
type Group struct {
	Title  string  `json:"title"`
	Charts []Chart `json:"charts"`
}

// style is how one series is drawn.
type style struct {
	Colour, Dash, Marker string
}

// styles are colours from the Okabe–Ito palette ordered so that neighbours differ in
// lightness; dash patterns and markers keep series apart in greyscale.
var styles = []style{
	{"#000000", "", "circle"},
	{"#0072B2", "7 3", "square"},
	{"#E69F00", "2 2", "triangle"},
	{"#009E73", "9 3 2 3", "diamond"},
	{"#CC79A7", "4 2 1 2 1 2", "cross"},
	{"#56B4E9", "12 4", "circle-open"},
	{"#D55E00", "1 3", "square-open"},
	{"#777777", "5 5", "triangle-open"},
}

// StyleOf is style i of the cycle.
func StyleOf(i int) style { return styles[styleSlot(i)] }

func styleSlot(i int) int { return ((i % len(styles)) + len(styles)) % len(styles) }
