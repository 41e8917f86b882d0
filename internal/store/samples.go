package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fathom-lab/fathom/internal/collect"
)

// Server and OS samples: the write side (SampleWriter, used while a run or watch goes
// on) and the read API for reports, show and stall analysis.

// SampleSource is what a run's sampler learnt about the server, and how it sampled.
type SampleSource struct {
	Server   collect.Server `json:"server"`
	Interval time.Duration  `json:"interval_ns"`
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

// SampleWriter writes one run's samples as they come, one transaction per sample.
type SampleWriter struct {
	st     *Store
	runID  int64
	origin time.Time
	mu     sync.Mutex
	ids    map[string]int64
	next   int64
}

// SampleWriter starts writing samples of runID. origin is the run's clock zero (the
// runner's start); sample times are stored relative to it.
func (s *Store) SampleWriter(ctx context.Context, runID int64, origin time.Time, src *collect.Server, interval time.Duration) (*SampleWriter, error) {
	srv := "{}"
	if src != nil {
		srv = mustJSON(src)
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO sample_sources (run_id, server, interval_ns) VALUES (?,?,?)
		ON CONFLICT (run_id) DO UPDATE SET server = excluded.server, interval_ns = excluded.interval_ns`, runID, srv, int64(interval)); err != nil {
		return nil, err
	}
	w := &SampleWriter{st: s, runID: runID, origin: origin, ids: map[string]int64{}}
	rows, err := s.db.QueryContext(ctx, `SELECT id, name FROM metrics WHERE run_id = ?`, runID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var n string
		if err := rows.Scan(&id, &n); err != nil {
			return nil, err
		}
		w.ids[n] = id
		if id >= w.next {
			w.next = id + 1
		}
	}
	return w, rows.Err()
}

// SetOrigin changes the clock zero for later samples (the runner's start is known only
// once it runs).
func (w *SampleWriter) SetOrigin(t time.Time) {
	w.mu.Lock()
	w.origin = t
	w.mu.Unlock()
}

// Skipped records how many boundaries sampling could not keep up with.
func (w *SampleWriter) Skipped(ctx context.Context, n int64) error {
	_, err := w.st.db.ExecContext(ctx, `UPDATE sample_sources SET skipped = ? WHERE run_id = ?`, n, w.runID)
	return err
}

// Add stores one sample in one transaction.
func (w *SampleWriter) Add(ctx context.Context, smp *collect.Sample) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	tx, err := w.st.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	at := map[string]time.Time{}
	for _, r := range smp.Results {
		at[r.Collector] = r.At
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO samples (run_id, idx, collector, source, at_ns, took_ns, status, error, reset)
			VALUES (?,?,?,?,?,?,?,?,?)`, w.runID, smp.Index, r.Collector, r.Source, int64(r.At.Sub(w.origin)), int64(r.Took),
			string(r.Status), r.Error, r.Reset); err != nil {
			return err
		}
	}
	added := map[string]int64{}
	newMetric, err := tx.PrepareContext(ctx, `INSERT INTO metrics (run_id, id, name, collector, kind, unit) VALUES (?,?,?,?,?,?)`)
	if err != nil {
		return err
	}
	defer newMetric.Close()
	point, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO metric_points (run_id, metric_id, idx, value, rate, reset) VALUES (?,?,?,?,?,?)`)
	if err != nil {
		return err
	}
	defer point.Close()
	for i := range smp.Readings {
		r := &smp.Readings[i]
		id, ok := w.ids[r.Name]
		if !ok {
			id, ok = added[r.Name]
		}
		if !ok {
			id = w.next + int64(len(added))
			if _, err := newMetric.ExecContext(ctx, w.runID, id, r.Name, r.Collector, r.Kind.String(), r.Unit); err != nil {
				return err
			}
			added[r.Name] = id
		}
		var rate any
		if r.HasRate {
			rate = r.Rate
		}
		if _, err := point.ExecContext(ctx, w.runID, id, smp.Index, r.Value, rate, r.Reset); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	for n, id := range added {
		w.ids[n] = id
	}
	w.next += int64(len(added))
	return nil
}

// HasSamples reports whether a run has server or OS samples.
func (s *Store) HasSamples(ctx context.Context, runID int64) (bool, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM sample_sources WHERE run_id = ?`, runID).Scan(&n)
	return n > 0, err
}

// SampleSource returns what a run's sampler learnt about the server; the error wraps
// ErrNotFound when the run was not sampled.
func (s *Store) SampleSource(ctx context.Context, runID int64) (*SampleSource, error) {
	var srv string
	var ival, skipped int64
	err := s.db.QueryRowContext(ctx, `SELECT server, interval_ns, skipped FROM sample_sources WHERE run_id = ?`, runID).Scan(&srv, &ival, &skipped)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("run %d has no server or OS samples: %w", runID, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	out := &SampleSource{Interval: time.Duration(ival), Skipped: skipped}
	if err := json.Unmarshal([]byte(srv), &out.Server); err != nil {
		return nil, fmt.Errorf("run %d: corrupt sample source: %v", runID, err)
	}
	return out, nil
}

// Metrics lists a run's metrics by name.
func (s *Store) Metrics(ctx context.Context, runID int64) ([]Metric, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, name, collector, kind, unit FROM metrics WHERE run_id = ? ORDER BY name`, runID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Metric
	for rows.Next() {
		var m Metric
		if err := rows.Scan(&m.ID, &m.Name, &m.Collector, &m.Kind, &m.Unit); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// matchName reports whether a metric name is selected by a pattern: an exact name,
// or a prefix ending in '*' ("os.disk.*").
func matchName(pattern, name string) bool {
	if p, ok := strings.CutSuffix(pattern, "*"); ok {
		return strings.HasPrefix(name, p)
	}
	return pattern == name
}

// MetricSeries returns a run's metric series, each in interval order, with every
// reading's time on the run's clock. names selects metrics by exact name or prefix*
// (none: all). Series are sorted by name.
func (s *Store) MetricSeries(ctx context.Context, runID int64, names ...string) ([]MetricSeries, error) {
	ms, err := s.Metrics(ctx, runID)
	if err != nil {
		return nil, err
	}
	byID := map[int64]*MetricSeries{}
	var out []*MetricSeries
	for _, m := range ms {
		keep := len(names) == 0
		for _, p := range names {
			if matchName(p, m.Name) {
				keep = true
				break
			}
		}
		if keep {
			ser := &MetricSeries{Metric: m}
			byID[m.ID] = ser
			out = append(out, ser)
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	// The time of each (interval, collector).
	at := map[string]map[int]time.Duration{}
	trows, err := s.db.QueryContext(ctx, `SELECT idx, collector, at_ns FROM samples WHERE run_id = ?`, runID)
	if err != nil {
		return nil, err
	}
	for trows.Next() {
		var idx int
		var c string
		var ns int64
		if err := trows.Scan(&idx, &c, &ns); err != nil {
			trows.Close()
			return nil, err
		}
		if at[c] == nil {
			at[c] = map[int]time.Duration{}
		}
		at[c][idx] = time.Duration(ns)
	}
	trows.Close()
	if err := trows.Err(); err != nil {
		return nil, err
	}
	q := `SELECT metric_id, idx, value, rate, reset FROM metric_points WHERE run_id = ?`
	args := []any{runID}
	if len(out) < len(ms) && len(out) <= 200 {
		ph := make([]string, 0, len(out))
		for _, ser := range out {
			ph = append(ph, "?")
			args = append(args, ser.ID)
		}
		q += " AND metric_id IN (" + strings.Join(ph, ",") + ")"
	}
	rows, err := s.db.QueryContext(ctx, q+" ORDER BY metric_id, idx", args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var p MetricPoint
		var rate sql.NullFloat64
		if err := rows.Scan(&id, &p.Interval, &p.Value, &rate, &p.Reset); err != nil {
			return nil, err
		}
		ser := byID[id]
		if ser == nil {
			continue
		}
		p.Rate, p.HasRate = rate.Float64, rate.Valid
		p.At = at[ser.Collector][p.Interval]
		ser.Points = append(ser.Points, p)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	res := make([]MetricSeries, len(out))
	for i, ser := range out {
		res[i] = *ser
	}
	return res, nil
}

// Collectors summarises each collector's record over a run: how often it succeeded,
// failed, timed out or was skipped, how long it took, and its last error.
func (s *Store) Collectors(ctx context.Context, runID int64) ([]CollectorRun, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT collector, source, status, error, took_ns, reset FROM samples WHERE run_id = ? ORDER BY idx`, runID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	by := map[string]*CollectorRun{}
	var total = map[string]int64{}
	var order []string
	for rows.Next() {
		var c, src, status, msg string
		var took int64
		var reset bool
		if err := rows.Scan(&c, &src, &status, &msg, &took, &reset); err != nil {
			return nil, err
		}
		cr := by[c]
		if cr == nil {
			cr = &CollectorRun{Collector: c, Source: src}
			by[c] = cr
			order = append(order, c)
		}
		switch collect.Status(status) {
		case collect.StatusOK:
			cr.OK++
		case collect.StatusFailed:
			cr.Failed++
		case collect.StatusTimeout:
			cr.Timeouts++
		case collect.StatusSkipped:
			cr.Skipped++
		}
		if reset {
			cr.Resets++
		}
		if msg != "" {
			cr.LastError = msg
		}
		if status != string(collect.StatusSkipped) {
			total[c] += took
			if time.Duration(took) > cr.MaxTook {
				cr.MaxTook = time.Duration(took)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]CollectorRun, 0, len(order))
	for _, c := range order {
		cr := by[c]
		if n := cr.OK + cr.Failed + cr.Timeouts; n > 0 {
			cr.MeanTook = time.Duration(total[c] / int64(n))
		}
		out = append(out, *cr)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Source != out[j].Source {
			return out[i].Source != "os" && out[j].Source == "os"
		}
		return false
	})
	return out, nil
}
