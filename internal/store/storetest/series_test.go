package storetest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/analyze"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/report"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/storetest"
)

// finishedRun stores a complete run made by edit from storetest.Run, with tps as its
// summary's throughput.
func finishedRun(t testing.TB, s store.Store, tps float64, edit func(r *store.Run)) int64 {
	t.Helper()
	ctx := context.Background()
	r := storetest.Run()
	edit(r)
	id, err := s.CreateRun(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(measure.Summary{TypeSummary: measure.TypeSummary{TPS: tps, Latency: measure.Latency{P50: 1, P99: 2}}})
	if err := s.FinishRun(ctx, id, "complete", "", r.StartedAt.Add(r.Duration), js); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestSeries: what history reads of a series comes back from each store: the runs of
// a series by run, by name and by id, the provenance its changes are explained by,
// and the figures.
func TestSeries(t *testing.T) {
	forEach(t, func(t *testing.T, f factory) {
		ctx := context.Background()
		s := f.open(t, f.fresh(t))
		defer s.Close()
		start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
		var nightly []int64
		for i := range 12 {
			tps, sc := 1000.0+float64(i%3), "on"
			if i >= 6 {
				tps, sc = 1500+float64(i%3), "off"
			}
			nightly = append(nightly, finishedRun(t, s, tps, func(r *store.Run) {
				r.StartedAt = start.Add(time.Duration(i) * time.Hour)
				r.Settings = map[string]string{"synchronous_commit": sc, "shared_buffers": "128MB"}
				r.Labels = map[string]string{"rep": fmt.Sprint(i)}
			}))
			// Another series in between: 8 clients.
			finishedRun(t, s, 3000, func(r *store.Run) { r.Clients = 8; r.StartedAt = start.Add(time.Duration(i)*time.Hour + time.Minute) })
		}
		for i := range 3 {
			finishedRun(t, s, 10, func(r *store.Run) {
				r.Labels = map[string]string{report.SeriesLabel: "named", "rep": fmt.Sprint(i)}
				r.Clients = i + 1 // a named series keeps runs whatever else differs
			})
		}
		id, key, runs, err := report.LoadSeries(ctx, s, fmt.Sprint(nightly[3]), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 12 {
			t.Fatalf("the series of run %d holds %d runs, want 12", nightly[3], len(runs))
		}
		if _, _, again, err := report.LoadSeries(ctx, s, id, nil); err != nil || len(again) != 12 {
			t.Fatalf("by id %s: %d runs (%v), want 12", id, len(again), err)
		}
		if _, _, named, err := report.LoadSeries(ctx, s, "named", nil); err != nil || len(named) != 3 {
			t.Fatalf("series named: %d runs (%v), want 3", len(named), err)
		}
		h, err := report.BuildHistory(id, key, runs, []string{"tps"}, analyze.ChangeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(h.Points) != 12 || h.Points[0].RunID != nightly[0] || h.Points[11].Values["tps"] != 1502 {
			t.Fatalf("points %+v", h.Points)
		}
		if len(h.Changes) != 1 || h.Changes[0].RunID != nightly[6] || len(h.Changes[0].Changed) != 1 ||
			h.Changes[0].Changed[0] != "setting synchronous_commit: on → off" {
			t.Fatalf("changes %+v, want one at run %d explained by synchronous_commit", h.Changes, nightly[6])
		}
		l, err := report.ListSeries(ctx, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		counts := map[int]int{}
		for _, sr := range l.Series {
			counts[sr.Runs]++
		}
		if len(l.Series) != 3 || counts[12] != 2 || counts[3] != 1 || l.Series[0].ID != "named" {
			t.Fatalf("series %+v, want 2 of 12 runs and the named one of 3 first", l.Series)
		}
	})
}

// BenchmarkHistory10k: a series of 10,000 runs read from each store, its changes in
// tps, p99 and errors found (five steps in tps).
func BenchmarkHistory10k(b *testing.B) {
	const n = 10000
	for _, f := range factories {
		b.Run(f.name, func(b *testing.B) {
			ctx := context.Background()
			s := f.open(b, f.fresh(b))
			defer s.Close()
			var last int64
			for i := range n {
				level := []float64{1000, 1200, 900, 950, 1300, 1000}[i*6/n]
				last = finishedRun(b, s, level+float64(i%7)*3, func(r *store.Run) {
					r.StartedAt = r.StartedAt.Add(time.Duration(i) * time.Minute)
				})
			}
			b.ResetTimer()
			for b.Loop() {
				id, key, runs, err := report.LoadSeries(ctx, s, fmt.Sprint(last), nil)
				if err != nil {
					b.Fatal(err)
				}
				h, err := report.BuildHistory(id, key, runs, report.DefaultHistoryMetrics, analyze.ChangeOptions{})
				if err != nil || len(h.Points) != n || len(h.Changes) < 5 {
					b.Fatalf("%d points, %d changes (%v)", len(h.Points), len(h.Changes), err)
				}
			}
		})
	}
}
