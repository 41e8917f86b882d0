package store

import (
	"time"

	"github.com/fathom-lab/fathom/internal/measure"
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
	// Latency, Service and FailedLatency are as stored, nil when empty: from schema 4
	// on measure.EncodeV2's encoding, before it measure.Encode's. measure.Decode and
	// measure.SparseDecoder read both.
	Latency, Service, FailedLatency []byte
}
