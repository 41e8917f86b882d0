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
)

// An Experiment is a set of runs, each with a value for every axis (clients,
// transactions per client, a setting …) and a repetition number. Runs with the same
// axis values form a cell. Today experiments are formed from runs grouped by their
// labels (GroupRuns); when the store keeps experiments, NewExperiment takes their
// members as they are.
type Experiment struct {
	Name    string
	Axes    []Axis
	Members []*Member // in the order they ran
	Cells   []*Cell   // in axis-value order
	SLO     *SLO
	Knees   []Knee
	// Comparisons compare the two values of CompareBy within each combination of the
	// other axes.
	CompareBy   string
	Comparisons []*Comparison
}

// Axis is one dimension of an experiment.
type Axis struct {
	Name    string
	Values  []string // sorted: numerically when all are numbers
	Numeric bool
}

// Member is one run of an experiment.
type Member struct {
	Data   *RunData
	Values []string // one per axis
	Rep    int      // repetition number, from 1
	Seq    int      // position in the order the runs ran, from 1
}

// Cell is the runs of one combination of axis values, with statistics over them.
type Cell struct {
	Values  []string
	Members []*Member // by repetition
	TPS     analyze.Summary
	P50     analyze.Summary // milliseconds
	P95     analyze.Summary
	P99     analyze.Summary
	Errors  analyze.Summary // percent of attempts
	// MeetsSLO is set when the experiment has an SLO: the cell's median meets it.
	MeetsSLO *bool
}

// Name is "clients=16 tpc=100", or "all runs" for an experiment without axes.
func (c *Cell) Name(axes []Axis) string {
	if len(axes) == 0 {
		return "all runs"
	}
	var parts []string
	for i, a := range axes {
		parts = append(parts, a.Name+"="+c.Values[i])
	}
	return strings.Join(parts, " ")
}

// MemberSpec is how a caller describes a run's place in an experiment.
type MemberSpec struct {
	Data   *RunData
	Values map[string]string
	Rep    int // 0: numbered in run order within the cell
}

// repLabels name a repetition rather than an axis.
var repLabels = []string{"rep", "repetition", "repeat", "iteration"}

// GroupRuns forms an experiment from runs by their labels. axes names the axes in
// order; empty means every label whose value differs between the runs, and clients,
// rate and workload when they differ (sweep axes first). A label named rep (or
// repetition) numbers the repetitions; otherwise runs of a cell are numbered in the
// order they ran.
func GroupRuns(name string, data []*RunData, axes []string) (*Experiment, error) {
	if len(axes) == 0 {
		axes = varyingAxes(data)
	}
	var specs []MemberSpec
	for _, d := range data {
		m := MemberSpec{Data: d, Values: map[string]string{}}
		for _, a := range axes {
			v, ok := axisValue(d, a)
			if !ok {
				return nil, fmt.Errorf("run %d has no label %q (its labels: %s): label every run or choose other --axis values", d.Run.ID, a, labelList(d))
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
	return NewExperiment(name, axes, specs)
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

// NewExperiment builds an experiment's cells and statistics from its members.
func NewExperiment(name string, axes []string, specs []MemberSpec) (*Experiment, error) {
	e := &Experiment{Name: name}
	for _, a := range axes {
		ax := Axis{Name: a, Numeric: true}
		seen := map[string]bool{}
		for _, s := range specs {
			v := s.Values[a]
			if !seen[v] {
				seen[v] = true
				ax.Values = append(ax.Values, v)
				if _, err := strconv.ParseFloat(v, 64); err != nil {
					ax.Numeric = false
				}
			}
		}
		sortValues(ax.Values, ax.Numeric)
		e.Axes = append(e.Axes, ax)
	}
	// Members in the order they ran.
	order := slices.Clone(specs)
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i].Data.Run, order[j].Data.Run
		if !a.StartedAt.Equal(b.StartedAt) {
			return a.StartedAt.Before(b.StartedAt)
		}
		return a.ID < b.ID
	})
	cells := map[string]*Cell{}
	for i, s := range order {
		m := &Member{Data: s.Data, Rep: s.Rep, Seq: i + 1}
		for _, a := range axes {
			m.Values = append(m.Values, s.Values[a])
		}
		key := strings.Join(m.Values, "\x00")
		c := cells[key]
		if c == nil {
			c = &Cell{Values: m.Values}
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
		c.TPS = analyze.Summarize(metricValues(c.Members, MetricTPS), analyze.DefaultConfidence)
		c.P50 = analyze.Summarize(metricValues(c.Members, MetricP50), analyze.DefaultConfidence)
		c.P95 = analyze.Summarize(metricValues(c.Members, MetricP95), analyze.DefaultConfidence)
		c.P99 = analyze.Summarize(metricValues(c.Members, MetricP99), analyze.DefaultConfidence)
		c.Errors = analyze.Summarize(metricValues(c.Members, MetricErrors), analyze.DefaultConfidence)
	}
	return e, nil
}

func sortValues(vs []string, numeric bool) {
	sort.SliceStable(vs, func(i, j int) bool { return lessValue(vs[i], vs[j], numeric) })
}

func lessValue(a, b string, numeric bool) bool {
	if numeric {
		x, _ := strconv.ParseFloat(a, 64)
		y, _ := strconv.ParseFloat(b, 64)
		return x < y
	}
	return a < b
}

func (e *Experiment) less(a, b []string) bool {
	for i, ax := range e.Axes {
		if a[i] != b[i] {
			return lessValue(a[i], b[i], ax.Numeric)
		}
	}
	return false
}

func (e *Experiment) axisIndex(name string) int {
	for i, a := range e.Axes {
		if a.Name == name {
			return i
		}
	}
	return -1
}

// SweepAxis is the axis a scaling curve is drawn against: clients, else rate, else
// the first numeric axis; -1 when there is none.
func (e *Experiment) SweepAxis() int {
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
func (e *Experiment) lines(skip int) (names []string, cells [][]*Cell) {
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
	return names, cells
}

// Metrics compared and tabulated, per run.
const (
	MetricTPS    = "tps"
	MetricP50    = "p50"
	MetricP95    = "p95"
	MetricP99    = "p99"
	MetricErrors = "errors"
)

// Metrics in display order.
var Metrics = []string{MetricTPS, MetricP50, MetricP95, MetricP99, MetricErrors}

var metricTitles = map[string]string{
	MetricTPS: "throughput", MetricP50: "latency p50", MetricP95: "latency p95", MetricP99: "latency p99", MetricErrors: "errors",
}

func metricKind(m string) int {
	switch m {
	case MetricTPS:
		return KindCount
	case MetricErrors:
		return KindPercent
	}
	return KindMillis
}

// MetricOf is one run's value of a metric (latency in ms, errors in % of attempts);
// NaN when the run measured nothing.
func MetricOf(d *RunData, m string) float64 {
	s := &d.Summary
	if s.Intervals == 0 {
		return math.NaN()
	}
	switch m {
	case MetricTPS:
		return s.TPS
	case MetricErrors:
		return d.ErrorPct
	}
	if s.Transactions == 0 {
		return math.NaN()
	}
	switch m {
	case MetricP50:
		return s.Latency.P50
	case MetricP95:
		return s.Latency.P95
	case MetricP99:
		return s.Latency.P99
	}
	return math.NaN()
}

func metricValues(ms []*Member, m string) []float64 {
	out := make([]float64, 0, len(ms))
	for _, x := range ms {
		out = append(out, MetricOf(x.Data, m))
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

// Value is the SLO's metric of a latency summary.
func (s *SLO) Value(l measure.Latency) float64 {
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

// Met reports whether a latency in ms meets the objective.
func (s *SLO) Met(v float64) bool {
	if math.IsNaN(v) {
		return false
	}
	if s.Inclusive {
		return v <= s.LimitMs
	}
	return v < s.LimitMs
}

// Knee is the highest throughput that met the SLO along one line of a sweep.
type Knee struct {
	Line      string  // the other axes' values, "" when there are none
	Axis      string  // the swept axis
	Value     string  // the best cell's value on it; "" when no cell met the SLO
	TPS       float64 // its median TPS
	LatencyMs float64 // its median of the SLO's metric
	Breach    string  // the first swept value beyond Value that failed the SLO, if any
	BreachMs  float64
}

func (e *Experiment) cellSLOValue(c *Cell) float64 {
	var xs []float64
	for _, m := range c.Members {
		if m.Data.Summary.Transactions > 0 {
			xs = append(xs, e.SLO.Value(m.Data.Summary.Latency))
		}
	}
	return analyze.Median(xs)
}

// ApplySLO marks which cells meet slo and finds the knee of each sweep line.
func (e *Experiment) ApplySLO(slo *SLO) {
	e.SLO = slo
	e.Knees = nil
	if slo == nil {
		return
	}
	for _, c := range e.Cells {
		ok := slo.Met(e.cellSLOValue(c))
		c.MeetsSLO = &ok
	}
	sweep := e.SweepAxis()
	if sweep < 0 {
		return
	}
	names, lines := e.lines(sweep)
	for i, cells := range lines {
		k := Knee{Line: names[i], Axis: e.Axes[sweep].Name}
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

// CompareAxis compares the two values of axis within each combination of the
// others (the first value is the baseline A). It fails unless the axis has exactly
// two values.
func (e *Experiment) CompareAxis(axis string) error {
	ai := e.axisIndex(axis)
	if ai < 0 {
		var names []string
		for _, a := range e.Axes {
			names = append(names, a.Name)
		}
		return fmt.Errorf("--compare-by %s: the experiment has no such axis (axes: %s)", axis, strings.Join(names, ", "))
	}
	if n := len(e.Axes[ai].Values); n != 2 {
		return fmt.Errorf("--compare-by %s: the axis has %d values (%s); a comparison needs exactly two", axis, n, strings.Join(e.Axes[ai].Values, ", "))
	}
	e.CompareBy = axis
	e.Comparisons = nil
	names, lines := e.lines(ai)
	for i, cells := range lines {
		var a, b []*RunData
		for _, c := range cells {
			for _, m := range c.Members {
				if c.Values[ai] == e.Axes[ai].Values[0] {
					a = append(a, m.Data)
				} else {
					b = append(b, m.Data)
				}
			}
		}
		if len(a) == 0 || len(b) == 0 {
			continue
		}
		title := names[i]
		cmp := Compare(title,
			Side{Name: axis + "=" + e.Axes[ai].Values[0], Runs: a},
			Side{Name: axis + "=" + e.Axes[ai].Values[1], Runs: b})
		e.Comparisons = append(e.Comparisons, cmp)
	}
	return nil
}

// DefaultCompareAxis is the first non-sweep axis with exactly two values, or "".
func (e *Experiment) DefaultCompareAxis() string {
	sweep := e.SweepAxis()
	for i, a := range e.Axes {
		if i != sweep && len(a.Values) == 2 {
			return a.Name
		}
	}
	return ""
}

type analyzeSummaryAlias = analyze.Summary

func summarize(xs []float64) analyze.Summary { return analyze.Summarize(xs, analyze.DefaultConfidence) }
