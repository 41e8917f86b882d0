package sqlstore

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

	"github.com/fathom-lab/fathom/internal/sample"
	"github.com/fathom-lab/fathom/internal/store"
)

// Server and OS samples: the write side (SampleWriter, used while a run or watch goes
// on) and the read API for reports, show and stall analysis.

// sampleWriter writes one run's samples as they come, one transaction per sample.
type sampleWriter struct {
	st     *Store
	runID  int64
	origin time.Time
	mu     sync.Mutex
	ids    map[string]int64
	next   int64
}

// SampleWriter starts writing samples of runID. origin is the run's clock zero (the
// runner's start); sample times are stored relative to it.
func (s *Store) SampleWriter(ctx context.Context, runID int64, origin time.Time, src *sample.Server, interval time.Duration) (store.SampleWriter, error) {
	srv := "{}"
	if src != nil {
		srv = mustJSON(src)
	}
	if _, err := s.exec(ctx, `INSERT INTO sample_sources (run_id, server, interval_ns) VALUES (?,?,?)
		ON CONFLICT (run_id) DO UPDATE SET server = excluded.server, interval_ns = excluded.interval_ns`, runID, srv, int64(interval)); err != nil {
		return nil, err
	}
	w := &sampleWriter{st: s, runID: runID, origin: origin, ids: map[string]int64{}}
	rows, err := s.query(ctx, `SELECT id, name FROM metrics WHERE run_id = ?`, runID)
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
func (w *sampleWriter) SetOrigin(t time.Time) {
	w.mu.Lock()
	w.origin = t
	w.mu.Unlock()
}

// Skipped records how many boundaries sampling could not keep up with.
func (w *sampleWriter) Skipped(ctx context.Context, n int64) error {
	_, err := w.st.exec(ctx, `UPDATE sample_sources SET skipped = ? WHERE run_id = ?`, n, w.runID)
	return err
}

// Add stores one sample in one transaction.
func (w *sampleWriter) Add(ctx context.Context, smp *sample.Sample) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	tx, err := w.st.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	at := map[string]time.Time{}
	for _, r := range smp.Results {
		at[r.Collector] = r.At
		// A sample written again replaces the row whole, as one reading (n = 1).
		if _, err := tx.exec(ctx, `INSERT INTO samples (run_id, idx, collector, source, at_ns, took_ns, status, error, reset)
			VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT (run_id, idx, collector) DO UPDATE SET source = excluded.source, at_ns = excluded.at_ns,
			took_ns = excluded.took_ns, status = excluded.status, error = excluded.error, reset = excluded.reset, n = 1`, w.runID, smp.Index, r.Collector, r.Source, int64(r.At.Sub(w.origin)), int64(r.Took),
			string(r.Status), r.Error, r.Reset); err != nil {
			return err
		}
	}
	added := map[string]int64{}
	newMetric, err := tx.PrepareContext(ctx, w.st.q(`INSERT INTO metrics (run_id, id, name, collector, kind, unit) VALUES (?,?,?,?,?,?)`))
	if err != nil {
		return err
	}
	defer newMetric.Close()
	point, err := tx.PrepareContext(ctx, w.st.q(`INSERT INTO metric_points (run_id, metric_id, idx, value, rate, reset) VALUES (?,?,?,?,?,?)
		ON CONFLICT (run_id, metric_id, idx) DO UPDATE SET value = excluded.value, rate = excluded.rate, reset = excluded.reset,
		n = 1, lo = NULL, hi = NULL, span_ns = 0`))
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
	err := s.row(ctx, `SELECT count(*) FROM sample_sources WHERE run_id = ?`, runID).Scan(&n)
	return n > 0, err
}

// SampleSource returns what a run's sampler learnt about the server; the error wraps
// ErrNotFound when the run was not sampled.
func (s *Store) SampleSource(ctx context.Context, runID int64) (*store.SampleSource, error) {
	var srv string
	var ival, skipped int64
	err := s.row(ctx, `SELECT server, interval_ns, skipped FROM sample_sources WHERE run_id = ?`, runID).Scan(&srv, &ival, &skipped)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("run %d has no server or OS samples: %w", runID, store.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	out := &store.SampleSource{Interval: time.Duration(ival), Skipped: skipped}
	if err := json.Unmarshal([]byte(srv), &out.Server); err != nil {
		return nil, fmt.Errorf("run %d: corrupt sample source: %v", runID, err)
	}
	return out, nil
}

// Metrics lists a run's metrics by name.
func (s *Store) Metrics(ctx context.Context, runID int64) ([]store.Metric, error) {
	rows, err := s.query(ctx, `SELECT id, name, collector, kind, unit FROM metrics WHERE run_id = ? ORDER BY name`, runID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Metric
	for rows.Next() {
		var m store.Metric
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
func (s *Store) MetricSeries(ctx context.Context, runID int64, names ...string) ([]store.MetricSeries, error) {
	ms, err := s.Metrics(ctx, runID)
	if err != nil {
		return nil, err
	}
	byID := map[int64]*store.MetricSeries{}
	var out []*store.MetricSeries
	for _, m := range ms {
		keep := len(names) == 0
		for _, p := range names {
			if matchName(p, m.Name) {
				keep = true
				break
			}
		}
		if keep {
			ser := &store.MetricSeries{Metric: m}
			byID[m.ID] = ser
			out = append(out, ser)
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	// The time of each (interval, collector).
	at := map[string]map[int]time.Duration{}
	trows, err := s.query(ctx, `SELECT idx, collector, at_ns FROM samples WHERE run_id = ?`, runID)
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
	q := `SELECT metric_id, idx, value, rate, reset, n, lo, hi, span_ns FROM metric_points WHERE run_id = ?`
	args := []any{runID}
	if len(out) < len(ms) && len(out) <= 200 {
		ids := make([]int64, 0, len(out))
		for _, ser := range out {
			ids = append(ids, ser.ID)
		}
		in, arg := s.inIDs("metric_id", ids)
		q += " AND " + in
		args = append(args, arg)
	}
	rows, err := s.query(ctx, q+" ORDER BY metric_id, idx", args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var p store.MetricPoint
		var rate, lo, hi sql.NullFloat64
		var span int64
		if err := rows.Scan(&id, &p.Interval, &p.Value, &rate, &p.Reset, &p.N, &lo, &hi, &span); err != nil {
			return nil, err
		}
		if !lo.Valid { // not downsampled
			p.N = 0
		}
		p.Span, p.Min, p.Max = time.Duration(span), lo.Float64, hi.Float64
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
	res := make([]store.MetricSeries, len(out))
	for i, ser := range out {
		res[i] = *ser
	}
	return res, nil
}

// Collectors summarises each collector's record over a run: how often it succeeded,
// failed, timed out or was skipped, how long it took, and its last error.
func (s *Store) Collectors(ctx context.Context, runID int64) ([]store.CollectorRun, error) {
	rows, err := s.query(ctx, `SELECT collector, source, status, error, took_ns, reset, n FROM samples WHERE run_id = ? ORDER BY idx, collector`, runID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	by := map[string]*store.CollectorRun{}
	var total = map[string]int64{}
	var order []string
	for rows.Next() {
		var c, src, status, msg string
		var took, n int64
		var reset bool
		if err := rows.Scan(&c, &src, &status, &msg, &took, &reset, &n); err != nil {
			return nil, err
		}
		cr := by[c]
		if cr == nil {
			cr = &store.CollectorRun{Collector: c, Source: src}
			by[c] = cr
			order = append(order, c)
		}
		switch sample.Status(status) {
		case sample.StatusOK:
			cr.OK += int(max(n, 1)) // a downsampled row stands for n samples
		case sample.StatusFailed:
			cr.Failed++
		case sample.StatusTimeout:
			cr.Timeouts++
		case sample.StatusSkipped:
			cr.Skipped++
		}
		if reset {
			cr.Resets++
		}
		if msg != "" {
			cr.LastError = msg
		}
		if status != string(sample.StatusSkipped) {
			total[c] += took * max(n, 1)
			if time.Duration(took) > cr.MaxTook {
				cr.MaxTook = time.Duration(took)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]store.CollectorRun, 0, len(order))
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

// SampleStatuses returns every collector's outcome in every sample of a run, in
// interval order: stall analysis reads from them when the server stopped answering.
func (s *Store) SampleStatuses(ctx context.Context, runID int64) ([]store.SampleStatus, error) {
	rows, err := s.query(ctx, `SELECT idx, collector, source, status, error FROM samples WHERE run_id = ? ORDER BY idx, collector`, runID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.SampleStatus
	for rows.Next() {
		var r store.SampleStatus
		if err := rows.Scan(&r.Interval, &r.Collector, &r.Source, &r.Status, &r.Error); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
