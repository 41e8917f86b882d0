package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/fathom-lab/fathom/internal/analyze"
)

// Side is one side of a comparison: a run, a set of runs or an experiment cell.
type Side struct {
	Name string // what the user asked for, e.g. "label:variant=on" or "run 12"
	Runs []*RunData
}

// runIDs lists the side's runs.
func (s *Side) runIDs() []int64 {
	ids := make([]int64, 0, len(s.Runs))
	for _, r := range s.Runs {
		ids = append(ids, r.Run.ID)
	}
	return ids
}

// difference is a provenance field whose values differ between the sides.
type difference struct {
	Key string   `json:"key"`
	A   []string `json:"a"` // distinct values on side A, sorted
	B   []string `json:"b"`
}

// comparison compares per-run metrics of two sides, benchstat style.
type comparison struct {
	Title       string
	A, B        Side
	Differences []difference
	Metrics     []analyze.Comparison
	Alpha       float64
	Confidence  float64
	// JudgeNote says which transactions the metrics count (see JudgeNote); "" when
	// the runs have one kind of transaction.
	JudgeNote string
	// Notes are said on the page with the comparison: the multiple-comparison
	// correction and the overall test when it is one of several against a baseline.
	Notes []string
}

// Compare compares a (the baseline) with b.
func Compare(title string, a, b Side) *comparison {
	c := &comparison{Title: title, A: a, B: b, Alpha: analyze.DefaultAlpha, Confidence: analyze.DefaultConfidence}
	c.Differences = differences(a.Runs, b.Runs)
	c.JudgeNote = judgeNote(append(slices.Clone(a.Runs), b.Runs...))
	metrics := displayMetrics
	for _, r := range append(slices.Clone(a.Runs), b.Runs...) {
		if r.Run.Rate > 0 {
			metrics = append(slices.Clone(displayMetrics), openLoopMetrics...)
			break
		}
	}
	for _, m := range metrics {
		var xa, xb []float64
		for _, r := range a.Runs {
			xa = append(xa, metricOf(r, m))
		}
		for _, r := range b.Runs {
			xb = append(xb, metricOf(r, m))
		}
		c.Metrics = append(c.Metrics, analyze.Compare(m, xa, xb, c.Alpha, c.Confidence))
	}
	return c
}

// provenance flattens what a run was: the fields a comparison must show when they
// differ. Passwords never reach here: the store keeps targets redacted.
func provenance(d *RunData) map[string]string {
	r := d.Run
	p := map[string]string{
		"tool version":    r.ToolVersion,
		"workload":        r.Workload,
		"target":          r.TargetKind,
		"server version":  r.ServerVersion,
		"host":            r.Host.Hostname,
		"host.cpu":        fmt.Sprintf("%d × %s", r.Host.CPUs, r.Host.CPUModel),
		"host.memory":     memoryText(r.Host.MemoryBytes),
		"host.sockets":    r.Host.Sockets,
		"host.transport":  r.Host.Transport,
		"host.os_metrics": r.Host.OSMetrics,
		"host.kernel":     r.Host.Kernel,
		"host.os":         r.Host.OS,
		"clients":         strconv.Itoa(r.Clients),
		"mode":            "closed loop",
		"warm-up":         r.Warmup.String(),
		"interval":        r.Interval.String(),
	}
	if r.Rate > 0 {
		p["mode"] = fmt.Sprintf("open loop at %g tx/s", r.Rate)
		p["latency limit (-L)"] = "none"
		if r.LatencyLimit > 0 {
			p["latency limit (-L)"] = r.LatencyLimit.String()
		}
	}
	if r.QueryMode != "" {
		p["query mode"] = r.QueryMode
	}
	if r.MaxTries > 0 {
		p["max tries"] = strconv.Itoa(r.MaxTries)
	}
	if r.Transactions > 0 {
		p["length"] = fmt.Sprintf("%d tx/client", r.Transactions)
	} else {
		p["length"] = r.Duration.String()
	}
	for k, v := range r.Options {
		p["option."+k] = v
	}
	for k, v := range r.Settings {
		p["setting."+k] = v
	}
	for k, v := range r.Labels {
		p["label."+k] = v
	}
	return p
}

// foldOtherKinds folds the settings only one side has into one line when the sides
// run on servers of different kinds (a plan's axis of targets or instances: PostgreSQL
// against MariaDB): each has its own, and listing every one against "(none)" buried
// the differences that mean something.
func foldOtherKinds(ds []difference) []difference {
	kinds := slices.IndexFunc(ds, func(d difference) bool { return d.Key == "target" })
	if kinds < 0 || slices.Contains(ds[kinds].A, "(none)") || slices.Contains(ds[kinds].B, "(none)") {
		return ds
	}
	none := func(v []string) bool { return len(v) == 1 && v[0] == "(none)" }
	var out []difference
	na, nb := 0, 0
	for _, d := range ds {
		switch {
		case strings.HasPrefix(d.Key, "setting.") && none(d.B):
			na++
		case strings.HasPrefix(d.Key, "setting.") && none(d.A):
			nb++
		default:
			out = append(out, d)
		}
	}
	if na+nb == 0 {
		return ds
	}
	count := func(n int, kinds []string) string {
		return fmt.Sprintf("%d of %s's own", n, strings.Join(kinds, "/"))
	}
	return append(out, difference{Key: "settings of one server kind", A: []string{count(na, ds[kinds].A)}, B: []string{count(nb, ds[kinds].B)}})
}

// differences lists the provenance fields whose values differ between a and b.
// Within a side, several values are listed together.
func differences(a, b []*RunData) []difference {
	collect := func(runs []*RunData) map[string]map[string]bool {
		m := map[string]map[string]bool{}
		for _, r := range runs {
			for k, v := range provenance(r) {
				if m[k] == nil {
					m[k] = map[string]bool{}
				}
				m[k][v] = true
			}
		}
		// A key missing from some runs counts as an empty value there.
		for k, vs := range m {
			n := 0
			for _, r := range runs {
				if _, ok := provenance(r)[k]; ok {
					n++
				}
			}
			if n < len(runs) {
				vs["(none)"] = true
			}
		}
		return m
	}
	ma, mb := collect(a), collect(b)
	keys := map[string]bool{}
	for k := range ma {
		keys[k] = true
	}
	for k := range mb {
		keys[k] = true
	}
	var out []difference
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		va, vb := setList(ma[k]), setList(mb[k])
		if len(va) == 0 {
			va = []string{"(none)"}
		}
		if len(vb) == 0 {
			vb = []string{"(none)"}
		}
		if strings.Join(va, "\x00") != strings.Join(vb, "\x00") {
			out = append(out, difference{Key: k, A: va, B: vb})
		}
	}
	out = foldOtherKinds(out)
	// Labels and settings first: they are usually the point of the comparison.
	rank := func(k string) int {
		switch {
		case strings.HasPrefix(k, "label."):
			return 0
		case strings.HasPrefix(k, "setting."):
			return 1
		case strings.HasPrefix(k, "option."), k == "workload", k == "clients", k == "mode", k == "length", k == "query mode", k == "max tries", k == "latency limit (-L)":
			return 2
		}
		return 3
	}
	sort.SliceStable(out, func(i, j int) bool { return rank(out[i].Key) < rank(out[j].Key) })
	return out
}

func setList(m map[string]bool) []string {
	var s []string
	for k := range m {
		s = append(s, k)
	}
	sort.Strings(s)
	return s
}

func sideValues(vs []string) string {
	if len(vs) == 1 {
		return vs[0]
	}
	return "mixed: " + strings.Join(vs, ", ")
}

func idList(ids []int64) string {
	var s []string
	for _, id := range ids {
		s = append(s, strconv.FormatInt(id, 10))
	}
	if len(s) == 1 {
		return "run " + s[0]
	}
	return "runs " + strings.Join(s, ", ")
}

// metricCells formats one metric row's medians and intervals in the unit every
// metric of its kind shares in this comparison: the latency rows (p50, p95, p99 and
// service times) all in ms, say, so that a column never mixes µs and ms.
func (c *comparison) metricCells(m analyze.Comparison) (unit scaleUnit, a, b string) {
	kind := metricKind(m.Metric)
	var vals []float64
	for _, o := range c.Metrics {
		if metricKind(o.Metric) == kind {
			vals = append(vals, o.A.Median, o.B.Median, o.A.Hi, o.B.Hi)
		}
	}
	unit = unitFor(kind, vals...)
	f := func(s analyze.Summary) string {
		if s.N == 0 {
			return "–"
		}
		v := unit.Format(s.Median)
		if kind == kindCount && unit.Suffix == "" {
			v += " tx/s"
		}
		if s.HasCI {
			v += " [" + unit.Number(s.Lo) + ", " + unit.Number(s.Hi) + "]"
		}
		return v
	}
	return unit, f(m.A), f(m.B)
}

// changeCell is the change of the median, whatever the sample sizes: the judgement
// beside it says whether it can be told from noise.
func changeCell(m analyze.Comparison) string {
	if m.A.N == 0 || m.B.N == 0 {
		return "–"
	}
	return signedPct(m.DeltaPct)
}

// judgement says what the U test makes of a change: "significant", "~" (not told
// apart from noise), or "cannot tell with n=1+1" when the sample sizes cannot reach
// significance whatever the values.
func judgement(m analyze.Comparison) string {
	switch {
	case m.A.N == 0 || m.B.N == 0:
		return "no values on one side"
	case m.Significant:
		return "significant"
	case minUTestP(m.A.N, m.B.N) >= m.Alpha:
		return fmt.Sprintf("cannot tell with n=%d+%d", m.A.N, m.B.N)
	}
	return "~"
}

// minUTestP is the smallest two-sided p-value a Mann–Whitney U test can give with n
// and m values: 2 / C(n+m, n).
func minUTestP(n, m int) float64 {
	lg := func(k int) float64 { v, _ := math.Lgamma(float64(k) + 1); return v }
	return math.Min(1, 2/math.Exp(lg(n+m)-lg(n)-lg(m)))
}

func nCell(m analyze.Comparison) string { return fmt.Sprintf("%d+%d", m.A.N, m.B.N) }

func (c *comparison) legend() string {
	return fmt.Sprintf("medians with %s confidence intervals (order statistics); change of the median from A to B; p from a two-sided Mann–Whitney U test; ~ where p ≥ %g (not told apart from noise); \"cannot tell\" where the sample sizes cannot reach it",
		strings.TrimSuffix(strconv.FormatFloat(c.Confidence*100, 'f', 1, 64), ".0")+"%", c.Alpha)
}

func (c *comparison) warnings() []string {
	var order []string
	by := map[string][]string{}
	for _, m := range c.Metrics {
		seen := map[string]bool{}
		for _, w := range append(append(slicesClone(m.Warnings), m.A.Warnings...), m.B.Warnings...) {
			if !seen[w] {
				seen[w] = true
				if by[w] == nil {
					order = append(order, w)
				}
				by[w] = append(by[w], metricTitles[m.Metric])
			}
		}
	}
	var out []string
	for _, w := range order {
		who := strings.Join(by[w], ", ")
		if len(by[w]) == len(c.Metrics) {
			who = "all metrics"
		}
		out = append(out, who+": "+w)
	}
	return out
}

func sideLabel(s *Side) string {
	ids := idList(s.runIDs())
	if s.Name == "" || s.Name == ids {
		return ids
	}
	return s.Name + " (" + ids + ")"
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }

// WriteText writes the comparison as an aligned text table.
func (c *comparison) WriteText(w io.Writer) error {
	if c.Title != "" {
		fmt.Fprintf(w, "%s\n", c.Title)
	}
	fmt.Fprintf(w, "A: %s\nB: %s\n", sideLabel(&c.A), sideLabel(&c.B))
	if c.JudgeNote != "" {
		fmt.Fprintf(w, "%s\n", c.JudgeNote)
	}
	for _, n := range c.Notes {
		fmt.Fprintf(w, "%s\n", n)
	}
	if len(c.Differences) > 0 {
		fmt.Fprintln(w, "\nA and B differ in:")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, d := range c.Differences {
			fmt.Fprintf(tw, "  %s\t%s\t→ %s\n", d.Key, sideValues(d.A), sideValues(d.B))
		}
		tw.Flush()
	} else {
		fmt.Fprintln(w, "\nA and B do not differ in workload, options, settings, server, host or tool version.")
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "metric\tA\tB\tchange\tjudgement\tp\tn")
	for _, m := range c.Metrics {
		_, a, b := c.metricCells(m)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", metricTitles[m.Metric], a, b, changeCell(m), judgement(m), pValue(m.P), nCell(m))
	}
	tw.Flush()
	fmt.Fprintf(w, "\n%s.\n", c.legend())
	if ws := c.warnings(); len(ws) > 0 {
		fmt.Fprintln(w, "warnings:")
		for _, s := range ws {
			fmt.Fprintf(w, "  %s\n", s)
		}
	}
	return nil
}

func mdEsc(s string) string { return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s) }

// writeMarkdown writes the comparison as Markdown.
func (c *comparison) writeMarkdown(w io.Writer, heading string) error {
	if c.Title != "" {
		fmt.Fprintf(w, "%s %s\n\n", heading, mdEsc(c.Title))
	}
	fmt.Fprintf(w, "- **A**: %s\n- **B**: %s\n\n", mdEsc(sideLabel(&c.A)), mdEsc(sideLabel(&c.B)))
	if c.JudgeNote != "" {
		fmt.Fprintf(w, "%s\n\n", mdEsc(c.JudgeNote))
	}
	for _, n := range c.Notes {
		fmt.Fprintf(w, "%s\n\n", mdEsc(n))
	}
	if len(c.Differences) > 0 {
		fmt.Fprintf(w, "A and B differ in:\n\n| field | A | B |\n|---|---|---|\n")
		for _, d := range c.Differences {
			fmt.Fprintf(w, "| %s | %s | %s |\n", mdEsc(d.Key), mdEsc(sideValues(d.A)), mdEsc(sideValues(d.B)))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "| metric | A | B | change | judgement | p | n |\n|---|---:|---:|---:|---|---:|---:|\n")
	for _, m := range c.Metrics {
		_, a, b := c.metricCells(m)
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", metricTitles[m.Metric], a, b, changeCell(m), judgement(m), pValue(m.P), nCell(m))
	}
	fmt.Fprintf(w, "\n%s.\n", c.legend())
	if ws := c.warnings(); len(ws) > 0 {
		fmt.Fprintln(w)
		for _, s := range ws {
			fmt.Fprintf(w, "> warning: %s\n", mdEsc(s))
		}
	}
	return nil
}

var compareCSVHeader = []string{"comparison", "metric", "unit", "a_n", "a_median", "a_ci_lo", "a_ci_hi", "b_n", "b_median", "b_ci_lo", "b_ci_hi",
	"delta_pct", "p_value", "exact", "significant", "warnings"}

// writeCompareCSV writes comparisons as CSV, one row per metric, in base units
// (tx/s, ms, %).
func writeCompareCSV(w io.Writer, cs []*comparison) error {
	cw := csv.NewWriter(w)
	_ = cw.Write(compareCSVHeader)
	f := func(v float64) string {
		if math.IsNaN(v) {
			return ""
		}
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	units := map[int]string{kindCount: "tx/s", kindMillis: "ms", kindPercent: "%"}
	for _, c := range cs {
		for _, m := range c.Metrics {
			_ = cw.Write([]string{c.Title, m.Metric, units[metricKind(m.Metric)], strconv.Itoa(m.A.N), f(m.A.Median), f(m.A.Lo), f(m.A.Hi),
				strconv.Itoa(m.B.N), f(m.B.Median), f(m.B.Lo), f(m.B.Hi), f(m.DeltaPct), f(m.P), strconv.FormatBool(m.Exact),
				strconv.FormatBool(m.Significant), strings.Join(append(append(slicesClone(m.Warnings), m.A.Warnings...), m.B.Warnings...), "; ")})
		}
	}
	cw.Flush()
	return cw.Error()
}

// jsonFloat is a float that encodes NaN as null.
type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return []byte("null"), nil
	}
	return []byte(strconv.FormatFloat(float64(f), 'f', -1, 64)), nil
}

type jsonSummary struct {
	N        int       `json:"n"`
	Median   jsonFloat `json:"median"`
	CILo     jsonFloat `json:"ci_lo"`
	CIHi     jsonFloat `json:"ci_hi"`
	Coverage jsonFloat `json:"ci_coverage"`
	Min      jsonFloat `json:"min"`
	Max      jsonFloat `json:"max"`
	Values   []float64 `json:"-"`
}

func toJSONSummary(s analyze.Summary) jsonSummary {
	return jsonSummary{N: s.N, Median: jsonFloat(s.Median), CILo: jsonFloat(s.Lo), CIHi: jsonFloat(s.Hi), Coverage: jsonFloat(s.Coverage),
		Min: jsonFloat(s.Min), Max: jsonFloat(s.Max)}
}

type jsonMetric struct {
	Metric      string      `json:"metric"`
	Unit        string      `json:"unit"`
	A           jsonSummary `json:"a"`
	B           jsonSummary `json:"b"`
	DeltaPct    jsonFloat   `json:"delta_pct"`
	P           jsonFloat   `json:"p_value"`
	Exact       bool        `json:"exact"`
	Significant bool        `json:"significant"`
	Judgement   string      `json:"judgement"`
	Warnings    []string    `json:"warnings"`
}

type jsonComparison struct {
	Title       string       `json:"title,omitempty"`
	A           jsonSide     `json:"a"`
	B           jsonSide     `json:"b"`
	Alpha       float64      `json:"alpha"`
	Confidence  float64      `json:"confidence"`
	Differences []difference `json:"differences"`
	Judge       string       `json:"judge,omitempty"`
	Metrics     []jsonMetric `json:"metrics"`
	// Notes and Warnings are what the text says beside the table: how the runs are
	// judged, runs that did not complete, and each warning with the metrics it concerns.
	Notes    []string `json:"notes"`
	Warnings []string `json:"warnings"`
}

// Incomplete says, for each run of either side that did not complete, that its
// finished intervals are what is compared.
func (c *comparison) Incomplete() []string {
	var out []string
	for _, side := range []*Side{&c.A, &c.B} {
		for _, d := range side.Runs {
			if d.Run.Status != "complete" {
				why := d.Run.Status
				if d.Run.Reason != "" {
					why += " (" + d.Run.Reason + ")"
				}
				out = append(out, fmt.Sprintf("run %d: %s; its %d finished intervals are compared", d.Run.ID, why, d.Summary.Intervals))
			}
		}
	}
	return out
}

type jsonSide struct {
	Name string  `json:"name"`
	Runs []int64 `json:"runs"`
}

func (c *comparison) toJSON() jsonComparison {
	units := map[int]string{kindCount: "tx/s", kindMillis: "ms", kindPercent: "%"}
	j := jsonComparison{Title: c.Title, A: jsonSide{c.A.Name, c.A.runIDs()}, B: jsonSide{c.B.Name, c.B.runIDs()},
		Alpha: c.Alpha, Confidence: c.Confidence, Differences: c.Differences}
	if len(c.A.Runs) > 0 {
		j.Judge = c.A.Runs[0].Judge
	}
	if j.Differences == nil {
		j.Differences = []difference{}
	}
	j.Notes = []string{}
	if c.JudgeNote != "" {
		j.Notes = append(j.Notes, c.JudgeNote)
	}
	j.Notes = append(append(j.Notes, c.Notes...), c.Incomplete()...)
	j.Warnings = append([]string{}, c.warnings()...)
	for _, m := range c.Metrics {
		ws := append(append(slicesClone(m.Warnings), m.A.Warnings...), m.B.Warnings...)
		if ws == nil {
			ws = []string{}
		}
		j.Metrics = append(j.Metrics, jsonMetric{Metric: m.Metric, Unit: units[metricKind(m.Metric)], A: toJSONSummary(m.A), B: toJSONSummary(m.B),
			DeltaPct: jsonFloat(m.DeltaPct), P: jsonFloat(m.P), Exact: m.Exact, Significant: m.Significant, Judgement: judgement(m), Warnings: ws})
	}
	return j
}

// WriteJSON writes the comparison as an indented JSON document.
func (c *comparison) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(c.toJSON())
}
