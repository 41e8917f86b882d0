package report

import (
	"context"
	"database/sql"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/store"
)

// A report's numbers must be the ones `fathom show` and `fathom export` print.
func TestRunDataMatchesShowAndExport(t *testing.T) {
	st, ids := newFixtureStore(t, []fixtureRun{
		{clients: 4, types: []string{"read", "write"}, intervals: 30, warmup: 3, tps: 400, latencyMs: 2, errEvery: 50, seed: 1, dip: [2]int{10, 14}},
		{clients: 1, intervals: 5, tps: 50, latencyMs: 0.3, seed: 2},
	})
	data := loadFixture(t, st, ids)
	for i, id := range ids {
		run, _ := st.Run(context.Background(), id)
		ivs, err := st.Intervals(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		want := measure.Summarize(run.TxnTypes, ivs)
		want.RunID, want.Status, want.Reason = run.ID, run.Status, run.Reason
		want.Workload, want.Target, want.Clients, want.Rate = run.Workload, run.Target, run.Clients, run.Rate
		if !reflect.DeepEqual(data[i].Summary, want) {
			t.Errorf("run %d summary:\n got %+v\nwant %+v", id, data[i].Summary, want)
		}
		if rows := intervalRows(run, ivs); !reflect.DeepEqual(data[i].Rows, rows) {
			t.Errorf("run %d rows differ from IntervalRows", id)
		}
	}
	d := data[0]
	if len(d.Points) != 30 || !d.Points[0].Warmup || d.Points[3].Warmup || d.Group != 1 {
		t.Fatalf("points: %d, group %d", len(d.Points), d.Group)
	}
	if d.Points[11].TPS >= d.Points[20].TPS/2 || d.Points[11].P99 <= d.Points[20].P99 {
		t.Errorf("the dip should show: %+v vs %+v", d.Points[11], d.Points[20])
	}
	if d.ErrorPct <= 0 || d.Summary.Errors == 0 {
		t.Errorf("errors: %v %+v", d.ErrorPct, d.Summary)
	}
	last := d.Distribution[len(d.Distribution)-1]
	if last.Percentile != 100 || last.Ms != roundTo(d.Summary.Latency.Max) && last.Ms < d.Summary.Latency.Max-0.001 {
		t.Errorf("distribution ends at %+v, max %v", last, d.Summary.Latency.Max)
	}
	// Downsampling: 30 intervals at most 7 points → groups of 5, warm-up split off.
	run, _ := st.Run(context.Background(), ids[0])
	encoded, _ := st.EncodedIntervals(context.Background(), run)
	small, err := NewRunData(run, encoded, 7)
	if err != nil {
		t.Fatal(err)
	}
	if small.Group != 5 || len(small.Points) != 7 || !small.Points[0].Warmup || small.Points[1].Start != 3 {
		t.Errorf("downsampled: group %d, %d points, first %+v second %+v", small.Group, len(small.Points), small.Points[0], small.Points[1])
	}
}

func roundTo(v float64) float64 { return v }

// A tpcc run's NOPM and TPM are computed from its stored intervals as the run's own
// summary computes them, the server's TPM is read from the stored summary, and the
// runs table gives all three; a run of another workload gets none of the columns.
func TestRunDataTPCC(t *testing.T) {
	st, ids := newFixtureStore(t, []fixtureRun{
		{clients: 4, types: []string{"new-order", "payment", "order-status"}, typeWeight: []int{45, 43, 12}, intervals: 12, warmup: 2,
			tps: 200, latencyMs: 3, seed: 3, serverTPM: 12345},
		{clients: 1, intervals: 5, tps: 50, latencyMs: 0.3, seed: 2},
	})
	data := loadFixture(t, st, ids)
	run, _ := st.Run(context.Background(), ids[0])
	ivs, err := st.Intervals(context.Background(), ids[0])
	if err != nil {
		t.Fatal(err)
	}
	want := measure.Summarize(run.TxnTypes, ivs)
	got := data[0].Summary
	if want.NOPM <= 0 || got.NOPM != want.NOPM || got.TPM != want.TPM || got.TPM <= got.NOPM {
		t.Errorf("NOPM %v TPM %v, the run's summary has %v and %v", got.NOPM, got.TPM, want.NOPM, want.TPM)
	}
	if got.ServerTPM != 12345 || got.ServerTPMSource != "test counter" {
		t.Errorf("server TPM %v (%q)", got.ServerTPM, got.ServerTPMSource)
	}
	if data[1].Summary.TPM != 0 || data[1].Summary.NOPM != 0 {
		t.Errorf("a tpcb run has NOPM %v TPM %v", data[1].Summary.NOPM, data[1].Summary.TPM)
	}
	r, err := New(data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tb := r.runsTable()
	n := len(tb.Head)
	if n < 3 || strings.Join(tb.Head[n-3:], ",") != "NOPM,TPM,server TPM" {
		t.Fatalf("runs table head %v", tb.Head)
	}
	row := tb.Rows[0]
	if row[n-3] != strconv.FormatFloat(want.NOPM, 'f', 0, 64) || row[n-2] != strconv.FormatFloat(want.TPM, 'f', 0, 64) || row[n-1] != "12345" {
		t.Errorf("tpcc row %v", row[n-3:])
	}
	if other := tb.Rows[1]; other[n-3] != "–" || other[n-1] != "–" {
		t.Errorf("tpcb row %v", other[n-3:])
	}
	one, err := New(data[1:], Options{})
	if err != nil {
		t.Fatal(err)
	}
	if h := one.runsTable().Head; slices.Contains(h, "NOPM") {
		t.Errorf("a report of a tpcb run has a NOPM column: %v", h)
	}
}

// Reports read histograms in the form stores keep from schema 4 on (uncompressed V2)
// and in the older compressed one, alone or mixed in a run, and every number is the
// one computed from the dense histograms `fathom show` and `fathom export` decode:
// rows, summary, time-series points (merged intervals included) and distribution.
func TestRunDataFromEitherEncodingMatchesDense(t *testing.T) {
	st, ids := newFixtureStore(t, []fixtureRun{
		{clients: 4, types: []string{"read", "write", "scan"}, intervals: 23, warmup: 3, tps: 300, latencyMs: 2, errEvery: 40, seed: 1,
			dip: [2]int{8, 12}, service: true},
		{clients: 2, intervals: 17, warmup: 2, tps: 200, latencyMs: 0.7, seed: 2, service: true},
		{clients: 1, intervals: 11, tps: 80, latencyMs: 5, errEvery: 20, seed: 3},
		// client groups with their own latencies: each type's and group's latency over
		// time and spectrum are what a judged report draws
		{clients: 3, types: []string{"writers/a", "writers/b", "readers/c"}, intervals: 9, warmup: 1, tps: 210, latencyMs: 1,
			typeLatMs: []float64{40, 20, 0.5}, typeWeight: []int{1, 2, 18}, seed: 4},
	})
	ctx := context.Background()
	var runs []*store.Run
	for _, id := range ids {
		r, err := st.Run(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	check := func(what string, maxPoints int) []*RunData {
		t.Helper()
		data, err := LoadRuns(ctx, st, runs, maxPoints)
		if err != nil {
			t.Fatal(err)
		}
		for i, run := range runs {
			ivs, err := st.Intervals(ctx, run.ID)
			if err != nil {
				t.Fatal(err)
			}
			want := denseRunData(run, ivs, maxPoints)
			got := data[i]
			if !reflect.DeepEqual(got.Summary, want.Summary) {
				t.Errorf("%s, run %d: summary\n got %+v\nwant %+v", what, run.ID, got.Summary, want.Summary)
			}
			if !reflect.DeepEqual(got.Rows, want.Rows) {
				t.Errorf("%s, run %d: rows differ", what, run.ID)
			}
			if got.Group != want.Group || !reflect.DeepEqual(got.Points, want.Points) {
				t.Errorf("%s, run %d: points (group %d)\n got %+v\nwant %+v", what, run.ID, got.Group, got.Points, want.Points)
			}
			if !reflect.DeepEqual(got.Distribution, want.Distribution) {
				t.Errorf("%s, run %d: distribution\n got %+v\nwant %+v", what, run.ID, got.Distribution, want.Distribution)
			}
			if !reflect.DeepEqual(got.Distributions, want.Distributions) {
				t.Errorf("%s, run %d: distributions of types and groups\n got %+v\nwant %+v", what, run.ID, got.Distributions, want.Distributions)
			}
		}
		return data
	}
	newForm := check("uncompressed", 0)
	check("uncompressed, merged points", 4)
	toOldEncoding(t, st, ids[0], "idx % 3 = 1")
	toOldEncoding(t, st, ids[1], "1")
	toOldEncoding(t, st, ids[2], "1")
	oldForm := check("compressed and mixed", 0)
	check("compressed and mixed, merged points", 4)
	if !reflect.DeepEqual(newForm, oldForm) {
		t.Error("the report of a store in the older encoding differs")
	}
}

// denseRunData computes what a report shows of a run the slow, obvious way: from
// dense histograms merged with the HdrHistogram library.
func denseRunData(run *store.Run, ivs []*measure.Interval, maxPoints int) *RunData {
	if maxPoints <= 0 {
		maxPoints = DefaultMaxPoints
	}
	d := &RunData{Run: run, Group: max(1, (len(ivs)+maxPoints-1)/maxPoints), Rows: intervalRows(run, ivs)}
	d.Summary = measure.Summarize(run.TxnTypes, ivs)
	d.Summary.RunID, d.Summary.Status, d.Summary.Reason = run.ID, run.Status, run.Reason
	d.Summary.Workload, d.Summary.Target, d.Summary.Clients, d.Summary.Rate = run.Workload, run.Target, run.Clients, run.Rate
	var grp []*measure.Interval
	flush := func() {
		if len(grp) == 0 {
			return
		}
		m := measure.NewInterval(0, run.TxnTypes)
		for _, iv := range grp {
			m.Add(iv)
		}
		all := m.Total()
		p := Point{Start: grp[0].Start.Seconds(), End: grp[len(grp)-1].End.Seconds(), Warmup: grp[0].Warmup,
			Reconnects: m.Reconnects, Late: all.Late, Dropped: all.Dropped}
		if dur := p.End - p.Start; dur > 0 {
			p.TPS, p.ErrorsPS = float64(all.OK)/dur, float64(all.ErrorTotal())/dur
			p.RetriesPS, p.FailedPS = float64(all.Retries)/dur, float64(all.Failed)/dur
			for i := range m.Types {
				p.TypeTPS = append(p.TypeTPS, float64(m.Types[i].OK)/dur)
			}
		}
		l := all.Latency
		p.P50, p.P95, p.P99, p.Max = nsToMs(l.ValueAtQuantile(50)), nsToMs(l.ValueAtQuantile(95)), nsToMs(l.ValueAtQuantile(99)), nsToMs(l.ValueAtQuantile(100))
		if len(m.Types) > 1 {
			pl := func(h *hdr.Histogram) pointPercentiles {
				if h.TotalCount() == 0 {
					return pointPercentiles{math.NaN(), math.NaN(), math.NaN(), math.NaN()}
				}
				return pointPercentiles{nsToMs(h.ValueAtQuantile(50)), nsToMs(h.ValueAtQuantile(95)), nsToMs(h.ValueAtQuantile(99)), nsToMs(h.ValueAtQuantile(100))}
			}
			for i := range m.Types {
				p.TypeLat = append(p.TypeLat, pl(m.Types[i].Latency))
			}
			for _, g := range txnGroups(run.TxnTypes) {
				h := measure.NewHistogram()
				for i := range m.Types {
					if strings.HasPrefix(m.Types[i].Name, g+"/") {
						h.Merge(m.Types[i].Latency)
					}
				}
				if p.GroupLat == nil {
					p.GroupLat = map[string]pointPercentiles{}
				}
				p.GroupLat[g] = pl(h)
			}
		}
		d.Points = append(d.Points, p)
		grp = nil
	}
	tot := measure.NewHistogram()
	per := map[string]*hdr.Histogram{}
	for _, iv := range ivs {
		if !iv.Warmup && len(iv.Types) > 1 {
			for i := range iv.Types {
				names := []string{iv.Types[i].Name}
				if g, _, ok := strings.Cut(iv.Types[i].Name, "/"); ok {
					names = append(names, g)
				}
				for _, n := range names {
					if per[n] == nil {
						per[n] = measure.NewHistogram()
					}
					per[n].Merge(iv.Types[i].Latency)
				}
			}
		}
		if len(grp) == d.Group || len(grp) > 0 && grp[0].Warmup != iv.Warmup {
			flush()
		}
		grp = append(grp, iv)
		if !iv.Warmup {
			all := iv.Total()
			tot.Merge(all.Latency)
		}
	}
	flush()
	d.Distribution = denseDistribution(tot)
	if len(run.TxnTypes) > 1 {
		d.Distributions = map[string][]percentile{}
		for n, h := range per {
			d.Distributions[n] = denseDistribution(h)
		}
	}
	return d
}

// toOldEncoding rewrites the histograms of a run's intervals matching where in the form
// stores before schema 4 hold (measure.Encode's base64 compressed V2), as if an older
// fathom had written them.
func toOldEncoding(t testing.TB, st store.Store, runID int64, where string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+st.Path()+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT idx, type, latency, service, failed_latency FROM interval_types WHERE run_id = ? AND `+where, runID)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		idx   int
		typ   string
		blobs [3][]byte
	}
	var rs []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.idx, &r.typ, &r.blobs[0], &r.blobs[1], &r.blobs[2]); err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	rows.Close()
	if len(rs) == 0 {
		t.Fatalf("run %d: no intervals where %s", runID, where)
	}
	for _, r := range rs {
		var old [3][]byte
		for i, b := range r.blobs {
			h, err := measure.Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			if old[i], err = measure.Encode(h); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := db.Exec(`UPDATE interval_types SET latency = ?, service = ?, failed_latency = ? WHERE run_id = ? AND idx = ? AND type = ?`,
			old[0], old[1], old[2], runID, r.idx, r.typ); err != nil {
			t.Fatal(err)
		}
	}
}

func denseDistribution(h *hdr.Histogram) []percentile {
	var out []percentile
	if n := h.TotalCount(); n > 0 {
		for _, q := range distributionQuantiles(n) {
			out = append(out, percentile{Percentile: round6(q), Ms: nsToMs(h.ValueAtQuantile(q)),
				Count: max(int64(math.Ceil(q/100*float64(n))), 1)})
		}
	}
	return out
}
