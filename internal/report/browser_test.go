package report

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// chromium finds Debian's chromium; the test skips without it unless
// FATHOM_TEST_REQUIRE=1 (CI), where it fails.
func chromium(t *testing.T) string {
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

// TestReportInBrowser opens a generated experiment report in headless Chromium,
// checks that it renders without console errors and that its charts have size, and
// saves a screenshot as a test artifact (go test -artifacts keeps it).
func TestReportInBrowser(t *testing.T) {
	bin := chromium(t)
	slo, _ := ParseSLO("p99<10ms")
	r := buildReport(t, sweepFixture(), Options{SLO: slo, Generated: "fathom test"})
	b := browse(t, bin, r, "report.png", 1360, 900, readableChecks...)
	// 4 experiment charts + 2 time overlays + 3 small multiples + 4 per run.
	if want := 4 + 2 + 3 + 4*18; b.charts != want || b.sized != b.charts {
		t.Errorf("%d charts (%d drawn with size), want %d", b.charts, b.sized, want)
	}
	checkReadable(t, b.extra)
	// Every cell meets a loose objective: the knee is the last clients value, at the
	// right edge, and its label must stay inside the chart.
	loose, _ := ParseSLO("p99<1s")
	r = buildReport(t, sweepFixture(), Options{SLO: loose, Generated: "fathom test"})
	if k := r.Experiment.Knees[0]; k.Value != "32" {
		t.Fatalf("knee %+v, want clients=32", k)
	}
	checkReadable(t, browse(t, bin, r, "report-knee.png", 1360, 900, readableChecks...).extra)
	// A numeric axis with units, listed out of order in the plan.
	axes, specs := planSpecs(sizeSweep(t), "")
	e, err := newExperiment("sizes", axes, specs)
	if err != nil {
		t.Fatal(err)
	}
	r, err = newWithExperiment(e, Options{Generated: "fathom test"})
	if err != nil {
		t.Fatal(err)
	}
	checkReadable(t, browse(t, bin, r, "report-sizes.png", 1360, 900, readableChecks...).extra)
}

// outsideJS counts the chart texts that are cut or collide: reaching outside their
// chart's viewBox (mapped to the page, which clips them), or lying over another chart.
// Every run's section is opened first (a closed one keeps its charts' boxes, stacked).
const outsideJS = `(() => { document.querySelectorAll("details").forEach(d => { d.open = true; });
	const svgs = Array.from(document.querySelectorAll("svg.chart")), outer = svgs.map(s => s.getBoundingClientRect());
	let n = 0;
	svgs.forEach((s, i) => {
		let r = outer[i];
		const vb = s.viewBox.baseVal, m = s.getScreenCTM();
		if (vb && m && vb.width > 0) { const a = new DOMPoint(vb.x, vb.y).matrixTransform(m), c = new DOMPoint(vb.x + vb.width, vb.y + vb.height).matrixTransform(m);
			r = { left: Math.max(a.x, r.left), top: Math.max(a.y, r.top), right: Math.min(c.x, r.right), bottom: Math.min(c.y, r.bottom) }; }
		for (const t of s.querySelectorAll("text")) {
			const b = t.getBoundingClientRect();
			if (b.width === 0) continue;
			if (b.left < r.left - 1 || b.right > r.right + 1 || b.top < r.top - 1 || b.bottom > r.bottom + 1) { n++; continue; }
			if (outer.some((o, k) => k !== i && b.left < o.right - 1 && b.right > o.left + 1 && b.top < o.bottom - 1 && b.bottom > o.top + 1)) n++;
		}
	});
	return n; })()`

// readableChecks count what makes a chart unreadable: a tick reading "∞" or "NaN",
// text reaching outside its chart's viewBox or over another chart (a clipped category or
// axis label), and a bar, box or
// whisker touching the top of its frame.
var readableChecks = []string{
	`Array.from(document.querySelectorAll("svg.chart text")).filter(t => /∞|NaN/.test(t.textContent)).length`,
	outsideJS,
	`Array.from(document.querySelectorAll("svg.chart")).map(s => { const f = s.querySelector("rect.frame"); if (!f) return 0;
		const top = f.getBoundingClientRect().top;
		return Array.from(s.querySelectorAll("rect.bar:not(.key), g.box")).filter(e => e.getBoundingClientRect().top < top + 2).length })
		.reduce((a, b) => a + b, 0)`,
	`Array.from(document.querySelectorAll("svg.chart text.tick.x")).length`,
}

func checkReadable(t *testing.T, extra []int) {
	t.Helper()
	inf, outside, touching, xticks := extra[0], extra[1], extra[2], extra[3]
	t.Logf("%d x tick labels; %d read ∞ or NaN, %d texts outside their chart, %d bars or boxes touching the frame top", xticks, inf, outside, touching)
	if inf != 0 || outside != 0 || touching != 0 || xticks == 0 {
		t.Errorf("unreadable charts: %d ticks read ∞ or NaN, %d texts outside their chart, %d bars or boxes touching the frame top (%d x ticks)",
			inf, outside, touching, xticks)
	}
}

// TestSampledReportInBrowser opens the report of a run with server and OS samples and
// a stall: its metric charts are drawn at the throughput chart's width, and the stall
// is shaded (with the hatch pattern, distinct from warm-up) on every time chart.
func TestSampledReportInBrowser(t *testing.T) {
	bin := chromium(t)
	r := buildReport(t, []fixtureRun{sampledRun()}, Options{Generated: "fathom test"})
	b := browse(t, bin, r, "report-sampled.png", 1360, 900,
		`document.querySelectorAll("svg.chart[id^='run-1-metric-']").length`,
		`document.querySelectorAll("svg.chart rect.band.stall").length`,
		`Array.from(document.querySelectorAll("svg.chart[id^='run-1-metric-']")).filter(s =>
			Math.abs(s.getBoundingClientRect().width - document.getElementById("run-1-tps").getBoundingClientRect().width) < 1).length`,
		`document.querySelectorAll("table.stalls tbody tr").length`,
		`(() => { const s = getComputedStyle(document.querySelector("rect.band.stall")).fill,
			w = getComputedStyle(document.querySelector("rect.band.warmup")).fill; return s.includes("stallhatch") && s !== w ? 1 : 0 })()`)
	metrics, stallBands, sameWidth, rows, hatched := b.extra[0], b.extra[1], b.extra[2], b.extra[3], b.extra[4]
	t.Logf("%d metric charts (%d as wide as throughput), %d stall bands, %d stall rows", metrics, sameWidth, stallBands, rows)
	if metrics != 7 || sameWidth != metrics || stallBands != 3+metrics || rows != 1 || hatched != 1 {
		t.Errorf("%d metric charts (%d as wide as throughput), %d stall bands, %d stall rows, hatched %d", metrics, sameWidth, stallBands, rows, hatched)
	}
	if b.sized != b.charts || b.charts != 4+7 {
		t.Errorf("%d charts, %d drawn with size", b.charts, b.sized)
	}
}

type browsed struct {
	charts, sized int
	extra         []int
}

// browse writes the report, opens it in headless Chromium, checks that it renders
// without console errors and that its embedded data parses, saves a screenshot as a
// test artifact (go test -artifacts keeps it), and evaluates the extra expressions.
func browse(t *testing.T, bin string, r *Report, shotName string, width, height int, extra ...string) browsed {
	t.Helper()
	fs, err := r.Files()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	index, err := WriteDir(dir, fs, false)
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(filepath.Join(t.TempDir(), "profile")),
		chromedp.WindowSize(width, height),
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
	defer cancel()

	var mu sync.Mutex
	var problems []string
	// Start the browser, then listen before loading the page.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatal(err)
	}
	err = chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning {
				var parts []string
				for _, a := range e.Args {
					parts = append(parts, string(a.Value))
				}
				problems = append(problems, string(e.Type)+": "+strings.Join(parts, " "))
			}
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+e.ExceptionDetails.Text)
		case *cdplog.EventEntryAdded:
			if e.Entry.Level == cdplog.EntryLevelError || e.Entry.Level == cdplog.EntryLevelWarning {
				problems = append(problems, string(e.Entry.Level)+": "+e.Entry.Text+" "+e.Entry.URL)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+index), chromedp.WaitReady("#runs")); err != nil {
		t.Fatal(err)
	}
	var b browsed
	b.charts, err = chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("svg.chart").length`))
	if err != nil {
		t.Fatal(err)
	}
	b.sized, err = chromedp.Run(ctx, chromedp.Evaluate[int](`Array.from(document.querySelectorAll("svg.chart")).filter(s => {
		const b = s.getBoundingClientRect(); return b.width > 100 && b.height > 100 && s.querySelectorAll("path,rect,circle").length > 3 }).length`))
	if err != nil {
		t.Fatal(err)
	}
	for _, js := range extra {
		v, err := chromedp.Run(ctx, chromedp.Evaluate[int](js))
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		b.extra = append(b.extra, v)
	}
	data, err := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.parse(document.getElementById("fathom-data").textContent).title`))
	if err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.ArtifactDir(), shotName)
	if err := os.WriteFile(out, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	if dst := os.Getenv("FATHOM_TEST_SCREENSHOTS"); dst != "" { // a directory to copy screenshots to, to look at them
		_ = os.WriteFile(filepath.Join(dst, shotName), shot, 0o644)
	}
	t.Logf("screenshot: %s (%d bytes); %d charts, %d drawn with size", out, len(shot), b.charts, b.sized)
	mu.Lock()
	defer mu.Unlock()
	if len(problems) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(problems, "\n"))
	}
	if data != r.Title {
		t.Errorf("embedded data title %q, want %q", data, r.Title)
	}
	return b
}
