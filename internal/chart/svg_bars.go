package chart

import (
	"fmt"
	"math"
	"strings"
)

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
