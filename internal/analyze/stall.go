package analyze

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/fathom-lab/fathom/internal/store"
)

// Stall detection. A stall is a stretch of report intervals whose throughput falls
// below Threshold × the run's baseline throughput, by more than chance: with few
// transactions per interval, a count that a Poisson process at the baseline rate would
// give more than once in a million intervals is not low. Warm-up intervals and intervals
// shorter than half the usual length (the last, partial one) are neither stalls nor
// baseline.
//
// The baseline of an interval is the median of the Window healthy intervals nearest to
// it, healthy meaning not itself in a stall. It is found by iteration: candidate stalls
// are seeded against a rolling median of Window intervals and against the run's upper
// quartile (so that an outage longer than the window, or one that ends the run, is
// seen), the baseline is recomputed from the intervals outside them, the stalls are
// found again against it, and so on until nothing changes. A stall therefore never drags
// the baseline down: the intervals after a long stall are judged against the healthy
// ones around it, not against the stall itself. A stall's extent is the whole dip:
// from its low intervals out while throughput stays below the baseline's lower band
// (stallBand); low stretches joined across a partial recovery are split again where
// their own causes differ (stallSplitUnrelated).
// StallParams are the documented, adjustable thresholds of stall detection.
type StallParams struct {
	// Threshold: an interval is low when its throughput is below Threshold × the
	// rolling median (default 0.5: below half).
	Threshold float64 `json:"threshold"`
	// Window is the rolling median's width in intervals, centred (default 31; a run
	// shorter than that uses all of it).
	Window int `json:"window"`
	// MinIntervals is the fewest consecutive low intervals that make a stall
	// (default 1).
	MinIntervals int `json:"min_intervals"`
	// Merge joins stalls separated by at most this many intervals that recovered only
	// partly (below the midway between the threshold and the median; default 1).
	Merge int `json:"merge"`
	// Evidence is how many unusual metrics to keep per stall (default 8).
	Evidence int `json:"evidence"`
	// MinScore is the robust z-score a metric needs to count as unusual (default 3).
	MinScore float64 `json:"min_score"`
}

// MinStallIntervals is the fewest measured intervals stall detection looks at: a stall
// is judged against the run's own rolling median, which needs a few normal intervals.
const MinStallIntervals = 5

// DefaultStallParams are the defaults described on StallParams.
func DefaultStallParams() StallParams {
	return StallParams{Threshold: 0.5, Window: 31, MinIntervals: 1, Merge: 1, Evidence: 8, MinScore: 3}
}

// Validate reports the first unusable value with the fix.
func (p StallParams) Validate() error {
	switch {
	case !(p.Threshold > 0 && p.Threshold < 1):
		return fmt.Errorf("stall threshold %v: use a fraction of the rolling median between 0 and 1, e.g. 0.5", p.Threshold)
	case p.Window < 3:
		return fmt.Errorf("stall window %d: use at least 3 intervals", p.Window)
	case p.MinIntervals < 1:
		return fmt.Errorf("stall min-intervals %d: use at least 1", p.MinIntervals)
	case p.Merge < 0:
		return fmt.Errorf("stall merge %d: use 0 or more intervals", p.Merge)
	}
	return nil
}

func (p StallParams) withDefaults() StallParams {
	d := DefaultStallParams()
	if p.Threshold == 0 {
		p.Threshold = d.Threshold
	}
	if p.Window == 0 {
		p.Window = d.Window
	}
	if p.MinIntervals == 0 {
		p.MinIntervals = d.MinIntervals
	}
	if p.Evidence == 0 {
		p.Evidence = d.Evidence
	}
	if p.MinScore == 0 {
		p.MinScore = d.MinScore
	}
	return p
}

// ThroughputPoint is one interval's throughput.
type ThroughputPoint struct {
	Index      int
	Start, End time.Duration
	Warmup     bool
	// Value is the throughput per second.
	Value float64
	// Reconnects stallDuring the interval (a sign of a server stallRestart).
	Reconnects int64
}

// StallInput is everything stall analysis looks at: a pure function of stored data.
type StallInput struct {
	Throughput []ThroughputPoint
	// Unit names what Throughput measures: "tps", or for watch sessions the server
	// counter that stood for it (one of Vocabulary.ServerRates).
	Unit    string
	Metrics []store.MetricSeries
	// Settings are the run's recorded settings (server and vm.*).
	Settings map[string]string
	// Kind is the target kind; Local says whether OS metrics describe the server's host.
	Kind  string
	Local bool
	// Version is the server's version string as recorded ("10.11.6-MariaDB", "16.2"):
	// advice names the settings of that version.
	Version string
	// Clients is the run's client count (0 for a watch session).
	Clients int
	// Samples are the collectors' outcomes per sample: a server that stops answering
	// shows as server collectors that time out or fail.
	Samples []store.SampleStatus
	// Rules are the kind's own patterns (its bundle's StallRules), tried with the
	// generic ones.
	Rules []Rule
	// Vocabulary names the kind's metrics the generic patterns read (its bundle's
	// StallVocabulary).
	Vocabulary Vocabulary
}

// FindStalls detects stalls and explains each one.
func FindStalls(in StallInput, p StallParams) []store.Stall {
	p = p.withDefaults()
	used := stallUsable(in.Throughput)
	if len(used) < MinStallIntervals {
		return nil
	}
	vals := make([]float64, len(used))
	durs := make([]float64, len(used))
	for i, pt := range used {
		vals[i] = pt.Value
		durs[i] = (pt.End - pt.Start).Seconds()
	}
	med, low := stallBaseline(vals, durs, p)
	partial := make([]bool, len(used)) // below the midway between threshold and baseline
	for i := range used {
		partial[i] = vals[i] < (1+p.Threshold)/2*med[i]
	}
	spans := stallSpans(low, partial, p.MinIntervals, p.Merge)
	if len(spans) == 0 {
		return nil
	}
	// Each dip's real extent: out from its low intervals while throughput stays below
	// the baseline's lower band (the threshold finds a dip; its start and end are where
	// throughput left and regained its usual range).
	band := stallBand(vals, med, low, p.Threshold)
	spans = stallExtend(spans, vals, med, band)
	// Baseline intervals for metrics: not in a stall, nor right before or after one.
	near := map[int]bool{}
	for _, sp := range spans {
		for i := sp[0] - 1; i <= sp[1]+1; i++ {
			if i >= 0 && i < len(used) {
				near[used[i].Index] = true
			}
		}
	}
	var baseline []int
	for _, pt := range used {
		if !near[pt.Index] {
			baseline = append(baseline, pt.Index)
		}
	}
	tp := map[int]float64{}
	for _, pt := range used {
		tp[pt.Index] = pt.Value
	}
	an := newStallAttributor(in, p, baseline, tp)
	// Dips joined across a partial recovery stay one stall only when they are the same
	// event: where the low stretches' own causes differ, they are separate stalls.
	spans = stallSplitUnrelated(spans, low, func(sp [2]int) string {
		st := store.Stall{FirstInterval: used[sp[0]].Index, LastInterval: used[sp[1]].Index, Start: used[sp[0]].Start, End: used[sp[1]].End,
			Throughput: in.Unit, Baseline: med[sp[0]], Mean: vals[sp[0]], Min: vals[sp[0]]}
		window := []int{}
		if sp[0] > 0 {
			window = append(window, used[sp[0]-1].Index)
		}
		for i := sp[0]; i <= sp[1]; i++ {
			window = append(window, used[i].Index)
		}
		an.explain(&st, window, 0)
		return st.Cause
	})
	var out []store.Stall
	for _, sp := range spans {
		st := store.Stall{
			Number:        len(out) + 1,
			FirstInterval: used[sp[0]].Index,
			LastInterval:  used[sp[1]].Index,
			Start:         used[sp[0]].Start,
			End:           used[sp[1]].End,
			Throughput:    in.Unit,
			Min:           math.Inf(1),
		}
		var sumMed, sumVal, secs float64
		var n int
		var reconnects int64
		for i := sp[0]; i <= sp[1]; i++ {
			pt := used[i]
			s := (pt.End - pt.Start).Seconds()
			sumMed += med[i]
			sumVal += vals[i]
			secs += s
			n++
			if vals[i] < st.Min {
				st.Min = vals[i]
			}
			if med[i] > vals[i] {
				st.Lost += (med[i] - vals[i]) * s
			}
			reconnects += pt.Reconnects
		}
		st.Baseline, st.Mean = stallRound(sumMed/float64(n)), stallRound(sumVal/float64(n))
		st.Min, st.Lost = stallRound(st.Min), math.Round(st.Lost)
		if st.Baseline > 0 {
			st.Depth = stallRound(1 - st.Mean/st.Baseline)
		}
		window := []int{}
		if sp[0] > 0 {
			window = append(window, used[sp[0]-1].Index)
		}
		for i := sp[0]; i <= sp[1]; i++ {
			window = append(window, used[i].Index)
		}
		an.explain(&st, window, reconnects)
		out = append(out, st)
	}
	return out
}

// stallBand is each interval's lower band: the baseline times the healthy intervals'
// usual low ratio to it (their median ratio less three robust spreads), never below
// the threshold and never above nine tenths of the baseline.
func stallBand(vals, base []float64, low []bool, threshold float64) []float64 {
	var r []float64
	for i := range vals {
		if !low[i] && base[i] > 0 {
			r = append(r, vals[i]/base[i])
		}
	}
	f := 0.9
	if len(r) > 0 {
		med, scale := stallRobust(r)
		f = math.Min(f, med-3*scale)
	}
	f = math.Max(f, threshold)
	out := make([]float64, len(vals))
	for i := range vals {
		out[i] = f * base[i]
	}
	return out
}

// stallExtend widens each span over the neighbouring intervals whose throughput stays
// below the lower band, up to the next span.
func stallExtend(spans [][2]int, vals, base, band []float64) [][2]int {
	out := slices.Clone(spans)
	for k := range out {
		lo, hi := 0, len(vals)-1
		if k > 0 {
			lo = out[k-1][1] + 1
		}
		if k+1 < len(out) {
			hi = out[k+1][0] - 1
		}
		for out[k][0] > lo && vals[out[k][0]-1] < band[out[k][0]-1] {
			out[k][0]--
		}
		for out[k][1] < hi && vals[out[k][1]+1] < band[out[k][1]+1] {
			out[k][1]++
		}
	}
	return out
}

// stallSplitUnrelated splits a span whose low stretches (joined across partial
// recoveries) have different causes, as cause names them ("" none: joins either
// side).
func stallSplitUnrelated(spans [][2]int, low []bool, cause func([2]int) string) [][2]int {
	var out [][2]int
	for _, sp := range spans {
		// The low stretches inside the span.
		var runs [][2]int
		for i := sp[0]; i <= sp[1]; i++ {
			if !low[i] {
				continue
			}
			j := i
			for j+1 <= sp[1] && low[j+1] {
				j++
			}
			runs = append(runs, [2]int{i, j})
			i = j
		}
		if len(runs) < 2 {
			out = append(out, sp)
			continue
		}
		start, prev := sp[0], cause(runs[0])
		for k := 1; k < len(runs); k++ {
			c := cause(runs[k])
			if prev != "" && c != "" && c != prev {
				out = append(out, [2]int{start, runs[k-1][1]})
				start = runs[k][0]
				prev = c
				continue
			}
			if prev == "" {
				prev = c
			}
		}
		out = append(out, [2]int{start, sp[1]})
	}
	return out
}

// stallLow marks the intervals below Threshold × base by more than chance: with a
// handful of transactions per interval (an idle server's commits) a few fewer is noise,
// not a stall.
func stallLow(vals, secs, base []float64, p StallParams) []bool {
	low := make([]bool, len(vals))
	for i := range vals {
		low[i] = base[i] > 0 && vals[i] < p.Threshold*base[i] && stallUnlikely(vals[i]*secs[i], base[i]*secs[i])
	}
	return low
}

// stallMaxRounds bounds the baseline's iteration (it settles in two or three rounds on
// real runs; a slow drift that was seeded as a stall erodes from its edges).
const stallMaxRounds = 100

// stallBaseline returns each interval's baseline and whether it is low, iterating
// detect, exclude, recompute until the low intervals no longer change.
func stallBaseline(vals, secs []float64, p StallParams) (base []float64, low []bool) {
	n := len(vals)
	// Seeds: low against the rolling median, or against the run's 90th percentile once
	// the run has reached it (a stall that fills most of the window takes the rolling
	// median down with it; one that fills less than nine tenths of the run cannot take
	// the 90th percentile; a slow start is not a stall). A stall over more than nine
	// tenths of a run leaves too few healthy intervals to judge it by and is not found.
	low = stallLow(vals, secs, stallRollingMedian(vals, p.Window), p)
	q := make([]float64, n)
	upper := stallQuantile(vals, 0.9)
	reached := false
	for i := range q {
		if reached {
			q[i] = upper
		}
		reached = reached || vals[i] >= (1+p.Threshold)/2*upper
	}
	for i, l := range stallLow(vals, secs, q, p) {
		low[i] = low[i] || l
	}
	for round := 0; round < stallMaxRounds; round++ {
		base = stallHealthyMedian(vals, low, p.Window)
		next := stallLow(vals, secs, base, p)
		if slices.Equal(next, low) {
			break
		}
		low = next
	}
	return base, low
}

// stallHealthyMedian is, for each interval, the median of the w intervals nearest to it
// that are not excluded (all of them when fewer remain; every interval when all are
// excluded).
func stallHealthyMedian(v []float64, excluded []bool, w int) []float64 {
	var healthy []int
	for i := range v {
		if !excluded[i] {
			healthy = append(healthy, i)
		}
	}
	if len(healthy) == 0 {
		return stallRollingMedian(v, w)
	}
	k := min(w, len(healthy))
	out := make([]float64, len(v))
	buf := make([]float64, 0, k)
	for i := range v {
		// The k healthy intervals nearest to i: two pointers walking outwards.
		hi, _ := slices.BinarySearch(healthy, i)
		lo := hi - 1
		buf = buf[:0]
		for len(buf) < k {
			switch {
			case lo < 0:
				buf = append(buf, v[healthy[hi]])
				hi++
			case hi >= len(healthy):
				buf = append(buf, v[healthy[lo]])
				lo--
			case i-healthy[lo] <= healthy[hi]-i:
				buf = append(buf, v[healthy[lo]])
				lo--
			default:
				buf = append(buf, v[healthy[hi]])
				hi++
			}
		}
		out[i] = stallMedian(buf)
	}
	return out
}

// stallQuantile is the q-quantile of v (nearest rank on a sorted copy).
func stallQuantile(v []float64, q float64) float64 {
	s := slices.Clone(v)
	sort.Float64s(s)
	if len(s) == 0 {
		return math.NaN()
	}
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// stallUsable drops warm-up intervals and short (partial) ones.
func stallUsable(pts []ThroughputPoint) []ThroughputPoint {
	var lens []float64
	for _, pt := range pts {
		if !pt.Warmup && pt.End > pt.Start {
			lens = append(lens, float64(pt.End-pt.Start))
		}
	}
	if len(lens) == 0 {
		return nil
	}
	typical := stallMedian(lens)
	var out []ThroughputPoint
	for _, pt := range pts {
		if pt.Warmup || float64(pt.End-pt.Start) < typical/2 || math.IsNaN(pt.Value) {
			continue
		}
		out = append(out, pt)
	}
	return out
}

// stallRollingMedian is the median of the w values centred on each (clamped at the ends,
// so every window has min(w, len) values).
func stallRollingMedian(v []float64, w int) []float64 {
	n := len(v)
	if w > n {
		w = n
	}
	out := make([]float64, n)
	buf := make([]float64, 0, w)
	for i := range v {
		lo := i - w/2
		if lo < 0 {
			lo = 0
		}
		hi := lo + w
		if hi > n {
			hi = n
			lo = n - w
		}
		buf = append(buf[:0], v[lo:hi]...)
		out[i] = stallMedian(buf)
	}
	return out
}

// stallMedian is the median of v, reordering v (no copy: it runs per interval).
func stallMedian(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	sort.Float64s(v)
	m := len(v) / 2
	if len(v)%2 == 1 {
		return v[m]
	}
	return (v[m-1] + v[m]) / 2
}

// stallSpans returns [first, last] positions of runs of low intervals at least min long,
// after joining runs separated by at most merge intervals that only partly recovered.
func stallSpans(low, partial []bool, min, merge int) [][2]int {
	var spans [][2]int
	for i := 0; i < len(low); {
		if !low[i] {
			i++
			continue
		}
		j := i
		for j+1 < len(low) && low[j+1] {
			j++
		}
		join := false
		if n := len(spans); n > 0 && i-spans[n-1][1]-1 <= merge {
			join = true
			for k := spans[n-1][1] + 1; k < i; k++ {
				join = join && partial[k]
			}
		}
		if join {
			spans[len(spans)-1][1] = j
		} else {
			spans = append(spans, [2]int{i, j})
		}
		i = j + 1
	}
	out := spans[:0]
	for _, sp := range spans {
		count := 0
		for k := sp[0]; k <= sp[1]; k++ {
			if low[k] {
				count++
			}
		}
		if count >= min {
			out = append(out, sp)
		}
	}
	return slices.Clip(out)
}

func stallRound(v float64) float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return 0
	}
	return math.Round(v*1000) / 1000
}

// stallUnlikely reports whether seeing count events where expected were expected is
// too unlikely to be chance (Poisson, one-sided, below one in a million: background
// work is burstier than Poisson, and a stall worth reporting is far beyond that).
func stallUnlikely(count, expected float64) bool {
	if expected <= 0 {
		return false
	}
	if expected > 100 {
		// Normal approximation: more than 4.75 standard deviations below.
		return count < expected-4.75*math.Sqrt(expected)
	}
	// P(X <= floor(count)) for X ~ Poisson(expected).
	k := int(math.Floor(count))
	term := math.Exp(-expected)
	cdf := term
	for i := 1; i <= k; i++ {
		term *= expected / float64(i)
		cdf += term
	}
	return cdf < 1e-6
}
