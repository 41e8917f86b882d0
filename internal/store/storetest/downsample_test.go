package storetest_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/storetest"
)

// Downsampling merges older readings into buckets by tiers and keeps what they add up
// to: every reading is counted once, a gauge's weighted mean and extremes and a
// counter's mean rate are those of the readings merged, and collector counts do not
// change. A second pass changes nothing.
func TestDownsample(t *testing.T) {
	forEach(t, func(t *testing.T, f factory) {
		ctx := context.Background()
		s := f.open(t, f.fresh(t))
		defer s.Close()
		id, err := s.CreateRun(ctx, storetest.Run())
		if err != nil {
			t.Fatal(err)
		}
		origin := time.Unix(1700000000, 0)
		w, err := s.SampleWriter(ctx, id, origin, nil, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		const n = 100 // samples -1..98 at 0s..99s
		var gaugeSum float64
		for i := -1; i < n-1; i++ {
			if err := w.Add(ctx, storetest.Sample(i, origin.Add(time.Duration(i+1)*time.Second), float64(1000+100*(i+1)), false)); err != nil {
				t.Fatal(err)
			}
			gaugeSum += float64(1000 * (i + 2))
		}
		before, err := s.Collectors(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		tiers := []store.DownsampleTier{{After: 30 * time.Second, Bucket: 10 * time.Second}, {After: 60 * time.Second, Bucket: 30 * time.Second}}
		removed, err := s.Downsample(ctx, id, 100*time.Second, tiers)
		if err != nil {
			t.Fatal(err)
		}
		series, err := s.MetricSeries(ctx, id, "pg.xact_commit", "os.mem.dirty_bytes")
		if err != nil || len(series) != 2 {
			t.Fatalf("%d series, %v", len(series), err)
		}
		gauge, counter := series[0], series[1]
		if gauge.Name != "os.mem.dirty_bytes" {
			gauge, counter = counter, gauge
		}
		// 0s–30s: one 30s bucket; 30s–70s: four 10s buckets; 70s on: every reading.
		if len(gauge.Points) != 1+4+30 || removed != int64(2*(n-len(gauge.Points))) {
			t.Fatalf("%d gauge points after removing %d rows, want 35 and %d", len(gauge.Points), removed, 2*(n-35))
		}
		readings, sum := 0, 0.0
		for _, p := range gauge.Points {
			k := max(p.N, 1)
			readings += k
			sum += p.Value * float64(k)
			if p.At >= 70*time.Second && p.N != 0 || p.At < 70*time.Second && (p.N == 0 || p.Min > p.Value || p.Max < p.Value) {
				t.Errorf("gauge point at %s: n %d min %g value %g max %g", p.At, p.N, p.Min, p.Value, p.Max)
			}
		}
		if readings != n || math.Abs(sum-gaugeSum) > 1e-6*gaugeSum {
			t.Errorf("gauge: %d readings summing to %g, want %d and %g", readings, sum, n, gaugeSum)
		}
		first := gauge.Points[0] // samples -1..28 (at 0s..29s): values 1000..30000
		if first.N != 30 || first.Min != 1000 || first.Max != 30000 || first.Span != 30*time.Second || first.At != 29*time.Second+2*time.Millisecond {
			t.Errorf("first bucket %+v", first)
		}
		for _, p := range counter.Points {
			if p.HasRate && p.Rate != 100 {
				t.Errorf("counter rate %g at %s, want 100", p.Rate, p.At)
			}
		}
		after, err := s.Collectors(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]store.CollectorRun{}
		for _, c := range after {
			byName[c.Collector] = c
		}
		for _, b := range before {
			if a := byName[b.Collector]; a.OK != b.OK || a.Timeouts != b.Timeouts || a.MeanTook != b.MeanTook {
				t.Errorf("collector %s: %+v before, %+v after", b.Collector, b, a)
			}
		}
		if again, err := s.Downsample(ctx, id, 100*time.Second, tiers); err != nil || again != 0 {
			t.Errorf("second pass removed %d (%v)", again, err)
		}
	})
}
