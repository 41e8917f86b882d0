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
		ShareY(r.Panels)
		var b strings.Builder
		for i := range r.Panels {
			b.WriteString(r.Panels[i].SVG())
		}
		return b.String()
	}
	return r.line()
}

// ShareY gives small multiples' panels one y scale, as serve's are drawn: side by
// side, a panel whose axis ended lower would draw its runs as tall as another's twice
// as fast. Each panel's axis reaches the highest value of them all.
func ShareY(panels []Chart) {
	hi := math.Inf(-1)
	for _, p := range panels {
		for _, s := range p.Series {
			for _, v := range s.Y {
				if !math.IsNaN(v) && !math.IsInf(v, 0) {
					hi = math.Max(hi, v)
				}
			}
		}
	}
	if math.IsInf(hi, -1) {
		return
	}
	for i := range panels {
		panels[i].yReach = hi
	}
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
	xin                    float64 // pixels between the frame's sides and the x range's ends
}

// gap reports whether y is not drawn: NaN, or not above zero on a log axis.
func (f *frame) gap(y float64) bool { return math.IsNaN(y) || (f.ylog && !(y > 0)) }

func (f *frame) px(x float64) float64 {
	if f.x1 == f.x0 {
		return (f.left + f.right) / 2
	}
	l, r := f.left+f.xin, f.right-f.xin
	return l + (x-f.x0)/(f.x1-f.x0)*(r-l)
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
