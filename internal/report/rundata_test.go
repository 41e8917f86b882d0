package report

import (
	"context"
	"reflect"
	"testing"

	"github.com/fathom-lab/fathom/internal/measure"
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
		if rows := IntervalRows(run, ivs); !reflect.DeepEqual(data[i].Rows, rows) {
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
