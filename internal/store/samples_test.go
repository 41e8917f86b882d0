package store

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/collect"
)

func testSample(idx int, at time.Time, commits float64, reset bool) *collect.Sample {
	return &collect.Sample{
		Index: idx, At: at,
		Results: []collect.Result{
			{Collector: "pg_stat_database", Source: "postgres", Status: collect.StatusOK, At: at.Add(time.Millisecond), Took: 2 * time.Millisecond, Reset: reset},
			{Collector: "pg_locks", Source: "postgres", Status: collect.StatusTimeout, Error: "no answer within 2s", At: at, Took: 2 * time.Second},
			{Collector: "os_meminfo", Source: "os", Status: collect.StatusOK, At: at.Add(2 * time.Millisecond), Took: time.Millisecond},
		},
		Readings: []collect.Reading{
			{Name: "pg.xact_commit", Collector: "pg_stat_database", Kind: collect.Counter, Unit: "transactions", Value: commits,
				Rate: 100, HasRate: idx >= 0 && !reset, Reset: reset},
			{Name: "os.mem.dirty_bytes", Collector: "os_meminfo", Kind: collect.Gauge, Unit: "bytes", Value: float64(1000 * (idx + 2))},
		},
	}
}

func TestSamplesRoundTrip(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "fathom.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	id, err := s.CreateRun(ctx, testRun())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SampleSource(ctx, id); !errors.Is(err, ErrNotFound) {
		t.Errorf("unsampled run: %v", err)
	}
	origin := time.Now()
	srv := &collect.Server{Kind: "postgres", Local: true, Devices: []string{"vda"}, Settings: map[string]string{"max_wal_size": "1GB"}}
	w, err := s.SampleWriter(ctx, id, origin.Add(-time.Hour), srv, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	w.SetOrigin(origin)
	for i := -1; i < 3; i++ {
		if err := w.Add(ctx, testSample(i, origin.Add(time.Duration(i+1)*time.Second), float64(1000+100*(i+1)), i == 2)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Skipped(ctx, 2); err != nil {
		t.Fatal(err)
	}
	// A writer opened again (a resumed run) continues the metric numbering.
	w2, err := s.SampleWriter(ctx, id, origin, srv, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	extra := testSample(3, origin.Add(4*time.Second), 2000, false)
	extra.Readings = append(extra.Readings, collect.Reading{Name: "os.mem.writeback_bytes", Collector: "os_meminfo", Kind: collect.Gauge, Unit: "bytes", Value: 7})
	if err := w2.Add(ctx, extra); err != nil {
		t.Fatal(err)
	}

	src, err := s.SampleSource(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !src.Server.Local || src.Server.Devices[0] != "vda" || src.Interval != time.Second || src.Skipped != 2 || src.Server.Settings["max_wal_size"] != "1GB" {
		t.Errorf("source %+v", src)
	}
	ms, err := s.Metrics(ctx, id)
	if err != nil || len(ms) != 3 {
		t.Fatalf("metrics %+v %v", ms, err)
	}
	all, err := s.MetricSeries(ctx, id)
	if err != nil || len(all) != 3 {
		t.Fatalf("series %d %v", len(all), err)
	}
	sel, err := s.MetricSeries(ctx, id, "pg.xact_commit")
	if err != nil || len(sel) != 1 {
		t.Fatalf("one series: %+v %v", sel, err)
	}
	c := sel[0]
	if !c.IsCounter() || c.Unit != "transactions" || len(c.Points) != 5 {
		t.Fatalf("counter series %+v", c)
	}
	if p := c.Points[0]; p.Interval != -1 || p.HasRate || p.At != time.Millisecond {
		t.Errorf("baseline point %+v (at is relative to the origin: -1s+1s+1ms)", p)
	}
	if y, ok := c.Y(1); !ok || y != 100 || c.Points[1].At != time.Second+time.Millisecond {
		t.Errorf("point 1: %v %v %+v", y, ok, c.Points[1])
	}
	if _, ok := c.Y(3); ok || !c.Points[3].Reset {
		t.Errorf("reset point %+v", c.Points[3])
	}
	if by := c.ByInterval(); len(by) != 3 || by[0] != 100 {
		t.Errorf("by interval %v", by)
	}
	os, err := s.MetricSeries(ctx, id, "os.mem.*")
	if err != nil || len(os) != 2 || os[0].Name != "os.mem.dirty_bytes" || os[1].Name != "os.mem.writeback_bytes" {
		t.Fatalf("prefix: %+v %v", os, err)
	}
	if y, ok := os[0].Y(2); !ok || y != 3000 {
		t.Errorf("gauge value %v %v", y, ok)
	}
	crs, err := s.Collectors(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]CollectorRun{}
	for _, cr := range crs {
		byName[cr.Collector] = cr
	}
	if cr := byName["pg_locks"]; cr.Timeouts != 5 || cr.OK != 0 || cr.LastError != "no answer within 2s" {
		t.Errorf("pg_locks %+v", cr)
	}
	if cr := byName["pg_stat_database"]; cr.OK != 5 || cr.Resets != 1 || cr.MeanTook != 2*time.Millisecond {
		t.Errorf("pg_stat_database %+v", cr)
	}
	if crs[len(crs)-1].Source != "os" {
		t.Errorf("os collectors come last: %+v", crs)
	}
	if ok, _ := s.HasSamples(ctx, id); !ok {
		t.Error("HasSamples")
	}
}

func TestStallsRoundTrip(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "fathom.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	id, _ := s.CreateRun(ctx, testRun())
	if st, _, analyzed, err := s.Stalls(ctx, id); err != nil || analyzed || st != nil {
		t.Errorf("before analysis: %v %v %v", st, analyzed, err)
	}
	in := []Stall{{Number: 1, FirstInterval: 3, LastInterval: 4, Start: 3 * time.Second, End: 5 * time.Second, Throughput: "tps",
		Baseline: 1000, Mean: 200, Depth: 0.8, Cause: "checkpoint", Title: "PostgreSQL checkpoint",
		Settings: []StallSetting{{Name: "max_wal_size", Value: "32MB"}},
		Causes:   []StallCause{{Key: "checkpoint", Score: 3, Metrics: []string{"pg.checkpoints_req"}}},
		Evidence: []StallEvidence{{Metric: "pg.buffers_checkpoint", Kind: "counter", Baseline: 10, During: 5000, Score: 99}}}}
	if err := s.SaveStalls(ctx, id, map[string]float64{"threshold": 0.5}, in); err != nil {
		t.Fatal(err)
	}
	got, params, analyzed, err := s.Stalls(ctx, id)
	if err != nil || !analyzed || len(got) != 1 {
		t.Fatalf("%+v %v %v", got, analyzed, err)
	}
	a, _ := json.Marshal(in[0])
	b, _ := json.Marshal(got[0])
	if string(a) != string(b) {
		t.Errorf("stall changed:\n%s\n%s", a, b)
	}
	if string(params) != `{"threshold":0.5}` {
		t.Errorf("params %s", params)
	}
	// Re-analysis replaces; no stalls is a result too.
	if err := s.SaveStalls(ctx, id, map[string]float64{"threshold": 0.3}, nil); err != nil {
		t.Fatal(err)
	}
	if got, _, analyzed, _ := s.Stalls(ctx, id); len(got) != 0 || !analyzed {
		t.Errorf("after re-analysis: %+v %v", got, analyzed)
	}
}
