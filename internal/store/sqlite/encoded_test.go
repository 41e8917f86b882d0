package sqlite

import (
	"context"
	"github.com/fathom-lab/fathom/internal/store/storetest"
	"path/filepath"
	"reflect"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/fathom-lab/fathom/internal/measure"
)

// toOldEncoding rewrites a run's histograms in the form stores before schema 4 hold
// (measure.Encode's base64 compressed V2), as if an older fathom had written them.
func toOldEncoding(t testing.TB, s *Store, runID int64, where string) {
	t.Helper()
	rows, err := s.db.Query(`SELECT idx, type, latency, service, failed_latency FROM interval_types WHERE run_id = ? AND `+where, runID)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		idx   int
		typ   string
		blobs [3][]byte
	}
	var rs []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.idx, &r.typ, &r.blobs[0], &r.blobs[1], &r.blobs[2]); err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	rows.Close()
	for _, r := range rs {
		var old [3][]byte
		for i, b := range r.blobs {
			if len(b) > 0 && b[0] != 0x1c {
				t.Fatalf("interval %d %s: not written in the uncompressed form: %q", r.idx, r.typ, b[:min(8, len(b))])
			}
			h, err := measure.Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			if old[i], err = measure.Encode(h); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.db.Exec(`UPDATE interval_types SET latency = ?, service = ?, failed_latency = ? WHERE run_id = ? AND idx = ? AND type = ?`,
			old[0], old[1], old[2], runID, r.idx, r.typ); err != nil {
			t.Fatal(err)
		}
	}
}

// Histograms are stored in HdrHistogram's uncompressed V2 encoding; rows in the older
// compressed form, alone or mixed with new ones in one run, read back the same through
// every reader: dense (Intervals, for show and export) and sparse (EncodedIntervals,
// for reports).
func TestHistogramEncodingsReadAlike(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	run := storetest.Run()
	var ids []int64
	for k := 0; k < 3; k++ {
		id, err := s.CreateRun(ctx, run)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 6; i++ {
			if err := s.AddInterval(ctx, id, storetest.Interval(i, 50*(i+1))); err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, id)
		run.UUID = ""
	}
	toOldEncoding(t, s, ids[1], "1")           // all old, as in a store from before schema 4
	toOldEncoding(t, s, ids[2], "idx % 2 = 0") // mixed

	var want []*measure.Interval
	for k, id := range ids {
		ivs, err := s.Intervals(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		r, _ := s.Run(ctx, id)
		enc, err := s.EncodedIntervals(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		if len(ivs) != 6 || len(enc) != 6 {
			t.Fatalf("run %d: %d and %d intervals", id, len(ivs), len(enc))
		}
		var dec measure.SparseDecoder
		for i, iv := range ivs {
			orig := storetest.Interval(i, 50*(i+1))
			for ti := range iv.Types {
				got, e, o := &iv.Types[ti], &enc[i].Types[ti], &orig.Types[ti]
				for _, c := range []struct {
					name          string
					dense, origin *hdr.Histogram
					blob          []byte
				}{{"latency", got.Latency, o.Latency, e.Latency}, {"service", got.Service, o.Service, e.Service},
					{"failed", got.FailedLatency, o.FailedLatency, e.FailedLatency}} {
					if c.origin == nil || c.origin.TotalCount() == 0 {
						if c.dense != nil && c.dense.TotalCount() != 0 || len(c.blob) != 0 {
							t.Fatalf("run %d interval %d %s %s: empty histogram stored as non-empty", id, i, o.Name, c.name)
						}
						continue
					}
					if !reflect.DeepEqual(c.dense.Export().Counts, c.origin.Export().Counts) {
						t.Fatalf("run %d interval %d %s %s: dense counts differ", id, i, o.Name, c.name)
					}
					sp, err := dec.Decode(c.blob)
					if err != nil {
						t.Fatal(err)
					}
					if sp.Latency() != measure.LatencyOf(c.origin) || sp.Figures().Mean != c.origin.Mean() || sp.TotalCount() != c.origin.TotalCount() {
						t.Fatalf("run %d interval %d %s %s: sparse %+v, recorded %+v", id, i, o.Name, c.name, sp.Latency(), measure.LatencyOf(c.origin))
					}
				}
				if got.Counts != o.Counts || e.Counts != o.Counts || e.Name != o.Name {
					t.Fatalf("run %d interval %d %s: counts %+v / %+v, want %+v", id, i, o.Name, got.Counts, e.Counts, o.Counts)
				}
			}
		}
		if k == 0 {
			want = ivs
		} else if a, b := measure.Summarize(run.TxnTypes, ivs), measure.Summarize(run.TxnTypes, want); !reflect.DeepEqual(a, b) {
			t.Fatalf("run %d summary %+v, want %+v", id, a, b)
		}
	}
}
