package report

import (
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/analyze"
)

// persistenceRuns: the Redis example's axis of four values, reps runs each; "aof"
// runs at half the throughput of the others.
func persistenceRuns(t *testing.T, reps int) []*RunData {
	var runs []fixtureRun
	for r := 0; r < reps; r++ {
		for i, v := range []string{"none", "rdb", "aof", "both"} {
			tps := 1000.0 + float64(r*7+i*3)
			if v == "aof" {
				tps /= 2
			}
			runs = append(runs, fixtureRun{labels: map[string]string{"persistence": v}, clients: 4, intervals: 4, tps: tps, latencyMs: 1, seed: uint64(r*4 + i + 1)})
		}
	}
	st, ids := newFixtureStore(t, runs)
	return loadFixture(t, st, ids)
}

// --compare-by over an axis of four values: each value against the baseline, the
// correction and the overall test said with each, and with three repetitions a
// warning that no difference can be significant.
func TestCompareByFourValues(t *testing.T) {
	for _, c := range []struct {
		reps        int
		significant bool
	}{{3, false}, {5, true}} {
		data := persistenceRuns(t, c.reps)
		r, err := New(data, Options{CompareBy: "persistence", Axes: []string{"persistence"}})
		if err != nil {
			t.Fatal(err)
		}
		e := r.Experiment
		if len(e.Comparisons) != 3 {
			t.Fatalf("%d comparisons, want 3 (each value against the baseline none)", len(e.Comparisons))
		}
		for _, cmp := range e.Comparisons {
			if cmp.A.Name != "persistence=none" {
				t.Errorf("side A %q, want the baseline", cmp.A.Name)
			}
			notes := strings.Join(cmp.Notes, "\n")
			if !strings.Contains(notes, "adjusted for 3 comparisons against the same baseline (Holm–Bonferroni)") || !strings.Contains(notes, "Kruskal–Wallis") {
				t.Errorf("notes: %s", notes)
			}
			tps := cmp.Metrics[0]
			if tps.Metric != metricTPS {
				t.Fatalf("first metric %s", tps.Metric)
			}
			// The adjusted p is never below the raw U test's.
			var xa, xb []float64
			for _, d := range cmp.A.Runs {
				xa = append(xa, metricOf(d, metricTPS))
			}
			for _, d := range cmp.B.Runs {
				xb = append(xb, metricOf(d, metricTPS))
			}
			raw := analyze.Compare(metricTPS, xa, xb, tps.Alpha, analyze.DefaultConfidence).P
			if tps.P < raw {
				t.Errorf("%s: adjusted p %v below the raw %v", cmp.B.Name, tps.P, raw)
			}
			few := strings.Contains(strings.Join(tps.Warnings, " "), "too few repetitions")
			if few != !c.significant {
				t.Errorf("reps %d, %s: too-few warning %v: %v", c.reps, cmp.B.Name, few, tps.Warnings)
			}
			if cmp.B.Name == "persistence=aof" && tps.Significant != c.significant {
				t.Errorf("reps %d: aof at half the throughput significant=%v (p %v)", c.reps, tps.Significant, tps.P)
			}
			if cmp.B.Name != "persistence=aof" && tps.Significant {
				t.Errorf("reps %d: %s significant with p %v", c.reps, cmp.B.Name, tps.P)
			}
		}
		// The overall test is the Kruskal–Wallis of the runs' throughputs.
		groups := map[string][]float64{}
		for _, d := range data {
			groups[d.Run.Labels["persistence"]] = append(groups[d.Run.Labels["persistence"]], metricOf(d, metricTPS))
		}
		kw := analyze.KruskalWallis([][]float64{groups["none"], groups["rdb"], groups["aof"], groups["both"]})
		if want := ", " + pValue(kw.P) + ":"; !strings.Contains(e.Comparisons[0].Notes[1], want) {
			t.Errorf("overall note %q lacks %q", e.Comparisons[0].Notes[1], want)
		}
		fs := files(t, r)
		if !strings.Contains(string(fs["index.html"]), "Holm–Bonferroni") || !strings.Contains(string(fs["summary.md"]), "Kruskal–Wallis") {
			t.Error("the page does not say the correction and the overall test")
		}
	}
}

// The over-time overlays draw the median run of a cell: the middle one of an odd
// count, both middle ones of an even count (issue 32: "median run" drew the lower of
// two, 98.7 tps against a cell median of 998), each named with why.
func TestMedianRunsOfACell(t *testing.T) {
	for _, c := range []struct {
		reps int
		want []string
	}{{2, []string{"lower middle of 2", "upper middle of 2"}}, {3, []string{"median of 3"}}} {
		var runs []fixtureRun
		for r := 0; r < c.reps; r++ {
			for _, v := range []string{"on", "off"} {
				runs = append(runs, fixtureRun{labels: map[string]string{"mode": v}, clients: 2, intervals: 4, tps: 100 + 900*float64(r), latencyMs: 1, seed: uint64(r + 1)})
			}
		}
		st, ids := newFixtureStore(t, runs)
		r, err := New(loadFixture(t, st, ids), Options{Axes: []string{"mode"}, CompareBy: "-"})
		if err != nil {
			t.Fatal(err)
		}
		_, figs := r.timeOverlays()
		tc := figs[0]
		if len(tc.Series) != 2*len(c.want) {
			t.Fatalf("reps %d: %d series", c.reps, len(tc.Series))
		}
		for i, s := range tc.Series {
			if !strings.Contains(s.Name, c.want[i%len(c.want)]) {
				t.Errorf("reps %d: series %q, want %q", c.reps, s.Name, c.want[i%len(c.want)])
			}
		}
		if c.reps == 3 {
			// The run drawn is the one at the cell's median throughput (1000 tps).
			cell := r.Experiment.Cells[0]
			for _, y := range tc.Series[0].Y {
				if y < 0.9*cell.TPS.Median || y > 1.1*cell.TPS.Median {
					t.Errorf("median run's tps %v, cell median %v", y, cell.TPS.Median)
				}
			}
		}
	}
}

// The box plot per cell ends with one box over every run, whose numbers are those of
// all the runs' throughputs.
func TestAllRunsBox(t *testing.T) {
	data := persistenceRuns(t, 3)
	r, err := New(data, Options{Axes: []string{"persistence"}, CompareBy: "-"})
	if err != nil {
		t.Fatal(err)
	}
	box := r.experimentCharts()[0]
	last := box.Boxes[len(box.Boxes)-1]
	if len(box.Boxes) != 5 || last.Label != "all runs" || len(last.Points) != 12 {
		t.Fatalf("boxes %d, last %q with %d points", len(box.Boxes), last.Label, len(last.Points))
	}
	var all []float64
	for _, d := range data {
		all = append(all, metricOf(d, metricTPS))
	}
	s := analyze.Summarize(all, analyze.DefaultConfidence)
	if last.Median != s.Median || last.Min != s.Min || last.Max != s.Max || last.Q1 != s.Q1 || last.Q3 != s.Q3 {
		t.Errorf("all-runs box %+v, want the summary of every run %+v", last, s)
	}
}
