package report

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/fathom-lab/fathom/internal/collect"
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
	Rows []intervalTxnRow
	// Distribution is the latency percentile spectrum of the measured intervals;
	// Distributions each type's and client group's, by name, when there are several
	// types (a judged run draws its judged one).
	Distribution  []percentile
	Distributions map[string][]percentile
	// Samples is how the run's server and OS metrics were sampled; nil when they were
	// not (--no-collect, SQLite, runs from before sampling): then Metrics and Stalls
	// are empty and the report shows the run as it always did. LoadSamples fills these.
	Samples *store.SampleSource
	// Metrics are the run's metric series on the run's clock: the charted ones, or
	// every metric when AllMetrics (the CSV then holds them all).
	Metrics    []store.MetricSeries
	AllMetrics bool
	// KindCharts are the default charts of the run's kind (LoadSamples sets them from
	// its KindFigures), drawn before the host's.
	KindCharts []collect.Chart
	// Stalls are the stretches where throughput stalled, as `fathom show` lists
	// them; StallsAnalyzed is false when stall analysis never ran for the run.
	Stalls         []store.Stall
	StallsAnalyzed bool
	// Marks are the moments during_run hooks of the run's experiment fired, on the
	// run's clock (LoadSamples fills them).
	Marks []mark
	// HostWarning says that the client host was saturated during the run ("" when
	// it was not, or its load was not sampled).
	HostWarning string
	// Groups total the transaction types of each client group ("writers" for
	// "writers/insert" and "writers/update"), with exact percentiles from the merged
	// histograms; nil when the workload has no groups.
	Groups map[string]measure.TypeSummary
	// Judge is the transaction type or group the run's metrics count ("" all): see
	// SetJudge.
	Judge string
}

// txnGroups lists the client groups of transaction types named "group/type", in the
// order they first appear.
func txnGroups(types []string) []string {
	var out []string
	for _, t := range types {
		if g, _, ok := strings.Cut(t, "/"); ok && !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out
}

// Point is one point of a run's time series (one or more intervals merged).
type Point struct {
	Start, End float64 // seconds since the run's start
	Warmup     bool
	TPS        float64
	TypeTPS    []float64 // per transaction type, in the run's TxnTypes order
	P50, P95   float64   // milliseconds, all types together
	P99, Max   float64
	// TypeLat is each transaction type's latency over the point, in the run's
	// TxnTypes order, and GroupLat each client group's (its types' histograms merged):
	// a judged run's latency over time counts only what it is judged by. Both are nil
	// for a run of one type.
	TypeLat    []pointPercentiles
	GroupLat   map[string]pointPercentiles
	ErrorsPS   float64 // failed attempts per second (all classes but canceled)
	RetriesPS  float64
	FailedPS   float64
	Reconnects int64
	Late       int64
	Dropped    int64
}

// pointPercentiles is the percentiles of one point's latencies, in milliseconds (NaN when
// the point has none).
type pointPercentiles struct{ P50, P95, P99, Max float64 }

func pointLatency(s *measure.Sparse, pq []int64) pointPercentiles {
	if s.TotalCount() == 0 {
		return pointPercentiles{math.NaN(), math.NaN(), math.NaN(), math.NaN()}
	}
	s.Quantiles(pointQuantiles, pq)
	return pointPercentiles{nsToMs(pq[0]), nsToMs(pq[1]), nsToMs(pq[2]), nsToMs(pq[3])}
}

// percentile is one point of a latency distribution.
type percentile struct {
	Percentile float64 `json:"percentile"`
	Ms         float64 `json:"ms"`
	Count      int64   `json:"count"` // values at or below
}

// LoadRuns reads and computes the given runs, several at a time, in their order.
func LoadRuns(ctx context.Context, st store.Store, runs []*store.Run, maxPoints int) ([]*RunData, error) {
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
				if err == nil {
					err = storedErrors(ctx, st, runs[i], &out[i].Summary)
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

func newRunData(run *store.Run, ivs []store.EncodedInterval, maxPoints int, dec *measure.SparseDecoder) (*RunData, error) {
	if maxPoints <= 0 {
		maxPoints = DefaultMaxPoints
	}
	nt := len(run.TxnTypes)
	d := &RunData{Run: run, Group: max(1, (len(ivs)+maxPoints-1)/maxPoints)}
	if len(ivs) > 0 { // (no intervals: nil, as IntervalRows gives)
		rowsPer := 1
		if nt > 1 {
			rowsPer += nt
		}
		d.Rows = make([]intervalTxnRow, 0, rowsPer*len(ivs))
		d.Points = make([]Point, 0, (len(ivs)+d.Group-1)/d.Group+1)
	}
	a := newRunAccum(d, dec)
	for k := range ivs {
		if err := a.addInterval(&ivs[k]); err != nil {
			return nil, err
		}
	}
	a.flush()
	if err := a.summarize(); err != nil {
		return nil, err
	}
	return d, nil
}

// runAccum accumulates a run's intervals into its RunData: the full-resolution rows,
// the time series' points (several intervals merged where the run is long) and the
// run's totals (measured intervals only).
type runAccum struct {
	d      *RunData
	run    *store.Run
	nt     int
	decode func([]byte) (*measure.Sparse, error)

	// Run totals (measured intervals only), per type and all together (with one type,
	// its own).
	totLat, totSvc []measure.SparseSum
	allLat, allSvc *measure.SparseSum
	totCounts      []measure.Counts
	secs           float64
	measured       int
	reconnects     int64

	// The point being accumulated.
	grp    measure.SparseSum
	pc     measure.Counts
	pt     Point
	ptIvs  int
	typeOK []int64
	pq     []int64
	// With several types, each type's histograms of the point, so that a judged run's
	// latency over time can count only the judged type or group.
	grpT, grpG []measure.SparseSum
	groups     []string
	groupOf    []int // index in groups, -1: none

	// Per interval: each type's figures, and all types' histograms merged when there
	// are several types (with one, "all" is that type).
	latF          []measure.Figures
	svcF          []*measure.Figures
	ivAll, ivSvc  *measure.Sparse
	allCounts     measure.Counts
	allF, allSvcF measure.Figures // all types' figures (allFigures)
}

func newRunAccum(d *RunData, dec *measure.SparseDecoder) *runAccum {
	run := d.Run
	nt := len(run.TxnTypes)
	a := &runAccum{d: d, run: run, nt: nt,
		totLat: make([]measure.SparseSum, nt+1), totSvc: make([]measure.SparseSum, nt+1), totCounts: make([]measure.Counts, nt+1),
		typeOK: make([]int64, nt), pq: make([]int64, len(pointQuantiles)),
		groups: txnGroups(run.TxnTypes), groupOf: make([]int, nt),
		latF: make([]measure.Figures, nt), svcF: make([]*measure.Figures, nt),
		decode: dec.DecodeTemp, // valid until the next call: enough for one type
	}
	a.allLat, a.allSvc = &a.totLat[nt], &a.totSvc[nt]
	if nt == 1 {
		a.allLat, a.allSvc = &a.totLat[0], &a.totSvc[0]
	}
	if nt > 1 {
		a.grpT, a.grpG = make([]measure.SparseSum, nt), make([]measure.SparseSum, len(a.groups))
		a.decode = dec.Decode
	}
	for i, name := range run.TxnTypes {
		a.groupOf[i] = -1
		if g, _, ok := strings.Cut(name, "/"); ok {
			a.groupOf[i] = slices.Index(a.groups, g)
		}
	}
	return a
}

// flush ends the point being accumulated (if any) and appends it to the time series.
func (a *runAccum) flush() {
	if a.ptIvs == 0 {
		return
	}
	pt := &a.pt
	dur := pt.End - pt.Start
	if dur > 0 {
		pt.TPS = float64(a.pc.OK) / dur
		pt.ErrorsPS = float64(a.pc.ErrorTotal()) / dur
		pt.RetriesPS = float64(a.pc.Retries) / dur
		pt.FailedPS = float64(a.pc.Failed) / dur
		pt.TypeTPS = make([]float64, a.nt)
		for i := range a.typeOK {
			pt.TypeTPS[i] = float64(a.typeOK[i]) / dur
		}
	}
	pt.Late, pt.Dropped = a.pc.Late, a.pc.Dropped
	if a.grp.TotalCount() > 0 {
		a.grp.Quantiles(pointQuantiles, a.pq)
		pt.P50, pt.P95, pt.P99, pt.Max = nsToMs(a.pq[0]), nsToMs(a.pq[1]), nsToMs(a.pq[2]), nsToMs(a.pq[3])
	} else {
		pt.P50, pt.P95, pt.P99, pt.Max = math.NaN(), math.NaN(), math.NaN(), math.NaN()
	}
	if a.grpT != nil {
		a.flushTypes()
	}
	a.d.Points = append(a.d.Points, a.pt)
	a.grp.Reset()
	a.pc = measure.Counts{}
	clear(a.typeOK)
	a.pt, a.ptIvs = Point{}, 0
}

// flushTypes sets the point's latency per type and per group, from their histograms
// (which it empties).
func (a *runAccum) flushTypes() {
	pt := &a.pt
	pt.TypeLat = make([]pointPercentiles, a.nt)
	for i := range a.grpT {
		pt.TypeLat[i] = pointLatency(a.grpT[i].View(), a.pq)
	}
	for k, g := range a.groups {
		if pt.GroupLat == nil {
			pt.GroupLat = map[string]pointPercentiles{}
		}
		pt.GroupLat[g] = pointLatency(a.grpG[k].View(), a.pq)
		a.grpG[k].Reset()
	}
	for i := range a.grpT {
		a.grpT[i].Reset()
	}
}

// addInterval adds one interval: its rows, its share of the point and, if measured,
// of the run's totals.
func (a *runAccum) addInterval(iv *store.EncodedInterval) error {
	ivSecs := (iv.End - iv.Start).Seconds()
	// Time series: start a new point at the group size or where warm-up ends.
	if a.ptIvs > 0 && (a.ptIvs == a.d.Group || a.pt.Warmup != iv.Warmup) {
		a.flush()
	}
	if a.ptIvs == 0 {
		a.pt.Start, a.pt.Warmup = iv.Start.Seconds(), iv.Warmup
	}
	a.allCounts = measure.Counts{}
	a.ivAll, a.ivSvc = nil, nil
	for i := range iv.Types {
		if err := a.addType(iv, i); err != nil {
			return err
		}
	}
	allF, allSvcF := a.allFigures()

	// Full-resolution rows, like IntervalRows.
	a.d.Rows = append(a.d.Rows, intervalRow(iv, ivSecs, &a.allCounts, allF, allSvcF, "all", iv.Reconnects))
	if a.nt > 1 {
		for i := range iv.Types {
			a.d.Rows = append(a.d.Rows, intervalRow(iv, ivSecs, &iv.Types[i].Counts, &a.latF[i], a.svcF[i], iv.Types[i].Name, 0))
		}
	}

	if !iv.Warmup {
		for i := range iv.Types {
			a.totCounts[i].Add(&iv.Types[i].Counts)
		}
		a.totCounts[a.nt].Add(&a.allCounts)
		a.secs += ivSecs
		a.measured++
		a.reconnects += iv.Reconnects
	}

	// Time series (the point was started above).
	a.pt.End = iv.End.Seconds()
	a.ptIvs++
	a.pc.Add(&a.allCounts)
	for i := range iv.Types {
		a.typeOK[i] += iv.Types[i].OK
	}
	a.pt.Reconnects += iv.Reconnects
	return nil
}

// addType adds the i-th type of an interval. Every histogram is decoded: the run's
// totals and distribution need them, and so do the time series' points when they
// merge several intervals.
func (a *runAccum) addType(iv *store.EncodedInterval, i int) error {
	t := &iv.Types[i]
	l, err := a.decode(t.Latency)
	if err != nil {
		return fmt.Errorf("interval %d: %v", iv.Index, err)
	}
	if err := a.addLatency(iv.Warmup, i, l); err != nil {
		return err
	}
	a.latF[i], a.svcF[i] = l.Figures(), nil
	if len(t.Service) > 0 {
		sv, err := a.decode(t.Service)
		if err != nil {
			return fmt.Errorf("interval %d: %v", iv.Index, err)
		}
		if err := a.addService(iv.Warmup, i, sv); err != nil {
			return err
		}
	}
	a.allCounts.Add(&t.Counts)
	return nil
}

// addLatency adds type i's latency histogram l to the point, to the run's totals
// (measured intervals) and to the interval's all types.
func (a *runAccum) addLatency(warmup bool, i int, l *measure.Sparse) error {
	if err := a.grp.Add(l); err != nil {
		return err
	}
	if a.grpT != nil {
		if err := a.grpT[i].Add(l); err != nil {
			return err
		}
		if k := a.groupOf[i]; k >= 0 {
			if err := a.grpG[k].Add(l); err != nil {
				return err
			}
		}
	}
	if !warmup {
		if err := a.totLat[i].Add(l); err != nil {
			return err
		}
		if a.nt > 1 {
			if err := a.allLat.Add(l); err != nil {
				return err
			}
		}
	}
	if a.nt > 1 {
		var err error
		if a.ivAll, err = merge(a.ivAll, l); err != nil {
			return err
		}
	}
	return nil
}

// addService adds type i's service time histogram sv to the run's totals (measured
// intervals), to the interval's figures and to its all types.
func (a *runAccum) addService(warmup bool, i int, sv *measure.Sparse) error {
	if !warmup {
		if err := a.totSvc[i].Add(sv); err != nil {
			return err
		}
		if a.nt > 1 {
			if err := a.allSvc.Add(sv); err != nil {
				return err
			}
		}
	}
	if sv.TotalCount() > 0 {
		f := sv.Figures()
		a.svcF[i] = &f
	}
	if a.nt > 1 {
		var err error
		if a.ivSvc, err = merge(a.ivSvc, sv); err != nil {
			return err
		}
	}
	return nil
}

// allFigures is the interval's figures of all types together: with one type, its
// own; with none, zero.
// (The figures are kept in a, valid until the next interval: no allocation per
// interval.)
func (a *runAccum) allFigures() (*measure.Figures, *measure.Figures) {
	a.allF = measure.Figures{}
	allF, allSvcF := &a.allF, (*measure.Figures)(nil)
	switch {
	case a.nt == 1:
		allF, allSvcF = &a.latF[0], a.svcF[0]
	case a.nt > 1:
		a.allF = a.ivAll.Figures()
		if a.ivSvc.TotalCount() > 0 {
			a.allSvcF = a.ivSvc.Figures()
			allSvcF = &a.allSvcF
		}
	}
	return allF, allSvcF
}

// intervalRow is one row of an interval: all types' (name "all", with the
// interval's reconnects rc) or one type's.
func intervalRow(iv *store.EncodedInterval, ivSecs float64, c *measure.Counts, l *measure.Figures, s *measure.Figures, name string, rc int64) intervalTxnRow {
	r := intervalTxnRow{Interval: iv.Index, StartS: iv.Start.Seconds(), EndS: iv.End.Seconds(), Warmup: iv.Warmup, Type: name,
		OK: c.OK, Failed: c.Failed, Errors: c.ErrorTotal(), Retries: c.Retries, Reconnects: rc, Late: c.Late, Dropped: c.Dropped,
		Latency: l.Latency()}
	if ivSecs > 0 {
		r.TPS = round2(float64(c.OK) / ivSecs)
		r.QPS = round2(float64(c.Statements) / ivSecs)
	}
	r.ErrorsBy = errorsBy(c)
	if s != nil {
		sl := s.Latency()
		r.Service = &sl
	}
	return r
}

// summarize sets the run's summary, rounded as measure.Summarize rounds it, its
// groups' and its distributions.
func (a *runAccum) summarize() error {
	run, d, nt, secs := a.run, a.d, a.nt, a.secs
	s := measure.Summary{RunID: run.ID, Status: run.Status, Reason: run.Reason, Workload: run.Workload, Target: run.Target,
		Clients: run.Clients, Rate: run.Rate, Seconds: round3(secs), Intervals: a.measured, Reconnects: a.reconnects,
		ByTxn: map[string]measure.TypeSummary{}}
	s.TypeSummary = typeSummary(&a.totCounts[nt], a.allLat, a.allSvc, secs)
	for i, name := range run.TxnTypes {
		s.ByTxn[name] = typeSummary(&a.totCounts[i], &a.totLat[i], &a.totSvc[i], secs)
	}
	if nt > 1 {
		d.Distributions = map[string][]percentile{}
		for i, name := range run.TxnTypes {
			d.Distributions[name] = distribution(a.totLat[i].Sparse())
		}
	}
	if err := a.groupSummaries(); err != nil {
		return err
	}
	s.ByGroup = d.Groups
	s.NOPM, s.TPM = perMinute(run, a.totCounts, secs)
	if s.TPM > 0 && len(run.Summary) > 0 && run.Status != "running" {
		// The server's count is read by the run as it goes and kept only in its summary.
		var stored measure.Summary
		if json.Unmarshal(run.Summary, &stored) == nil {
			s.ServerTPM, s.ServerTPMSource = stored.ServerTPM, stored.ServerTPMSource
		}
	}
	d.Summary = s
	if att := a.totCounts[nt].OK + a.totCounts[nt].ErrorTotal(); att > 0 {
		d.ErrorPct = 100 * float64(a.totCounts[nt].ErrorTotal()) / float64(att)
	}
	d.Distribution = distribution(a.allLat.Sparse())
	return nil
}

// groupSummaries sets the summary and distribution of each group of types
// ("new_order" of "new_order/..."), over the measured intervals.
func (a *runAccum) groupSummaries() error {
	run, d := a.run, a.d
	for _, g := range txnGroups(run.TxnTypes) {
		var lat, svc measure.SparseSum
		var c measure.Counts
		for i, name := range run.TxnTypes {
			if strings.HasPrefix(name, g+"/") {
				if err := lat.Add(a.totLat[i].Sparse()); err != nil {
					return err
				}
				if err := svc.Add(a.totSvc[i].Sparse()); err != nil {
					return err
				}
				c.Add(&a.totCounts[i])
			}
		}
		if d.Groups == nil {
			d.Groups = map[string]measure.TypeSummary{}
		}
		d.Groups[g] = typeSummary(&c, &lat, &svc, a.secs)
		d.Distributions[g] = distribution(lat.Sparse())
	}
	return nil
}

// merge adds s to the sum so far (nil at first).
func merge(sum, s *measure.Sparse) (*measure.Sparse, error) {
	if sum == nil {
		return s, nil
	}
	return measure.MergeSparse(sum, s)
}

func nsToMs(ns int64) float64 { return float64(ns) / 1e6 }

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

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

// perMinute is NOPM and TPM (measure.PerMinute) from the measured counts per type.
func perMinute(run *store.Run, counts []measure.Counts, secs float64) (nopm, tpm float64) {
	iv := measure.Interval{Types: make([]measure.TypeInterval, len(run.TxnTypes))}
	for i, name := range run.TxnTypes {
		iv.Types[i].Name = name
		iv.Types[i].Counts = counts[i]
	}
	return measure.PerMinute(&iv, secs)
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
func distribution(s *measure.Sparse) []percentile {
	n := s.TotalCount()
	if n == 0 {
		return nil
	}
	qs := distributionQuantiles(n)
	vals := make([]int64, len(qs))
	s.Quantiles(qs, vals)
	out := make([]percentile, 0, len(qs))
	for i, p := range qs {
		rank := int64(math.Ceil(p / 100 * float64(n)))
		out = append(out, percentile{Percentile: round6(p), Ms: nsToMs(vals[i]), Count: max(rank, 1)})
	}
	return out
}

// distributionQuantiles are the percentiles distribution samples for n values.
func distributionQuantiles(n int64) []float64 {
	var qs []float64
	last := math.Log10(float64(n)) // beyond 1 - 1/n the steps say nothing more
	for k := 0.0; k <= last*10+1e-9 && k <= 60; k++ {
		qs = append(qs, 100*(1-math.Pow(10, -k/10)))
	}
	qs = append(qs, 100)
	sort.Float64s(qs)
	return qs
}

func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }
