// Package charttest reads back the numbers an SVG chart of package chart draws: the
// axes' tick labels, and the value each mark stands for, found from its position
// against the labelled ticks (a line's points, a bar's height and whisker, a box's
// quartiles and points, bands and reference lines). Golden files of pages that hold
// charts keep these numbers, so that a chart drawing a wrong number (a wrong value,
// scale or tick label) fails a test, while the page itself stays as it is: the
// numbers come from the geometry the reader sees, not from attributes added for the
// test. Only tests import it.
package charttest

import (
	"encoding/xml"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// axis maps pixels to values along one axis, from its labelled ticks.
type axis struct {
	// Ticks are the labels in drawing order; Pixels their positions.
	Ticks  []string
	Pixels []float64
	// Log: the axis is logarithmic (base 10); Nines: percentiles on a nines scale.
	Log, Nines bool
	// Categorical: the ticks name categories (bars, boxes); no mapping.
	Categorical bool
	// a and b map pixels to values (or their log10, or nines): v = a + b·px.
	a, b float64
	ok   bool
}

// value is the value at pixel p; ok is false when the axis cannot be read (fewer
// than two numeric ticks).
func (ax *axis) value(p float64) (float64, bool) {
	if !ax.ok {
		return math.NaN(), false
	}
	v := ax.a + ax.b*p
	switch {
	case ax.Log:
		return math.Pow(10, v), true
	case ax.Nines:
		return 100 * (1 - math.Pow(10, -v)), true
	}
	return v, true
}

// resolution is the value one tenth of a pixel (the renderer's rounding) spans at
// pixel p.
func (ax *axis) resolution(p float64) float64 {
	v0, _ := ax.value(p)
	v1, _ := ax.value(p + 0.1)
	return math.Abs(v1 - v0)
}

// Format writes the value at pixel p rounded to the axis's resolution there: to the
// power of ten at or above what a tenth of a pixel spans (3 significant digits on a
// logarithmic or nines axis). "?" when the axis cannot be read.
func (ax *axis) Format(p float64) string {
	v, ok := ax.value(p)
	if !ok {
		return "?"
	}
	if ax.Log || ax.Nines {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	return round(v, ax.resolution(p))
}

// round writes v rounded to the power of ten at or above res.
func round(v, res float64) string {
	if !(res > 0) {
		return strconv.FormatFloat(v, 'g', 6, 64)
	}
	e := math.Ceil(math.Log10(res) - 1e-9)
	step := math.Pow(10, e)
	r := math.Round(v/step) * step
	dec := 0
	if e < 0 {
		dec = int(-e)
	}
	s := strconv.FormatFloat(r, 'f', dec, 64)
	if s == "-0" || strings.Trim(s, "-0.") == "" {
		s = "0"
	}
	return s
}

// nine parses a nines-axis label ("0%", "90%", "99.9%") to its position.
func nine(label string) (float64, bool) {
	p, err := strconv.ParseFloat(strings.TrimSuffix(label, "%"), 64)
	if err != nil || !strings.HasSuffix(label, "%") || p >= 100 {
		return 0, false
	}
	return -math.Log10(1 - p/100), true
}

// fit finds the mapping from the ticks: linear when the inner ticks lie on the line
// through the outer ones, else logarithmic when that fits.
func (ax *axis) fit() {
	var px, vs []float64
	for i, t := range ax.Ticks {
		if ax.Nines {
			if v, ok := nine(t); ok {
				px, vs = append(px, ax.Pixels[i]), append(vs, v)
			}
			continue
		}
		if v, err := strconv.ParseFloat(t, 64); err == nil {
			px, vs = append(px, ax.Pixels[i]), append(vs, v)
		}
	}
	if len(px) < 2 || len(px) < len(ax.Ticks) && !ax.Nines {
		ax.Categorical = len(px) < len(ax.Ticks)
		return
	}
	lin := func(vs []float64) (a, b float64, ok bool) {
		n := len(px) - 1
		if px[n] == px[0] {
			return 0, 0, false
		}
		b = (vs[n] - vs[0]) / (px[n] - px[0])
		a = vs[0] - b*px[0]
		for i := range px {
			if math.Abs(a+b*px[i]-vs[i]) > 0.3*math.Abs(b) { // within 0.3 px
				return a, b, false
			}
		}
		return a, b, true
	}
	if a, b, ok := lin(vs); ok {
		ax.a, ax.b, ax.ok = a, b, true
		return
	}
	logs := make([]float64, len(vs))
	for i, v := range vs {
		if !(v > 0) {
			return
		}
		logs[i] = math.Log10(v)
	}
	if a, b, ok := lin(logs); ok && !ax.Nines {
		ax.a, ax.b, ax.ok, ax.Log = a, b, true, true
	}
}

// mark is one drawn element with what the reader needs of it.
type mark struct {
	Tag, Class, Title string
	Attr              map[string]string
	Group             string // the class of the <g> it is in
	GroupTitle        string
}

func (m *mark) f(name string) float64 {
	v, err := strconv.ParseFloat(m.Attr[name], 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

// svgChart is an SVG chart read back.
type svgChart struct {
	ID    string
	X, Y  axis
	Marks []*mark
}

var translateRE = regexp.MustCompile(`translate\(([-0-9.]+) ([-0-9.]+)\)`)

// reader walks an SVG's tokens.
type reader struct {
	c      *svgChart
	stack  []*mark
	groups []*mark
	xt, yt []*mark
}

func (r *reader) start(t xml.StartElement) {
	m := &mark{Tag: t.Name.Local, Attr: map[string]string{}}
	for _, a := range t.Attr {
		m.Attr[a.Name.Local] = a.Value
	}
	m.Class = m.Attr["class"]
	if len(r.groups) > 0 {
		m.Group = r.groups[len(r.groups)-1].Class
	}
	switch m.Tag {
	case "svg":
		r.c.ID = m.Attr["id"]
	case "g":
		r.groups = append(r.groups, m)
	case "path", "rect", "line", "circle":
		r.c.Marks = append(r.c.Marks, m)
	}
	r.stack = append(r.stack, m)
}

// text adds character data to the element it belongs to: a <title> titles its
// parent, a <text> holds its own.
func (r *reader) text(t xml.CharData) {
	n := len(r.stack)
	switch {
	case n >= 2 && r.stack[n-1].Tag == "title":
		r.stack[n-2].Title += string(t)
	case n >= 1 && r.stack[n-1].Tag == "text":
		r.stack[n-1].Title += string(t)
	}
}

func (r *reader) end() {
	if len(r.stack) == 0 {
		return
	}
	m := r.stack[len(r.stack)-1]
	r.stack = r.stack[:len(r.stack)-1]
	switch m.Tag {
	case "g":
		if len(r.groups) > 0 {
			r.groups = r.groups[:len(r.groups)-1]
		}
		// Marks inside a titled group (a box) carry its title.
		for _, x := range r.c.Marks {
			if x.Group == m.Class && x.GroupTitle == "" {
				x.GroupTitle = m.Title
			}
		}
	case "text":
		cls := " " + m.Class + " "
		if strings.Contains(cls, " tick ") && strings.Contains(cls, " y ") {
			r.yt = append(r.yt, m)
		} else if strings.Contains(cls, " tick ") && strings.Contains(cls, " x ") {
			r.xt = append(r.xt, m)
		}
	}
}

// axes fits the axes to the tick labels read.
func (r *reader) axes() {
	c := r.c
	for _, t := range r.yt {
		c.Y.Ticks = append(c.Y.Ticks, strings.TrimSpace(t.Title))
		c.Y.Pixels = append(c.Y.Pixels, t.f("y")-4) // labels sit 4 px under their grid line
	}
	for _, t := range r.xt {
		label := strings.TrimSpace(t.Title)
		x := t.f("x")
		if m := translateRE.FindStringSubmatch(t.Attr["transform"]); m != nil {
			x, _ = strconv.ParseFloat(m[1], 64)
		}
		c.X.Ticks = append(c.X.Ticks, label)
		c.X.Pixels = append(c.X.Pixels, x)
		c.X.Nines = c.X.Nines || strings.HasSuffix(label, "%")
	}
	c.Y.fit()
	c.X.fit()
}

// parse reads one <svg> element of a chart.
func parse(svg string) (*svgChart, error) {
	d := xml.NewDecoder(strings.NewReader(svg))
	d.Strict = false
	d.Entity = xml.HTMLEntity
	r := &reader{c: &svgChart{}}
	for {
		tok, err := d.Token()
		if err != nil {
			break
		}
		switch t := tok.(type) {
		case xml.StartElement:
			r.start(t)
		case xml.CharData:
			r.text(t)
		case xml.EndElement:
			r.end()
		}
	}
	r.axes()
	if r.c.ID == "" {
		return nil, fmt.Errorf("charttest: no chart id in %.60q", svg)
	}
	return r.c, nil
}

var pointRE = regexp.MustCompile(`([MLZ])\s*(-?[0-9.]+)?\s*(-?[0-9.]+)?`)

// points are a path's points, a break ("|") before each move after the first.
func points(d string) [][2]float64 {
	var out [][2]float64
	for _, m := range pointRE.FindAllStringSubmatch(d, -1) {
		if m[1] == "Z" {
			continue
		}
		x, _ := strconv.ParseFloat(m[2], 64)
		y, _ := strconv.ParseFloat(m[3], 64)
		if m[1] == "M" && len(out) > 0 {
			out = append(out, [2]float64{math.NaN(), math.NaN()})
		}
		out = append(out, [2]float64{x, y})
	}
	return out
}

// markerCentre is where a series marker (marker in package chart) is centred.
func markerCentre(m *mark) (x, y float64, ok bool) {
	switch m.Tag {
	case "circle":
		return m.f("cx"), m.f("cy"), true
	case "rect":
		return m.f("x") + 3, m.f("y") + 3, true
	case "path":
		p := points(m.Attr["d"])
		if len(p) == 0 {
			return 0, 0, false
		}
		if m.Attr["stroke-width"] != "" { // cross: starts at its top-left corner
			return p[0][0] + 3, p[0][1] + 3, true
		}
		if len(p) == 4 { // diamond: starts at its top
			return p[0][0], p[0][1] + 4, true
		}
		return p[0][0], p[0][1] + 4, true // triangle: starts at its apex
	}
	return 0, 0, false
}

// numbers collects a chart's lines as Numbers writes them.
type numbers struct {
	c        *svgChart
	b        strings.Builder
	ind      string
	markers  []string // a series' markers, written on one line
	bars     []string
	boxes    map[string][]string
	boxOrder []string
}

func (n *numbers) flushMarkers() {
	if len(n.markers) > 0 {
		fmt.Fprintf(&n.b, "%smarkers: %s\n", n.ind, strings.Join(n.markers, " "))
		n.markers = nil
	}
}

func (n *numbers) line(format string, a ...any) {
	n.flushMarkers()
	fmt.Fprintf(&n.b, n.ind+format+"\n", a...)
}

func (n *numbers) xy(x, y float64) string {
	if math.IsNaN(x) {
		return "|"
	}
	return n.c.X.Format(x) + "," + n.c.Y.Format(y)
}

// mark notes what one mark stands for.
func (n *numbers) mark(m *mark) {
	c, cls := n.c, m.Class
	switch {
	case m.Tag == "path" && cls == "series":
		var ps []string
		for _, p := range points(m.Attr["d"]) {
			ps = append(ps, n.xy(p[0], p[1]))
		}
		n.line("line %q: %s", m.Title, strings.Join(ps, " "))
	case m.Group == "points" && cls == "":
		if x, y, ok := markerCentre(m); ok {
			n.markers = append(n.markers, n.xy(x, y))
		}
	case m.Tag == "rect" && strings.HasPrefix(cls, "band"):
		n.line("%s %q: x %s–%s", cls, m.Title, c.X.Format(m.f("x")), c.X.Format(m.f("x")+m.f("width")))
	case m.Tag == "line" && cls == "ref" && m.f("y1") == m.f("y2"):
		n.line("hline: y %s", c.Y.Format(m.f("y1")))
	case m.Tag == "line" && cls == "ref":
		n.line("vline: x %s", c.X.Format(m.f("x1")))
	case m.Group == "box":
		n.boxMark(m)
	default:
		n.barMark(m)
	}
}

// barMark notes a bar's height, or the whisker of the bar before it.
func (n *numbers) barMark(m *mark) {
	y, cls := &n.c.Y, m.Class
	switch {
	case m.Tag == "rect" && strings.HasPrefix(cls, "bar ") && !strings.Contains(cls, "key"):
		n.bars = append(n.bars, fmt.Sprintf("bar %q: %s", m.Title, y.Format(m.f("y"))))
	case m.Tag == "path" && cls == "whisker" && m.Group == "":
		if p := points(m.Attr["d"]); len(n.bars) > 0 && len(p) >= 2 {
			n.bars[len(n.bars)-1] += fmt.Sprintf(" (whisker %s–%s)", y.Format(p[0][1]), y.Format(p[1][1]))
		}
	}
}

// boxMark notes what a mark of a box stands for: its whiskers' ends and quartiles,
// its body, its median, a point.
func (n *numbers) boxMark(m *mark) {
	y := &n.c.Y
	key := m.GroupTitle
	if _, ok := n.boxes[key]; !ok {
		n.boxOrder = append(n.boxOrder, key)
	}
	switch m.Class {
	case "whisker":
		if p := points(m.Attr["d"]); len(p) >= 6 { // min–q1, q3–max: two moves
			n.boxes[key] = append(n.boxes[key], "min "+y.Format(p[0][1]), "q1 "+y.Format(p[1][1]), "q3 "+y.Format(p[3][1]), "max "+y.Format(p[4][1]))
		}
	case "boxbody":
		n.boxes[key] = append(n.boxes[key], "body "+y.Format(m.f("y")+m.f("height"))+"–"+y.Format(m.f("y")))
	case "median":
		n.boxes[key] = append(n.boxes[key], "median "+y.Format(m.f("y1")))
	case "pt":
		n.boxes[key] = append(n.boxes[key], "pt "+y.Format(m.f("cy")))
	}
}

// writeBoxes writes each box's figures, its points in ascending order.
func (n *numbers) writeBoxes() {
	for _, k := range n.boxOrder {
		var rest, dots []string
		for _, p := range n.boxes[k] {
			if v, ok := strings.CutPrefix(p, "pt "); ok {
				dots = append(dots, v)
			} else {
				rest = append(rest, p)
			}
		}
		sort.SliceStable(dots, func(i, j int) bool {
			a, _ := strconv.ParseFloat(dots[i], 64)
			b, _ := strconv.ParseFloat(dots[j], 64)
			return a < b
		})
		label, _, _ := strings.Cut(k, ":")
		n.line("box %q: %s; points %s", label, strings.Join(rest, ", "), strings.Join(dots, " "))
	}
}

// Numbers lists what the chart's marks stand for, one line each, indented by ind:
// the axes' ticks, then each mark's values in the axes' units.
func (c *svgChart) Numbers(ind string) string {
	n := &numbers{c: c, ind: ind, boxes: map[string][]string{}}
	if len(c.X.Ticks) > 0 {
		n.line("x ticks: %s", strings.Join(c.X.Ticks, " | "))
	}
	if len(c.Y.Ticks) > 0 {
		scale := ""
		if c.Y.Log {
			scale = " (log)"
		}
		n.line("y ticks%s: %s", scale, strings.Join(c.Y.Ticks, " | "))
	}
	for _, m := range c.Marks {
		n.mark(m)
	}
	n.flushMarkers()
	for _, s := range n.bars {
		n.line("%s", s)
	}
	n.writeBoxes()
	return n.b.String()
}

var svgRE = regexp.MustCompile(`(?s)<svg [^>]*class="chart"[^>]*>.*?</svg>`)

// Charts reads every chart of a page, in order.
func Charts(page string) ([]*svgChart, error) {
	var out []*svgChart
	for _, s := range svgRE.FindAllString(page, -1) {
		c, err := parse(s)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}
