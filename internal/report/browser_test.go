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
	fs, err := r.Files()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	index, err := WriteDir(dir, fs)
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(filepath.Join(t.TempDir(), "profile")),
		chromedp.WindowSize(1360, 900),
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
	charts, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("svg.chart").length`))
	if err != nil {
		t.Fatal(err)
	}
	sized, err := chromedp.Run(ctx, chromedp.Evaluate[int](`Array.from(document.querySelectorAll("svg.chart")).filter(s => {
		const b = s.getBoundingClientRect(); return b.width > 100 && b.height > 100 && s.querySelectorAll("path,rect,circle").length > 3 }).length`))
	if err != nil {
		t.Fatal(err)
	}
	data, err := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.parse(document.getElementById("fathom-data").textContent).title`))
	if err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.ArtifactDir(), "report.png")
	if err := os.WriteFile(out, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes); %d charts, %d drawn with size", out, len(shot), charts, sized)
	mu.Lock()
	defer mu.Unlock()
	if len(problems) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(problems, "\n"))
	}
	// 4 experiment charts + 3 small multiples + 4 per run.
	if want := 4 + 3 + 4*18; charts != want || sized != charts {
		t.Errorf("%d charts (%d drawn with size), want %d", charts, sized, want)
	}
	if data != r.Title {
		t.Errorf("embedded data title %q, want %q", data, r.Title)
	}
}
