package sqlstore

import (
	"context"
	"database/sql"
	"math"
	"time"

	"github.com/fathom-lab/fathom/internal/store"
)

// Downsample merges run runID's samples by tiers (store.WatchDownsampling), now being
// the newest sample's time on the run's clock, and returns how many point rows it
// removed. Only whole buckets that end before a tier's cutoff are merged, so a second
// call with the same arguments changes nothing.
func (s *Store) Downsample(ctx context.Context, runID int64, now time.Duration, tiers []store.DownsampleTier) (int64, error) {
	var removed int64
	for _, tier := range tiers {
		if tier.Bucket <= 0 || now-tier.After <= 0 {
			continue
		}
		cutoff := floorDiv(int64(now-tier.After), int64(tier.Bucket)) * int64(tier.Bucket)
		n, err := s.downsampleTier(ctx, runID, cutoff, int64(tier.Bucket))
		removed += n
		if err != nil {
			return removed, err
		}
	}
	return removed, nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

type point struct {
	idx    int64
	value  float64
	rate   sql.NullFloat64
	reset  bool
	n      int64
	lo, hi sql.NullFloat64
	at     int64
}

func (s *Store) downsampleTier(ctx context.Context, runID, cutoff, bucket int64) (int64, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	kinds, collectors := map[int64]string{}, map[int64]string{}
	rows, err := tx.QueryContext(ctx, s.q(`SELECT id, kind, collector FROM metrics WHERE run_id = ?`), runID)
	if err != nil {
		return 0, err
	}
	for rows.Next() {
		var id int64
		var k, c string
		if err := rows.Scan(&id, &k, &c); err != nil {
			rows.Close()
			return 0, err
		}
		kinds[id], collectors[id] = k, c
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	// The points not yet merged at this tier's resolution, in whole buckets before the
	// cutoff, with their collector's sample time.
	rows, err = tx.QueryContext(ctx, s.q(`SELECT p.metric_id, p.idx, p.value, p.rate, p.reset, p.n, p.lo, p.hi, s.at_ns
		FROM metric_points p JOIN metrics m ON m.run_id = p.run_id AND m.id = p.metric_id
		JOIN samples s ON s.run_id = p.run_id AND s.idx = p.idx AND s.collector = m.collector
		WHERE p.run_id = ? AND s.at_ns < ? AND p.span_ns < ? ORDER BY p.metric_id, p.idx`), runID, cutoff, bucket)
	if err != nil {
		return 0, err
	}
	type group struct {
		metric, bucket int64
		pts            []point
	}
	var groups []group
	lastKey := [2]int64{math.MinInt64, 0}
	for rows.Next() {
		var m int64
		var p point
		if err := rows.Scan(&m, &p.idx, &p.value, &p.rate, &p.reset, &p.n, &p.lo, &p.hi, &p.at); err != nil {
			rows.Close()
			return 0, err
		}
		key := [2]int64{m, floorDiv(p.at, bucket)}
		if key != lastKey {
			groups = append(groups, group{metric: m, bucket: key[1]})
			lastKey = key
		}
		groups[len(groups)-1].pts = append(groups[len(groups)-1].pts, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	// The samples first: each bucket's points go where its kept sample is, which
	// says when they stand.
	kept, err := s.mergeSamples(ctx, tx, runID, cutoff, bucket)
	if err != nil {
		return 0, err
	}
	var removed int64
	for _, g := range groups {
		agg := merge(g.pts, kinds[g.metric] == "counter")
		first, last := g.pts[0].idx, g.pts[len(g.pts)-1].idx
		at := last
		if k, ok := kept[sampleKey{collectors[g.metric], g.bucket}]; ok {
			at = k
		}
		if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM metric_points WHERE run_id = ? AND metric_id = ? AND idx >= ? AND idx <= ?`), runID, g.metric, first, last); err != nil {
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO metric_points (run_id, metric_id, idx, value, rate, reset, n, lo, hi, span_ns) VALUES (?,?,?,?,?,?,?,?,?,?)`),
			runID, g.metric, at, agg.value, agg.rate, agg.reset, agg.n, agg.lo, agg.hi, bucket); err != nil {
			return 0, err
		}
		removed += int64(len(g.pts) - 1)
	}
	return removed, tx.Commit()
}

// merge is one point standing for pts (in idx order): a gauge's mean value or a
// counter's last value and mean rate, each weighted by the readings a point stands
// for, and the lowest and highest charted reading.
func merge(pts []point, counter bool) point {
	out := point{idx: pts[len(pts)-1].idx, value: pts[len(pts)-1].value}
	var sum, weight float64
	for _, p := range pts {
		w := float64(max(p.n, 1))
		out.n += max(p.n, 1)
		out.reset = out.reset || p.reset
		y := sql.NullFloat64{Float64: p.value, Valid: true}
		if counter {
			y = p.rate
		}
		if !y.Valid {
			continue
		}
		sum += y.Float64 * w
		weight += w
		lo, hi := y, y
		if p.lo.Valid && p.hi.Valid {
			lo, hi = p.lo, p.hi
		}
		if !out.lo.Valid || lo.Float64 < out.lo.Float64 {
			out.lo = lo
		}
		if !out.hi.Valid || hi.Float64 > out.hi.Float64 {
			out.hi = hi
		}
	}
	if weight > 0 {
		if counter {
			out.rate = sql.NullFloat64{Float64: sum / weight, Valid: true}
		} else {
			out.value = sum / weight
		}
	}
	return out
}

// mergeSamples merges each collector's successful samples in whole buckets before the
// cutoff into the bucket's last one, which counts them (n) and keeps their mean
// duration; failed, timed-out and skipped samples stay as they are. It returns the
// kept sample's idx by collector and bucket.
func (s *Store) mergeSamples(ctx context.Context, tx *sql.Tx, runID, cutoff, bucket int64) (map[sampleKey]int64, error) {
	rows, err := tx.QueryContext(ctx, s.q(`SELECT collector, idx, at_ns, took_ns, n, reset FROM samples
		WHERE run_id = ? AND status = 'ok' AND at_ns < ? ORDER BY collector, idx`), runID, cutoff)
	if err != nil {
		return nil, err
	}
	type row struct {
		idx, at, took, n int64
		reset            bool
	}
	type group struct {
		collector string
		bucket    int64
		rows      []row
	}
	var groups []group
	lastC, lastB := "", int64(math.MinInt64)
	for rows.Next() {
		var c string
		var r row
		if err := rows.Scan(&c, &r.idx, &r.at, &r.took, &r.n, &r.reset); err != nil {
			rows.Close()
			return nil, err
		}
		if b := floorDiv(r.at, bucket); c != lastC || b != lastB || len(groups) == 0 {
			groups = append(groups, group{collector: c, bucket: b})
			lastC, lastB = c, b
		}
		groups[len(groups)-1].rows = append(groups[len(groups)-1].rows, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	kept := map[sampleKey]int64{}
	for _, g := range groups {
		kept[sampleKey{g.collector, g.bucket}] = g.rows[len(g.rows)-1].idx
		if len(g.rows) < 2 {
			continue
		}
		var n, took int64
		reset := false
		for _, r := range g.rows {
			n += max(r.n, 1)
			took += r.took * max(r.n, 1)
			reset = reset || r.reset
		}
		keep := g.rows[len(g.rows)-1]
		if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM samples WHERE run_id = ? AND collector = ? AND status = 'ok' AND idx >= ? AND idx < ?`),
			runID, g.collector, g.rows[0].idx, keep.idx); err != nil {
			return nil, err
		}
		if _, err := tx.ExecContext(ctx, s.q(`UPDATE samples SET n = ?, took_ns = ?, reset = ? WHERE run_id = ? AND collector = ? AND idx = ?`),
			n, took/n, reset, runID, g.collector, keep.idx); err != nil {
			return nil, err
		}
	}
	return kept, nil
}

type sampleKey struct {
	collector string
	bucket    int64
}
