package promexp

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/store"
)

// runState is what the exposition knows of one run in progress: its identity, the
// counters of every interval so far and the latency figures of its latest interval
// and of its measured intervals together. It is built from the intervals as stored
// (store.EncodedInterval), whether they come from the store or from the run's own
// events, so that both paths give the same numbers.
type runState struct {
	id         string   // the run's UUID (or "id:N" for a store that has none)
	values     []string // run_id, workload, target_kind: the fixed labels' values
	extra      []labelPair
	dto        []*dto.LabelPair // extra, as the metrics carry them
	start      time.Time
	clients    int
	openLoop   bool
	intervals  int // intervals seen so far
	lastIndex  int // -1: none yet
	elapsed    time.Duration
	warmup     bool
	reconnects int64
	types      []txnState
	all        latencyState // all transaction types together
}

// txnState is one transaction type's share of a runState.
type txnState struct {
	name  string
	total measure.Counts // every interval so far, warm-up included
	tps   float64        // the latest interval's successful transactions per second
	lat   latencyState
	hist  histState
}

// histState is a transaction type's response times over every interval so far,
// warm-up included (as the counters), in the buckets of histBounds: a Prometheus
// histogram, which unlike the quantile gauges can be summed over types, runs and
// agents.
type histState struct {
	per []uint64 // per bound, and the last for the values above every bound
	sum float64  // seconds
}

// histBounds are the histogram's upper bounds in seconds, and in nanoseconds.
var (
	histBounds   = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}
	histBoundsNs = func() []int64 {
		out := make([]int64, len(histBounds))
		for i, b := range histBounds {
			out[i] = int64(b*1e9 + 0.5)
		}
		return out
	}()
)

// latencyState is a latency distribution's figures over the latest interval and over
// the run's measured (non warm-up) intervals so far; cum is kept to add the next.
type latencyState struct {
	last, run   latencyFigures
	lastN, runN int64
	cum         *measure.Sparse
}

type latencyFigures = measure.Figures

type labelPair struct{ name, value string }

// runKey is the run's identity across stores: its UUID.
func runKey(r *store.Run) string {
	if r.UUID != "" {
		return r.UUID
	}
	return fmt.Sprintf("id:%d", r.ID)
}

func newRunState(r *store.Run) *runState {
	s := &runState{
		id:        runKey(r),
		start:     r.StartedAt,
		clients:   r.Clients,
		openLoop:  r.Rate > 0,
		lastIndex: -1,
		extra:     runLabels(r.Labels),
	}
	s.values = []string{s.id, validUTF8(r.Workload), validUTF8(r.TargetKind)}
	for _, n := range r.TxnTypes {
		s.types = append(s.types, txnState{name: validUTF8(n), hist: histState{per: make([]uint64, len(histBounds)+1)}})
	}
	return s
}

// runLabels turns a run's labels into Prometheus labels: "label_" and the key with
// every character outside [a-zA-Z0-9_] replaced by '_'. Of two keys that become the
// same name, the first in sorted order is kept.
func runLabels(m map[string]string) []labelPair {
	var out []labelPair
	seen := map[string]bool{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		name := "label_" + sanitize(k)
		if seen[name] {
			continue
		}
		seen[name] = true
		out = append(out, labelPair{name, validUTF8(m[k])})
	}
	return out
}

func sanitize(k string) string {
	var b strings.Builder
	for _, r := range k {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

func validUTF8(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// reader is the scratch space of reading intervals: one per handler, used by one
// scrape (or one run's events) at a time.
type reader struct {
	dec measure.SparseDecoder
	sum measure.SparseSum
}

// add takes in the intervals, in order; those already seen are skipped. Either all
// are taken in or, on an error (a damaged histogram), none.
func (s *runState) add(rd *reader, ivs []store.EncodedInterval) error {
	for len(ivs) > 0 && ivs[0].Index <= s.lastIndex {
		ivs = ivs[1:]
	}
	if len(ivs) == 0 {
		return nil
	}
	for i := range ivs {
		if len(ivs[i].Types) != len(s.types) {
			return fmt.Errorf("interval %d has %d transaction types, the run %d", ivs[i].Index, len(ivs[i].Types), len(s.types))
		}
	}
	last := &ivs[len(ivs)-1]
	// The new figures first: the run's measured intervals so far, and the latest.
	cum := make([]*measure.Sparse, len(s.types))
	lastH := make([]*measure.Sparse, len(s.types))
	for i := range s.types {
		rd.sum.Reset()
		if err := rd.sum.Add(orEmpty(s.types[i].lat.cum)); err != nil {
			return err
		}
		for k := range ivs {
			if ivs[k].Warmup {
				continue
			}
			h, err := rd.dec.DecodeTemp(ivs[k].Types[i].Latency)
			if err == nil {
				err = rd.sum.Add(h)
			}
			if err != nil {
				return fmt.Errorf("interval %d, %s: %v", ivs[k].Index, s.types[i].name, err)
			}
		}
		cum[i] = rd.sum.Sparse()
		h, err := rd.dec.Decode(last.Types[i].Latency)
		if err != nil {
			return fmt.Errorf("interval %d, %s: %v", last.Index, s.types[i].name, err)
		}
		lastH[i] = h
	}
	// Every interval's response times, warm-up included, into the histograms' buckets.
	hist := make([]histState, len(s.types))
	for i := range s.types {
		hist[i].per = make([]uint64, len(histBounds)+1)
		for k := range ivs {
			h, err := rd.dec.DecodeTemp(ivs[k].Types[i].Latency)
			if err != nil {
				return fmt.Errorf("interval %d, %s: %v", ivs[k].Index, s.types[i].name, err)
			}
			hist[i].sum += h.AddBuckets(histBoundsNs, hist[i].per) / 1e9
		}
	}
	allCum, err := rd.total(cum)
	if err != nil {
		return err
	}
	allLast, err := rd.total(lastH)
	if err != nil {
		return err
	}
	// Then the counters, and everything is taken in.
	secs := (last.End - last.Start).Seconds()
	for i := range s.types {
		st := &s.types[i]
		for k := range ivs {
			st.total.Add(&ivs[k].Types[i].Counts)
		}
		st.tps = 0
		if secs > 0 {
			st.tps = float64(last.Types[i].OK) / secs
		}
		st.lat.set(lastH[i], cum[i])
		for j, n := range hist[i].per {
			st.hist.per[j] += n
		}
		st.hist.sum += hist[i].sum
	}
	s.all.set(allLast, allCum)
	for k := range ivs {
		s.reconnects += ivs[k].Reconnects
	}
	s.intervals += len(ivs)
	s.lastIndex, s.elapsed, s.warmup = last.Index, last.End, last.Warmup
	return nil
}

// total is the sum of hs.
func (rd *reader) total(hs []*measure.Sparse) (*measure.Sparse, error) {
	rd.sum.Reset()
	for _, h := range hs {
		if err := rd.sum.Add(h); err != nil {
			return nil, err
		}
	}
	return rd.sum.Sparse(), nil
}

func orEmpty(h *measure.Sparse) *measure.Sparse {
	if h == nil {
		return &measure.Sparse{}
	}
	return h
}

// set takes in the latest interval's histogram and the measured intervals' so far.
func (l *latencyState) set(last, cum *measure.Sparse) {
	l.last, l.lastN = last.Figures(), last.TotalCount()
	l.cum = cum
	l.run, l.runN = cum.Figures(), cum.TotalCount()
}
