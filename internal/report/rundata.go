package report

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/target"
)

// DefaultMaxPoints bounds the points of a time-series chart. Longer runs are shown
// at a coarser interval whose percentiles come from merged histograms (so they are
// true percentiles of the coarser interval, not averages of percentiles); the CSV
// files keep every interval.
const DefaultMaxPoints = 720

// RunData is everything a report shows of one run, computed from its stored
// intervals: totals, a time series, the latency distribution and every interval.
type RunData struct {
	Run     *store.Run
	Summary measure.Summary // measured (non warm-up) intervals, as `fathom show` computes it
	// ErrorPct is failed attempts per attempt (successes + errors), in percent.
	ErrorPct float64
	// Points is the time series, Group intervals per point.
	Points []Point
	Group  int
	// Rows are every interval at full resolution, as `fathom export` writes them.
	Rows []IntervalRow
	// Distribution is the latency percentile spectrum of the measured intervals.
	Distribution []Percentile
	// Metrics are server and OS metric series on the same time axis, and Stalls the
	// stretches where throughput stalled. Both stay empty until the store keeps
	// collector samples and stall analysis; the HTML report draws whatever is here.
	Metrics []MetricSeries
	Stalls  []Band
}

// Point is one point of a run's time series (one or more intervals merged).
type Point struct {
	Start, End float64 // seconds since the run's start
	Warmup     bool
	TPS        float64
	TypeTPS    []float64 // per transaction type, in the run's TxnTypes order
	P50, P95   float64   // milliseconds, all types together
	P99, Max   float64
	ErrorsPS   float64 // failed attempts per second (all classes but canceled)
	RetriesPS  float64
	FailedPS   float64
	Reconnects int64
	Late       int64
	Dropped    int64
}

// Percentile is one point of a latency distribution.
type Percentile struct {
	Percentile float64 `json:"percentile"`
	Ms         float64 `json:"ms"`
	Count      int64   `json:"count"` // values at or below
}

// MetricSeries is one server or OS metric sampled on the run's time axis.
type MetricSeries struct {
	Name   string    `json:"name"`   // e.g. "os.dirty_bytes", "pg.checkpoints"
	Source string    `json:"source"` // collector name
	Kind   int       `json:"kind"`   // KindCount, KindMillis, KindPercent
	T      []float64 `json:"t"`      // seconds since the run's start
	V      []float64 `json:"v"`
}

// LoadRuns reads and computes the given runs, several at a time, in their order.
func LoadRuns(ctx context.Context, st *store.Store, runs []*store.Run, maxPoints int) ([]*RunData, error) {
	out := make([]*RunData, len(runs))
	errs := make([]error, len(runs))
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(runtime.GOMAXPROCS(0), len(runs)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var dec measure.SparseDecoder
			for i := range work {
				ivs, err := st.EncodedIntervals(ctx, runs[i])
				if err == nil {
					out[i], err = newRunData(runs[i], ivs, maxPoints, &dec)
				}
				if err != nil {
					errs[i] = fmt.Errorf("run %d: %w", runs[i].ID, err)
				}
			}
		}()
	}
	for i := range runs {
		if ctx.Err() != nil {
			break
		}
		work <- i
	}
	close(work)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// NewRunData computes a run's report data from its stored intervals.
func NewRunData(run *store.Run, ivs []store.EncodedInterval, maxPoints int) (*RunData, error) {
	var dec measure.SparseDecoder
	return newRunData(run, ivs, maxPoints, &dec)
}

var pointQuantiles = []float64{50, 95, 99, 100}
var rowQuantiles = []float64{50, 90, 95, 99, 99.9}

func newRunData(run *store.Run, ivs []store.EncodedInterval, maxPoints int, dec *measure.SparseDecoder) (*RunData, error) {
	if maxPoints <= 0 {
		maxPoints = DefaultMaxPoints
	}
	nt := len(run.TxnTypes)
	d := &RunData{Run: run, Group: max(1, (len(ivs)+maxPoints-1)/maxPoints)}

	// Run totals (measured intervals only), per type and all together.
	totLat := make([]measure.SparseSum, nt+1)
	totSvc := make([]measure.SparseSum, nt+1)
	totCounts := make([]measure.Counts, nt+1)
	var secs float64
	var measured int
	var reconnects int64
	// The point being accumulated.
	var grp measure.SparseSum
	var pc measure.Counts
	var pt Point
	var ptIvs int
	typeOK := make([]int64, nt)
	q := make([]int64, len(rowQuantiles))
	pq := make([]int64, len(pointQuantiles))

	flush := func() {
		if ptIvs == 0 {
			return
		}
		dur := pt.End - pt.Start
		if dur > 0 {
			pt.TPS = float64(pc.OK) / dur
			pt.ErrorsPS = float64(pc.ErrorTotal()) / dur
			pt.RetriesPS = float64(pc.Retries) / dur
			pt.FailedPS = float64(pc.Failed) / dur
			pt.TypeTPS = make([]float64, nt)
			for i := range typeOK {
				pt.TypeTPS[i] = float64(typeOK[i]) / dur
			}
		}
		pt.Late, pt.Dropped = pc.Late, pc.Dropped
		if grp.TotalCount() > 0 {
			grp.Sparse().Quantiles(pointQuantiles, pq)
			pt.P50, pt.P95, pt.P99, pt.Max = nsToMs(pq[0]), nsToMs(pq[1]), nsToMs(pq[2]), nsToMs(pq[3])
		} else {
			pt.P50, pt.P95, pt.P99, pt.Max = math.NaN(), math.NaN(), math.NaN(), math.NaN()
		}
		d.Points = append(d.Points, pt)
		grp.Reset()
		pc = measure.Counts{}
		clear(typeOK)
		pt, ptIvs = Point{}, 0
	}

	lats := make([]*measure.Sparse, nt)
	svcs := make([]*measure.Sparse, nt)
	for k := range ivs {
		iv := &ivs[k]
		ivSecs := (iv.End - iv.Start).Seconds()
		// Decode this interval's histograms once.
		var all, allSvc *measure.Sparse
		var allCounts measure.Counts
		for i := range iv.Types {
			t := &iv.Types[i]
			l, err := dec.Decode(t.Latency)
			if err != nil {
				return nil, fmt.Errorf("interval %d: %v", iv.Index, err)
			}
			lats[i] = l
			svcs[i] = nil
			if len(t.Service) > 0 {
				if svcs[i], err = dec.Decode(t.Service); err != nil {
					return nil, fmt.Errorf("interval %d: %v", iv.Index, err)
				}
			}
			if all == nil {
				all, allSvc = l, svcs[i]
			} else {
				if all, err = measure.MergeSparse(all, l); err != nil {
					return nil, err
				}
				if svcs[i] != nil {
					if allSvc == nil {
						allSvc = svcs[i]
					} else if allSvc, err = measure.MergeSparse(allSvc, svcs[i]); err != nil {
						return nil, err
					}
				}
			}
			allCounts.Add(&t.Counts)
		}
		if all == nil {
			all = &measure.Sparse{}
		}

		// Full-resolution rows, like IntervalRows.
		mk := func(c *measure.Counts, l, s *measure.Sparse, name string, rc int64) IntervalRow {
			r := IntervalRow{Interval: iv.Index, StartS: iv.Start.Seconds(), EndS: iv.End.Seconds(), Warmup: iv.Warmup, Type: name,
				OK: c.OK, Failed: c.Failed, Errors: c.ErrorTotal(), Retries: c.Retries, Reconnects: rc, Late: c.Late, Dropped: c.Dropped,
				Latency: latencyOf(l, q)}
			if ivSecs > 0 {
				r.TPS = round2(float64(c.OK) / ivSecs)
				r.QPS = round2(float64(c.Statements) / ivSecs)
			}
			r.ErrorsBy = errorsBy(c)
			if s.TotalCount() > 0 {
				sl := latencyOf(s, q)
				r.Service = &sl
			}
			return r
		}
		d.Rows = append(d.Rows, mk(&allCounts, all, allSvc, "all", iv.Reconnects))
		if nt > 1 {
			for i := range iv.Types {
				d.Rows = append(d.Rows, mk(&iv.Types[i].Counts, lats[i], svcs[i], iv.Types[i].Name, 0))
			}
		}

		if !iv.Warmup {
			for i := range iv.Types {
				if err := totLat[i].Add(lats[i]); err != nil {
					return nil, err
				}
				if svcs[i] != nil {
					if err := totSvc[i].Add(svcs[i]); err != nil {
						return nil, err
					}
				}
				totCounts[i].Add(&iv.Types[i].Counts)
			}
			if err := totLat[nt].Add(all); err != nil {
				return nil, err
			}
			if allSvc != nil {
				if err := totSvc[nt].Add(allSvc); err != nil {
					return nil, err
				}
			}
			totCounts[nt].Add(&allCounts)
			secs += ivSecs
			measured++
			reconnects += iv.Reconnects
		}

		// Time series: start a new point at the group size or where warm-up ends.
		if ptIvs > 0 && (ptIvs == d.Group || pt.Warmup != iv.Warmup) {
			flush()
		}
		if ptIvs == 0 {
			pt.Start, pt.Warmup = iv.Start.Seconds(), iv.Warmup
		}
		pt.End = iv.End.Seconds()
		ptIvs++
		if err := grp.Add(all); err != nil {
			return nil, err
		}
		pc.Add(&allCounts)
		for i := range iv.Types {
			typeOK[i] += iv.Types[i].OK
		}
		pt.Reconnects += iv.Reconnects
	}
	flush()

	// Summary, rounded as measure.Summarize rounds it.
	s := measure.Summary{RunID: run.ID, Status: run.Status, Reason: run.Reason, Workload: run.Workload, Target: run.Target,
		Clients: run.Clients, Rate: run.Rate, Seconds: round3(secs), Intervals: measured, Reconnects: reconnects,
		ByTxn: map[string]measure.TypeSummary{}}
	s.TypeSummary = typeSummary(&totCounts[nt], &totLat[nt], &totSvc[nt], secs)
	for i, name := range run.TxnTypes {
		s.ByTxn[name] = typeSummary(&totCounts[i], &totLat[i], &totSvc[i], secs)
	}
	d.Summary = s
	if att := totCounts[nt].OK + totCounts[nt].ErrorTotal(); att > 0 {
		d.ErrorPct = 100 * float64(totCounts[nt].ErrorTotal()) / float64(att)
	}
	d.Distribution = distribution(totLat[nt].Sparse())
	return d, nil
}

func nsToMs(ns int64) float64 { return float64(ns) / 1e6 }

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

func latencyOf(s *measure.Sparse, q []int64) measure.Latency {
	if s.TotalCount() == 0 {
		return measure.Latency{}
	}
	s.Quantiles(rowQuantiles, q)
	return measure.Latency{P50: round3(nsToMs(q[0])), P90: round3(nsToMs(q[1])), P95: round3(nsToMs(q[2])), P99: round3(nsToMs(q[3])),
		P999: round3(nsToMs(q[4])), Max: round3(nsToMs(s.Max())), Mean: round3(s.Mean() / 1e6)}
}

func errorsBy(c *measure.Counts) map[string]int64 {
	var m map[string]int64
	for i, v := range c.Errors {
		if v > 0 && target.Class(i) != target.ClassCanceled {
			if m == nil {
				m = map[string]int64{}
			}
			m[target.Class(i).String()] = v
		}
	}
	return m
}

func typeSummary(c *measure.Counts, lat, svc *measure.SparseSum, secs float64) measure.TypeSummary {
	t := measure.TypeSummary{Transactions: c.OK, Statements: c.Statements, Errors: c.ErrorTotal(), Failed: c.Failed,
		Retries: c.Retries, Late: c.Late, Dropped: c.Dropped, ErrorsBy: errorsBy(c), Latency: lat.Sparse().Latency()}
	if secs > 0 {
		t.TPS = round2(float64(c.OK) / secs)
		t.QPS = round2(float64(c.Statements) / secs)
	}
	if svc.TotalCount() > 0 {
		l := svc.Sparse().Latency()
		t.Service = &l
	}
	return t
}

// distribution samples the percentile spectrum: every tenth of a "nine" from 0 to
// the last value, as HdrHistogram's percentile plots do.
func distribution(s *measure.Sparse) []Percentile {
	n := s.TotalCount()
	if n == 0 {
		return nil
	}
	var qs []float64
	last := math.Log10(float64(n)) // beyond 1 - 1/n the steps say nothing more
	for k := 0.0; k <= last*10+1e-9 && k <= 60; k++ {
		qs = append(qs, 100*(1-math.Pow(10, -k/10)))
	}
	qs = append(qs, 100)
	sort.Float64s(qs)
	vals := make([]int64, len(qs))
	s.Quantiles(qs, vals)
	out := make([]Percentile, 0, len(qs))
	for i, p := range qs {
		rank := int64(math.Ceil(p / 100 * float64(n)))
		out = append(out, Percentile{Percentile: round6(p), Ms: nsToMs(vals[i]), Count: max(rank, 1)})
	}
	return out
}

func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }
