package sqlstore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/target"
)

// Intervals returns a run's intervals in order, histograms decoded, with the run's
// transaction types in its txn_types order.
func (s *Store) Intervals(ctx context.Context, runID int64) ([]*measure.Interval, error) {
	run, err := s.Run(ctx, runID)
	if err != nil {
		return nil, err
	}
	enc, err := s.EncodedIntervals(ctx, run)
	if err != nil {
		return nil, err
	}
	ivs := make([]*measure.Interval, 0, len(enc))
	for _, e := range enc {
		iv := measure.NewInterval(e.Index, run.TxnTypes)
		iv.Start, iv.End, iv.Warmup, iv.Reconnects = e.Start, e.End, e.Warmup, e.Reconnects
		for i := range e.Types {
			et, t := &e.Types[i], &iv.Types[i]
			t.Counts = et.Counts
			if t.Latency, err = measure.Decode(et.Latency); err != nil {
				return nil, fmt.Errorf("run %d interval %d: %v", runID, e.Index, err)
			}
			if len(et.Service) > 0 {
				if t.Service, err = measure.Decode(et.Service); err != nil {
					return nil, fmt.Errorf("run %d interval %d: %v", runID, e.Index, err)
				}
			}
			if len(et.FailedLatency) > 0 {
				if t.FailedLatency, err = measure.Decode(et.FailedLatency); err != nil {
					return nil, fmt.Errorf("run %d interval %d: %v", runID, e.Index, err)
				}
			}
		}
		ivs = append(ivs, iv)
	}
	return ivs, nil
}

// EncodedIntervals returns a run's intervals in order, histograms still encoded.
func (s *Store) EncodedIntervals(ctx context.Context, run *store.Run) ([]store.EncodedInterval, error) {
	return s.EncodedIntervalsAfter(ctx, run, -1)
}

// EncodedIntervalsAfter is EncodedIntervals for the intervals with an index greater
// than after: what a reader following a run in progress has not seen yet.
func (s *Store) EncodedIntervalsAfter(ctx context.Context, run *store.Run, after int) ([]store.EncodedInterval, error) {
	typeIdx := map[string]int{}
	for i, n := range run.TxnTypes {
		typeIdx[n] = i
	}
	rows, err := s.query(ctx, `SELECT idx, start_ns, end_ns, warmup, reconnects FROM intervals WHERE run_id = ? AND idx > ? ORDER BY idx`, run.ID, after)
	if err != nil {
		return nil, err
	}
	var ivs []store.EncodedInterval
	pos := map[int]int{}
	for rows.Next() {
		var iv store.EncodedInterval
		var start, end int64
		if err := rows.Scan(&iv.Index, &start, &end, &iv.Warmup, &iv.Reconnects); err != nil {
			rows.Close()
			return nil, err
		}
		iv.Start, iv.End = time.Duration(start), time.Duration(end)
		iv.Types = make([]store.EncodedType, len(run.TxnTypes))
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
	trows, err := s.query(ctx, `SELECT idx, type, ok, failed, retries, statements, late, dropped, errors, latency, service, failed_latency
		FROM interval_types WHERE run_id = ? AND idx > ?`, run.ID, after)
	if err != nil {
		return nil, err
	}
	defer trows.Close()
	var (
		idx          int
		t            store.EncodedType
		name, errs   sql.RawBytes
		lat, svc, fl sql.RawBytes
		arena        blobArena
	)
	dest := []any{&idx, &name, &t.OK, &t.Failed, &t.Retries, &t.Statements, &t.Late, &t.Dropped, &errs, &lat, &svc, &fl}
	for trows.Next() {
		t = store.EncodedType{}
		if err := trows.Scan(dest...); err != nil {
			return nil, err
		}
		p, ok := pos[idx]
		ti, ok2 := typeIdx[string(name)]
		if !ok || !ok2 {
			continue
		}
		if err := parseErrorCounts(errs, &t.Errors); err != nil {
			return nil, fmt.Errorf("run %d interval %d: corrupt errors: %v", run.ID, idx, err)
		}
		t.Name = run.TxnTypes[ti]
		t.Latency, t.Service, t.FailedLatency = arena.copy(lat), arena.copy(svc), arena.copy(fl)
		ivs[p].Types[ti] = t
	}
	return ivs, trows.Err()
}

// blobArena keeps a run's histograms in a few large blocks rather than one
// allocation each: a report reads hundreds of thousands of them.
type blobArena struct{ block []byte }

// copy returns a copy of b (nil for empty b).
func (a *blobArena) copy(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	if len(b) > cap(a.block)-len(a.block) {
		a.block = make([]byte, 0, max(256<<10, len(b)))
	}
	n := len(a.block)
	a.block = append(a.block, b...)
	return a.block[n:len(a.block):len(a.block)]
}

// parseErrorCounts reads the errors column (a JSON object of class name to count) into
// out. The store writes it compactly ({"serialization":2}), and that form is read
// directly; anything else goes through encoding/json, with the same result.
func parseErrorCounts(s []byte, out *[target.NumClasses]int64) error {
	if len(s) == 0 || string(s) == "{}" {
		return nil
	}
	var got [target.NumClasses]int64
	if fastErrorCounts(s, &got) {
		*out = got
		return nil
	}
	var em map[string]int64
	if err := json.Unmarshal(s, &em); err != nil {
		return err
	}
	for cl := target.Class(0); cl < target.NumClasses; cl++ {
		out[cl] = em[cl.String()]
	}
	return nil
}

// fastErrorCounts parses {"name":n,…} with no spaces, escapes or number forms other
// than JSON integers; it reports false for anything else.
func fastErrorCounts(s []byte, out *[target.NumClasses]int64) bool {
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return false
	}
	s = s[1 : len(s)-1]
	for len(s) > 0 {
		if s[0] != '"' {
			return false
		}
		end := bytes.IndexByte(s[1:], '"')
		if end < 0 {
			return false
		}
		name := s[1 : 1+end]
		for _, c := range name {
			if c == '\\' || c < 0x20 { // escapes, and control characters JSON forbids
				return false
			}
		}
		s = s[2+end:]
		if len(s) == 0 || s[0] != ':' {
			return false
		}
		s = s[1:]
		n := 0
		if n < len(s) && s[n] == '-' {
			n++
		}
		digits := n
		for n < len(s) && s[n] >= '0' && s[n] <= '9' {
			n++
		}
		if n == digits || (s[digits] == '0' && n > digits+1) {
			return false // no digits, or a leading zero
		}
		v, err := strconv.ParseInt(string(s[:n]), 10, 64)
		if err != nil {
			return false
		}
		for cl := target.Class(0); cl < target.NumClasses; cl++ {
			if cl.String() == string(name) {
				out[cl] = v
			}
		}
		s = s[n:]
		if len(s) > 0 {
			if s[0] != ',' || len(s) == 1 {
				return false
			}
			s = s[1:]
		}
	}
	return true
}
