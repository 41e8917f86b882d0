package report

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/analyze"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/store"
)

// seriesRuns is n complete runs of one series, a day apart, tps around 1000 (2%
// noise) until run stepAt, where synchronous_commit goes off and tps to 1400 and p99
// drops from 8 to 5 ms.
func seriesRuns(n, stepAt int) []*store.Run {
	rng := rand.New(rand.NewPCG(42, 7))
	start := time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)
	var runs []*store.Run
	for i := 1; i <= n; i++ {
		tps, p99, sc := 1000.0, 8.0, "on"
		if i >= stepAt {
			tps, p99, sc = 1400, 5, "off"
		}
		s := measure.Summary{TypeSummary: measure.TypeSummary{TPS: round(tps*(1+rng.NormFloat64()*0.02), 2),
			Latency: measure.Latency{P50: 2, P95: round(p99*0.7, 3), P99: round(p99*(1+rng.NormFloat64()*0.02), 3), P999: 12, Mean: 2.1}}}
		js, _ := json.Marshal(s)
		runs = append(runs, &store.Run{ID: int64(i), Workload: "tpcb", Options: map[string]string{"scale": "1"},
			TargetKind: "postgres", Target: "postgres://bench@db1:5432/bench", ServerVersion: "15.20", ToolVersion: "v1.0.0",
			Settings: map[string]string{"synchronous_commit": sc, "shared_buffers": "128MB"}, Host: store.Host{Hostname: "ci-1", CPUs: 2},
			Labels: map[string]string{"rep": fmt.Sprint(i)}, Clients: 4, Duration: 10 * time.Second,
			StartedAt: start.Add(time.Duration(i) * 24 * time.Hour), Status: "complete", Summary: js})
	}
	return runs
}

func round(v float64, d int) float64 {
	p := 1.0
	for range d {
		p *= 10
	}
	return float64(int64(v*p+0.5)) / p
}

func TestSeriesKey(t *testing.T) {
	a := seriesRuns(2, 99)
	if KeyOf(a[0], nil).ID() != KeyOf(a[1], nil).ID() {
		t.Fatalf("two runs differing only in rep and start are in different series: %v, %v", KeyOf(a[0], nil), KeyOf(a[1], nil))
	}
	id := KeyOf(a[0], nil).ID()
	if !seriesIDPattern.MatchString(id) {
		t.Fatalf("series id %q is not s + 10 hex digits", id)
	}
	change := func(f func(r *store.Run)) string {
		r := *seriesRuns(1, 99)[0]
		r.Options = map[string]string{"scale": "1"}
		r.Labels = map[string]string{}
		f(&r)
		return KeyOf(&r, []string{"branch"}).ID()
	}
	same := map[string]func(r *store.Run){
		"settings":       func(r *store.Run) { r.Settings = map[string]string{"synchronous_commit": "off"} },
		"server version": func(r *store.Run) { r.ServerVersion = "16.1" },
		"host":           func(r *store.Run) { r.Host.Hostname = "other" },
		"fathom version": func(r *store.Run) { r.ToolVersion = "v2" },
		"a note":         func(r *store.Run) { r.Labels["note"] = "after the upgrade" },
		"other labels":   func(r *store.Run) { r.Labels["ticket"] = "42" },
	}
	for what, f := range same {
		if got := change(f); got != id {
			t.Errorf("changing the %s moved the run to series %s (want %s)", what, got, id)
		}
	}
	differ := map[string]func(r *store.Run){
		"workload":  func(r *store.Run) { r.Workload = "tpcb-select" },
		"an option": func(r *store.Run) { r.Options["scale"] = "10" },
		"target":    func(r *store.Run) { r.Target = "postgres://bench@db2:5432/bench" },
		"clients":   func(r *store.Run) { r.Clients = 8 },
		"rate":      func(r *store.Run) { r.Rate = 500 },
		"duration":  func(r *store.Run) { r.Duration = time.Minute },
		"key label": func(r *store.Run) { r.Labels["branch"] = "feature" },
		"experiment cell": func(r *store.Run) {
			r.Labels["experiment"], r.Labels["synchronous_commit"] = "durability", "off"
		},
	}
	for what, f := range differ {
		if got := change(f); got == id {
			t.Errorf("changing the %s left the run in series %s", what, id)
		}
	}
	named := change(func(r *store.Run) { r.Labels[SeriesLabel] = "nightly"; r.Clients = 64 })
	if named != "nightly" {
		t.Errorf("a run labelled series=nightly is in series %q", named)
	}
	// An experiment's repetitions of one cell are one series.
	r1, r2 := *a[0], *a[1]
	r1.Labels = map[string]string{"experiment": "durability", "synchronous_commit": "off", "rep": "1"}
	r2.Labels = map[string]string{"experiment": "durability", "synchronous_commit": "off", "rep": "2"}
	if KeyOf(&r1, nil).ID() != KeyOf(&r2, nil).ID() {
		t.Errorf("two repetitions of an experiment's cell are in different series")
	}
}

func testHistory(t *testing.T) *History {
	runs := seriesRuns(20, 11)
	k := KeyOf(runs[0], nil)
	h, err := BuildHistory(k.ID(), k, runs, DefaultHistoryMetrics, analyze.ChangeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestHistoryFindsTheChangeAndWhatChanged(t *testing.T) {
	h := testHistory(t)
	if len(h.Points) != 20 {
		t.Fatalf("%d points, want 20", len(h.Points))
	}
	var metrics []string
	for _, c := range h.Changes {
		metrics = append(metrics, c.Metric)
		if c.RunID != 11 || c.PrevRunID != 10 {
			t.Errorf("%s change at run %d (after %d), want at run 11", c.Metric, c.RunID, c.PrevRunID)
		}
		if c.Worse {
			t.Errorf("%s: a change for the better called worse", c.Metric)
		}
		if len(c.Changed) != 1 || c.Changed[0] != "setting synchronous_commit: on → off" {
			t.Errorf("%s change explained by %q", c.Metric, c.Changed)
		}
	}
	if strings.Join(metrics, ",") != "tps,p99" {
		t.Errorf("changes in %v, want tps and p99 (errors stay 0)", metrics)
	}
}

func TestHistoryOutputs(t *testing.T) {
	h := testHistory(t)
	for _, f := range []string{"text", "csv", "json"} {
		var b bytes.Buffer
		if err := renderFormat(context.Background(), &b, f, KindHistory, h); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		golden(t, "history."+f, b.Bytes())
	}
	// Reversed, the step is a regression in the newest runs.
	runs := seriesRuns(20, 11)
	for i, r := range runs {
		var s measure.Summary
		_ = json.Unmarshal(r.Summary, &s)
		s.TPS = 2400 - s.TPS
		s.Latency.P99 = 13 - s.Latency.P99
		r.Summary, _ = json.Marshal(s)
		r.StartedAt = runs[0].StartedAt.Add(time.Duration(i) * time.Hour)
		r.Settings = map[string]string{"synchronous_commit": map[bool]string{true: "on", false: "off"}[i >= 10]}
	}
	k := KeyOf(runs[0], nil)
	rh, err := BuildHistory(k.ID(), k, runs, DefaultHistoryMetrics, analyze.ChangeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	old := CheckRegressions(rh, 3)
	if old.Regressed() {
		t.Errorf("the newest 3 runs came 7 runs after the change, yet regressed: %+v", old.Found)
	}
	reg := CheckRegressions(rh, 10)
	if !reg.Regressed() || len(reg.Found) != 2 {
		t.Fatalf("the newest 10 runs hold the change for the worse, found %+v", reg.Found)
	}
	for _, f := range []string{"text", "junit", "json"} {
		var b bytes.Buffer
		if err := renderFormat(context.Background(), &b, f, KindRegressions, reg); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if f == "junit" {
			var v struct {
				Failures int `xml:"failures,attr"`
				Tests    int `xml:"tests,attr"`
			}
			if err := xml.Unmarshal(b.Bytes(), &v); err != nil || v.Failures != 2 || v.Tests != 3 {
				t.Errorf("junit: %d failures of %d tests (%v), want 2 of 3", v.Failures, v.Tests, err)
			}
		}
		golden(t, "regressions."+f, b.Bytes())
	}
}

// TestHistoryHTMLFile: `fathom history SERIES -f html` is a page of its own: a chart
// for every metric, the change found and what changed, no link to serve's pages and
// no stylesheet to fetch; serve's page (one metric) links its runs.
func TestHistoryHTMLFile(t *testing.T) {
	h := testHistory(t)
	var b bytes.Buffer
	if err := renderFormat(context.Background(), &b, "html", KindHistory, h); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if n := strings.Count(page, `<svg class="history"`); n != len(historyMetrics) {
		t.Errorf("%d charts, want one per metric (%d)", n, len(historyMetrics))
	}
	for _, bad := range []string{`href="/`, "/ui/app.css", "/api/"} {
		if strings.Contains(page, bad) {
			t.Errorf("the file links to serve (%q)", bad)
		}
	}
	if len(h.Changes) == 0 || !strings.Contains(page, "What changed: "+strings.Join(h.Changes[0].Changed, "; ")) {
		t.Errorf("the page does not say what changed at the change: %+v", h.Changes)
	}
	// The runs table's columns say their units, and that errors are the failed share
	// (a run's own page lists retried errors beside it).
	if !strings.Contains(page, "<th>tps (tx/s)</th>") || !strings.Contains(page, "<th>p99 (ms)</th>") || !strings.Contains(page, "<th>errors (% failed)</th>") {
		t.Error("the runs table's heads lack units")
	}
	// The x axis spaces the runs evenly, whatever time passed between them, and each
	// chart says so: its dates must not read as a time scale.
	if n := strings.Count(page, "the distances between runs are not time"); n != len(historyMetrics) {
		t.Errorf("%d charts say their x axis is the runs' order, want %d", n, len(historyMetrics))
	}
	b.Reset()
	if err := WriteHistoryHTML(&b, h, HistoryPage{Metric: "p99"}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), `<svg class="history"`); n != 1 || !strings.Contains(b.String(), `href="/#/run/`) {
		t.Errorf("serve's page: %d charts, run links %v; want one chart and its runs linked", n, strings.Contains(b.String(), `href="/#/run/`))
	}
	if err := WriteHistoryHTML(&b, h, HistoryPage{Metric: "tpx"}); err == nil || !strings.Contains(err.Error(), "use one of tps") {
		t.Errorf("an unknown metric: %v", err)
	}
}

// The y axis's tick labels are round numbers as written: ticks that are multiples of
// 0.025 read 0.075, not the 0.07500000000000001 that 3 × 0.025 is in floating point.
func TestHistoryTickLabels(t *testing.T) {
	start := time.Date(2026, 11, 29, 4, 0, 0, 0, time.UTC)
	h := &History{ID: "s", Metrics: []string{"p50"}}
	for i, v := range []float64{0.055, 0.054, 0.054, 0.085, 0.057, 0.056, 0.062, 0.061} {
		h.Points = append(h.Points, HistoryPoint{RunID: int64(i + 1), StartedAt: start.Add(time.Duration(i) * time.Second), Values: map[string]float64{"p50": v}})
	}
	v := &historyView{H: h, Metric: "p50"}
	v.layout()
	var labels []string
	for _, tk := range v.YTicks {
		labels = append(labels, tk.Label)
	}
	if got := strings.Join(labels, " "); got != "0 0.025 0.05 0.075 0.1" {
		t.Errorf("tick labels %q, want 0 0.025 0.05 0.075 0.1", got)
	}
}
