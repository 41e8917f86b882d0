package report

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
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
	reTag   = regexp.MustCompile(`<(h[1-3]|th|summary|figcaption|svg|title|li)( [^>]*)?>([^<]*)`)
	reID    = regexp.MustCompile(` id="([^"]+)"`)
	reClass = regexp.MustCompile(`<(path|rect|circle|line) class="([a-z0-9 ]+)"`)
)

// htmlOutline reduces a page to its structure: headings, table headers, charts and
// their titles, and how many marks of each kind each chart draws.
func htmlOutline(page string) string {
	var b strings.Builder
	var counts map[string]int
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
	}
	for _, seg := range strings.SplitAfter(page, ">") {
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
		errEvery: 40, seed: 9, dip: [2]int{12, 16}, labels: map[string]string{"env": "test"}}},
		Options{SLO: slo, Generated: "fathom v0.4.0-test on 2026-03-01"})
	fs := files(t, r)
	golden(t, "single-summary.md", fs["summary.md"])
	golden(t, "single-runs.csv", fs["runs.csv"])
	golden(t, "single-index.outline", []byte(htmlOutline(string(fs["index.html"]))))
	page := string(fs["index.html"])
	for _, want := range []string{`id="fathom-data"`, "Throughput over time", "warm-up", "xxxxx"} {
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
	_ = c.WriteMarkdown(&md, "##")
	_ = WriteCompareCSV(&csv, []*Comparison{c})
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
	if _, err := New(data, Options{Axes: []string{"clients"}, CompareBy: "clients"}); err == nil || !strings.Contains(err.Error(), "exactly two") {
		t.Errorf("compare by a one-valued axis: %v", err)
	}
	// No axis varies: one cell of repetitions.
	r, err := New(data, Options{Axes: []string{"clients"}})
	if err != nil || len(r.Experiment.Cells) != 1 || r.Experiment.Cells[0].TPS.N != 2 {
		t.Fatalf("%v %+v", err, r)
	}
}
