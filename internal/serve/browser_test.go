package serve

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/report"
)

// chromium finds Debian's chromium; the test skips without it unless
// FATHOM_TEST_REQUIRE=1 (CI), where it fails.
func chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("FATHOM_TEST_REQUIRE") == "1" {
		t.Fatal("chromium is not installed but FATHOM_TEST_REQUIRE=1: install it (apt-get install chromium) or run .ci/run")
	}
	t.Skip("chromium not installed: skipping the browser test (apt-get install chromium)")
	return ""
}

// tab is a headless Chromium tab that collects console errors and warnings.
type tab struct {
	t        testing.TB
	ctx      context.Context
	mu       sync.Mutex
	problems []string
}

func newTab(t testing.TB) *tab {
	t.Helper()
	bin := chromium(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(filepath.Join(t.TempDir(), "profile")),
		chromedp.WindowSize(1360, 900),
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	ctx, cancel = context.WithTimeout(ctx, 120*time.Second)
	t.Cleanup(cancel)
	b := &tab{t: t, ctx: ctx}
	if err := chromedp.Do(ctx); err != nil {
		t.Fatal(err)
	}
	err := chromedp.Listen(ctx, func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning {
				var parts []string
				for _, a := range e.Args {
					parts = append(parts, string(a.Value))
				}
				b.problems = append(b.problems, string(e.Type)+": "+strings.Join(parts, " "))
			}
		case *runtime.EventExceptionThrown:
			b.problems = append(b.problems, "exception: "+e.ExceptionDetails.Text+" "+fmt.Sprint(e.ExceptionDetails.Exception.Description))
		case *cdplog.EventEntryAdded:
			if e.Entry.Level == cdplog.EntryLevelError || e.Entry.Level == cdplog.EntryLevelWarning {
				b.problems = append(b.problems, string(e.Entry.Level)+": "+e.Entry.Text+" "+e.Entry.URL)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if len(b.problems) > 0 {
			t.Errorf("console errors:\n%s", strings.Join(b.problems, "\n"))
		}
	})
	return b
}

// open loads a page and waits until the app says it has drawn it.
func (b *tab) open(url string) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, chromedp.Navigate(url)); err != nil {
		b.t.Fatal(err)
	}
	b.waitReady()
}

func (b *tab) waitReady() {
	b.t.Helper()
	b.until(`document.body.dataset.ready === location.hash || document.body.dataset.ready === "error"`)
	if b.str(`document.body.dataset.ready`) == "error" {
		b.t.Fatalf("the page shows an error: %s", b.str(`document.querySelector("main").textContent`))
	}
}

func eval[T any](b *tab, js string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](js))
	if err != nil {
		b.t.Fatalf("%s: %v", js, err)
	}
	return v
}

func (b *tab) num(js string) float64 { b.t.Helper(); return eval[float64](b, js) }
func (b *tab) str(js string) string  { b.t.Helper(); return eval[string](b, js) }

// until polls a JavaScript condition (the page updates on its own time).
// A page that is navigating (a link to another page was followed) has no context to
// evaluate in for a moment: such an error is waited out like a false condition.
func (b *tab) until(js string) {
	b.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ok, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool]("!!("+js+")"))
		if err != nil && !navigating(err) {
			b.t.Fatalf("%s: %v", js, err)
		}
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("waited 60s for %s (last error: %v)", js, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// navigating tells the errors of an evaluation cut short by a navigation.
func navigating(err error) bool {
	s := err.Error()
	return strings.Contains(s, "navigated or closed") || strings.Contains(s, "Cannot find context") ||
		strings.Contains(s, "Execution context was destroyed")
}

func (b *tab) do(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	for _, a := range actions {
		if _, err := chromedp.Run(b.ctx, a); err != nil {
			b.t.Fatal(err)
		}
	}
}

// shot saves a screenshot as a test artifact, and into $FATHOM_TEST_SCREENSHOTS.
func (b *tab) shot(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatal(err)
	}
	out := filepath.Join(b.t.ArtifactDir(), name)
	if err := os.WriteFile(out, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	if dst := os.Getenv("FATHOM_TEST_SCREENSHOTS"); dst != "" {
		_ = os.WriteFile(filepath.Join(dst, name), png, 0o644)
	}
	b.t.Logf("screenshot %s (%d bytes)", out, len(png))
}

// TestBrowseRuns: the runs list, filtered, then a run opened, zoomed to a time range,
// hovered and a series hidden; then two runs compared.
func TestBrowseRuns(t *testing.T) {
	b := newTab(t)
	st := openStore(t)
	for i := 0; i < 12; i++ {
		f := fixture{intervals: 5, tps: float64(100 + 10*i), labels: map[string]string{"variant": []string{"a", "b"}[i%2]}}
		if i%3 == 0 {
			f.workload, f.kind = "oltp_read_write", "mysql"
		}
		writeRun(t, st, i, f)
	}
	big := writeRun(t, st, 12, fixture{intervals: 120, dip: [2]int{60, 70}, metrics: 16, labels: map[string]string{"variant": "a", "note": "checkpoint test"}})
	if err := st.SaveRunErrors(context.Background(), big, []measure.SeenError{{Class: "serialization", Code: "40001",
		Message: "could not serialize access <b>due</b> to concurrent update", Txn: "tpcb", Client: 3, AtNs: 1_500_000_000, Count: 12}}); err != nil {
		t.Fatal(err)
	}
	_, hs := newTestServer(t, st, "")

	b.open(hs.URL + "/#/runs")
	if n := b.num(`document.querySelectorAll("#runs tbody tr").length`); n != 13 {
		t.Fatalf("%v rows, want 13", n)
	}
	b.shot("runs.png")
	b.readable("runs page")
	// Filter by target kind with the form, as a user would.
	b.str(`(() => { const s = document.querySelector("select[name=kind]"); s.value = "mysql"; s.dispatchEvent(new Event("change")); return ""; })()`)
	b.until(`location.hash.includes("kind=mysql") && document.body.dataset.ready === location.hash`)
	if n := b.num(`document.querySelectorAll("#runs tbody tr").length`); n != 4 {
		t.Fatalf("%v rows after filtering kind=mysql, want 4", n)
	}
	if got := b.str(`Array.from(document.querySelectorAll("#runs tbody tr td:nth-child(5)")).map(td => td.textContent).join(",")`); got != "mysql,mysql,mysql,mysql" {
		t.Errorf("kinds after filtering: %s", got)
	}
	// Sort by throughput.
	b.open(hs.URL + "/#/runs?sort=tps&order=desc")
	if first := b.num(`Number(document.querySelector("#runs tbody tr").dataset.id)`); first != 12 {
		t.Errorf("highest tps first: run %v", first)
	}
	// Open the long run from the list.
	b.open(hs.URL + "/#/runs")
	b.do(chromedp.Click(fmt.Sprintf(`#runs tr[data-id="%d"] a`, big)))
	b.until(`location.hash === "#/run/13" && document.body.dataset.ready === location.hash`)
	charts := b.num(`fathomCharts.length`)
	if charts < 5 {
		t.Fatalf("%v charts on the run page", charts)
	}
	if n := b.num(`document.querySelectorAll("#stalls table tbody tr").length`); n != 1 {
		t.Errorf("%v stall rows, want 1", n)
	}
	// The run's first errors, as text (the message's markup is not markup).
	if got := b.str(`Array.from(document.querySelectorAll("#errors tbody td")).map(td => td.textContent).join("|")`); got !=
		"1|serialization|40001|could not serialize access <b>due</b> to concurrent update|12|client 3 at 1.5 s in tpcb" {
		t.Errorf("error row %q", got)
	}
	b.shot("run.png")
	b.readable("run page")
	// Downloads: every format report's registry renders a run in, as links to files.
	if got := b.str(`Array.from(document.querySelectorAll(".downloads a")).map(a => a.textContent + "=" + new URL(a.href).pathname + new URL(a.href).search).join(" ")`); got !=
		"text=/api/runs/13/export?format=text csv=/api/runs/13/export?format=csv json=/api/runs/13/export?format=json junit=/api/runs/13/export?format=junit openmetrics=/api/runs/13/export?format=openmetrics" {
		t.Errorf("run downloads: %s", got)
	}
	// Zoom: drag across the middle of the throughput chart; every time chart follows.
	box := eval[[]float64](b, `(() => { const r = document.querySelector("#run-13-tps .u-over").getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()`)
	x0, x1, y := box[0]+box[2]*0.4, box[0]+box[2]*0.6, box[1]+box[3]/2
	b.do(chromedp.MouseEvent(chromedp.MouseMoved, x0, y),
		chromedp.MouseEvent(chromedp.MousePressed, x0, y, chromedp.ButtonLeft),
		chromedp.MouseEvent(chromedp.MouseMoved, (x0+x1)/2, y, chromedp.ButtonLeft),
		chromedp.MouseEvent(chromedp.MouseMoved, x1, y, chromedp.ButtonLeft),
		chromedp.MouseEvent(chromedp.MouseReleased, x1, y, chromedp.ButtonLeft))
	b.until(`fathomCharts[0].scales.x.min > 30`)
	lo, hi := b.num(`fathomCharts[0].scales.x.min`), b.num(`fathomCharts[0].scales.x.max`)
	if lo < 40 || hi > 80 || hi-lo < 15 {
		t.Errorf("zoomed to %v–%v s, want about 48–72", lo, hi)
	}
	if n := b.num(`fathomCharts.filter(u => u.__model.xscale !== "nines" && Math.abs(u.scales.x.min - fathomCharts[0].scales.x.min) < 1e-6).length`); n != b.num(`fathomCharts.filter(u => u.__model.xscale !== "nines").length`) {
		t.Errorf("only %v time charts followed the zoom", n)
	}
	// Hover: the legend shows the value under the cursor.
	b.do(chromedp.MouseEvent(chromedp.MouseMoved, box[0]+box[2]*0.5, y))
	b.until(`/\d/.test(document.querySelector("#run-13-tps .u-legend .u-series:nth-child(2) .u-value").textContent)`)
	b.shot("run-zoomed.png")
	// Hide a series by its legend entry.
	lb := eval[[]float64](b, `(() => { const e = document.querySelector("#run-13-latency .u-legend .u-series:nth-child(2) th"); e.scrollIntoView({block: "center"}); const r = e.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()`)
	b.do(chromedp.MouseClickXY(lb[0], lb[1]))
	b.until(`fathomCharts[1].series[1].show === false`)
	b.str(`(window.scrollTo(0, 0), "")`) // the sticky header would cover the button
	b.do(chromedp.Click(`#resetzoom`))
	b.until(`fathomCharts[0].scales.x.min < 1`)

	// Compare two runs picked on the list.
	b.open(hs.URL + "/#/runs")
	b.do(chromedp.Click(`#runs tr[data-id="13"] input`), chromedp.Click(`#runs tr[data-id="12"] input`), chromedp.Click(`.pager button:last-child`))
	b.until(`location.hash.startsWith("#/compare") && document.body.dataset.ready === location.hash`)
	if txt := b.str(`document.getElementById("comparison").textContent`); !strings.Contains(txt, "throughput") || !strings.Contains(txt, "latency p99") {
		t.Errorf("compare table: %s", txt)
	}
	if n := b.num(`fathomCharts.length`); n != 2 {
		t.Errorf("%v compare charts", n)
	}
	if got := b.str(`Array.from(document.querySelectorAll(".downloads a")).map(a => a.textContent).join(",")`); got != "text,markdown,csv,json,junit,openmetrics" {
		t.Errorf("compare downloads: %s", got)
	}
	b.shot("compare.png")
	b.readable("compare page")
}

// dragX drags across the chart's plot from fraction a to fraction b of its width.
func (b *tab) dragX(sel string, a, c float64) {
	b.t.Helper()
	box := eval[[]float64](b, `(() => { const e = document.querySelector(`+"`"+sel+" .u-over`"+`); e.scrollIntoView({block: "center"}); const r = e.getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()`)
	x0, x1, y := box[0]+box[2]*a, box[0]+box[2]*c, box[1]+box[3]/2
	b.do(chromedp.MouseEvent(chromedp.MouseMoved, x0, y),
		chromedp.MouseEvent(chromedp.MousePressed, x0, y, chromedp.ButtonLeft),
		chromedp.MouseEvent(chromedp.MouseMoved, (x0+x1)/2, y, chromedp.ButtonLeft),
		chromedp.MouseEvent(chromedp.MouseMoved, x1, y, chromedp.ButtonLeft),
		chromedp.MouseEvent(chromedp.MouseReleased, x1, y, chromedp.ButtonLeft))
}

// TestBrowseZoomFiner: a run of 2,000 intervals is drawn with 3 intervals merged per
// point; zooming into 200 s of it fetches that window's intervals, and the chart then
// shows every stored interval in view with the stored values.
func TestBrowseZoomFiner(t *testing.T) {
	b := newTab(t)
	st := openStore(t)
	ctx := context.Background()
	id := writeRun(t, st, 0, fixture{intervals: 2000, tps: 20, wobble: true, slowTail: true})
	run, err := st.Run(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	ivs, err := st.EncodedIntervals(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := report.NewRunData(run, ivs, len(ivs)) // one point per stored interval
	if err != nil {
		t.Fatal(err)
	}
	_, hs := newTestServer(t, st, "")
	b.open(fmt.Sprintf("%s/#/run/%d", hs.URL, id))
	all := b.num(`fathomCharts[0].data[0].length`)
	if all != 667 {
		t.Fatalf("%v points before zooming, want 667 (3 intervals each)", all)
	}
	// One 3 s transaction over a body of milliseconds: the distribution is on a log
	// axis, as the static report draws it.
	if distr := b.num(`fathomCharts.find(u => u.__model.xscale === "nines").scales.y.distr`); distr != 3 {
		t.Errorf("the latency distribution's y scale has distr %v, want 3 (log)", distr)
	}
	visible := `(k => { const u = fathomCharts[k]; const out = []; for (let i = 0; i < u.data[0].length; i++)
		if (u.data[0][i] >= u.scales.x.min && u.data[0][i] <= u.scales.x.max) out.push([u.data[0][i], u.data[1][i]]); return out; })`
	b.dragX(fmt.Sprintf("#run-%d-tps", id), 0.45, 0.55)
	b.until(`document.body.dataset.window`)
	lo, hi := b.num(`fathomCharts[0].scales.x.min`), b.num(`fathomCharts[0].scales.x.max`)
	if lo < 850 || hi > 1150 || hi-lo < 150 {
		t.Fatalf("zoomed to %v–%v s", lo, hi)
	}
	coarse := 0
	for x := 1.5; x < 2000; x += 3 { // the merged points' middles
		if x >= lo && x <= hi {
			coarse++
		}
	}
	for k, field := range []struct {
		name string
		v    func(report.Point) float64
	}{{"tps", func(p report.Point) float64 { return p.TPS }}, {"p99", func(p report.Point) float64 { return p.P99 }}} {
		got := eval[[][]float64](b, fmt.Sprintf("%s(%d)", visible, k))
		var want [][2]float64
		for _, p := range stored.Points {
			if x := (p.Start + p.End) / 2; x >= lo && x <= hi {
				want = append(want, [2]float64{x, field.v(p)})
			}
		}
		if len(got) != len(want) || len(got) <= coarse {
			t.Fatalf("%s: %d points in view after zooming, want the %d stored intervals (before: %d merged points)", field.name, len(got), len(want), coarse)
		}
		for i := range want {
			if math.Abs(got[i][0]-want[i][0]) > 1e-9 || math.Abs(got[i][1]-want[i][1]) > 1e-9*math.Abs(want[i][1]) {
				t.Fatalf("%s point %d: chart %v, stored interval %v", field.name, i, got[i], want[i])
			}
		}
		t.Logf("%s: %d points in %v–%v s after zooming (%d merged points before), equal to the stored intervals", field.name, len(got), lo, hi, coarse)
	}
	if note := b.str(`document.getElementById("zoomnote").textContent`); !strings.Contains(note, "every interval as stored") {
		t.Errorf("zoom note %q", note)
	}
	if sub := b.str(fmt.Sprintf(`document.querySelector("#run-%d-tps p.sub").textContent`, id)); strings.Contains(sub, "merges") {
		t.Errorf("the zoomed chart still says %q", sub)
	}
	b.shot("zoom-finer.png")
	b.str(`(window.scrollTo(0, 0), "")`)
	b.do(chromedp.Click(`#resetzoom`))
	b.until(`fathomCharts[0].data[0].length === 667 && fathomCharts[0].scales.x.min < 1`)
	if sub := b.str(fmt.Sprintf(`document.querySelector("#run-%d-tps p.sub").textContent`, id)); !strings.Contains(sub, "merges 3 intervals") {
		t.Errorf("after Reset zoom the chart says %q", sub)
	}
}

func TestBrowseExperiment(t *testing.T) {
	b := newTab(t)
	st := openStore(t)
	writeExperiment(t, st, 0, 3)
	_, hs := newTestServer(t, st, "")
	b.open(hs.URL + "/#/experiments")
	if n := b.num(`document.querySelectorAll("#experiments tbody tr").length`); n != 1 {
		t.Fatalf("%v experiments listed", n)
	}
	b.do(chromedp.Click(`#experiments tbody a`))
	b.until(`location.hash === "#/experiment/1" && document.body.dataset.ready === location.hash`)
	if n := b.num(`document.querySelectorAll("#cells tbody tr").length`); n != 4 {
		t.Errorf("%v cells, want 4", n)
	}
	// Three runs a cell cannot tell two cells apart: the page says so above the charts.
	b.until(`document.querySelector("ul.cautions li")`)
	if c := b.str(`document.querySelector("ul.cautions").textContent`); !strings.Contains(c, "With 3 repetitions a cell no difference between two cells can be significant") {
		t.Errorf("experiment page cautions: %q", c)
	}
	// The charts are drawn from the models the static report draws as SVG: box plot,
	// bars, the two scaling curves, the cells over time, and one small chart per
	// clients value.
	if got, want := b.str(`Array.from(document.querySelectorAll("#exp-charts figure")).map(f => f.dataset.kind).join(",")`),
		"box,bars,line,line,line,line,multiples,line,line,line,line"; got != want {
		t.Errorf("experiment figures %s, want %s", got, want)
	}
	if n := b.num(`document.querySelectorAll("#exp-charts figure.multiples figure.small canvas").length`); n != 4 {
		t.Errorf("%v small multiples drawn", n)
	}
	// The run-order charts (x: whole run numbers) label their ticks with run numbers
	// only: a fractional tick has no label, never "–". Zoomed to runs 1 to 2, uPlot puts
	// ticks at fractions, which the chart's filter leaves out.
	b.str(`(fathomCharts.filter(u => u.__model.xwhole).forEach(u => { u.__zoomed = true; u.setScale("x", {min: 1, max: 2}); }), "")`)
	b.until(`fathomCharts.filter(u => u.__model.xwhole).every(u => u.axes[0]._splits.length > 0 && u.axes[0]._splits.every(v => v === null || (v >= 1 && v <= 2)))`)
	labels := b.str(`fathomCharts.filter(u => u.__model.xwhole).map(u => u.axes[0]._values.filter(v => v !== null).join(" ")).join(" | ")`)
	raw := b.str(`JSON.stringify(fathomCharts.filter(u => u.__model.xwhole).map(u => [u.axes[0]._splits, u.axes[0]._values]))`)
	if labels == "" || strings.Contains(labels, "–") || !regexp.MustCompile(`^[0-9 |]+$`).MatchString(labels) || !regexp.MustCompile(`\d\.\d`).MatchString(raw) {
		t.Errorf("run-order tick labels %q (splits and labels %s)", labels, raw)
	}
	// Hovering the second box shows its median, quartiles and range, worded as the
	// static report's box plot says them.
	pos := eval[[]float64](b, `(() => { const u = fathomCharts.find(u => u.__model.kind === "box"); u.root.scrollIntoView({block: "center"});
		const r = u.over.getBoundingClientRect(); return [r.left + u.valToPos(1, "x"), r.top + r.height / 2]; })()`)
	b.do(chromedp.MouseEvent(chromedp.MouseMoved, pos[0], pos[1]))
	b.until(`/\d/.test(document.querySelector("#exp-box .u-legend .u-series:nth-child(2) .u-value").textContent)`)
	legend := b.str(`Array.from(document.querySelectorAll("#exp-box .u-legend .u-series")).map(s => s.querySelector("th").textContent.trim() + " " + s.querySelector(".u-value").textContent).join("; ")`)
	b.until(`(() => { const d = document.querySelector("iframe.report").contentDocument; return d && d.querySelectorAll("svg.chart").length > 3; })()`)
	title := b.str(`document.querySelector("iframe.report").contentDocument.querySelectorAll("#exp-box g.box title")[1].textContent`)
	t.Logf("hover: %s; static report: %s", legend, title)
	for _, k := range []string{"median", "q1", "q3", "min", "max"} {
		v := b.str(fmt.Sprintf(`Array.from(document.querySelectorAll("#exp-box .u-legend .u-series")).find(s => s.querySelector("th").textContent.trim() === %q).querySelector(".u-value").textContent`, k))
		if !strings.Contains(title, v) {
			t.Errorf("the UI shows %s %s; the static report's box says %q", k, v, title)
		}
	}
	if !strings.HasPrefix(title, b.str(`document.querySelector("#exp-box .u-legend .u-series:first-child .u-value").textContent`)+":") {
		t.Errorf("hovered category %q is not the report's box %q", b.str(`document.querySelector("#exp-box .u-legend .u-series:first-child .u-value").textContent`), title)
	}
	boxes := b.num(`document.querySelector("iframe.report").contentDocument.querySelectorAll("svg.chart g.box").length`)
	if boxes != 5 { // one per cell, and the last over every run
		t.Errorf("%v box plots in the experiment's static report, want 5 (4 cells and all runs)", boxes)
	}
	b.shot("experiment.png")
	b.readable("experiment page")
}

// TestBrowseLive: a run in progress; its page updates as intervals arrive and says
// when it ends.
func TestBrowseLive(t *testing.T) {
	b := newTab(t)
	st := openStore(t)
	f := fixture{intervals: 5, running: true}
	id := writeRun(t, st, 0, f)
	_, hs := newTestServer(t, st, "")
	b.open(hs.URL + "/#/run/1")
	b.until(`document.querySelector("#livestatus .live")`)
	b.str(`(window.firstChart = fathomCharts[0], "")`)
	rng := rand.New(rand.NewPCG(3, 4))
	for k := 5; k < 10; k++ {
		addInterval(t, st, id, k, &f, rng)
		b.until(fmt.Sprintf(`document.getElementById("livestatus").textContent.includes(" %d intervals") && fathomCharts[0].data[0].length === %d`, k+1, k+1))
	}
	if same := eval[bool](b, `fathomCharts[0] === window.firstChart`); !same {
		t.Error("the charts were drawn anew on each update instead of taking the new data in place")
	}
	b.shot("live.png")
	if err := st.FinishRun(context.Background(), id, "complete", "", epoch.Add(10*time.Second), nil); err != nil {
		t.Fatal(err)
	}
	b.until(`document.getElementById("livestatus").textContent.includes("ended")`)
	b.shot("live-ended.png")
	b.readable("live run page")
}
