package store

import (
	"time"

	"github.com/fathom-lab/fathom/internal/sample"
)

// Server and OS samples: the write side (SampleWriter, used while a run or watch goes
// on) and the read API for reports, show and stall analysis.

// SampleSource is what a run's sampler learnt about the server, and how it sampled.
type SampleSource struct {
	Server   sample.Server `json:"server"`
	Interval time.Duration `json:"interval_ns"`
	// Skipped counts interval boundaries where sampling could not keep up.
	Skipped int64 `json:"skipped"`
}

// Metric is one metric of a run.
type Metric struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	Collector string `json:"collector"`
	Kind      string `json:"kind"` // "counter" or "gauge"
	Unit      string `json:"unit,omitempty"`
}

// IsCounter reports whether the metric's rate is what to chart.
func (m *Metric) IsCounter() bool { return m.Kind == "counter" }

// MetricPoint is one reading of a metric.
type MetricPoint struct {
	// Interval is the report interval the reading closes (-1: before the first).
	Interval int `json:"interval"`
	// At is when the reading stands, since the run's start (the middle of its
	// collector's query): the same clock as the intervals' start and end.
	At    time.Duration `json:"at_ns"`
	Value float64       `json:"value"`
	// Rate is the per-second rate of a counter since its previous reading; HasRate is
	// false for gauges, a counter's first reading and after a reset.
	Rate    float64 `json:"rate,omitempty"`
	HasRate bool    `json:"has_rate,omitempty"`
	// Reset marks a counter that restarted (server restart, FLUSH STATUS,
	// pg_stat_reset()): charts should mark it; there is no rate.
	Reset bool `json:"reset,omitempty"`
	// N is how many readings a downsampled point stands for (0: not downsampled),
	// over Span up to At. Value is then a gauge's mean (a counter's last value), Rate a
	// counter's mean rate, and Min and Max the lowest and highest of what is charted
	// (a counter's rate, a gauge's value). See WatchDownsampling.
	N    int           `json:"n,omitempty"`
	Span time.Duration `json:"span_ns,omitempty"`
	Min  float64       `json:"min,omitempty"`
	Max  float64       `json:"max,omitempty"`
}

// MetricSeries is a metric's readings in time order.
type MetricSeries struct {
	Metric
	Points []MetricPoint `json:"points"`
}

// Y is the number to chart for point i: a counter's rate or a gauge's value; ok is
// false where a counter has no rate (draw a gap).
func (s *MetricSeries) Y(i int) (float64, bool) {
	p := &s.Points[i]
	if s.IsCounter() {
		return p.Rate, p.HasRate
	}
	return p.Value, true
}

// ByInterval returns the charted value per interval index (missing intervals absent).
func (s *MetricSeries) ByInterval() map[int]float64 {
	out := make(map[int]float64, len(s.Points))
	for i := range s.Points {
		if y, ok := s.Y(i); ok {
			out[s.Points[i].Interval] = y
		}
	}
	return out
}

// DownsampleTier merges the samples older than After (behind the newest one) into
// buckets of Bucket, on the run's clock.
type DownsampleTier struct {
	After, Bucket time.Duration
}

// WatchDownsampling is how a watch session keeps its size bounded: every reading of
// the last 6 hours; 1-minute buckets from 6 hours to 7 days back; 15-minute buckets
// before. A bucket keeps per metric the mean (gauges; counters: the mean rate and the
// last value), the lowest and highest reading, and how many readings it stands for.
// Failed, timed-out and skipped samples are never merged.
var WatchDownsampling = []DownsampleTier{{After: 6 * time.Hour, Bucket: time.Minute}, {After: 7 * 24 * time.Hour, Bucket: 15 * time.Minute}}

// CollectorRun is one collector's record over a run.
type CollectorRun struct {
	Collector string        `json:"collector"`
	Source    string        `json:"source"`
	OK        int           `json:"ok"`
	Failed    int           `json:"failed"`
	Timeouts  int           `json:"timeouts"`
	Skipped   int           `json:"skipped"`
	Resets    int           `json:"resets"`
	MeanTook  time.Duration `json:"mean_took_ns"`
	MaxTook   time.Duration `json:"max_took_ns"`
	LastError string        `json:"last_error,omitempty"`
}

// SampleStatus is one collector's outcome in one sample.
type SampleStatus struct {
	Interval  int    `json:"interval"`
	Collector string `json:"collector"`
	Source    string `json:"source"` // server kind or "os"
	Status    string `json:"status"` // ok | failed | timeout | skipped
	Error     string `json:"error,omitempty"`
}
