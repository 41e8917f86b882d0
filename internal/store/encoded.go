package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/target"
)

// EncodedInterval is a stored interval with its counters decoded and its histograms
// left as stored. Reports read hundreds of thousands of intervals and decode them
// sparsely (measure.SparseDecoder); Intervals, which builds dense histograms of
// 184 KB each, would take minutes for an experiment of long runs.
type EncodedInterval struct {
	Index      int
	Start, End time.Duration // since the run's start
	Warmup     bool
	Reconnects int64
	Types      []EncodedType // in the run's TxnTypes order
}

// EncodedType is one transaction type's share of an EncodedInterval.
type EncodedType struct {
	Name string
	measure.Counts
	Latency, Service, FailedLatency []byte // measure.Encode's encoding; nil when empty
}

// EncodedIntervals returns a run's intervals in order, histograms still encoded.
func (s *Store) EncodedIntervals(ctx context.Context, run *Run) ([]EncodedInterval, error) {
	typeIdx := map[string]int{}
	for i, n := range run.TxnTypes {
		typeIdx[n] = i
	}
	rows, err := s.db.QueryContext(ctx, `SELECT idx, start_ns, end_ns, warmup, reconnects FROM intervals WHERE run_id = ? ORDER BY idx`, run.ID)
	if err != nil {
		return nil, err
	}
	var ivs []EncodedInterval
	pos := map[int]int{}
	for rows.Next() {
		var iv EncodedInterval
		var start, end int64
		if err := rows.Scan(&iv.Index, &start, &end, &iv.Warmup, &iv.Reconnects); err != nil {
			rows.Close()
			return nil, err
		}
		iv.Start, iv.End = time.Duration(start), time.Duration(end)
		iv.Types = make([]EncodedType, len(run.TxnTypes))
		for i, n := range run.TxnTypes {
			iv.Types[i].Name = n
		}
		pos[iv.Index] = len(ivs)
		ivs = append(ivs, iv)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	trows, err := s.db.QueryContext(ctx, `SELECT idx, type, ok, failed, retries, statements, late, dropped, errors, latency, service, failed_latency
		FROM interval_types WHERE run_id = ?`, run.ID)
	if err != nil {
		return nil, err
	}
	defer trows.Close()
	for trows.Next() {
		var idx int
		var name, errs string
		var t EncodedType
		if err := trows.Scan(&idx, &name, &t.OK, &t.Failed, &t.Retries, &t.Statements, &t.Late, &t.Dropped, &errs,
			&t.Latency, &t.Service, &t.FailedLatency); err != nil {
			return nil, err
		}
		p, ok := pos[idx]
		ti, ok2 := typeIdx[name]
		if !ok || !ok2 {
			continue
		}
		if errs != "{}" && errs != "" {
			var em map[string]int64
			if err := json.Unmarshal([]byte(errs), &em); err != nil {
				return nil, fmt.Errorf("run %d interval %d: corrupt errors: %v", run.ID, idx, err)
			}
			for cl := target.Class(0); cl < target.NumClasses; cl++ {
				t.Errors[cl] = em[cl.String()]
			}
		}
		t.Name = name
		ivs[p].Types[ti] = t
	}
	return ivs, trows.Err()
}
