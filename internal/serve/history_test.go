package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/store"
)

// seriesStore writes n complete runs of one series, tps 1000 (±1%) with
// synchronous_commit on until run stepAt, 1500 with it off from there; it returns
// their ids.
func seriesStore(t testing.TB, st store.Store, n, stepAt int) []int64 {
	t.Helper()
	ctx := context.Background()
	var ids []int64
	for i := 1; i <= n; i++ {
		tps, sc := 1000.0, "on"
		if i >= stepAt {
			tps, sc = 1500, "off"
		}
		tps += float64(i%5-2) * 5
		r := &store.Run{ToolVersion: "test", Workload: "tpcb", Options: map[string]string{"scale": "10"}, TargetKind: "postgres",
			Target: "postgres://bench@db1/bench", ServerVersion: "16.4", Settings: map[string]string{"synchronous_commit": sc},
			Host: store.Host{Hostname: "bench1", CPUs: 8}, Clients: 4, Duration: 10 * time.Second, Interval: time.Second,
			TxnTypes: []string{"tpcb"}, StartedAt: epoch.Add(time.Duration(i) * time.Hour)}
		id, err := st.CreateRun(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		js, _ := json.Marshal(measure.Summary{TypeSummary: measure.TypeSummary{Transactions: int64(tps * 10), TPS: tps,
			Latency: measure.Latency{P50: 2, P95: 3, P99: 4}}})
		if err := st.FinishRun(ctx, id, "complete", "", r.StartedAt.Add(r.Duration), js); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

func TestHistoryPages(t *testing.T) {
	st := openStore(t)
	ids := seriesStore(t, st, 20, 11)
	_, hs := newTestServer(t, st, "")
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(fmt.Sprintf("%s/history/run/%d", hs.URL, ids[3]))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	page := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusFound || !strings.HasPrefix(page, "/history/s") {
		t.Fatalf("a run's history: %d to %q", resp.StatusCode, page)
	}
	var h struct {
		Points  []any `json:"points"`
		Changes []struct {
			Metric  string   `json:"metric"`
			RunID   int64    `json:"run_id"`
			Changed []string `json:"changed"`
		} `json:"changes"`
	}
	if code := getJSON(t, hs.URL+"/api"+page, &h); code != 200 || len(h.Points) != 20 || len(h.Changes) != 1 ||
		h.Changes[0].RunID != ids[10] || h.Changes[0].Changed[0] != "setting synchronous_commit: on → off" {
		t.Fatalf("/api%s: %d, %d points, changes %+v", page, code, len(h.Points), h.Changes)
	}
	// A new run of the series is on the page at once (the kept history is dropped).
	r := &store.Run{ToolVersion: "test", Workload: "tpcb", Options: map[string]string{"scale": "10"}, TargetKind: "postgres",
		Target: "postgres://bench@db1/bench", Clients: 4, Duration: 10 * time.Second, Interval: time.Second, StartedAt: epoch.Add(100 * time.Hour)}
	id, err := st.CreateRun(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(measure.Summary{TypeSummary: measure.TypeSummary{Transactions: 1, TPS: 1500}})
	if err := st.FinishRun(context.Background(), id, "complete", "", r.StartedAt.Add(r.Duration), js); err != nil {
		t.Fatal(err)
	}
	if code := getJSON(t, hs.URL+"/api"+page, &h); code != 200 || len(h.Points) != 21 {
		t.Fatalf("after a new run: %d, %d points, want 21", code, len(h.Points))
	}
	for _, c := range []struct {
		path string
		code int
	}{{"/history/nosuch", 404}, {page + "?metric=p98", 400}, {"/history/run/99999", 404}, {"/api/history/nosuch", 404}} {
		resp, err := noRedirect.Get(hs.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.code {
			t.Errorf("%s: %d, want %d", c.path, resp.StatusCode, c.code)
		}
	}
}

// TestBrowseHistory: from a run's page to its series' history, the change marked on
// the chart and explained under it, and back to a run by its point.
func TestBrowseHistory(t *testing.T) {
	b := newTab(t)
	st := openStore(t)
	ids := seriesStore(t, st, 20, 11)
	_, hs := newTestServer(t, st, "")

	b.open(fmt.Sprintf("%s/#/run/%d", hs.URL, ids[4]))
	b.until(`document.getElementById("series-history")`)
	b.do(chromedp.Click("#series-history"))
	b.until(`document.readyState === "complete" && document.body.dataset.ready === "history" && document.getElementById("chart")`)
	if n := b.num(`document.querySelectorAll("#chart circle.point").length`); n != 20 {
		t.Fatalf("%v points on the chart, want 20: %s %s", n, b.str(`location.href`), b.str(`document.querySelector("main").textContent.slice(0, 400)`))
	}
	if got := b.str(`Array.from(document.querySelectorAll("#chart circle.change")).map(c => c.dataset.run).join(",")`); got != fmt.Sprint(ids[10]) {
		t.Errorf("change points drawn at runs %q, want %d", got, ids[10])
	}
	if n := b.num(`document.querySelectorAll("#chart line.mark.better").length`); n != 1 {
		t.Errorf("%v change marks (better), want 1", n)
	}
	// The mark stands between runs 10 and 11 on the chart.
	if ok := eval[bool](b, fmt.Sprintf(`(() => { const m = document.querySelector("#chart line.mark"); const a = document.querySelector('#chart circle[data-run="%d"]'); const c = document.querySelector('#chart circle[data-run="%d"]');
		const x = +m.getAttribute("x1"); return +a.getAttribute("cx") < x && x < +c.getAttribute("cx"); })()`, ids[9], ids[10])); !ok {
		t.Errorf("the change mark is not between runs %d and %d", ids[9], ids[10])
	}
	why := b.str(`document.querySelector("ol.changes li").textContent`)
	if !strings.Contains(why, "What changed: setting synchronous_commit: on → off") || !strings.Contains(why, "+50.0%") {
		t.Errorf("the change is explained as %q", why)
	}
	if n := b.num(`document.querySelectorAll("#history-runs tbody tr").length`); n != 20 {
		t.Errorf("%v rows in the runs table, want 20", n)
	}
	b.shot("history.png")
	// Another metric: charted, no change looked for in p95.
	b.do(chromedp.Navigate(hs.URL + b.str(`location.pathname`) + "?metric=p95"))
	b.until(`document.readyState === "complete" && document.body.dataset.ready === "history" && document.querySelector("p.none")`)
	if txt := b.str(`document.querySelector("p.none").textContent`); !strings.Contains(txt, "p95 is charted only") {
		t.Errorf("p95: %q", txt)
	}
	// A point opens its run.
	b.do(chromedp.Navigate(hs.URL + b.str(`location.pathname`)))
	b.until(`document.readyState === "complete" && document.body.dataset.ready === "history" && document.getElementById("chart")`)
	b.str(fmt.Sprintf(`(() => { document.querySelector('#chart circle[data-run="%d"]').parentNode.dispatchEvent(new MouseEvent("click", {bubbles: true})); return ""; })()`, ids[10]))
	b.until(fmt.Sprintf(`location.hash === "#/run/%d" && document.body && document.body.dataset.ready === location.hash`, ids[10]))
}

// BenchmarkHistoryPage10k: the history page of a series of 10,000 runs: the first
// load (the runs read, changes looked for in three figures, the SVG drawn) and a load
// with no new run since (the history kept; the page drawn).
func BenchmarkHistoryPage10k(b *testing.B) {
	st := openStore(b)
	ids := seriesStore(b, st, 10000, 5000)
	_, hs := newTestServer(b, st, "")
	get := func() int {
		resp, err := http.Get(fmt.Sprintf("%s/history/run/%d", hs.URL, ids[0]))
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("%d", resp.StatusCode)
		}
		return int(n)
	}
	start, cpu := time.Now(), processCPU()
	size := get()
	first, firstCPU := time.Since(start), processCPU()-cpu
	for b.Loop() {
		get()
	}
	// After the loop: ReportMetric's values before it would be reset with the timer.
	// The CPU time (this process's, the server's included) says more than the wall
	// time on a machine shared with other work.
	b.ReportMetric(first.Seconds(), "first-load-s")
	b.ReportMetric(firstCPU, "first-load-cpu-s")
	b.ReportMetric(float64(size)/1024, "page-KiB")
}
