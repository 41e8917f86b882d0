package chart

import (
	"fmt"
	"math"
	"strings"
)

// line draws a resolved chart of lines: the title and legend, the plot's frame fitted
// to the data (lineFrame), then bands, grid and ticks, reference lines and the series,
// in that order (later ones are drawn over earlier ones).
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
	if c.markers() && c.XScale != ScaleNines {
		// Markers at the x range's ends are drawn whole inside the frame, not half
		// over its sides (a scaling curve's first and last client counts).
		f.xin = markerInset
	}
	yt := c.lineFrame(&b, &f)
	c.drawBands(&b, &f)
	c.drawYGrid(&b, &f, yt)
	c.drawXTicks(&b, &f)
	fmt.Fprintf(&b, `<rect class="frame" x="%s" y="%s" width="%s" height="%s"/>`, f1(f.left), f1(f.top), f1(f.right-f.left), f1(f.bott-f.top))
	axisLabels(&b, &f, c.XLabel, c.YUnit.Label(c.YLabel))

	c.drawRefs(&b, &f)
	c.drawSeries(&b, &f)
	b.WriteString(`</svg>`)
	return b.String()
}

// tx is x's position on the x axis's scale (nines for percentiles).
// markerInset is how far inside the frame's sides a chart with markers puts the ends of
// its x range: a marker's half width (3 px) and a little room.
const markerInset = 6

// markers reports whether any series draws markers.
func (c *Chart) markers() bool {
	for _, s := range c.Series {
		if s.Points || s.NoLine {
			return true
		}
	}
	return false
}

func (c *Chart) tx(x float64) float64 {
	if c.XScale == ScaleNines {
		return ninesX(x)
	}
	return x
}

// lineFrame fits f's data ranges to the series, bands and reference lines (writing
// "no data" into b when there is nothing to draw), and returns the y ticks.
func (c *Chart) lineFrame(b *strings.Builder, f *frame) []float64 {
	w, h := f.w, f.h
	f.ylog = c.YScale == ScaleLog
	f.x0, f.x1, f.y0, f.y1 = math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range c.Series {
		for i := range s.X {
			if f.gap(s.Y[i]) {
				continue
			}
			f.x0, f.x1 = math.Min(f.x0, c.tx(s.X[i])), math.Max(f.x1, c.tx(s.X[i]))
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
		fmt.Fprintf(b, `<text class="empty" x="%s" y="%s">no data</text>`, f1(w/2), f1(h/2))
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
	if c.yReach > f.y1 && !math.IsInf(f.y1, 0) {
		f.y1 = c.yReach // a panel of small multiples: the panels' common top
	}
	// Ticks round in the axis's unit (MB of 1024 × 1024 bytes, not millions).
	ydiv := c.YUnit.Div
	var yt []float64
	if f.ylog {
		yt = logTicks(f.y0/ydiv, f.y1/ydiv)
	} else {
		yt = niceTicks(f.y0/ydiv, f.y1/ydiv, 5)
		// The axis ends at a round tick clear above the highest value (by 3% of the
		// axis at least): the highest point then sits inside the frame, not on its
		// edge (a throughput spike drawn half outside, with no tick near it).
		for n := len(yt); n > 1 && yt[n-1]-f.y1/ydiv < 0.03*(yt[n-1]-yt[0]); n = len(yt) {
			yt = append(yt, yt[n-1]+(yt[1]-yt[0]))
		}
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
	return yt
}

// drawBands shades the bands, under everything else.
func (c *Chart) drawBands(b *strings.Builder, f *frame) {
	for _, bd := range c.Bands {
		x0, x1 := f.px(bd.X0), f.px(bd.X1)
		tip := bd.Tip
		if tip == "" {
			tip = bd.Label
		}
		fmt.Fprintf(b, `<rect class="band %s" x="%s" y="%s" width="%s" height="%s"><title>%s</title></rect>`,
			esc(bd.Kind), f1(x0), f1(f.top), f1(math.Max(x1-x0, 1)), f1(f.bott-f.top), esc(tip))
		fmt.Fprintf(b, `<text class="bandlabel" x="%s" y="%s">%s</text>`, f1(x0+3), f1(f.top+11), esc(bd.Label))
	}
}

// drawYGrid draws the y axis's grid lines and tick labels.
func (c *Chart) drawYGrid(b *strings.Builder, f *frame, yt []float64) {
	for _, v := range yt {
		y := f.py(v)
		fmt.Fprintf(b, `<line class="grid" x1="%s" y1="%s" x2="%s" y2="%s"/>`, f1(f.left), f1(y), f1(f.right), f1(y))
		fmt.Fprintf(b, `<text class="tick y" x="%s" y="%s">%s</text>`, f1(f.left-5), f1(y+4), esc(c.YUnit.Number(v)))
	}
}

// drawXTicks draws the x axis's grid lines and tick labels.
func (c *Chart) drawXTicks(b *strings.Builder, f *frame) {
	w := f.w
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
		fmt.Fprintf(b, `<line class="grid" x1="%s" y1="%s" x2="%s" y2="%s"/>`, f1(x), f1(f.top), f1(x), f1(f.bott))
		if label == "" {
			continue
		}
		// A label that would reach past the chart's right edge ends at its tick.
		cls := "tick x"
		if x+labelCharWidth/2*float64(len([]rune(label))) > w-2 {
			cls = "tick x end"
		}
		fmt.Fprintf(b, `<text class="%s" x="%s" y="%s">%s</text>`, cls, f1(x), f1(f.bott+14), esc(label))
	}
}

// drawRefs draws the reference lines and their labels.
func (c *Chart) drawRefs(b *strings.Builder, f *frame) {
	w := f.w
	for _, r := range c.HLines {
		if f.gap(r.At) {
			continue
		}
		y := f.py(r.At)
		fmt.Fprintf(b, `<line class="ref" x1="%s" y1="%s" x2="%s" y2="%s"/>`, f1(f.left), f1(y), f1(f.right), f1(y))
		fmt.Fprintf(b, `<text class="reflabel" x="%s" y="%s">%s</text>`, f1(f.right-4), f1(y-4), esc(r.Label))
	}
	for _, r := range c.VLines {
		x := f.px(c.tx(r.At))
		fmt.Fprintf(b, `<line class="ref" x1="%s" y1="%s" x2="%s" y2="%s"/>`, f1(x), f1(f.top), f1(x), f1(f.bott))
		// The label goes right of the line, or left of it where it would leave the chart.
		if x+4+6.2*float64(len([]rune(r.Label))) > w-2 {
			fmt.Fprintf(b, `<text class="reflabel v end" x="%s" y="%s">%s</text>`, f1(x-4), f1(f.top+24), esc(r.Label))
		} else {
			fmt.Fprintf(b, `<text class="reflabel v" x="%s" y="%s">%s</text>`, f1(x+4), f1(f.top+24), esc(r.Label))
		}
	}
}

// drawSeries draws each series' line and markers.
func (c *Chart) drawSeries(b *strings.Builder, f *frame) {
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
				d.WriteString(f1(f.px(c.tx(s.X[k]))) + " " + f1(f.py(s.Y[k])))
				pen = true
			}
			if d.Len() > 0 {
				fmt.Fprintf(b, `<path class="series" d="%s" stroke="%s"%s><title>%s</title></path>`, d.String(), s.Colour, dashAttr(s.Dash), esc(s.Name))
			}
		}
		if s.Points || s.NoLine {
			fmt.Fprintf(b, `<g class="points">`)
			for k := range s.X {
				if !f.gap(s.Y[k]) {
					marker(b, st.Marker, s.Colour, f.px(c.tx(s.X[k])), f.py(s.Y[k]))
				}
			}
			b.WriteString(`</g>`)
		}
	}
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
