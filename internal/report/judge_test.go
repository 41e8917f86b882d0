package report

import (
	"math"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/chart"
)

// skewedFanout is the fan-out of issue 32 in small: readers do 20 of every 21
// transactions at about 0.3 ms, writers the rest at about 300 ms. Judged by the
// writers, nothing on the page may show the readers' figures as the headline.
func skewedFanout(t *testing.T, n int) []*RunData {
	t.Helper()
	var runs []fixtureRun
	for i := 0; i < n; i++ {
		runs = append(runs, fixtureRun{labels: map[string]string{"layout": []string{"1x96M", "2x48M"}[i%2]}, clients: 4,
			types: []string{"writers/write", "readers/lookup"}, intervals: 6, warmup: 1, tps: 2100, latencyMs: 1,
			typeLatMs: []float64{300, 0.3}, typeWeight: []int{1, 20}, seed: uint64(i + 1)})
	}
	st, ids := newFixtureStore(t, runs)
	return loadFixture(t, st, ids)
}

func seriesNamed(c *chart.Chart, name string) *chart.Series {
	for i := range c.Series {
		if c.Series[i].Name == name {
			return &c.Series[i]
		}
	}
	return nil
}

func chartWithID(cs []*chart.Chart, suffix string) *chart.Chart {
	for _, c := range cs {
		if strings.HasSuffix(c.ID, suffix) {
			return c
		}
	}
	return nil
}

// Every chart of a run judged by a client group draws that group's figures: the
// latency over time and by percentile are the writers' (hundreds of ms), not every
// transaction's (dominated by sub-millisecond reads), and the headline says so.
func TestJudgeAppliesToRunCharts(t *testing.T) {
	data := skewedFanout(t, 1)
	d := data[0]
	w := d.Groups["writers"]
	if w.Latency.P50 < 100 || d.Summary.Latency.P99 > w.Latency.P99 {
		t.Fatalf("fixture: writers %+v, all %+v", w.Latency, d.Summary.Latency)
	}
	if d.Summary.Latency.P50 > 1 {
		t.Fatalf("fixture: every transaction's p50 %v should be the readers' sub-millisecond", d.Summary.Latency.P50)
	}
	r, err := New(data, Options{Judge: "writers"})
	if err != nil {
		t.Fatal(err)
	}
	cs, _, _ := r.runCharts(d)
	lat := chartWithID(cs, "-latency")
	p99 := seriesNamed(lat, "p99")
	for i, y := range p99.Y {
		if d.Points[i].Warmup {
			continue
		}
		// Each point is one interval of ~100 writes at 150..>300 ms.
		if y < 100 || y > 5000 {
			t.Errorf("judged p99 at point %d = %v ms: not the writers' latency", i, y)
		}
	}
	if !strings.Contains(lat.Subtitle, "client group writers") || !strings.Contains(lat.Title, "writers") {
		t.Errorf("latency chart does not say it is judged: %q / %q", lat.Title, lat.Subtitle)
	}
	tps := chartWithID(cs, "-tps")
	if tps.Series[0].Name != "judged: writers" {
		t.Fatalf("first throughput series %q", tps.Series[0].Name)
	}
	for i, y := range tps.Series[0].Y {
		if want := d.Points[i].TypeTPS[0]; y != want {
			t.Errorf("judged tps at %d = %v, want the writers' %v", i, y, want)
		}
	}
	dist := chartWithID(cs, "-distribution")
	last := dist.Series[0].Y[len(dist.Series[0].Y)-1]
	if math.Abs(last-w.Latency.Max)/w.Latency.Max > 0.01 {
		t.Errorf("distribution's max %v, the writers' max %v", last, w.Latency.Max)
	}
	if first := dist.Series[0].Y[0]; first < 100 {
		t.Errorf("distribution's minimum %v ms is below every write: it counts the reads", first)
	}

	h := r.htmlRunOf(d, true)
	facts := map[string]string{}
	for _, f := range h.Facts {
		facts[f[0]] = f[1]
	}
	if !strings.Contains(facts["judged by"], "client group writers") {
		t.Errorf("facts do not say what the run is judged by: %v", h.Facts)
	}
	wantTPS := unitFor(kindCount, w.TPS).Format(w.TPS) + " tx/s"
	if facts["throughput (writers)"] != wantTPS {
		t.Errorf("judged throughput %q, want %q", facts["throughput (writers)"], wantTPS)
	}
	if _, ok := facts["throughput (every transaction)"]; !ok {
		t.Errorf("every transaction's throughput should be labelled so: %v", h.Facts)
	}
	// One unit per column of the per-type table.
	for col := 2; col <= 5; col++ {
		unit := ""
		for _, row := range h.Types.Rows {
			f := strings.Fields(row[col])
			u := f[len(f)-1]
			if unit != "" && u != unit {
				t.Errorf("column %s mixes %s and %s: %v", h.Types.Head[col], unit, u, h.Types.Rows)
			}
			unit = u
		}
	}
}

// An experiment's "over time" overlays judge as the cells do.
func TestJudgeAppliesToTimeOverlays(t *testing.T) {
	data := skewedFanout(t, 4)
	r, err := New(data, Options{Judge: "writers", Axes: []string{"layout"}})
	if err != nil {
		t.Fatal(err)
	}
	_, figs := r.timeOverlays()
	if len(figs) != 2 {
		t.Fatalf("%d overlay charts", len(figs))
	}
	for _, f := range figs {
		if !strings.Contains(f.Subtitle, "client group writers") {
			t.Errorf("%s: subtitle %q does not say it is judged", f.ID, f.Subtitle)
		}
	}
	for _, s := range figs[1].Series {
		for _, y := range s.Y {
			if y < 100 {
				t.Errorf("%s: p99 %v ms is not the writers'", s.Name, y)
			}
		}
	}
	for _, s := range figs[0].Series {
		for _, y := range s.Y {
			if y > 200 { // about 100 writes a second of 2100 transactions
				t.Errorf("%s: tps %v is not the writers'", s.Name, y)
			}
		}
	}
}

// The runs table has one unit per column (issue 32: "277610 µs" beside "441 ms") and
// no second "clients" column when clients is an axis.
func TestRunsTableOneUnitPerColumn(t *testing.T) {
	var runs []fixtureRun
	for i, lat := range []float64{0.2, 0.4, 300, 450} {
		runs = append(runs, fixtureRun{labels: map[string]string{"clients": []string{"1", "2"}[i%2]}, clients: 1 + i%2, intervals: 3, tps: 50, latencyMs: lat, seed: uint64(i + 1)})
	}
	st, ids := newFixtureStore(t, runs)
	r, err := New(loadFixture(t, st, ids), Options{Axes: []string{"clients"}, CompareBy: "-"})
	if err != nil {
		t.Fatal(err)
	}
	tb := r.runsTable()
	n := 0
	for col, h := range tb.Head {
		if h == "clients" {
			n++
		}
		if !strings.HasPrefix(h, "p50") && !strings.HasPrefix(h, "p95") && !strings.HasPrefix(h, "p99") && !strings.HasPrefix(h, "max") {
			continue
		}
		unit := ""
		for _, row := range tb.Rows {
			f := strings.Fields(row[col])
			if u := f[len(f)-1]; unit != "" && u != unit {
				t.Errorf("column %s mixes %s and %s", h, unit, u)
			} else {
				unit = u
			}
		}
	}
	if n != 1 {
		t.Errorf("%d clients columns: %v", n, tb.Head)
	}
}
