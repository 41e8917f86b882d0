package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/chart/charttest"
	"github.com/fathom-lab/fathom/internal/measure"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run `go test ./internal/report -update` to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run with -update if the change is intended):\n%s", name, diffLines(string(want), string(got)))
	}
}

// diffLines shows the first differing lines.
func diffLines(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\nwant %q\n got %q", i+1, a, b)
		}
	}
	return "(same lines, different bytes)"
}

// sweepFixture is scenario 1 in small: clients 8, 16, 32 × variant off/on, three
// repetitions each, run in an interleaved order.
func sweepFixture() []fixtureRun {
	var runs []fixtureRun
	seed := uint64(100)
	for rep := 1; rep <= 3; rep++ {
		for _, clients := range []int{8, 16, 32} {
			for _, variant := range []string{"off", "on"} {
				seed++
				tps := float64(clients) * 12
				lat := float64(clients) * 0.3
				settings := map[string]string{}
				if variant == "on" {
					tps *= 0.8
					lat *= 1.25
					settings["synchronous_commit"] = "off"
				}
				tps += float64(rep * 3)
				runs = append(runs, fixtureRun{
					labels:  map[string]string{"variant": variant, "rep": fmt.Sprint(rep), "clients": fmt.Sprint(clients)},
					clients: clients, intervals: 12, warmup: 2, tps: tps, latencyMs: lat, seed: seed, settings: settings,
				})
			}
		}
	}
	return runs
}

func buildReport(t *testing.T, runs []fixtureRun, o Options) *Report {
	t.Helper()
	st, ids := newFixtureStore(t, runs)
	data := loadFixture(t, st, ids)
	r, err := New(data, o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var (
	reTag   = regexp.MustCompile(`<(h[1-4]|th|summary|figcaption|svg|title|li)( [^>]*)?>([^<]*)`)
	reID    = regexp.MustCompile(` id="([^"]+)"`)
	reClass = regexp.MustCompile(`<(path|rect|circle|line) class="([a-z0-9 ]+)"`)
)

// htmlOutline reduces a page to its structure: headings, table headers, charts and
// their titles, how many marks of each kind each chart draws, and the numbers each
// chart draws (its ticks and what each mark stands for, read back from its geometry by
// charttest), so that a chart that draws a wrong number changes the golden.
func htmlOutline(page string) string {
	var b strings.Builder
	var counts map[string]int
	charts, err := charttest.Charts(page)
	if err != nil {
		return "charttest: " + err.Error()
	}
	drawn := 0
	flush := func() {
		if counts == nil {
			return
		}
		var ks []string
		for k := range counts {
			ks = append(ks, k)
		}
		for _, k := range sortedStrings(ks) {
			fmt.Fprintf(&b, "    %s: %d\n", k, counts[k])
		}
		counts = nil
		if drawn < len(charts) {
			b.WriteString(charts[drawn].Numbers("    = "))
		} else {
			b.WriteString("    = chart not read back\n")
		}
		drawn++
	}
	// Each segment is one tag and the text after it (up to the next tag).
	for i, seg := range strings.Split(page, "<") {
		if i == 0 {
			continue
		}
		seg = "<" + seg
		if m := reClass.FindStringSubmatch(seg); m != nil && counts != nil {
			counts[m[1]+"."+m[2]]++
		}
		m := reTag.FindStringSubmatch(seg)
		if m == nil {
			if strings.HasPrefix(seg, "</svg") {
				flush()
			}
			continue
		}
		text := strings.TrimSpace(m[3])
		switch m[1] {
		case "svg":
			if id := reID.FindStringSubmatch(m[2]); id != nil {
				fmt.Fprintf(&b, "  svg #%s\n", id[1])
				counts = map[string]int{}
			}
		case "title":
			if counts != nil {
				fmt.Fprintf(&b, "    title: %s\n", text)
			}
		default:
			fmt.Fprintf(&b, "%s: %s\n", m[1], text)
		}
	}
	return b.String()
}

func sortedStrings(s []string) []string {
	out := append([]string(nil), s...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func files(t *testing.T, r *Report) map[string][]byte {
	t.Helper()
	fs, err := r.Files()
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][]byte{}
	for _, f := range fs {
		m[f.Name] = f.Data
	}
	return m
}

func TestExperimentReportGolden(t *testing.T) {
	slo, err := ParseSLO("p99<10ms")
	if err != nil {
		t.Fatal(err)
	}
	r := buildReport(t, sweepFixture(), Options{SLO: slo, Selection: "label fixture=sweep"})
	fs := files(t, r)
	for _, name := range []string{"summary.md", "runs.csv", "cells.csv", "comparison.csv", "run-1-intervals.csv", "run-1-percentiles.csv"} {
		if fs[name] == nil {
			t.Fatalf("no %s among %d files", name, len(fs))
		}
		golden(t, "sweep-"+name, fs[name])
	}
	golden(t, "sweep-index.outline", []byte(htmlOutline(string(fs["index.html"]))))
	if len(fs) != 5+2*18 {
		t.Errorf("%d files", len(fs))
	}
	e := r.Experiment
	if len(e.Axes) != 2 || e.Axes[0].Name != "clients" || e.Axes[1].Name != "variant" || len(e.Cells) != 6 {
		t.Fatalf("axes %+v, %d cells", e.Axes, len(e.Cells))
	}
	if e.CompareBy != "variant" || len(e.Comparisons) != 3 {
		t.Fatalf("compare by %q: %d comparisons", e.CompareBy, len(e.Comparisons))
	}
	if len(e.Knees) != 2 || e.Knees[0].Value != "8" || e.Knees[0].Breach != "16" {
		t.Errorf("knees %+v", e.Knees)
	}
}

func TestSingleRunReportGolden(t *testing.T) {
	slo, _ := ParseSLO("p95<=5ms")
	r := buildReport(t, []fixtureRun{{clients: 4, types: []string{"read", "write"}, intervals: 25, warmup: 3, tps: 300, latencyMs: 2,
		errEvery: 40, seed: 9, dip: [2]int{12, 16}, labels: map[string]string{"env": "test"},
		seen: []measure.SeenError{{Class: "serialization", Code: "40001", Message: "could not serialize access due to concurrent update",
			Txn: "write", Where: "write.sql line 3: UPDATE t SET v = v + 1 WHERE id = :id", Client: 2, AtNs: 12_345_678}}}},
		Options{SLO: slo, Generated: "fathom v0.4.0-test on 2026-03-01"})
	fs := files(t, r)
	golden(t, "single-summary.md", fs["summary.md"])
	golden(t, "single-runs.csv", fs["runs.csv"])
	golden(t, "single-index.outline", []byte(htmlOutline(string(fs["index.html"]))))
	page := string(fs["index.html"])
	for _, want := range []string{`id="fathom-data"`, "Throughput over time", "warm-up", "xxxxx", "could not serialize access due to concurrent update",
		"40001", "client 2 at 0.012s in write.sql line 3"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "<script>") || strings.Contains(page, "http://") && !strings.Contains(page, "http://www.w3.org/2000/svg") {
		t.Error("the page must not run scripts or load anything")
	}
}

func TestCompareGolden(t *testing.T) {
	var runs []fixtureRun
	for i := 0; i < 12; i++ {
		v, tps, lat := "off", 300.0, 1.0
		settings := map[string]string{}
		if i%2 == 1 {
			v, tps, lat = "on", 240, 1.4
			settings["synchronous_commit"] = "off"
		}
		runs = append(runs, fixtureRun{clients: 8, intervals: 6, warmup: 1, tps: tps + float64(i), latencyMs: lat, seed: uint64(i),
			settings: settings, labels: map[string]string{"variant": v}, errEvery: 100 * (i%3 + 1)})
	}
	st, ids := newFixtureStore(t, runs)
	data := loadFixture(t, st, ids)
	var a, b []*RunData
	for i, d := range data {
		if i%2 == 0 {
			a = append(a, d)
		} else {
			b = append(b, d)
		}
	}
	c := Compare("", Side{Name: "label:variant=off", Runs: a}, Side{Name: "label:variant=on", Runs: b})
	var text, md, csv, js bytes.Buffer
	_ = c.WriteText(&text)
	_ = c.writeMarkdown(&md, "##")
	_ = writeCompareCSV(&csv, []*comparison{c})
	_ = c.WriteJSON(&js)
	golden(t, "compare.txt", text.Bytes())
	golden(t, "compare.md", md.Bytes())
	golden(t, "compare.csv", csv.Bytes())
	golden(t, "compare.json", js.Bytes())
	if !c.Metrics[0].Significant || c.Differences[0].Key != "label.variant" {
		t.Errorf("tps should differ significantly, label first: %+v %+v", c.Metrics[0], c.Differences)
	}
	// One run each: medians and change, but no verdict.
	one := Compare("", Side{Name: "run 1", Runs: a[:1]}, Side{Name: "run 2", Runs: b[:1]})
	text.Reset()
	_ = one.WriteText(&text)
	golden(t, "compare-one.txt", text.Bytes())
	if one.Metrics[0].Significant || !strings.Contains(text.String(), "too few repetitions") {
		t.Errorf("1 vs 1 must not claim significance:\n%s", text.String())
	}
	// Every warning the text gives is in the JSON too.
	js.Reset()
	_ = one.WriteJSON(&js)
	var doc struct {
		Notes    []string `json:"notes"`
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	_, after, _ := strings.Cut(text.String(), "warnings:\n")
	n := 0
	for _, l := range strings.Split(strings.TrimSpace(after), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			n++
			if !slices.Contains(doc.Warnings, l) {
				t.Errorf("the text warns %q; the JSON's warnings are %q", l, doc.Warnings)
			}
		}
	}
	if n == 0 || doc.Notes == nil {
		t.Errorf("no warnings in the text (%d), or no notes in the JSON: %s", n, js.String())
	}
}

func TestParseSLO(t *testing.T) {
	for _, c := range []struct {
		in   string
		ok   bool
		ms   float64
		incl bool
	}{
		{"p99<10ms", true, 10, false}, {"p95 <= 250us", true, 0.25, true}, {"p99.9<1s", true, 1000, false},
		{"max<2ms", true, 2, false}, {"p99>10ms", false, 0, false}, {"p99<10", false, 0, false}, {"tps>5", false, 0, false},
	} {
		s, err := ParseSLO(c.in)
		if (err == nil) != c.ok {
			t.Errorf("%q: err %v", c.in, err)
			continue
		}
		if c.ok && (s.LimitMs != c.ms || s.Inclusive != c.incl) {
			t.Errorf("%q: %+v", c.in, s)
		}
	}
}

func TestGroupRunsErrors(t *testing.T) {
	st, ids := newFixtureStore(t, []fixtureRun{
		{clients: 1, intervals: 2, tps: 10, latencyMs: 1, labels: map[string]string{"variant": "a"}},
		{clients: 1, intervals: 2, tps: 10, latencyMs: 1},
	})
	data := loadFixture(t, st, ids)
	if _, err := New(data, Options{Axes: []string{"variant"}}); err == nil || !strings.Contains(err.Error(), "has no label") {
		t.Errorf("missing label: %v", err)
	}
	if _, err := New(data, Options{Axes: []string{"clients"}, CompareBy: "clients"}); err == nil || !strings.Contains(err.Error(), "needs two or more") {
		t.Errorf("compare by a one-valued axis: %v", err)
	}
	// No axis varies: one cell of repetitions.
	r, err := New(data, Options{Axes: []string{"clients"}})
	if err != nil || len(r.Experiment.Cells) != 1 || r.Experiment.Cells[0].TPS.N != 2 {
		t.Fatalf("%v %+v", err, r)
	}
}

// sampledRun is a run with server and OS samples and one stall (intervals 12–15).
func sampledRun() fixtureRun {
	return fixtureRun{clients: 4, intervals: 25, warmup: 3, tps: 300, latencyMs: 2, seed: 9, dip: [2]int{12, 16}, samples: true}
}

func TestSampledRunReportGolden(t *testing.T) {
	r := buildReport(t, []fixtureRun{sampledRun()}, Options{Generated: "fathom v0.4.0-test on 2026-03-01"})
	fs := files(t, r)
	golden(t, "sampled-summary.md", fs["summary.md"])
	golden(t, "sampled-run-1-metrics.csv", fs["run-1-metrics.csv"])
	page := string(fs["index.html"])
	golden(t, "sampled-index.outline", []byte(htmlOutline(page)))
	d := r.Runs[0]
	if d.Samples == nil || !d.StallsAnalyzed || len(d.Stalls) != 1 || !d.AllMetrics || len(d.Metrics) != 8 {
		t.Fatalf("samples %v analysed %v, %d stalls, %d metrics (all %v)", d.Samples, d.StallsAnalyzed, len(d.Stalls), len(d.Metrics), d.AllMetrics)
	}
	// The stall is shaded on every time chart: throughput, latency, errors and each
	// metric chart (not on the percentile distribution).
	charts := strings.Count(page, `<svg xmlns="http://www.w3.org/2000/svg" class="chart"`)
	bands := strings.Count(page, `<rect class="band stall"`)
	metricCharts := strings.Count(page, `class="chart" id="run-1-metric-`)
	if metricCharts != 7 || bands != 3+metricCharts || charts != 4+metricCharts {
		t.Errorf("%d charts, %d metric charts, %d stall bands", charts, metricCharts, bands)
	}
	for _, want := range []string{
		// As `fathom show` prints them.
		"12.0s–16.0s", "tps 300 → 100 (min 100)", "-67%", "PostgreSQL checkpoint", "max_wal_size=1GB", "checkpoint_completion_target=?",
		"pg.buffers_checkpoint/s 10.0 → 2400, z=&#43;41.2", "os.mem.dirty_bytes 8.0MB → 310.0MB, z=&#43;25.0", "os.cpu.user_pct 42.0% → 18.0%, z=-6.1",
		"1 more: fathom show",
		// The tooltip, the flat metric, the evidence chart outside the default set.
		"<title>stall #1, 12.0s–16.0s: tps 300 → 100 (-67%): PostgreSQL checkpoint</title>",
		"Zero throughout, not drawn: pg.lock_waits.", "stall evidence: pg.checkpoint_write_time/s",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// The counter reset at interval 5 is a gap, not a negative or zero rate.
	for _, m := range d.Metrics {
		if m.Name != "pg.xact_commit" {
			continue
		}
		x, y := metricXY(&m, 1, 25)
		gaps := 0
		for i := range y {
			if math.IsNaN(y[i]) {
				gaps++
				if x[i] < 5 || x[i] > 6 {
					t.Errorf("gap at %g s", x[i])
				}
			} else if y[i] <= 0 {
				t.Errorf("rate %g at %g s", y[i], x[i])
			}
		}
		if gaps != 1 {
			t.Errorf("%d gaps in pg.xact_commit, want 1 (the reset)", gaps)
		}
	}
}

// A sampled run without stalls and a run without samples side by side: the second
// reports exactly as before (no metrics section, no metrics CSV).
func TestSampledAndUnsampledRuns(t *testing.T) {
	quiet := sampledRun()
	quiet.dip = [2]int{}
	plain := sampledRun()
	plain.samples = false
	r := buildReport(t, []fixtureRun{quiet, plain}, Options{})
	fs := files(t, r)
	if fs["run-1-metrics.csv"] == nil || fs["run-2-metrics.csv"] != nil {
		t.Errorf("metrics CSV files: run 1 %v, run 2 %v", fs["run-1-metrics.csv"] != nil, fs["run-2-metrics.csv"] != nil)
	}
	page := string(fs["index.html"])
	if strings.Contains(page, `id="run-2-metrics"`) || !strings.Contains(page, `id="run-1-metrics"`) {
		t.Error("only the sampled run has a metrics section")
	}
	if !strings.Contains(page, "Stalls: none") || strings.Contains(page, `class="band stall"`) {
		t.Error("a sampled run without stalls says so and shades nothing")
	}
	if md := string(fs["summary.md"]); !strings.Contains(md, "### Run 1\n\nNone: throughput never fell") || strings.Contains(md, "### Run 2\n\nNone") {
		t.Errorf("summary.md stalls:\n%s", md)
	}
}

// An experiment of many runs reads only the charted metrics of each.
func TestLoadSamplesChartedOnly(t *testing.T) {
	var runs []fixtureRun
	for i := 0; i < allMetricsRuns+1; i++ {
		f := sampledRun()
		f.intervals, f.warmup, f.dip = 8, 1, [2]int{}
		f.labels = map[string]string{"rep": fmt.Sprint(i)}
		runs = append(runs, f)
	}
	st, ids := newFixtureStore(t, runs)
	data := loadFixture(t, st, ids)
	for _, d := range data {
		// pg.checkpoint_write_time is neither charted by default nor evidence here.
		if d.AllMetrics || len(d.Metrics) != 7 {
			t.Fatalf("run %d: all %v, %d metrics", d.Run.ID, d.AllMetrics, len(d.Metrics))
		}
	}
}
