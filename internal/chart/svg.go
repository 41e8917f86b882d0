package chart

// A small SVG chart renderer. Hand-written rather than gonum.org/v1/plot: plot's SVG
// backend embeds its fonts (tens of KB per chart) and draws text as paths or with
// fixed font metrics, while a report with hundreds of charts must stay small, print
// well, take its fonts and colours from one stylesheet, and stay readable in greyscale
// (series differ by dash pattern and marker shape as well as colour, bars by hatching).

import (
	"fmt"
	"html"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Chart geometry.
const (
	padLeft, padRight, padTop, padBottom = 64.0, 16.0, 44.0, 46.0
	// LegendRow is the height of one row of a legend.
	LegendRow = 16.0
)

// SVG draws the chart as one inline SVG element (several, one per panel, for small
// multiples), styled by the report's stylesheet.
func (c *Chart) SVG() string {
	r := *c
	r.Series = slices.Clone(c.Series)
	r.Panels = slices.Clone(c.Panels)
	r.Resolve()
	switch r.Kind {
	case KindBars:
		return r.bars()
	case KindBox:
		return r.box()
	case KindMultiples:
		var b strings.Builder
		for i := range r.Panels {
			b.WriteString(r.Panels[i].SVG())
		}
		return b.String()
	}
	return r.line()
}

func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func esc(s string) string { return html.EscapeString(s) }

// NiceTicks returns about n round tick values (steps of 1, 2, 2.5 or 5 times a power
// of ten) from the first at or above lo to the last at or below hi.
func NiceTicks(lo, hi float64, n int) []float64 { return niceTicks(lo, hi, n) }

// niceTicks returns about n round tick values covering [lo, hi].
func niceTicks(lo, hi float64, n int) []float64 {
	if !(hi > lo) {
		if lo == 0 {
			return []float64{0, 1}
		}
		return []float64{lo}
	}
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var ts []float64
	for v := math.Ceil(lo/step-1e-9) * step; v <= hi+step*1e-9; v += step {
		ts = append(ts, math.Round(v/step)*step)
	}
	return ts
}

// labelCharWidth is the width a tick label's character takes, in pixels (the
// stylesheet's tick font), for keeping labels apart.
const labelCharWidth = 6.6

// ninesX maps a percentile (0–100) to its position on a nines axis.
func ninesX(p float64) float64 {
	if p >= 100 {
		return 7
	}
	return math.Min(7, -math.Log10(1-p/100))
}

func ninesLabel(x float64) string {
	if x == 0 {
		return "0%"
	}
	if k := int(x); float64(k) == x && k >= 1 && k <= 15 {
		// Whole nines, written out: 90%, 99%, 99.9%, 99.99% … (computing them in
		// floating point gives 99.999999999999001%).
		if k == 1 {
			return "90%"
		}
		if k == 2 {
			return "99%"
		}
		return "99." + strings.Repeat("9", k-2) + "%"
	}
	p := 100 * (1 - math.Pow(10, -x))
	return strconv.FormatFloat(p, 'g', 6, 64) + "%"
}

type frame struct {
	w, h                   float64
	x0, x1, y0, y1         float64 // data ranges
	left, right, top, bott float64 // plot area in pixels
	ylog                   bool    // the y axis is log 10
}

// gap reports whether y is not drawn: NaN, or not above zero on a log axis.
func (f *frame) gap(y float64) bool { return math.IsNaN(y) || (f.ylog && !(y > 0)) }

func (f *frame) px(x float64) float64 {
	if f.x1 == f.x0 {
		return (f.left + f.right) / 2
	}
	return f.left + (x-f.x0)/(f.x1-f.x0)*(f.right-f.left)
}
func (f *frame) py(y float64) float64 {
	if f.y1 == f.y0 {
		return (f.top + f.bott) / 2
	}
	if f.ylog {
		return f.bott - (math.Log10(y)-math.Log10(f.y0))/(math.Log10(f.y1)-math.Log10(f.y0))*(f.bott-f.top)
	}
	return f.bott - (y-f.y0)/(f.y1-f.y0)*(f.bott-f.top)
}

// logTicks are the powers of ten covering [lo, hi] (lo > 0), with 2 and 5 between
// them when the range spans fewer than three decades.
func logTicks(lo, hi float64) []float64 {
	if !(lo > 0) || !(hi >= lo) {
		return []float64{1, 10}
	}
	e0, e1 := math.Floor(math.Log10(lo)+1e-9), math.Ceil(math.Log10(hi)-1e-9)
	if e1 == e0 {
		e1++
	}
	var ts []float64
	for e := e0; e <= e1; e++ {
		p := math.Pow(10, e)
		ts = append(ts, p)
		if e1-e0 < 3 && e < e1 {
			ts = append(ts, 2*p, 5*p)
		}
	}
	return ts
}

// at is vs[i], NaN past its end.
func at(vs []float64, i int) float64 {
	if i < len(vs) {
		return vs[i]
	}
	return math.NaN()
}

func svgOpen(b *strings.Builder, id, title string, w, h float64) {
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="%s" viewBox="0 0 %s %s" width="%s" height="%s" role="img" aria-labelledby="%s-t">`,
		esc(id), f1(w), f1(h), f1(w), f1(h), esc(id))
	fmt.Fprintf(b, `<title id="%s-t">%s</title>`, esc(id), esc(title))
	fmt.Fprintf(b, `<rect class="bg" x="0" y="0" width="%s" height="%s"/>`, f1(w), f1(h))
}

func drawTitle(b *strings.Builder, title, subtitle string, w float64) {
	fmt.Fprintf(b, `<text class="title" x="%s" y="16">%s</text>`, f1(w/2), esc(fitEnd(title, w, titleCharWidth)))
	if subtitle != "" {
		fmt.Fprintf(b, `<text class="subtitle" x="%s" y="30">%s</text>`, f1(w/2), esc(fitEnd(subtitle, w, subtitleCharWidth)))
	}
}

// Widths of a character of the title (13px, bold) and subtitle, generously: a
// shortened title is better than a clipped one.
const (
	titleCharWidth    = 7.8
	subtitleCharWidth = 6.2
)

// fitEnd shortens s to what fits in width w (8px margin each side) by dropping its
// beginning, not its end: titles end in what tells charts apart ("…_at_shutdown=ON",
// not "innodb_buffer_pool_dump_at_shutdown=O…"). The SVG's <title> keeps all of it.
func fitEnd(s string, w, charWidth float64) string {
	max := int((w - 16) / charWidth)
	r := []rune(s)
	if max < 2 || len(r) <= max {
		return s
	}
	return "…" + string(r[len(r)-max+1:])
}

// legend draws entries in rows under the title; returns the height used.
// colours are the entries' colours and dashes (lines only).
func legend(b *strings.Builder, entries []string, styleIdx []int, colours []style, lines bool, w, y float64, bars bool) float64 {
	if len(entries) == 0 {
		return 0
	}
	x := padLeft
	rows := 1.0
	for i, e := range entries {
		width := legendWidth(e)
		if x+width > w-padRight && x > padLeft {
			x = padLeft
			rows++
		}
		yy := y + (rows-1)*LegendRow
		if bars {
			fmt.Fprintf(b, `<rect class="bar key s%d" x="%s" y="%s" width="22" height="10"/>`, styleSlot(styleIdx[i]), f1(x), f1(yy-9))
		} else {
			st := StyleOf(styleIdx[i])
			if lines {
				fmt.Fprintf(b, `<line class="series" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"%s/>`, f1(x), f1(yy-4), f1(x+22), f1(yy-4), colours[i].Colour, dashAttr(colours[i].Dash))
			}
			marker(b, st.Marker, colours[i].Colour, x+11, yy-4)
		}
		fmt.Fprintf(b, `<text class="legend" x="%s" y="%s">%s</text>`, f1(x+28), f1(yy), esc(e))
		x += width
	}
	return rows * LegendRow
}

// minPlotHeight is the least height a line chart's plot keeps under its legend.
const minPlotHeight = 140

// legendHeight is the height legend takes for entries in width w.
func legendHeight(entries []string, w float64) float64 {
	if len(entries) == 0 {
		return 0
	}
	x, rows := padLeft, 1.0
	for _, e := range entries {
		width := legendWidth(e)
		if x+width > w-padRight && x > padLeft {
			x = padLeft
			rows++
		}
		x += width
	}
	return rows * LegendRow
}

func dashAttr(d string) string {
	if d == "" {
		return ""
	}
	return ` stroke-dasharray="` + d + `"`
}

func marker(b *strings.Builder, kind, c string, x, y float64) {
	switch kind {
	case "circle":
		fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="3" fill="%s"/>`, f1(x), f1(y), c)
	case "circle-open":
		fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="3" fill="#fff" stroke="%s"/>`, f1(x), f1(y), c)
	case "square":
		fmt.Fprintf(b, `<rect x="%s" y="%s" width="6" height="6" fill="%s"/>`, f1(x-3), f1(y-3), c)
	case "square-open":
		fmt.Fprintf(b, `<rect x="%s" y="%s" width="6" height="6" fill="#fff" stroke="%s"/>`, f1(x-3), f1(y-3), c)
	case "triangle", "triangle-open":
		fill := c
		if kind == "triangle-open" {
			fill = "#fff"
		}
		fmt.Fprintf(b, `<path d="M%s %sL%s %sL%s %sZ" fill="%s" stroke="%s"/>`, f1(x), f1(y-4), f1(x+4), f1(y+3), f1(x-4), f1(y+3), fill, c)
	case "diamond":
		fmt.Fprintf(b, `<path d="M%s %sL%s %sL%s %sL%s %sZ" fill="%s"/>`, f1(x), f1(y-4), f1(x+4), f1(y), f1(x), f1(y+4), f1(x-4), f1(y), c)
	case "cross":
		fmt.Fprintf(b, `<path d="M%s %sL%s %sM%s %sL%s %s" stroke="%s" stroke-width="1.5"/>`, f1(x-3), f1(y-3), f1(x+3), f1(y+3), f1(x-3), f1(y+3), f1(x+3), f1(y-3), c)
	}
}

// line draws a resolved chart of lines.
func (c *Chart) line() string {
	w, h := float64(c.Width), float64(c.Height)
	if w == 0 {
		w = 640
	}
	if h == 0 {
		h = 260
	}
	var b strings.Builder
	var names []string
	var idx []int
	var colours []style
	for _, s := range c.Series {
		if s.Name != "" {
			names = append(names, s.Name)
			idx = append(idx, s.Style)
			colours = append(colours, style{Colour: s.Colour, Dash: s.Dash})
		}
	}
	if len(names) == 1 && len(c.Series) == 1 {
		names = nil // a single series is named by the title
	}
	// A long legend grows the chart, so that the plot keeps its height (many series
	// once shrank it below nothing: a negative frame, every mark outside it).
	h = math.Max(h, padTop+legendHeight(names, w)+4+minPlotHeight+padBottom)
	svgOpen(&b, c.ID, c.Title, w, h)
	drawTitle(&b, c.Title, c.Subtitle, w)
	top := padTop
	if c.Subtitle == "" {
		top -= 10
	}
	top += legend(&b, names, idx, colours, true, w, top+2, false)

	f := frame{w: w, h: h, left: padLeft, right: w - padRight, top: top + 4, bott: h - padBottom}
	tx := func(x float64) float64 {
		if c.XScale == ScaleNines {
			return ninesX(x)
		}
		return x
	}
	f.ylog = c.YScale == ScaleLog
	f.x0, f.x1, f.y0, f.y1 = math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range c.Series {
		for i := range s.X {
			if f.gap(s.Y[i]) {
				continue
			}
			f.x0, f.x1 = math.Min(f.x0, tx(s.X[i])), math.Max(f.x1, tx(s.X[i]))
			f.y0, f.y1 = math.Min(f.y0, s.Y[i]), math.Max(f.y1, s.Y[i])
		}
	}
	for _, bd := range c.Bands {
		f.x0, f.x1 = math.Min(f.x0, bd.X0), math.Max(f.x1, bd.X1)
	}
	for _, r := range c.HLines {
		if !f.gap(r.At) {
			f.y0, f.y1 = math.Min(f.y0, r.At), math.Max(f.y1, r.At)
		}
	}
	if math.IsInf(f.x0, 1) {
		f.x0, f.x1, f.y0, f.y1 = 0, 1, 0, 1
		if f.ylog {
			f.y0, f.y1 = 1, 10
		}
		fmt.Fprintf(&b, `<text class="empty" x="%s" y="%s">no data</text>`, f1(w/2), f1(h/2))
	} else if math.IsInf(f.y0, 1) { // only bands
		f.y0, f.y1 = 0, 1
		if f.ylog {
			f.y0, f.y1 = 1, 10
		}
	}
	if c.XRange != nil && c.XRange.Max > c.XRange.Min {
		f.x0, f.x1 = c.XRange.Min, c.XRange.Max
	}
	if c.YZero && f.y0 > 0 && !f.ylog {
		f.y0 = 0
	}
	// Ticks round in the axis's unit (MB of 1024 × 1024 bytes, not millions).
	ydiv := c.YUnit.Div
	var yt []float64
	if f.ylog {
		yt = logTicks(f.y0/ydiv, f.y1/ydiv)
	} else {
		yt = niceTicks(f.y0/ydiv, f.y1/ydiv, 5)
	}
	for i := range yt {
		yt[i] *= ydiv
	}
	if len(yt) > 0 {
		f.y0 = math.Min(f.y0, yt[0])
		f.y1 = math.Max(f.y1, yt[len(yt)-1])
		if f.y1 == f.y0 {
			f.y1 = f.y0 + 1
		}
	}
	if c.XScale == ScaleNines {
		f.x0 = 0
		f.x1 = math.Max(1, math.Ceil(f.x1-1e-9))
	}

	// Bands under everything else.
	for _, bd := range c.Bands {
		x0, x1 := f.px(bd.X0), f.px(bd.X1)
		tip := bd.Tip
		if tip == "" {
			tip = bd.Label
		}
		fmt.Fprintf(&b, `<rect class="band %s" x="%s" y="%s" width="%s" height="%s"><title>%s</title></rect>`,
			esc(bd.Kind), f1(x0), f1(f.top), f1(math.Max(x1-x0, 1)), f1(f.bott-f.top), esc(tip))
		fmt.Fprintf(&b, `<text class="bandlabel" x="%s" y="%s">%s</text>`, f1(x0+3), f1(f.top+11), esc(bd.Label))
	}
	// Grid and ticks.
	for _, v := range yt {
		y := f.py(v)
		fmt.Fprintf(&b, `<line class="grid" x1="%s" y1="%s" x2="%s" y2="%s"/>`, f1(f.left), f1(y), f1(f.right), f1(y))
		fmt.Fprintf(&b, `<text class="tick y" x="%s" y="%s">%s</text>`, f1(f.left-5), f1(y+4), esc(c.YUnit.Number(v)))
	}
	var xt []float64
	if c.XScale == ScaleNines {
		for v := 0.0; v <= f.x1; v++ {
			xt = append(xt, v)
		}
	} else {
		xt = niceTicks(f.x0, f.x1, 8)
	}
	if c.XUnit.Div != 1 && c.XScale != ScaleNines {
		// Ticks round in the axis's unit, as on the y axis.
		xt = niceTicks(f.x0/c.XUnit.Div, f.x1/c.XUnit.Div, 8)
		for i := range xt {
			xt[i] *= c.XUnit.Div
		}
	}
	// On a nines axis every nine has its grid line, but labels as long as 99.99999%
	// would run into each other: then every step-th nine is labelled. The room needed
	// is one and a half labels, since the last label ends at its tick (see below)
	// rather than being centred on it.
	step := 1
	if c.XScale == ScaleNines && len(xt) > 1 {
		widest := 0
		for _, v := range xt {
			widest = max(widest, len([]rune(ninesLabel(v))))
		}
		if gap := f.px(1) - f.px(0); gap > 0 {
			step = max(1, int(math.Ceil((1.5*labelCharWidth*float64(widest)+8)/gap)))
		}
	}
	for _, v := range xt {
		if v < f.x0-1e-9*math.Abs(f.x1-f.x0) || v > f.x1+1e-9*math.Abs(f.x1-f.x0) {
			continue
		}
		if c.XWhole && v != math.Trunc(v) {
			continue
		}
		x := f.px(v)
		label := c.XUnit.Number(v)
		if c.XScale == ScaleNines {
			label = ninesLabel(v)
			if int(v)%step != 0 {
				label = ""
			}
		}
		fmt.Fprintf(&b, `<line class="grid" x1="%s" y1="%s" x2="%s" y2="%s"/>`, f1(x), f1(f.top), f1(x), f1(f.bott))
		if label == "" {
			continue
		}
		// A label that would reach past the chart's right edge ends at its tick.
		cls := "tick x"
		if x+labelCharWidth/2*float64(len([]rune(label))) > w-2 {
			cls = "tick x end"
		}
		fmt.Fprintf(&b, `<text class="%s" x="%s" y="%s">%s</text>`, cls, f1(x), f1(f.bott+14), esc(label))
	}
	fmt.Fprintf(&b, `<rect class="frame" x="%s" y="%s" width="%s" height="%s"/>`, f1(f.left), f1(f.top), f1(f.right-f.left), f1(f.bott-f.top))
	axisLabels(&b, &f, c.XLabel, c.YUnit.Label(c.YLabel))

	for _, r := range c.HLines {
		if f.gap(r.At) {
			continue
		}
		y := f.py(r.At)
		fmt.Fprintf(&b, `<line class="ref" x1="%s" y1="%s" x2="%s" y2="%s"/>`, f1(f.left), f1(y), f1(f.right), f1(y))
		fmt.Fprintf(&b, `<text class="reflabel" x="%s" y="%s">%s</text>`, f1(f.right-4), f1(y-4), esc(r.Label))
	}
	for _, r := range c.VLines {
		x := f.px(tx(r.At))
		fmt.Fprintf(&b, `<line class="ref" x1="%s" y1="%s" x2="%s" y2="%s"/>`, f1(x), f1(f.top), f1(x), f1(f.bott))
		// The label goes right of the line, or left of it where it would leave the chart.
		if x+4+6.2*float64(len([]rune(r.Label))) > w-2 {
			fmt.Fprintf(&b, `<text class="reflabel v end" x="%s" y="%s">%s</text>`, f1(x-4), f1(f.top+24), esc(r.Label))
		} else {
			fmt.Fprintf(&b, `<text class="reflabel v" x="%s" y="%s">%s</text>`, f1(x+4), f1(f.top+24), esc(r.Label))
		}
	}
	// Series.
	for _, s := range c.Series {
		st := StyleOf(s.Style)
		if !s.NoLine {
			var d strings.Builder
			pen := false
			for k := range s.X {
				if f.gap(s.Y[k]) {
					pen = false
					continue
				}
				if pen {
					d.WriteString("L")
				} else {
					d.WriteString("M")
				}
				d.WriteString(f1(f.px(tx(s.X[k]))) + " " + f1(f.py(s.Y[k])))
				pen = true
			}
			if d.Len() > 0 {
				fmt.Fprintf(&b, `<path class="series" d="%s" stroke="%s"%s><title>%s</title></path>`, d.String(), s.Colour, dashAttr(s.Dash), esc(s.Name))
			}
		}
		if s.Points || s.NoLine {
			fmt.Fprintf(&b, `<g class="points">`)
			for k := range s.X {
				if !f.gap(s.Y[k]) {
					marker(&b, st.Marker, s.Colour, f.px(tx(s.X[k])), f.py(s.Y[k]))
				}
			}
			b.WriteString(`</g>`)
		}
	}
	b.WriteString(`</svg>`)
	return b.String()
}

func axisLabels(b *strings.Builder, f *frame, xl, yl string) {
	if xl != "" {
		fmt.Fprintf(b, `<text class="axislabel" x="%s" y="%s">%s</text>`, f1((f.left+f.right)/2), f1(f.h-8), esc(xl))
	}
	if yl != "" {
		cy := (f.top + f.bott) / 2
		fmt.Fprintf(b, `<text class="axislabel" transform="translate(14 %s) rotate(-90)" x="0" y="0">%s</text>`, f1(cy), esc(yl))
	}
}

// bars draws a resolved chart of grouped bars: one group per category, one bar per
// series in each, with optional whiskers (e.g. a confidence interval).
func (c *Chart) bars() string {
	w, h := float64(c.Width), float64(c.Height)
	if w == 0 {
		w = 640
	}
	if h == 0 {
		h = 280
	}
	var b strings.Builder
	svgOpen(&b, c.ID, c.Title, w, h)
	drawTitle(&b, c.Title, c.Subtitle, w)
	top := padTop
	if c.Subtitle == "" {
		top -= 10
	}
	var names []string
	idx := make([]int, len(c.Series))
	for i := range c.Series {
		idx[i] = i
		names = append(names, c.Series[i].Name)
	}
	if len(c.Series) > 1 {
		top += legend(&b, names, idx, nil, false, w, top+2, true)
	}
	f := frame{w: w, h: h, left: padLeft, right: w - padRight, top: top + 4, bott: h - padBottom}
	f.y0, f.y1 = 0, 0
	for _, s := range c.Series {
		for g := range c.Categories {
			if v := at(s.Y, g); !math.IsNaN(v) {
				f.y1 = math.Max(f.y1, v)
			}
			if v := at(s.Hi, g); !math.IsNaN(v) {
				f.y1 = math.Max(f.y1, v)
			}
		}
	}
	// Headroom: the tallest bar or whisker stays clear of the frame's top.
	yt := niceTicks(0, f.y1*1.08, 5)
	f.y1 = math.Max(f.y1*1.08, yt[len(yt)-1])
	f.x0, f.x1 = 0, float64(len(c.Categories))
	for _, v := range yt {
		y := f.py(v)
		fmt.Fprintf(&b, `<line class="grid" x1="%s" y1="%s" x2="%s" y2="%s"/>`, f1(f.left), f1(y), f1(f.right), f1(y))
		fmt.Fprintf(&b, `<text class="tick y" x="%s" y="%s">%s</text>`, f1(f.left-5), f1(y+4), esc(c.YUnit.Number(v)))
	}
	gw := (f.right - f.left) / math.Max(1, float64(len(c.Categories)))
	ns := math.Max(1, float64(len(c.Series)))
	bw := gw * 0.8 / ns
	for g, name := range c.Categories {
		gx := f.left + float64(g)*gw
		fmt.Fprintf(&b, `<text class="tick x" x="%s" y="%s">%s</text>`, f1(gx+gw/2), f1(f.bott+14), esc(name))
		for s, ser := range c.Series {
			v := at(ser.Y, g)
			if math.IsNaN(v) {
				continue
			}
			x := gx + gw*0.1 + float64(s)*bw
			y := f.py(v)
			label := ser.Name
			if label != "" {
				label += ", "
			}
			fmt.Fprintf(&b, `<rect class="bar s%d" x="%s" y="%s" width="%s" height="%s"><title>%s%s: %s</title></rect>`,
				s%len(styles), f1(x+1), f1(y), f1(math.Max(bw-2, 1)), f1(f.bott-y), esc(label), esc(name), esc(c.YUnit.Format(v)))
			if lo, hi := at(ser.Lo, g), at(ser.Hi, g); !math.IsNaN(lo) && !math.IsNaN(hi) {
				cx := x + bw/2
				y0, y1 := f.py(lo), f.py(hi)
				fmt.Fprintf(&b, `<path class="whisker" d="M%s %sL%s %sM%s %sL%s %sM%s %sL%s %s"/>`,
					f1(cx), f1(y0), f1(cx), f1(y1), f1(cx-3), f1(y0), f1(cx+3), f1(y0), f1(cx-3), f1(y1), f1(cx+3), f1(y1))
			}
		}
	}
	fmt.Fprintf(&b, `<rect class="frame" x="%s" y="%s" width="%s" height="%s"/>`, f1(f.left), f1(f.top), f1(f.right-f.left), f1(f.bott-f.top))
	axisLabels(&b, &f, c.XLabel, c.YUnit.Label(c.YLabel))
	b.WriteString(`</svg>`)
	return b.String()
}

// box draws a resolved box plot, one box per category.
func (c *Chart) box() string {
	w, h := float64(c.Width), float64(c.Height)
	if w == 0 {
		w = 640
	}
	if h == 0 {
		h = 280
	}
	top := padTop
	if c.Subtitle == "" {
		top -= 10
	}
	// Category labels: level when they fit their slot, else slanted, with the chart
	// made taller so that the slanted labels stay inside it.
	gw := (w - padLeft - padRight) / math.Max(1, float64(len(c.Boxes)))
	longest := 0
	for _, bx := range c.Boxes {
		longest = max(longest, len([]rune(bx.Label)))
	}
	rotate := float64(longest)*6 > gw
	bottom, left := padBottom, padLeft
	if rotate {
		// A label of n characters slanted at 35° ends at its box: it drops about
		// 6.5·n·sin(35°) pixels and reaches 6.5·n·cos(35°) to the left.
		ln := 6.5 * float64(longest)
		drop := ln*math.Sin(35*math.Pi/180) + 14
		bottom += drop
		h += drop
		if reach := ln*math.Cos(35*math.Pi/180) + 4; reach > padLeft+gw/2 {
			left = reach - gw/2
			gw = (w - left - padRight) / math.Max(1, float64(len(c.Boxes)))
		}
	}
	var b strings.Builder
	svgOpen(&b, c.ID, c.Title, w, h)
	drawTitle(&b, c.Title, c.Subtitle, w)
	f := frame{w: w, h: h, left: left, right: w - padRight, top: top + 4, bott: h - bottom}
	f.y0, f.y1 = math.Inf(1), math.Inf(-1)
	for _, bx := range c.Boxes {
		for _, v := range append([]float64{bx.Min, bx.Max}, bx.Points...) {
			if !math.IsNaN(v) {
				f.y0, f.y1 = math.Min(f.y0, v), math.Max(f.y1, v)
			}
		}
	}
	if math.IsInf(f.y0, 1) {
		f.y0, f.y1 = 0, 1
	}
	f.y0 = 0
	f.y1 *= 1.08 // headroom: the highest whisker stays clear of the frame's top
	yt := niceTicks(f.y0, f.y1, 5)
	f.y1 = math.Max(f.y1, yt[len(yt)-1])
	if f.y1 == f.y0 {
		f.y1 = 1
	}
	for _, v := range yt {
		y := f.py(v)
		fmt.Fprintf(&b, `<line class="grid" x1="%s" y1="%s" x2="%s" y2="%s"/>`, f1(f.left), f1(y), f1(f.right), f1(y))
		fmt.Fprintf(&b, `<text class="tick y" x="%s" y="%s">%s</text>`, f1(f.left-5), f1(y+4), esc(c.YUnit.Number(v)))
	}
	for i, bx := range c.Boxes {
		cx := f.left + (float64(i)+0.5)*gw
		bw := math.Min(gw*0.5, 40)
		if rotate {
			fmt.Fprintf(&b, `<text class="tick x rot" transform="translate(%s %s) rotate(-35)">%s</text>`, f1(cx), f1(f.bott+10), esc(bx.Label))
		} else {
			fmt.Fprintf(&b, `<text class="tick x" x="%s" y="%s">%s</text>`, f1(cx), f1(f.bott+14), esc(bx.Label))
		}
		if math.IsNaN(bx.Median) {
			continue
		}
		fmt.Fprintf(&b, `<g class="box"><title>%s: median %s, quartiles %s–%s, range %s–%s, n=%d</title>`, esc(bx.Label),
			esc(c.YUnit.Format(bx.Median)), esc(c.YUnit.Format(bx.Q1)), esc(c.YUnit.Format(bx.Q3)), esc(c.YUnit.Format(bx.Min)), esc(c.YUnit.Format(bx.Max)), len(bx.Points))
		fmt.Fprintf(&b, `<path class="whisker" d="M%s %sL%s %sM%s %sL%s %sM%s %sL%s %sM%s %sL%s %s"/>`,
			f1(cx), f1(f.py(bx.Min)), f1(cx), f1(f.py(bx.Q1)), f1(cx), f1(f.py(bx.Q3)), f1(cx), f1(f.py(bx.Max)),
			f1(cx-bw/4), f1(f.py(bx.Min)), f1(cx+bw/4), f1(f.py(bx.Min)), f1(cx-bw/4), f1(f.py(bx.Max)), f1(cx+bw/4), f1(f.py(bx.Max)))
		fmt.Fprintf(&b, `<rect class="boxbody" x="%s" y="%s" width="%s" height="%s"/>`, f1(cx-bw/2), f1(f.py(bx.Q3)), f1(bw), f1(math.Max(f.py(bx.Q1)-f.py(bx.Q3), 0.5)))
		fmt.Fprintf(&b, `<line class="median" x1="%s" y1="%s" x2="%s" y2="%s"/>`, f1(cx-bw/2), f1(f.py(bx.Median)), f1(cx+bw/2), f1(f.py(bx.Median)))
		for k, p := range bx.Points {
			// Spread points sideways deterministically so that equal values stay visible.
			dx := (float64(k%5) - 2) * bw / 10
			fmt.Fprintf(&b, `<circle class="pt" cx="%s" cy="%s" r="2"/>`, f1(cx+bw*0.75+dx), f1(f.py(p)))
		}
		b.WriteString(`</g>`)
	}
	fmt.Fprintf(&b, `<rect class="frame" x="%s" y="%s" width="%s" height="%s"/>`, f1(f.left), f1(f.top), f1(f.right-f.left), f1(f.bott-f.top))
	axisLabels(&b, &f, c.XLabel, c.YUnit.Label(c.YLabel))
	b.WriteString(`</svg>`)
	return b.String()
}

// SVGDefs are shared by all charts of a page: the bar fills (hatching for greyscale).
const SVGDefs = `<svg xmlns="http://www.w3.org/2000/svg" width="0" height="0" style="position:absolute" aria-hidden="true"><defs>
<pattern id="hatch1" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#cfe3f1"/><line x1="0" y1="0" x2="0" y2="6" stroke="#0072B2" stroke-width="3"/></pattern>
<pattern id="hatch2" width="5" height="5" patternUnits="userSpaceOnUse"><rect width="5" height="5" fill="#fbe7bd"/><circle cx="2.5" cy="2.5" r="1.3" fill="#8a5f00"/></pattern>
<pattern id="hatch3" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(-45)"><rect width="6" height="6" fill="#bfe6d9"/><line x1="0" y1="0" x2="0" y2="6" stroke="#00674b" stroke-width="1.5"/></pattern>
<pattern id="hatch4" width="6" height="6" patternUnits="userSpaceOnUse"><rect width="6" height="6" fill="#f3d8e7"/><path d="M0 3H6M3 0V6" stroke="#8c3d6b" stroke-width="1"/></pattern>
<pattern id="hatch5" width="4" height="4" patternUnits="userSpaceOnUse"><rect width="4" height="4" fill="#d4ecfa"/></pattern>
<pattern id="hatch6" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#f6c9a8"/><line x1="0" y1="0" x2="0" y2="6" stroke="#D55E00" stroke-width="1"/></pattern>
<pattern id="hatch7" width="4" height="4" patternUnits="userSpaceOnUse"><rect width="4" height="4" fill="#e8e8e8"/></pattern>
<pattern id="stallhatch" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate(-45)"><rect width="8" height="8" fill="#fbe3d3"/><line x1="0" y1="0" x2="0" y2="8" stroke="#b04a00" stroke-width="2" stroke-opacity="0.55"/></pattern>
</defs></svg>`

// LegendRows is how many rows the legend of entries takes in a chart w wide.
func LegendRows(entries []string, w float64) int {
	if len(entries) <= 1 {
		return 1
	}
	x, rows := padLeft, 1
	for _, e := range entries {
		width := legendWidth(e)
		if x+width > w-padRight && x > padLeft {
			x = padLeft
			rows++
		}
		x += width
	}
	return rows
}

func legendWidth(entry string) float64 { return 30 + 6.5*float64(len([]rune(entry))) + 14 }
