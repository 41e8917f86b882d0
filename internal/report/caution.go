package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// Cautions are what a reader must know before reading any difference between the
// experiment's cells, as sentences for every page that shows them: what else differs
// between the runs than the axes (as fathom compare lists it), and repetitions too few
// for any difference between two cells to be significant.
func (e *experiment) Cautions() []string {
	var out []string
	if vs := e.otherDifferences(); len(vs) > 0 {
		var parts []string
		for _, v := range vs {
			parts = append(parts, fmt.Sprintf("%s (%s)", v.Key, strings.Join(v.Values, ", ")))
		}
		what := "the axes"
		if len(e.Axes) == 1 {
			what = "the axis " + e.Axes[0].Name
		}
		out = append(out, fmt.Sprintf("The runs differ in more than %s: %s. A difference between cells may come from these as much as from %s.",
			what, strings.Join(parts, "; "), what))
	}
	if s := e.fewRepetitions(); s != "" {
		out = append(out, s)
	}
	return out
}

// variation is one field of the runs' provenance with the values it takes.
type variation struct {
	Key    string   `json:"key"`
	Values []string `json:"values"`
}

// planKeys are the provenance fields a plan sets on purpose (its axes and base):
// in an experiment run by a plan they differ only where an axis says so.
var planKeys = []string{"workload", "clients", "mode", "length", "query mode", "max tries", "latency limit (-L)", "warm-up", "interval"}

// otherDifferences lists the provenance fields (those fathom compare shows) whose
// values differ between the experiment's runs, besides the axes themselves. For runs
// grouped by labels every field counts; for a plan's runs, only what the plan does
// not set (server version, host, tool version, target).
func (e *experiment) otherDifferences() []variation {
	seen := map[string]map[string]bool{}
	for _, m := range e.Members {
		for k, v := range provenance(m.Data) {
			if seen[k] == nil {
				seen[k] = map[string]bool{}
			}
			seen[k][v] = true
		}
	}
	var out []variation
	for k, vs := range seen {
		if len(vs) < 2 || e.axisKey(k) {
			continue
		}
		if !e.ByLabels && (slices.Contains(planKeys, k) || strings.HasPrefix(k, "option.") || strings.HasPrefix(k, "setting.") || strings.HasPrefix(k, "label.")) {
			continue
		}
		// A plan's axis of targets sets the server: its kind and version follow the axis.
		if !e.ByLabels && (k == "target" || k == "server version") && e.determined(k) {
			continue
		}
		var values []string
		for v := range vs {
			values = append(values, v)
		}
		sort.Strings(values)
		out = append(out, variation{Key: k, Values: values})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// determined tells whether some axis fixes a provenance field: every run with the
// same value of that axis has the same value of the field.
func (e *experiment) determined(key string) bool {
	for i := range e.Axes {
		seen, ok := map[string]string{}, true
		for _, m := range e.Members {
			v := provenance(m.Data)[key]
			if w, had := seen[m.Values[i]]; had && w != v {
				ok = false
				break
			}
			seen[m.Values[i]] = v
		}
		if ok {
			return true
		}
	}
	return false
}

// axisKey tells the provenance fields that are an axis: its label, or clients, rate
// (the mode) and workload when they are axes; repetition labels are no difference.
func (e *experiment) axisKey(k string) bool {
	for _, r := range repLabels {
		if k == "label."+r {
			return true
		}
	}
	for _, a := range e.Axes {
		switch {
		case k == "label."+a.Name, k == a.Name, k == "option."+a.Name, k == "setting."+a.Name:
			return true
		case a.Name == "rate" && (k == "mode" || k == "latency limit (-L)"):
			return true
		}
	}
	return false
}

// fewRepetitions says when no two cells have runs enough for a difference between
// them to be significant: the smallest p-value a two-sided Mann–Whitney U test can
// give with n and m values is 2/C(n+m, n), which is 0.1 for 3 against 3 and 0.029
// for 4 against 4 (α is 0.05).
func (e *experiment) fewRepetitions() string {
	if len(e.Cells) < 2 {
		return ""
	}
	var ns []int
	for _, c := range e.Cells {
		ns = append(ns, len(c.Members))
	}
	sort.Sort(sort.Reverse(sort.IntSlice(ns)))
	na, nb := ns[0], ns[1] // the two largest cells: if they cannot differ significantly, no pair can
	minP := math.Min(1, 2/math.Exp(logBinom(na+nb, na)))
	const alpha = 0.05
	if minP < alpha {
		return ""
	}
	lo := slices.Min(ns)
	reps := fmt.Sprintf("%d repetitions a cell", lo)
	if lo != ns[0] {
		reps = fmt.Sprintf("%d to %d repetitions a cell", lo, ns[0])
	} else if lo == 1 {
		reps = "one run a cell"
	}
	return fmt.Sprintf("With %s no difference between two cells can be significant (with %d and %d runs the smallest possible p-value is %.2g, not below α %g): differences between the cells here may be noise. Four repetitions a cell are the fewest that can tell two cells apart, more when one baseline is compared with several values.",
		reps, na, nb, minP, alpha)
}
