package report

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/chart"
)

func TestAxisQuantities(t *testing.T) {
	for _, c := range []struct {
		in   []string
		ok   bool
		kind int
		nums []float64
	}{
		{[]string{"128MB", "16MB", "1GB", "512kB"}, true, kindBytes, []float64{128 << 20, 16 << 20, 1 << 30, 512 << 10}},
		{[]string{"64M", "1G"}, true, kindBytes, []float64{64 << 20, 1 << 30}},
		{[]string{"250ms", "2s", "1min"}, true, kindMillis, []float64{250, 2000, 60000}},
		{[]string{"30s", "5m", "1h"}, true, kindMillis, []float64{30000, 300000, 3600000}},
		{[]string{"10", "1", "2.5"}, true, kindCount, []float64{10, 1, 2.5}},
		{[]string{"100/s", "2000/s"}, true, kindCount, []float64{100, 2000}},
		{[]string{"relaxed", "durable"}, false, 0, nil},
		{[]string{"16MB", "250ms"}, false, 0, nil},  // two kinds
		{[]string{"16384", "128MB"}, false, 0, nil}, // a bare number beside a unit: PostgreSQL pages?
		{[]string{"on", "off"}, false, 0, nil},
	} {
		nums, kind, ok := axisQuantities(c.in)
		if ok != c.ok || ok && (kind != c.kind || fmt.Sprint(nums) != fmt.Sprint(c.nums)) {
			t.Errorf("%v: %v %d %v, want %v %d %v", c.in, nums, kind, ok, c.nums, c.kind, c.ok)
		}
	}
}

// sizeSweep is examples/shared-buffers-sweep.yaml in small, its values listed out of
// order in the plan, and a named axis whose plan order is not alphabetical.
func sizeSweep(t *testing.T) []*RunData {
	var runs []fixtureRun
	seed := uint64(7)
	for rep := 1; rep <= 2; rep++ {
		for _, sb := range []string{"64MB", "1GB", "16MB", "512kB"} {
			for _, dur := range []string{"relaxed", "durable"} {
				seed++
				tps := 100.0
				if dur == "durable" {
					tps = 50
				}
				runs = append(runs, fixtureRun{labels: map[string]string{"shared_buffers": sb, "durability": dur, "rep": fmt.Sprint(rep)},
					clients: 2, intervals: 6, warmup: 1, tps: tps + float64(len(sb)), latencyMs: 1, seed: seed})
			}
		}
	}
	st, ids := newFixtureStore(t, runs)
	return loadFixture(t, st, ids)
}

func planSpecs(data []*RunData, baseline string) ([]axisSpec, []memberSpec) {
	axes := []axisSpec{{Name: "shared_buffers", Values: []string{"64MB", "1GB", "16MB", "512kB"}},
		{Name: "durability", Values: []string{"relaxed", "durable"}, Baseline: baseline}}
	var specs []memberSpec
	for _, d := range data {
		specs = append(specs, memberSpec{Data: d, Values: map[string]string{"shared_buffers": d.Run.Labels["shared_buffers"],
			"durability": d.Run.Labels["durability"]}})
	}
	return axes, specs
}

func TestAxisOrderAndBaseline(t *testing.T) {
	data := sizeSweep(t)
	axes, specs := planSpecs(data, "")
	e, err := newExperiment("sizes", axes, specs)
	if err != nil {
		t.Fatal(err)
	}
	sb, dur := e.Axes[0], e.Axes[1]
	// The baseline (the first value listed) first, the others by size; the scaling
	// curve's lines run by size whatever the order of the cells.
	if got := strings.Join(sb.Values, " "); got != "64MB 512kB 16MB 1GB" || !sb.Numeric || sb.Kind != kindBytes {
		t.Errorf("shared_buffers: %q numeric %v kind %d; want the baseline 64MB first, then sorted by size", got, sb.Numeric, sb.Kind)
	}
	if got := strings.Join(e.Cells[0].Values, " "); got != "64MB relaxed" {
		t.Errorf("first cell %s, want the baselines' (64MB relaxed)", got)
	}
	_, lines := e.lines(0)
	for _, line := range lines {
		var vs []string
		for _, c := range line {
			vs = append(vs, c.Values[0])
		}
		if got := strings.Join(vs, " "); got != "512kB 16MB 64MB 1GB" {
			t.Errorf("a line along shared_buffers runs %s, want by size", got)
		}
	}
	if sb.Baseline != "64MB" {
		t.Errorf("shared_buffers baseline %q, want the first value listed (64MB)", sb.Baseline)
	}
	if got := strings.Join(dur.Values, " "); got != "relaxed durable" || dur.Numeric || dur.Baseline != "relaxed" {
		t.Errorf("durability: %q baseline %q; want plan order, relaxed first", got, dur.Baseline)
	}
	if err := e.compareAxis("durability"); err != nil {
		t.Fatal(err)
	}
	// relaxed (A, ~100 tps) → durable (B, ~50 tps): a fall, whatever the alphabet says.
	for _, c := range e.Comparisons {
		if !strings.HasSuffix(c.A.Name, "=relaxed") || c.Metrics[0].DeltaPct >= 0 {
			t.Errorf("%s: A %s, change %v; want A relaxed and a negative change", c.Title, c.A.Name, c.Metrics[0].DeltaPct)
		}
	}
	// The plan (or --baseline) can name the other side.
	axes, specs = planSpecs(data, "durable")
	e2, err := newExperiment("sizes", axes, specs)
	if err != nil {
		t.Fatal(err)
	}
	_ = e2.compareAxis("durability")
	if c := e2.Comparisons[0]; !strings.HasSuffix(c.A.Name, "=durable") || c.Metrics[0].DeltaPct <= 0 {
		t.Errorf("baseline durable: A %s, change %v", c.A.Name, c.Metrics[0].DeltaPct)
	}
	axes[1].Baseline = "fast"
	if _, err := newExperiment("sizes", axes, specs); err == nil || !strings.Contains(err.Error(), "no such value") {
		t.Errorf("unknown baseline: %v", err)
	}

	// The report draws a curve against shared_buffers with ticks in a size unit.
	r, err := newWithExperiment(e, Options{CompareBy: "durability"})
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := r.writeHTML(&page); err != nil {
		t.Fatal(err)
	}
	p := page.String()
	for _, want := range []string{"Throughput against shared_buffers", "shared_buffers (GB)", "Baseline (side A", "durability=relaxed",
		"Throughput over time, median run(s) of each cell"} {
		if !strings.Contains(p, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(p, "∞") {
		t.Error("page shows ∞")
	}
	golden(t, "sizes-index.outline", []byte(htmlOutline(p)))
	var md bytes.Buffer
	_ = r.writeMarkdown(&md)
	golden(t, "sizes-summary.md", md.Bytes())
	// Label-grouped runs: named values in the order they first ran, sizes by size.
	g, err := groupRuns("", data, nil, map[string]string{"durability": "durable"})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintln(g.Axes[0].Name, g.Axes[0].Values, g.Axes[1].Name, g.Axes[1].Values, g.Axes[0].Baseline); got != "durability [durable relaxed] shared_buffers [512kB 16MB 64MB 1GB] durable\n" {
		t.Errorf("grouped: %s", got)
	}
}

// fanoutRuns is scenario 3's fan-out in small: readers do nearly all the
// transactions; writers are what the study is about.
func fanoutRuns(t *testing.T) []*RunData {
	var runs []fixtureRun
	for i, layout := range []string{"1x96M", "2x48M", "1x96M", "2x48M"} {
		runs = append(runs, fixtureRun{labels: map[string]string{"layout": layout}, clients: 4,
			types: []string{"writers/write", "readers/lookup"}, intervals: 6, warmup: 1, tps: 1000 + float64(i), latencyMs: 1, seed: uint64(i + 1)})
	}
	st, ids := newFixtureStore(t, runs)
	return loadFixture(t, st, ids)
}

func TestJudge(t *testing.T) {
	data := fanoutRuns(t)
	d := data[0]
	if len(d.Groups) != 2 || d.Groups["writers"].Transactions != d.Summary.ByTxn["writers/write"].Transactions {
		t.Fatalf("groups %+v", d.Groups)
	}
	all := metricOf(d, metricTPS)
	note := judgeNote(data)
	if !strings.Contains(note, "every transaction of every client group") || !strings.Contains(note, "--judge writers") {
		t.Errorf("default note: %q", note)
	}
	if err := SetJudge(data, "writers"); err != nil {
		t.Fatal(err)
	}
	w := metricOf(d, metricTPS)
	if !(w > 0 && w < all) || math.Abs(w-d.Groups["writers"].TPS) > 1e-9 {
		t.Errorf("judged by writers: %v of %v", w, all)
	}
	if p := metricOf(d, metricP99); p != d.Groups["writers"].Latency.P99 {
		t.Errorf("p99 %v, want the writers' %v", p, d.Groups["writers"].Latency.P99)
	}
	if n := judgeNote(data); !strings.Contains(n, "client group writers") {
		t.Errorf("judged note %q", n)
	}
	if err := SetJudge(data, "readers/lookup"); err != nil {
		t.Fatal(err)
	}
	if v := metricOf(d, metricTPS); v != d.Summary.ByTxn["readers/lookup"].TPS {
		t.Errorf("type judge: %v", v)
	}
	if err := SetJudge(data, "writer"); err == nil || !strings.Contains(err.Error(), "writers, writers/write") && !strings.Contains(err.Error(), "writers") {
		t.Errorf("unknown judge: %v", err)
	}
	_ = SetJudge(data, "writers")
	r, err := New(data, Options{Judge: "writers"})
	if err != nil {
		t.Fatal(err)
	}
	fs := files(t, r)
	golden(t, "judge-summary.md", fs["summary.md"])
	if !strings.Contains(string(fs["index.html"]), "Judged by the client group writers") {
		t.Error("the page does not say what the cells are judged by")
	}
}

func TestCompareShowsChangeForAnyN(t *testing.T) {
	data := sizeSweep(t)
	var a, b []*RunData
	for _, d := range data {
		if d.Run.Labels["shared_buffers"] == "64MB" && d.Run.Labels["rep"] == "1" {
			if d.Run.Labels["durability"] == "relaxed" {
				a = append(a, d)
			} else {
				b = append(b, d)
			}
		}
	}
	c := Compare("", Side{Name: "A", Runs: a}, Side{Name: "B", Runs: b})
	var text bytes.Buffer
	_ = c.WriteText(&text)
	golden(t, "compare-n1.txt", text.Bytes())
	if !strings.Contains(text.String(), "cannot tell with n=1+1") || !strings.Contains(text.String(), "-") || strings.Contains(text.String(), "  ~  ") {
		t.Errorf("one run a side: want the change and \"cannot tell with n=1+1\":\n%s", text.String())
	}
	if got := changeCell(c.Metrics[0]); got == "~" || !strings.HasPrefix(got, "-") {
		t.Errorf("tps change %q: want a negative percentage", got)
	}
	// One unit for every latency of a column: p50 under a millisecond and p99 above it
	// are both in ms (issue 30: "837 µs" above "2.74 ms").
	units := map[string]bool{}
	for _, m := range c.Metrics {
		if metricKind(m.Metric) != kindMillis {
			continue
		}
		_, a, b := c.metricCells(m)
		for _, cell := range []string{a, b} {
			f := strings.Fields(cell)
			units[f[len(f)-1]] = true
		}
	}
	if len(units) != 1 {
		t.Errorf("the latency rows use units %v, want one", units)
	}
}

// FuzzParseQuantity: any text either parses to a finite quantity of a known kind or
// is refused, never a panic.
func FuzzParseQuantity(f *testing.F) {
	for _, s := range []string{"128MB", "16MB", "1GB", "512kB", "64M", "1G", "250ms", "2s", "1min", "5m", "10", "2.5", "100/s", "relaxed", "", "-", "1e3", "+.5k"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, kind, ok := parseQuantity(s)
		if ok && (math.IsNaN(v) || kind != kindCount && kind != kindBytes && kind != kindMillis) {
			t.Errorf("%q: %v kind %d", s, v, kind)
		}
		if nums, _, ok := axisQuantities([]string{s, s}); ok && len(nums) != 2 {
			t.Errorf("%q: %v", s, nums)
		}
	})
}

// A latency distribution whose tail is more than 100 times its fastest percentile is
// drawn on a log axis (in the static report and, from the same model, in the web UI);
// a narrow one stays linear from zero.
func TestDistributionLogScale(t *testing.T) {
	r := buildReport(t, []fixtureRun{sampledRun()}, Options{})
	d := r.Runs[0]
	if f := r.Figures(d); f.Distribution.YScale != chart.ScaleLinear || !f.Distribution.YZero {
		t.Fatalf("a distribution within %v–%v ms is drawn %s", d.Distribution[0].Ms, d.Distribution[len(d.Distribution)-1].Ms, f.Distribution.YScale)
	}
	d.Distribution[len(d.Distribution)-1].Ms = 2500 // one very slow transaction
	f := r.Figures(d)
	if f.Distribution.YScale != chart.ScaleLog || f.Distribution.YZero {
		t.Fatalf("a tail of 2.5 s over a body of 1 ms is drawn %s", f.Distribution.YScale)
	}
	svg := f.Distribution.SVG()
	for _, tick := range []string{">0.001</text>", ">0.01</text>", ">0.1</text>", ">1</text>"} { // seconds
		if !strings.Contains(svg, `class="tick y"`) || !strings.Contains(svg, tick) {
			t.Errorf("log axis lacks the tick %s", tick)
		}
	}
}
