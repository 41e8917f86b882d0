package analyze

import (
	"math"
	"sort"
	"strings"

	"github.com/fathom-lab/fathom/internal/collect"
	"github.com/fathom-lab/fathom/internal/store"
)

// Stall attribution. Each metric is compared between the stall (with the interval
// before it, where causes often begin) and the run's own baseline (intervals away from
// every stall) with a robust z-score: the distance of the stall's mean from the
// baseline median, in units of the baseline's scaled median absolute deviation.
// Metrics that merely follow throughput down (commits, rows, bytes sent) are not
// evidence. Known patterns are then matched on the evidence.

// stallMaxScore caps z-scores: a metric that is constant in the baseline and moves in the
// stall is as unusual as it gets, and an infinite score would tell nothing more.
const stallMaxScore = 99

type stallMetric struct {
	ser      *store.MetricSeries
	y        map[int]float64
	base     float64 // baseline median
	scale    float64 // robust spread of the baseline
	follows  bool    // moves with throughput
	constant bool    // never changes outside the stall
	// cadence is, per interval, the usual time between readings over the time since the
	// previous one: above 1 where samples bunched up (a late one, then a prompt one).
	cadence map[int]float64
}

// stallCadence is how much faster than usual each reading of a series came.
func stallCadence(ser *store.MetricSeries) map[int]float64 {
	var gaps []float64
	gap := map[int]float64{}
	for j := 1; j < len(ser.Points); j++ {
		if g := (ser.Points[j].At - ser.Points[j-1].At).Seconds(); g > 0 {
			gap[ser.Points[j].Interval] = g
			gaps = append(gaps, g)
		}
	}
	if len(gaps) == 0 {
		return nil
	}
	usual := stallMedian(gaps)
	out := make(map[int]float64, len(gap))
	for idx, g := range gap {
		out[idx] = usual / g
	}
	return out
}

// ownCadence reports a counter whose rise in the window is no more than the sampling
// cadence explains: a count of work done per sample (fathom's own queries' temporary
// tables, rows sent, files opened) looks faster when samples bunch up on a busy host.
func (a *stallAttributor) ownCadence(d stallDuring, window []int) bool {
	ms := d.ms
	if !ms.ser.IsCounter() || ms.cadence == nil || ms.base <= 0 {
		return false
	}
	fastest := 0.0
	for _, idx := range window {
		if c, ok := ms.cadence[idx]; ok {
			fastest = math.Max(fastest, c)
		}
	}
	return fastest > 1.1 && math.Max(d.mean, d.peak) <= 1.1*ms.base*fastest
}

type stallAttributor struct {
	in       StallInput
	p        StallParams
	metrics  map[string]*stallMetric
	names    []string
	baseline []int
	ans      map[int]stallAnswers
	tp       map[int]float64 // throughput by interval index
}

func newStallAttributor(in StallInput, p StallParams, baseline []int, tp map[int]float64) *stallAttributor {
	a := &stallAttributor{in: in, p: p, metrics: map[string]*stallMetric{}, baseline: baseline, tp: tp}
	for i := range in.Metrics {
		ser := &in.Metrics[i]
		y := ser.ByInterval()
		var bv []float64
		for _, idx := range baseline {
			if v, ok := y[idx]; ok {
				bv = append(bv, v)
			}
		}
		ms := &stallMetric{ser: ser, y: y}
		if ser.IsCounter() {
			ms.cadence = stallCadence(ser)
		}
		if len(bv) > 0 {
			ms.base, ms.scale = stallRobust(bv)
			ms.constant = bv[0] == bv[len(bv)-1] && ms.scale == 0
		}
		ms.follows = stallCorrelation(y, tp) > 0.6
		a.metrics[ser.Name] = ms
		a.names = append(a.names, ser.Name)
	}
	sort.Strings(a.names)
	return a
}

// stallRobust returns the median and 1.4826 × MAD of v, falling back to the mean
// absolute deviation when more than half the values are equal, and to 0 for a
// constant series.
func stallRobust(v []float64) (med, scale float64) {
	s := append([]float64(nil), v...)
	med = stallMedian(s)
	dev := make([]float64, len(v))
	var sum float64
	for i, x := range v {
		dev[i] = math.Abs(x - med)
		sum += dev[i]
	}
	scale = 1.4826 * stallMedian(dev)
	if scale == 0 {
		scale = sum / float64(len(v))
	}
	return med, scale
}

// stallCorrelation is Pearson's r between a metric and throughput over the intervals both
// have (0 when undefined).
func stallCorrelation(y, tp map[int]float64) float64 {
	var xs, ys []float64
	for idx, t := range tp {
		if v, ok := y[idx]; ok {
			xs = append(xs, t)
			ys = append(ys, v)
		}
	}
	n := float64(len(xs))
	if n < 5 {
		return 0
	}
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx, my = mx/n, my/n
	var sxy, sxx, syy float64
	for i := range xs {
		dx, dy := xs[i]-mx, ys[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return 0
	}
	return sxy / math.Sqrt(sxx*syy)
}

// stallDuring summarises a metric over a stall window.
type stallDuring struct {
	ms    *stallMetric
	mean  float64
	peak  float64 // the extreme in the direction of the change
	max   float64
	score float64 // signed robust z
	n     int
	reset bool
}

func (a *stallAttributor) during(name string, window []int) (stallDuring, bool) {
	ms := a.metrics[name]
	if ms == nil {
		return stallDuring{}, false
	}
	d := stallDuring{ms: ms, max: math.Inf(-1)}
	var vals []float64
	for _, idx := range window {
		if v, ok := ms.y[idx]; ok {
			vals = append(vals, v)
			if v > d.max {
				d.max = v
			}
		}
	}
	for i := range ms.ser.Points {
		pt := &ms.ser.Points[i]
		if pt.Reset && pt.Interval >= window[0] && pt.Interval <= window[len(window)-1] {
			d.reset = true
		}
	}
	if len(vals) == 0 {
		return d, false
	}
	d.n = len(vals)
	for _, v := range vals {
		d.mean += v
	}
	d.mean /= float64(len(vals))
	d.peak = vals[0]
	for _, v := range vals {
		if d.mean >= ms.base && v > d.peak || d.mean < ms.base && v < d.peak {
			d.peak = v
		}
	}
	diff := d.mean - ms.base
	peakDiff := d.peak - ms.base
	scale := math.Max(ms.scale, stallScaleFloor(ms.ser, ms.base))
	z := diff / scale
	if pz := 0.75 * peakDiff / scale; math.Abs(pz) > math.Abs(z) {
		z = pz
	}
	d.score = math.Max(-stallMaxScore, math.Min(stallMaxScore, z))
	return d, true
}

// stallScaleFloor is the smallest spread a robust z-score divides by: a tenth of the
// baseline level, and never less than the metric's smallest material step (one event
// or unit per second, one percentage point, 10 ms of waiting per second, a megabyte).
// A metric that is nearly constant outside the stall (1 → 1.03 log syncs per second,
// 0.0% → 0.3% steal) is then not "unusual" for moving by a hair.
func stallScaleFloor(ser *store.MetricSeries, base float64) float64 {
	floor := 1.0
	switch ser.Unit {
	case "%":
		floor = 1
	case "ms":
		floor = 10
	case "bytes":
		floor = 1 << 20
		if ser.IsCounter() {
			floor = 256 << 10
		}
	}
	return math.Max(floor, 0.1*math.Abs(base))
}

// ownQueries are metrics that count fathom's own sampling (the kind's Sampling: SHOW
// GLOBAL STATUS, SHOW ENGINE INNODB STATUS …, and fathom's own process): they move
// when the sampler does, not the server.
func (a *stallAttributor) ownQueries(name string) bool {
	return matches(a.in.Vocabulary.Sampling, name) || strings.HasPrefix(name, collect.PrefixOSFathom)
}

// ignored are metrics that are effects of any slowdown, settings and sizes (the
// host's and the kind's Static), or fathom's own sampling.
func (a *stallAttributor) ignored(name string) bool {
	if a.ownQueries(name) || matches(a.in.Vocabulary.Static, name) {
		return true
	}
	switch {
	case strings.HasSuffix(name, "idle_pct"), strings.HasPrefix(name, collect.OSVmDirtyRatio),
		strings.HasPrefix(name, collect.OSVmDirtyBackgroundRatio), strings.HasSuffix(name, "_setting"),
		strings.HasSuffix(name, "_centisecs"), name == collect.OSCPUs, name == collect.OSMemTotalBytes,
		name == collect.OSFathomCPUPct:
		return true
	}
	return false
}

// evidence ranks the metrics that rose most unusually in the window. Falls are left
// out: less work done (fewer commits, fewer of fathom's own sampling queries while the
// server did not answer) is the stall itself, not its cause; the patterns that read a
// fall (dirty pages written out, a server process that stopped using CPU) name it in
// their explanation and add it to the evidence themselves.
func (a *stallAttributor) evidence(window []int) []store.StallEvidence {
	var out []store.StallEvidence
	for _, n := range a.names {
		if a.ignored(n) {
			continue
		}
		e, ok := a.evidenceOf(n, window)
		if !ok || e.Score < a.p.MinScore && !e.Reset {
			continue
		}
		if d, _ := a.during(n, window); !e.Reset && a.ownCadence(d, window) {
			continue
		}
		out = append(out, e)
	}
	sort.SliceStable(out, func(i, j int) bool { return math.Abs(out[i].Score) > math.Abs(out[j].Score) })
	return out
}

// evidenceOf is one metric's behaviour in the window as evidence.
func (a *stallAttributor) evidenceOf(n string, window []int) (store.StallEvidence, bool) {
	d, ok := a.during(n, window)
	if !ok {
		return store.StallEvidence{}, false
	}
	return store.StallEvidence{
		Metric: n, Kind: d.ms.ser.Kind, Unit: d.ms.ser.Unit,
		Baseline: stallSig(d.ms.base), During: stallSig(d.mean), Peak: stallSig(d.peak),
		Score: math.Round(d.score*10) / 10, Reset: d.reset,
	}, true
}

// stallSig rounds to 4 significant digits for storage and display.
func stallSig(v float64) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	mag := math.Pow(10, 3-math.Floor(math.Log10(math.Abs(v))))
	return math.Round(v*mag) / mag
}

// signal tests used by the patterns.

// up reports a metric clearly above its baseline during the window.
func (a *stallAttributor) up(name string, window []int) (stallDuring, bool) {
	d, ok := a.during(name, window)
	return d, ok && d.score >= a.p.MinScore && d.mean > d.ms.base
}

// rise reports a metric whose mean over the stall rose by at least minDelta above its
// baseline median (material in absolute terms) and by at least MinScore times the
// baseline's own robust spread (unusual for this run). The mean is over the stall's own
// intervals, not the one before it.
func (a *stallAttributor) rise(name string, st *store.Stall, minDelta float64) (stallDuring, bool) {
	ms := a.metrics[name]
	if ms == nil {
		return stallDuring{}, false
	}
	d := stallDuring{ms: ms, max: math.Inf(-1), peak: math.Inf(-1)}
	for idx := st.FirstInterval; idx <= st.LastInterval; idx++ {
		if v, ok := ms.y[idx]; ok {
			d.mean += v
			d.n++
			d.peak = math.Max(d.peak, v)
		}
	}
	if d.n == 0 {
		return d, false
	}
	d.mean /= float64(d.n)
	d.max = d.peak
	delta := d.mean - ms.base
	if ms.scale > 0 {
		d.score = math.Min(stallMaxScore, delta/ms.scale)
	} else {
		d.score = stallMaxScore
	}
	return d, delta >= minDelta && delta >= a.p.MinScore*ms.scale
}

// happened reports a counter that moved (its rate was positive) in the window.
func (a *stallAttributor) happened(name string, window []int) bool {
	ms := a.metrics[name]
	if ms == nil {
		return false
	}
	for _, idx := range window {
		if v, ok := ms.y[idx]; ok && v > 0 {
			return true
		}
	}
	return false
}

// atLeast reports a gauge reaching v somewhere in the window, above its baseline
// median (a level that is always that high explains nothing).
func (a *stallAttributor) atLeast(name string, window []int, v float64) (float64, bool) {
	ms := a.metrics[name]
	if ms == nil {
		return 0, false
	}
	best, ok := math.Inf(-1), false
	for _, idx := range window {
		if x, has := ms.y[idx]; has && x >= v && x > best && (x > ms.base*1.05 || ms.base < v) {
			best, ok = x, true
		}
	}
	return best, ok
}

// minimum is a gauge's lowest value in the window.
func (a *stallAttributor) minimum(name string, window []int) (float64, bool) {
	ms := a.metrics[name]
	if ms == nil {
		return 0, false
	}
	lo, ok := math.Inf(1), false
	for _, idx := range window {
		if x, has := ms.y[idx]; has && x < lo {
			lo, ok = x, true
		}
	}
	return lo, ok
}

func (a *stallAttributor) hasEvidence(ev []store.StallEvidence, name string) bool {
	for _, e := range ev {
		if e.Metric == name {
			return true
		}
	}
	return false
}

func (a *stallAttributor) has(list []string, name string) bool {
	for _, n := range list {
		if n == name {
			return true
		}
	}
	return false
}

// baselineShare is the share of baseline intervals in which a counter moved.
func (a *stallAttributor) baselineShare(name string) float64 {
	ms := a.metrics[name]
	if ms == nil {
		return 0
	}
	n, moved := 0, 0
	for _, idx := range a.baseline {
		if v, ok := ms.y[idx]; ok {
			n++
			if v > 0 {
				moved++
			}
		}
	}
	if n == 0 {
		return 0
	}
	return float64(moved) / float64(n)
}

// stallMatch is one pattern's verdict on a stall.
type stallMatch struct {
	key, title, explanation string
	score                   float64
	metrics                 []string
	settings                []store.StallSetting
}

func (a *stallAttributor) setting(name, hint string) store.StallSetting {
	return store.StallSetting{Name: name, Value: a.in.Settings[name], Hint: hint}
}

// explain fills a stall's evidence and cause.
func (a *stallAttributor) explain(st *store.Stall, window []int, reconnects int64) {
	st.Evidence = a.evidence(window)
	defer func() {
		if len(st.Evidence) > a.p.Evidence {
			st.Evidence = st.Evidence[:a.p.Evidence]
		}
	}()
	var ms []stallMatch
	for _, r := range a.rules() {
		if m, ok := r.match(a, st, window, reconnects); ok {
			ms = append(ms, m)
		}
	}
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].score > ms[j].score })
	for _, m := range ms {
		st.Causes = append(st.Causes, store.StallCause{Key: m.key, Title: m.title, Score: math.Round(m.score*10) / 10, Metrics: m.metrics})
	}
	if len(ms) == 0 {
		st.Explanation = stallNothing(st, len(st.Evidence))
		return
	}
	best := ms[0]
	st.Cause, st.Title, st.Explanation, st.Settings = best.key, best.title, best.explanation, best.settings
	// The cause's own metrics are evidence even when they fell (a server process that
	// stopped using CPU, dirty pages written out).
	for _, n := range best.metrics {
		if a.hasEvidence(st.Evidence, n) {
			continue
		}
		if e, ok := a.evidenceOf(n, window); ok {
			st.Evidence = append(st.Evidence, e)
		}
	}
	// The cause's own metrics first, then the rest by score.
	sort.SliceStable(st.Evidence, func(i, j int) bool {
		bi, bj := a.has(best.metrics, st.Evidence[i].Metric), a.has(best.metrics, st.Evidence[j].Metric)
		return bi && !bj
	})
	if len(ms) > 1 {
		var also []string
		for _, m := range ms[1:] {
			also = append(also, m.title)
		}
		st.Explanation += " Also matching: " + strings.Join(also, "; ") + "."
	}
}
