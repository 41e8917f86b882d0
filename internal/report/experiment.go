package report

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/fathom-lab/fathom/internal/analyze"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/suggest"
)

// An Experiment is a set of runs, each with a value for every axis (clients,
// transactions per client, a setting …) and a repetition number. Runs with the same
// axis values form a cell. Today experiments are formed from runs grouped by their
// labels (GroupRuns); when the store keeps experiments, NewExperiment takes their
// members as they are.
type experiment struct {
	Name    string
	Axes    []axis
	Members []*member // in the order they ran
	Cells   []*cell   // in axis-value order
	SLO     *SLO
	Knees   []knee
	// Comparisons compare the two values of CompareBy within each combination of the
	// other axes.
	CompareBy   string
	Comparisons []*comparison
	// ByLabels is set when the runs were grouped by their labels (fathom report on
	// runs) rather than run by a plan: then anything about them may differ.
	ByLabels bool
}

// axis is one dimension of an experiment.
type axis struct {
	Name string
	// Values in display order: the baseline first, then by quantity when every value is a number of one kind
	// (8, 16, 32; 16MB, 1GB; 250ms, 2s), else in the order the plan listed them (or,
	// for runs grouped by labels, the order they first ran).
	Values  []string
	Numeric bool
	Kind    int       // KindCount, KindBytes or KindMillis (durations) when Numeric
	Nums    []float64 // Values as quantities (bytes, milliseconds, counts) when Numeric
	// Baseline is the value a comparison along this axis starts from (side A): the
	// plan's choice, else the first value listed.
	Baseline string
}

// Num is value v's position on a numeric axis.
func (a *axis) Num(v string) float64 {
	for i, x := range a.Values {
		if x == v && i < len(a.Nums) {
			return a.Nums[i]
		}
	}
	return math.NaN()
}

func (a *axis) pos(v string) int {
	for i, x := range a.Values {
		if x == v {
			return i
		}
	}
	return len(a.Values)
}

// xUnit is the unit ticks of a numeric axis are shown in.
func (a *axis) xUnit() scaleUnit {
	if a.Kind == kindCount {
		return scaleUnit{Suffix: "", Div: 1}
	}
	return unitFor(a.Kind, a.Nums...)
}

// Label is the axis name with the unit its ticks are in: "shared_buffers (MB)".
func (a *axis) Label() string {
	if u := a.xUnit(); a.Numeric && u.Suffix != "" {
		return a.Name + " (" + u.Suffix + ")"
	}
	return a.Name
}

// ParseBaselines reads "axis=value[,axis2=value2]", the baseline of each axis named.
func ParseBaselines(s string) (map[string]string, error) {
	m := map[string]string{}
	if strings.TrimSpace(s) == "" {
		return m, nil
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("baseline %q: write it as axis=value, e.g. synchronous_commit=on", kv)
		}
		m[k] = v
	}
	return m, nil
}

// axisSpec names an axis and, from a plan, its values in the order listed and the
// baseline chosen.
type axisSpec struct {
	Name     string
	Values   []string
	Baseline string
}

// member is one run of an experiment.
type member struct {
	Data   *RunData
	Values []string // one per axis
	Rep    int      // repetition number, from 1
	Seq    int      // position in the order the runs ran, from 1
}

// cell is the runs of one combination of axis values, with statistics over them.
type cell struct {
	Values  []string
	Members []*member // by repetition
	TPS     analyze.Summary
	P50     analyze.Summary // milliseconds
	P95     analyze.Summary
	P99     analyze.Summary
	Errors  analyze.Summary // percent of attempts
	// MeetsSLO is set when the experiment has an SLO: the cell's median meets it.
	MeetsSLO *bool
}

// name is "clients=16 tpc=100", or "all runs" for an experiment without axes.
func (c *cell) name(axes []axis) string {
	if len(axes) == 0 {
		return "all runs"
	}
	var parts []string
	for i, a := range axes {
		parts = append(parts, a.Name+"="+c.Values[i])
	}
	return strings.Join(parts, " ")
}

// memberSpec is how a caller describes a run's place in an experiment.
type memberSpec struct {
	Data   *RunData
	Values map[string]string
	Rep    int // 0: numbered in run order within the cell
}

// repLabels name a repetition rather than an axis.
var repLabels = []string{"rep", "repetition", "repeat", "iteration"}

// groupRuns forms an experiment from runs by their labels. axes names the axes in
// order; empty means every label whose value differs between the runs, and clients,
// rate and workload when they differ (sweep axes first). A label named rep (or
// repetition) numbers the repetitions; otherwise runs of a cell are numbered in the
// order they ran.
func groupRuns(name string, data []*RunData, axes []string, baselines map[string]string) (*experiment, error) {
	if len(axes) == 0 {
		axes = varyingAxes(data)
	}
	var specsOf []axisSpec
	for _, a := range axes {
		specsOf = append(specsOf, axisSpec{Name: a, Baseline: baselines[a]})
	}
	for a := range baselines {
		if !slices.Contains(axes, a) {
			return nil, fmt.Errorf("baseline %s=%s: the runs have no axis %s (axes: %s)", a, baselines[a], a, strings.Join(axes, ", "))
		}
	}
	var specs []memberSpec
	for _, d := range data {
		m := memberSpec{Data: d, Values: map[string]string{}}
		for _, a := range axes {
			v, ok := axisValue(d, a)
			if !ok {
				known := append([]string{"clients", "rate", "workload"}, slices.Sorted(maps.Keys(d.Run.Labels))...)
				return nil, fmt.Errorf("run %d has no label %q%s (its labels: %s): label every run or choose other --axis values", d.Run.ID, a, suggest.Hint(a, known), labelList(d))
			}
			m.Values[a] = v
		}
		for _, k := range repLabels {
			if v, ok := d.Run.Labels[k]; ok {
				if n, err := strconv.Atoi(v); err == nil && n > 0 {
					m.Rep = n
				}
			}
		}
		specs = append(specs, m)
	}
	e, err := newExperiment(name, specsOf, specs)
	if e != nil {
		e.ByLabels = true
	}
	return e, err
}

func labelList(d *RunData) string {
	if len(d.Run.Labels) == 0 {
		return "none"
	}
	var s []string
	for _, k := range slices.Sorted(maps.Keys(d.Run.Labels)) {
		s = append(s, k+"="+d.Run.Labels[k])
	}
	return strings.Join(s, ", ")
}

// axisValue is a run's value on an axis: its label, or a run field for the built-in
// axes clients, rate and workload.
func axisValue(d *RunData, axis string) (string, bool) {
	if v, ok := d.Run.Labels[axis]; ok {
		return v, true
	}
	switch axis {
	case "clients":
		return strconv.Itoa(d.Run.Clients), true
	case "rate":
		return strconv.FormatFloat(d.Run.Rate, 'f', -1, 64), true
	case "workload":
		return d.Run.Workload, true
	}
	return "", false
}

func varyingAxes(data []*RunData) []string {
	distinct := func(f func(*RunData) (string, bool)) bool {
		seen := map[string]bool{}
		for _, d := range data {
			v, _ := f(d)
			seen[v] = true
		}
		return len(seen) > 1
	}
	var axes []string
	for _, a := range []string{"clients", "rate", "workload"} {
		if distinct(func(d *RunData) (string, bool) { return axisValue(d, a) }) {
			axes = append(axes, a)
		}
	}
	keys := map[string]bool{}
	for _, d := range data {
		for k := range d.Run.Labels {
			keys[k] = true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if slices.Contains(repLabels, k) || slices.Contains(axes, k) {
			continue
		}
		if distinct(func(d *RunData) (string, bool) { v, ok := d.Run.Labels[k]; return v, ok }) {
			axes = append(axes, k)
		}
	}
	return axes
}

// newExperiment builds an experiment's cells and statistics from its members.
func newExperiment(name string, axes []axisSpec, specs []memberSpec) (*experiment, error) {
	e := &experiment{Name: name}
	// Members in the order they ran.
	order := slices.Clone(specs)
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i].Data.Run, order[j].Data.Run
		if !a.StartedAt.Equal(b.StartedAt) {
			return a.StartedAt.Before(b.StartedAt)
		}
		return a.ID < b.ID
	})
	for _, a := range axes {
		ax := axis{Name: a.Name}
		seen := map[string]bool{}
		for _, s := range order {
			seen[s.Values[a.Name]] = true
		}
		for _, v := range a.Values { // listed values that ran, in plan order
			if seen[v] && !slices.Contains(ax.Values, v) {
				ax.Values = append(ax.Values, v)
			}
		}
		for _, s := range order { // then any others, in the order they first ran
			if v := s.Values[a.Name]; !slices.Contains(ax.Values, v) {
				ax.Values = append(ax.Values, v)
			}
		}
		listed := slices.Clone(ax.Values)
		if nums, kind, ok := axisQuantities(ax.Values); ok {
			ax.Numeric, ax.Kind = true, kind
			idx := make([]int, len(nums))
			for i := range idx {
				idx[i] = i
			}
			sort.SliceStable(idx, func(i, j int) bool { return nums[idx[i]] < nums[idx[j]] })
			vs := make([]string, len(idx))
			for k, i := range idx {
				vs[k] = ax.Values[i]
				ax.Nums = append(ax.Nums, nums[i])
			}
			ax.Values = vs
		}
		switch {
		case a.Baseline != "" && slices.Contains(ax.Values, a.Baseline):
			ax.Baseline = a.Baseline
		case a.Baseline != "":
			return nil, fmt.Errorf("baseline %s=%s: the axis has no such value (values: %s)", a.Name, a.Baseline, strings.Join(ax.Values, ", "))
		case len(a.Values) > 0 && len(listed) > 0:
			ax.Baseline = listed[0]
		case len(ax.Values) > 0:
			ax.Baseline = ax.Values[0]
		}
		ax.baselineFirst()
		e.Axes = append(e.Axes, ax)
	}
	cells := map[string]*cell{}
	for i, s := range order {
		m := &member{Data: s.Data, Rep: s.Rep, Seq: i + 1}
		for _, a := range axes {
			m.Values = append(m.Values, s.Values[a.Name])
		}
		key := strings.Join(m.Values, "\x00")
		c := cells[key]
		if c == nil {
			c = &cell{Values: m.Values}
			cells[key] = c
			e.Cells = append(e.Cells, c)
		}
		if m.Rep == 0 {
			m.Rep = len(c.Members) + 1
		}
		c.Members = append(c.Members, m)
		e.Members = append(e.Members, m)
	}
	sort.SliceStable(e.Cells, func(i, j int) bool { return e.less(e.Cells[i].Values, e.Cells[j].Values) })
	for _, c := range e.Cells {
		sort.SliceStable(c.Members, func(i, j int) bool { return c.Members[i].Rep < c.Members[j].Rep })
		c.TPS = analyze.Summarize(metricValues(c.Members, metricTPS), analyze.DefaultConfidence)
		c.P50 = analyze.Summarize(metricValues(c.Members, metricP50), analyze.DefaultConfidence)
		c.P95 = analyze.Summarize(metricValues(c.Members, metricP95), analyze.DefaultConfidence)
		c.P99 = analyze.Summarize(metricValues(c.Members, metricP99), analyze.DefaultConfidence)
		c.Errors = analyze.Summarize(metricValues(c.Members, metricErrors), analyze.DefaultConfidence)
	}
	return e, nil
}

// baselineFirst puts the axis's baseline first in its order, so that every chart and
// table drawn by category (cells, boxes, bars, panels, series, comparisons) shows the
// reference first, where a reader looks for it. A numeric axis is otherwise in
// ascending order; its charts with the values on the x axis place each at its value,
// and its sweep lines are in ascending order (lines).
func (a *axis) baselineFirst() {
	i := slices.Index(a.Values, a.Baseline)
	if i <= 0 {
		return
	}
	a.Values = append([]string{a.Baseline}, slices.Delete(slices.Clone(a.Values), i, i+1)...)
	if i < len(a.Nums) {
		n := a.Nums[i]
		a.Nums = append([]float64{n}, slices.Delete(slices.Clone(a.Nums), i, i+1)...)
	}
}

func (e *experiment) less(a, b []string) bool {
	for i := range e.Axes {
		if a[i] != b[i] {
			return e.Axes[i].pos(a[i]) < e.Axes[i].pos(b[i])
		}
	}
	return false
}

func (e *experiment) axisIndex(name string) int {
	for i, a := range e.Axes {
		if a.Name == name {
			return i
		}
	}
	return -1
}

// sweepAxis is the axis a scaling curve is drawn against: clients, else rate, else
// the first numeric axis; -1 when there is none.
func (e *experiment) sweepAxis() int {
	for _, n := range []string{"clients", "rate"} {
		if i := e.axisIndex(n); i >= 0 && e.Axes[i].Numeric {
			return i
		}
	}
	for i, a := range e.Axes {
		if a.Numeric {
			return i
		}
	}
	return -1
}

// lines groups cells by the values of every axis except skip: one line of a sweep.
func (e *experiment) lines(skip int) (names []string, cells [][]*cell) {
	idx := map[string]int{}
	for _, c := range e.Cells {
		var parts []string
		for i, a := range e.Axes {
			if i != skip {
				parts = append(parts, a.Name+"="+c.Values[i])
			}
		}
		k := strings.Join(parts, " ")
		j, ok := idx[k]
		if !ok {
			j = len(names)
			idx[k] = j
			names = append(names, k)
			cells = append(cells, nil)
		}
		cells[j] = append(cells[j], c)
	}
	if skip >= 0 && skip < len(e.Axes) && e.Axes[skip].Numeric { // along a numeric axis, by value (the baseline may be first in e.Cells)
		ax := &e.Axes[skip]
		for _, line := range cells {
			sort.SliceStable(line, func(i, j int) bool { return ax.Num(line[i].Values[skip]) < ax.Num(line[j].Values[skip]) })
		}
	}
	return names, cells
}

// Metrics compared and tabulated, per run.
const (
	metricTPS    = "tps"
	metricP50    = "p50"
	metricP95    = "p95"
	metricP99    = "p99"
	metricErrors = "errors"
)

// Open-loop metrics, compared when either side ran at a rate.
const (
	metricLate    = "late"    // % of scheduled transactions that started late
	metricDropped = "dropped" // % of scheduled transactions that never started
	metricSvcP50  = "service_p50"
	metricSvcP99  = "service_p99"
)

// displayMetrics in display order.
var displayMetrics = []string{metricTPS, metricP50, metricP95, metricP99, metricErrors}

// openLoopMetrics follow Metrics for runs at a rate.
var openLoopMetrics = []string{metricLate, metricDropped, metricSvcP50, metricSvcP99}

var metricTitles = map[string]string{
	metricTPS: "throughput", metricP50: "latency p50", metricP95: "latency p95", metricP99: "latency p99", metricErrors: "errors",
	metricLate: "late starts", metricDropped: "dropped", metricSvcP50: "service time p50", metricSvcP99: "service time p99",
}

func metricKind(m string) int {
	switch m {
	case metricTPS:
		return kindCount
	case metricErrors, metricLate, metricDropped:
		return kindPercent
	}
	return kindMillis
}

// metricOf is one run's value of a metric (latency in ms, errors in % of attempts),
// counting the transactions the run is judged by (see SetJudge); NaN when the run
// measured nothing of them.
func metricOf(d *RunData, m string) float64 {
	s := &d.Summary
	if s.Intervals == 0 {
		return math.NaN()
	}
	ts, errPct, ok := d.judged()
	if !ok {
		return math.NaN()
	}
	switch m {
	case metricTPS:
		return ts.TPS
	case metricErrors:
		return errPct
	case metricLate, metricDropped:
		if d.Run.Rate <= 0 {
			return math.NaN()
		}
		sched := ts.Transactions + ts.Errors + ts.Dropped
		if sched == 0 {
			return math.NaN()
		}
		n := ts.Late
		if m == metricDropped {
			n = ts.Dropped
		}
		return 100 * float64(n) / float64(sched)
	case metricSvcP50, metricSvcP99:
		if ts.Service == nil || ts.Transactions == 0 {
			return math.NaN()
		}
		if m == metricSvcP50 {
			return ts.Service.P50
		}
		return ts.Service.P99
	}
	if ts.Transactions == 0 {
		return math.NaN()
	}
	switch m {
	case metricP50:
		return ts.Latency.P50
	case metricP95:
		return ts.Latency.P95
	case metricP99:
		return ts.Latency.P99
	}
	return math.NaN()
}

// judged is what the run is judged by: its totals over every transaction, or over
// one transaction type or group (SetJudge), with errors in percent of attempts; ok is
// false when the run has no such type or group.
func (d *RunData) judged() (measure.TypeSummary, float64, bool) {
	if d.Judge == "" {
		return d.Summary.TypeSummary, d.ErrorPct, true
	}
	ts, ok := d.Summary.ByTxn[d.Judge]
	if !ok {
		ts, ok = d.Groups[d.Judge]
	}
	if !ok {
		return measure.TypeSummary{}, math.NaN(), false
	}
	pct := 0.0
	if att := ts.Transactions + ts.Errors; att > 0 {
		pct = 100 * float64(ts.Errors) / float64(att)
	}
	return ts, pct, true
}

// SetJudge makes every run's metrics count only one transaction type
// ("writers/insert_a") or client group ("writers"); "" counts every transaction. It
// fails, naming what there is, when no run has that type or group.
func SetJudge(data []*RunData, judge string) error {
	judge = strings.TrimSpace(judge)
	if judge != "" {
		found := false
		var names []string
		for _, d := range data {
			for _, g := range txnGroups(d.Run.TxnTypes) {
				if !slices.Contains(names, g) {
					names = append(names, g)
				}
			}
			for _, t := range d.Run.TxnTypes {
				if !slices.Contains(names, t) {
					names = append(names, t)
				}
			}
			_, a := d.Summary.ByTxn[judge]
			_, b := d.Groups[judge]
			found = found || a || b
		}
		if !found {
			return fmt.Errorf("judge %q: the runs have no such transaction type or group (they have: %s)", judge, strings.Join(names, ", "))
		}
	}
	for _, d := range data {
		d.Judge = judge
	}
	return nil
}

// judgeNote says on the page what the runs' figures count: the judged type or group,
// or, for a workload with client groups judged by all of them, each group's share of
// the transactions and how to choose one.
func judgeNote(data []*RunData) string {
	if len(data) == 0 {
		return ""
	}
	if j := data[0].Judge; j != "" {
		what := "transaction type"
		if _, ok := data[0].Groups[j]; ok {
			what = "client group"
		}
		return fmt.Sprintf("Judged by the %s %s: throughput, latency and errors count only its transactions.", what, j)
	}
	var groups []string
	tot := map[string]int64{}
	var all int64
	for _, d := range data {
		for _, g := range txnGroups(d.Run.TxnTypes) {
			if !slices.Contains(groups, g) {
				groups = append(groups, g)
			}
			tot[g] += d.Groups[g].Transactions
		}
		all += d.Summary.Transactions
	}
	if len(groups) < 2 || all == 0 {
		return ""
	}
	var shares []string
	for _, g := range groups {
		shares = append(shares, fmt.Sprintf("%s %s%%", g, num(100*float64(tot[g])/float64(all))))
	}
	return fmt.Sprintf("Judged by every transaction of every client group together (%s of the transactions); a group or type that does little of the work barely moves these figures. Judge by one with --judge %s (or judge: in the plan).",
		strings.Join(shares, ", "), groups[0])
}

func metricValues(ms []*member, m string) []float64 {
	out := make([]float64, 0, len(ms))
	for _, x := range ms {
		out = append(out, metricOf(x.Data, m))
	}
	return out
}

// SLO is a latency objective such as p99 < 10 ms.
type SLO struct {
	Metric    string  `json:"metric"` // p50 p90 p95 p99 p99.9 max mean
	LimitMs   float64 `json:"limit_ms"`
	Inclusive bool    `json:"inclusive"` // <= rather than <
	Text      string  `json:"text"`
}

var sloRE = regexp.MustCompile(`^\s*(p50|p90|p95|p99|p99\.9|p999|max|mean)\s*(<=|<)\s*([0-9.]+)\s*(ns|us|µs|ms|s)\s*$`)

// ParseSLO parses "p99<10ms", "p95 <= 250us" and the like.
func ParseSLO(s string) (*SLO, error) {
	m := sloRE.FindStringSubmatch(s)
	if m == nil {
		return nil, fmt.Errorf("latency objective %q: write it like p99<10ms (p50|p90|p95|p99|p99.9|max|mean, < or <=, a number with ns|us|ms|s)", s)
	}
	v, err := strconv.ParseFloat(m[3], 64)
	if err != nil || v <= 0 {
		return nil, fmt.Errorf("latency objective %q: the limit must be a positive number", s)
	}
	mult := map[string]float64{"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "ms": 1, "s": 1e3}[m[4]]
	metric := m[1]
	if metric == "p999" {
		metric = "p99.9"
	}
	return &SLO{Metric: metric, LimitMs: v * mult, Inclusive: m[2] == "<=", Text: metric + m[2] + m[3] + m[4]}, nil
}

// value is the SLO's metric of a latency summary.
func (s *SLO) value(l measure.Latency) float64 {
	switch s.Metric {
	case "p50":
		return l.P50
	case "p90":
		return l.P90
	case "p95":
		return l.P95
	case "p99":
		return l.P99
	case "p99.9":
		return l.P999
	case "max":
		return l.Max
	}
	return l.Mean
}

// met reports whether a latency in ms meets the objective.
func (s *SLO) met(v float64) bool {
	if math.IsNaN(v) {
		return false
	}
	if s.Inclusive {
		return v <= s.LimitMs
	}
	return v < s.LimitMs
}

// knee is the highest throughput that met the SLO along one line of a sweep.
type knee struct {
	Line      string  // the other axes' values, "" when there are none
	Axis      string  // the swept axis
	Value     string  // the best cell's value on it; "" when no cell met the SLO
	TPS       float64 // its median TPS
	LatencyMs float64 // its median of the SLO's metric
	Breach    string  // the first swept value beyond Value that failed the SLO, if any
	BreachMs  float64
}

func (e *experiment) cellSLOValue(c *cell) float64 {
	var xs []float64
	for _, m := range c.Members {
		if m.Data.Summary.Transactions > 0 {
			xs = append(xs, e.SLO.value(m.Data.Summary.Latency))
		}
	}
	return analyze.Median(xs)
}

// applySLO marks which cells meet slo and finds the knee of each sweep line.
func (e *experiment) applySLO(slo *SLO) {
	e.SLO = slo
	e.Knees = nil
	if slo == nil {
		return
	}
	for _, c := range e.Cells {
		ok := slo.met(e.cellSLOValue(c))
		c.MeetsSLO = &ok
	}
	sweep := e.sweepAxis()
	if sweep < 0 {
		return
	}
	names, lines := e.lines(sweep)
	for i, cells := range lines {
		k := knee{Line: names[i], Axis: e.Axes[sweep].Name}
		best := -1
		for j, c := range cells {
			if *c.MeetsSLO && (best < 0 || c.TPS.Median > cells[best].TPS.Median) {
				best = j
			}
		}
		if best >= 0 {
			k.Value, k.TPS, k.LatencyMs = cells[best].Values[sweep], cells[best].TPS.Median, e.cellSLOValue(cells[best])
			for _, c := range cells[best+1:] {
				if !*c.MeetsSLO {
					k.Breach, k.BreachMs = c.Values[sweep], e.cellSLOValue(c)
					break
				}
			}
		}
		e.Knees = append(e.Knees, k)
	}
}

// compareAxis compares each value of axis with the axis's baseline (side A) within
// each combination of the other axes. With more than two values, the p-values of the
// comparisons against the baseline are adjusted (Holm–Bonferroni, per metric and
// combination) and a Kruskal–Wallis test over all the values says whether they
// differ at all; both are said on the page.
func (e *experiment) compareAxis(axis string) error {
	ai := e.axisIndex(axis)
	if ai < 0 {
		var names []string
		for _, a := range e.Axes {
			names = append(names, a.Name)
		}
		return fmt.Errorf("--compare-by %s: the experiment has no such axis (axes: %s)", axis, strings.Join(names, ", "))
	}
	if n := len(e.Axes[ai].Values); n < 2 {
		return fmt.Errorf("--compare-by %s: the axis has %d value (%s); a comparison needs two or more", axis, n, strings.Join(e.Axes[ai].Values, ", "))
	}
	e.CompareBy = axis
	e.Comparisons = nil
	ax := &e.Axes[ai]
	base := ax.Baseline
	var others []string
	for _, v := range ax.Values {
		if v != base {
			others = append(others, v)
		}
	}
	names, lines := e.lines(ai)
	for i, cells := range lines {
		byValue := map[string][]*RunData{}
		for _, c := range cells {
			for _, m := range c.Members {
				byValue[c.Values[ai]] = append(byValue[c.Values[ai]], m.Data)
			}
		}
		a := byValue[base]
		if len(a) == 0 {
			continue
		}
		var cmps []*comparison
		for _, v := range others {
			b := byValue[v]
			if len(b) == 0 {
				continue
			}
			title := names[i]
			if len(others) > 1 {
				title = strings.TrimSpace(fmt.Sprintf("%s %s=%s against %s=%s", names[i], axis, v, axis, base))
			}
			cmps = append(cmps, Compare(title, Side{Name: axis + "=" + base, Runs: a}, Side{Name: axis + "=" + v, Runs: b}))
		}
		if len(cmps) > 1 {
			adjustAgainstBaseline(cmps)
			overall := overallTest(axis, ax.Values, byValue)
			for _, c := range cmps {
				c.Notes = append(c.Notes, overall...)
			}
		}
		e.Comparisons = append(e.Comparisons, cmps...)
	}
	return nil
}

// adjustAgainstBaseline applies Holm–Bonferroni to the p-values of comparisons that
// share a baseline, metric by metric, and warns where the repetitions are too few for
// any adjusted difference to be significant.
func adjustAgainstBaseline(cmps []*comparison) {
	m := len(cmps)
	for k := range cmps[0].Metrics {
		ps := make([]float64, m)
		for i, c := range cmps {
			ps[i] = c.Metrics[k].P
		}
		adj := analyze.Holm(ps)
		for i, c := range cmps {
			x := &c.Metrics[k]
			x.P = adj[i]
			x.Significant = !math.IsNaN(x.P) && x.P < x.Alpha
			// The smallest p an exact U test can give with these sizes (no ties),
			// times the comparisons it is adjusted over. The test's own warning (the
			// unadjusted p, and the size that reaches α without a correction) is
			// replaced: after the correction more runs are needed (5 a side for 3
			// comparisons, not 4).
			if na, nb := x.A.N, x.B.N; na > 0 && nb > 0 {
				x.Warnings = slices.DeleteFunc(x.Warnings, func(w string) bool { return strings.HasPrefix(w, "too few repetitions") })
				minP := math.Min(1, float64(m)*2/math.Exp(logBinom(na+nb, na)))
				if minP >= x.Alpha {
					x.Warnings = append(x.Warnings, fmt.Sprintf("too few repetitions to tell after the correction for %d comparisons: with %d and %d values the smallest possible adjusted p-value is %.3g (≥ α %g); need ≥ %d per side",
						m, na, nb, minP, x.Alpha, analyze.MinSamplesPerSide(x.Alpha/float64(m))))
				}
			}
		}
	}
	for _, c := range cmps {
		c.Notes = append(c.Notes, fmt.Sprintf("p-values adjusted for %d comparisons against the same baseline (Holm–Bonferroni); a change is significant when its adjusted p < %g.", m, c.Alpha))
	}
}

func logBinom(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// overallTest is the Kruskal–Wallis test over every value of the axis, on throughput
// and p99 latency, as sentences for the page.
func overallTest(axis string, values []string, byValue map[string][]*RunData) []string {
	var out []string
	for _, metric := range []string{metricTPS, metricP99} {
		var groups [][]float64
		n := 0
		for _, v := range values {
			var xs []float64
			for _, d := range byValue[v] {
				xs = append(xs, metricOf(d, metric))
			}
			if len(xs) > 0 {
				n++
			}
			groups = append(groups, xs)
		}
		t := analyze.KruskalWallis(groups)
		if math.IsNaN(t.P) {
			continue
		}
		verdict := "the values do not differ detectably (~)"
		if t.P < analyze.DefaultAlpha {
			verdict = "at least one value differs"
		}
		s := fmt.Sprintf("Overall, %s across the %d values of %s (Kruskal–Wallis): H = %.3g, df %d, %s: %s.", metricTitles[metric], n, axis, t.H, t.DF, pValue(t.P), verdict)
		if len(t.Warnings) > 0 {
			s += " (" + strings.Join(t.Warnings, "; ") + ")"
		}
		out = append(out, s)
	}
	return out
}

// defaultCompareAxis is the axis compared when none is named: the first non-sweep axis
// with exactly two values; else the first non-sweep axis with more (each value against
// the baseline); else the only axis, even a sweep (a one-setting sweep is compared
// value by value against its baseline, as the page's baseline line says); else "".
func (e *experiment) defaultCompareAxis() string {
	sweep := e.sweepAxis()
	for i, a := range e.Axes {
		if i != sweep && len(a.Values) == 2 {
			return a.Name
		}
	}
	for i, a := range e.Axes {
		if i != sweep && len(a.Values) > 2 {
			return a.Name
		}
	}
	if len(e.Axes) == 1 && len(e.Axes[0].Values) >= 2 {
		return e.Axes[0].Name
	}
	return ""
}

type analyzeSummaryAlias = analyze.Summary

func summarize(xs []float64) analyze.Summary { return analyze.Summarize(xs, analyze.DefaultConfidence) }
