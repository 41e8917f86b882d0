package serve

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// clippedCanvasJS lists the text of the page's canvas charts (uPlot) that is cut or
// collides: an axis label longer than the chart has room for (it is drawn centred on
// the plot, so it is cut at the canvas's edge), a y tick value wider than its axis
// (cut at the left edge or over the axis label), x tick values that overlap their
// neighbours, and slanted x tick values deeper than their axis (cut at the bottom). Canvas text is not in the DOM: it is measured with the axis's own font.
const clippedCanvasJS = `(() => {
	const out = [], m = document.createElement("canvas").getContext("2d");
	const name = u => { const f = u.root.closest("figure"); return f ? f.dataset.title || f.id : "chart"; };
	for (const u of window.fathomCharts || []) {
		if (!u.root.isConnected || !u.ctx) continue;
		const W = u.ctx.canvas.width, H = u.ctx.canvas.height, b = u.bbox, dpr = devicePixelRatio;
		u.axes.forEach((a, i) => {
			if (!a.show || !a._show) return;
			const vertical = a.side % 2 === 1;
			const label = typeof a.label === "function" ? a.label(u, i, 0, 0) : a.label;
			if (label) {
				m.font = a.labelFont[0];
				const w = m.measureText(label).width, mid = vertical ? b.top + b.height / 2 : b.left + b.width / 2, lim = vertical ? H : W;
				if (mid - w / 2 < -0.5 || mid + w / 2 > lim + 0.5)
					out.push(name(u) + ": axis label '" + label + "' is " + Math.round(w / dpr) + " px long, room for " + Math.round(2 * Math.min(mid, lim - mid) / dpr));
			}
			const vals = (a._values || []).map(v => v === null || v === undefined ? "" : String(v));
			m.font = a.font[0];
			if (vertical) {
				const room = (a._size - (a.ticks && a.ticks.show !== false ? a.ticks.size || 0 : 0) - a.gap) * dpr;
				for (const v of vals) { const w = m.measureText(v).width; if (w > room + 0.5) out.push(name(u) + ": y tick '" + v + "' is " + Math.round(w / dpr) + " px wide, the axis has " + Math.round(room / dpr)); }
			} else if (a._rotate) {
				// Slanted names hang below the plot: each must end within the axis's depth.
				const th = Math.abs(a._rotate) * Math.PI / 180, room = (a._size - (a.ticks && a.ticks.show !== false ? a.ticks.size || 0 : 0) - a.gap) * dpr;
				for (const v of vals) { const d = m.measureText(v).width * Math.sin(th) + a.font[1] * Math.cos(th) * 0.8; if (d > room + 0.5) out.push(name(u) + ": slanted x tick '" + v + "' needs " + Math.round(d / dpr) + " px below the plot, the axis has " + Math.round(room / dpr)); }
			} else {
				let right = -Infinity;
				(a._splits || []).forEach((s, k) => {
					const v = vals[k]; if (!v) return;
					const x = u.valToPos(s, a.scale, true), w = m.measureText(v).width;
					if (x - w / 2 < right - 0.5) out.push(name(u) + ": x tick '" + v + "' overlaps the one before it");
					if (x - w / 2 < -0.5 || x + w / 2 > W + 0.5) out.push(name(u) + ": x tick '" + v + "' is cut at the chart's edge");
					right = x + w / 2;
				});
			}
		});
	}
	return out.join("\n");
})()`

// clippedSVGJS lists the SVG text of a document's charts (the static report's, here in
// the experiment page's frame) that is cut or collides: text reaching outside its
// chart's viewBox (which clips it), or over another chart.
const clippedSVGJS = `(doc => {
	doc.querySelectorAll("details").forEach(d => { d.open = true; }); // a closed one keeps its charts' boxes, stacked
	const out = [], svgs = Array.from(doc.querySelectorAll("svg.chart"));
	const rects = svgs.map(s => { const vb = s.viewBox.baseVal, m = s.getScreenCTM(), r = s.getBoundingClientRect();
		if (!vb || !m || vb.width === 0) return r;
		const p = (x, y) => new DOMPoint(x, y).matrixTransform(m), a = p(vb.x, vb.y), c = p(vb.x + vb.width, vb.y + vb.height);
		return { left: Math.max(a.x, r.left), top: Math.max(a.y, r.top), right: Math.min(c.x, r.right), bottom: Math.min(c.y, r.bottom) }; });
	const outer = svgs.map(s => s.getBoundingClientRect());
	svgs.forEach((s, i) => {
		const r = rects[i];
		for (const t of s.querySelectorAll("text")) {
			const b = t.getBoundingClientRect();
			if (b.width === 0) continue;
			const what = (s.id || "chart") + ": '" + t.textContent.slice(0, 60) + "'";
			if (b.left < r.left - 1 || b.right > r.right + 1 || b.top < r.top - 1 || b.bottom > r.bottom + 1) out.push(what + " reaches outside its chart");
			outer.forEach((o, k) => { if (k !== i && b.left < o.right - 1 && b.right > o.left + 1 && b.top < o.bottom - 1 && b.bottom > o.top + 1) out.push(what + " lies over chart " + (svgs[k].id || k)); });
		}
	});
	return out.join("\n");
})`

// readable fails the test on any cut or colliding text on the page shown, in its
// canvas charts and in the SVG charts of the page and of its static report's frame.
func (b *tab) readable(page string) {
	b.t.Helper()
	var problems []string
	if s := b.str(clippedCanvasJS); s != "" {
		problems = append(problems, s)
	}
	if s := b.str(clippedSVGJS + `(document)`); s != "" {
		problems = append(problems, s)
	}
	b.until(`(() => { const f = document.querySelector("iframe.report"); return !f || (f.contentDocument && f.contentDocument.readyState === "complete"); })()`)
	if s := b.str(`(() => { const f = document.querySelector("iframe.report"); return f && f.contentDocument ? ` + clippedSVGJS + `(f.contentDocument) : ""; })()`); s != "" {
		problems = append(problems, "static report: "+s)
	}
	b.t.Logf("%s: %v canvas charts and %v SVG chart texts (with the static report's) checked for cut text", page,
		b.num(`(window.fathomCharts || []).filter(u => u.root.isConnected).length`),
		b.num(`(() => { const f = document.querySelector("iframe.report"), n = d => Array.from(d.querySelectorAll("svg.chart text")).filter(t => t.getBoundingClientRect().width > 0).length;
			return n(document) + (f && f.contentDocument ? n(f.contentDocument) : 0); })()`))
	if len(problems) > 0 {
		b.t.Errorf("%s: text cut or overlapping:\n%s", page, strings.Join(problems, "\n"))
	}
}

// TestClippedTextFound checks the checks: an SVG label past its viewBox, and a canvas
// chart's axis label longer than the chart, are both found.
func TestClippedTextFound(t *testing.T) {
	b := newTab(t)
	_, hs := newTestServer(t, openStore(t), "")
	b.open(hs.URL + "/#/runs")
	b.do(chromedp.Navigate(hs.URL + "/#/runs"))
	b.str(`(() => { const d = document.createElement("div"); document.body.append(d);
		d.innerHTML = '<svg class="chart" id="c" viewBox="0 0 200 100" width="200" height="100"><text x="150" y="50">far too long to fit here</text></svg>';
		const p = document.createElement("figure"); p.dataset.title = "selftest"; d.append(p);
		window.fathomCharts.push(new uPlot({ width: 300, height: 150, series: [{}, { label: "a" }], axes: [{}, { label: "a label far longer than the one hundred pixels of this chart's plot" }] }, [[0, 1], [1, 2]], p));
		return ""; })()`)
	if s := b.str(clippedSVGJS + `(document)`); !strings.Contains(s, "reaches outside its chart") {
		t.Errorf("a label past the viewBox was not found: %q", s)
	}
	if s := b.str(clippedCanvasJS); !strings.Contains(s, "selftest: axis label 'a label far longer") {
		t.Errorf("a canvas axis label longer than its chart was not found: %q", s)
	}
}

// TestSlantedNamesFit: a box plot whose cell names are too long to stand side by side
// (server=innodb clients=1 …) slants them, and every one ends inside the chart.
func TestSlantedNamesFit(t *testing.T) {
	b := newTab(t)
	_, hs := newTestServer(t, openStore(t), "")
	b.open(hs.URL + "/#/runs")
	b.str(`(() => { const boxes = [];
		for (const s of ["innodb", "pg", "aria"]) for (const c of [1, 4]) boxes.push({ label: "server=" + s + " clients=" + c, median: 100 * c, q1: 90 * c, q3: 110 * c, min: 80 * c, max: 120 * c, points: [100 * c] });
		boxes.push({ label: "all runs", median: 200, q1: 100, q3: 400, min: 80, max: 480, points: [] });
		const d = document.createElement("div"); d.style.width = "600px"; document.querySelector("main").append(d);
		drawChart(d, { kind: "box", id: "slanted", title: "Throughput per cell", ylabel: "transactions per second", boxes });
		return ""; })()`)
	if r := b.num(`fathomCharts.find(u => u.__model.id === "slanted").axes[0]._rotate`); r == 0 {
		t.Fatal("the long names were not slanted")
	}
	b.shot("slanted.png")
	b.readable("slanted box plot")
}
