package report

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/fathom-lab/fathom/internal/errkind"
	"github.com/fathom-lab/fathom/internal/store"
)

// Selection is a set of runs chosen on the command line, with their place in an
// experiment when they were chosen as one.
type Selection struct {
	What  string // how the user chose them, for titles
	Runs  []*store.Run
	Exp   *store.Experiment
	Specs map[int64]store.ExperimentRun // run id → its slot, for experiment runs
}

// Select resolves run selectors:
//
//	12, last, 3-7, 3,5,9         runs by id
//	label:k=v[,k2=v2]            runs carrying every label given
//	exp:NAME or exp:ID           the counted runs of an experiment
//	exp:NAME:k=v[,k2=v2]         one cell (or slice) of an experiment
func Select(ctx context.Context, st store.Store, args []string) (*Selection, error) {
	sel := &Selection{Specs: map[int64]store.ExperimentRun{}}
	seen := map[int64]bool{}
	add := func(r *store.Run) {
		if !seen[r.ID] {
			seen[r.ID] = true
			sel.Runs = append(sel.Runs, r)
		}
	}
	var whats []string
	for _, arg := range args {
		whats = append(whats, arg)
		switch {
		case strings.HasPrefix(arg, "label:"):
			labels, err := parseLabelList(strings.TrimPrefix(arg, "label:"))
			if err != nil {
				return nil, err
			}
			runs, err := st.Runs(ctx, store.RunFilter{Labels: labels})
			if err != nil {
				return nil, errkind.WithKind(errkind.Failed, err)
			}
			if len(runs) == 0 {
				return nil, errkind.Usagef("no runs carry %s in %s: see `fathom runs`", arg, st.Path())
			}
			for i := len(runs) - 1; i >= 0; i-- { // oldest first
				add(&runs[i])
			}
		case strings.HasPrefix(arg, "exp:"), strings.HasPrefix(arg, "experiment:"):
			if err := selectExperiment(ctx, st, arg, sel, add); err != nil {
				return nil, err
			}
		default:
			ids, err := parseRunIDs(ctx, st, arg)
			if err != nil {
				return nil, err
			}
			for _, id := range ids {
				r, err := st.Run(ctx, id)
				if err != nil {
					if errors.Is(err, store.ErrNotFound) {
						return nil, errkind.Usagef("%v: see `fathom runs`", err)
					}
					return nil, errkind.WithKind(errkind.Failed, err)
				}
				add(r)
			}
		}
	}
	if len(sel.Runs) == 0 {
		return nil, errkind.Usagef("no runs selected")
	}
	sel.What = strings.Join(whats, " ")
	return sel, nil
}

func parseLabelList(s string) (map[string]string, error) {
	m := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, err := parseKV(kv, "label")
		if err != nil {
			return nil, errkind.Usagef("%v (e.g. label:variant=on,clients=16)", err)
		}
		m[k] = v
	}
	return m, nil
}

// parseRunIDs reads "12", "last", "3-7" or "3,5,9".
func parseRunIDs(ctx context.Context, st store.Store, arg string) ([]int64, error) {
	var ids []int64
	for _, part := range strings.Split(arg, ",") {
		if lo, hi, ok := strings.Cut(part, "-"); ok && lo != "" {
			a, err1 := strconv.ParseInt(lo, 10, 64)
			b, err2 := strconv.ParseInt(hi, 10, 64)
			if err1 != nil || err2 != nil || a < 1 || b < a || b-a > 100000 {
				return nil, errkind.Usagef("%q is not a run range: use e.g. 3-7", part)
			}
			for id := a; id <= b; id++ {
				ids = append(ids, id)
			}
			continue
		}
		id, err := parseRunArg(ctx, st, part)
		if err != nil && (part == "last" || part == "latest") {
			return nil, err
		}
		if err != nil {
			return nil, errkind.Usagef("%q is not a run: use an id from `fathom runs`, last, a range 3-7, label:k=v or exp:NAME", part)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

func selectExperiment(ctx context.Context, st store.Store, arg string, sel *Selection, add func(*store.Run)) error {
	rest := arg[strings.Index(arg, ":")+1:]
	name, filter, _ := strings.Cut(rest, ":")
	var exp *store.Experiment
	var err error
	if id, perr := strconv.ParseInt(name, 10, 64); perr == nil {
		exp, err = st.Experiment(ctx, id)
	} else {
		exp, err = st.ExperimentByName(ctx, name)
	}
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return errkind.Usagef("no experiment %q in %s", name, st.Path())
		}
		return errkind.WithKind(errkind.Failed, err)
	}
	if sel.Exp != nil && sel.Exp.ID != exp.ID {
		return errkind.Usagef("select runs of one experiment at a time (got %s and %s)", sel.Exp.Name, exp.Name)
	}
	sel.Exp = exp
	want := map[string]string{}
	if filter != "" {
		if want, err = parseLabelList(filter); err != nil {
			return err
		}
	}
	eruns, err := st.ExperimentRuns(ctx, exp.ID)
	if err != nil {
		return errkind.WithKind(errkind.Failed, err)
	}
	n := 0
	for _, er := range eruns {
		if !er.Current || er.Instance != 0 {
			continue
		}
		ok := true
		for k, v := range want {
			found := false
			for _, c := range er.Coords {
				if c.Axis == k && c.Value == v {
					found = true
				}
			}
			ok = ok && found
		}
		if !ok {
			continue
		}
		r, err := st.Run(ctx, er.RunID)
		if err != nil {
			return errkind.WithKind(errkind.Failed, err)
		}
		sel.Specs[r.ID] = er
		add(r)
		n++
	}
	if n == 0 {
		return errkind.Usagef("experiment %s has no completed runs matching %q", exp.Name, arg)
	}
	return nil
}

// experimentSpecs turns an experiment selection into report members.
func (s *Selection) experimentSpecs(data []*RunData, baselines map[string]string) (axes []axisSpec, specs []memberSpec, ok bool) {
	if s.Exp == nil || len(s.Specs) != len(s.Runs) {
		return nil, nil, false
	}
	for _, a := range s.Exp.Axes {
		b := a.Baseline
		if v, ok := baselines[a.Name]; ok {
			b = v
		}
		axes = append(axes, axisSpec{Name: a.Name, Values: a.Values, Baseline: b})
	}
	for _, d := range data {
		er := s.Specs[d.Run.ID]
		m := memberSpec{Data: d, Values: map[string]string{}, Rep: er.Repetition}
		for _, c := range er.Coords {
			m.Values[c.Axis] = c.Value
		}
		specs = append(specs, m)
	}
	return axes, specs, true
}

// Build makes the report of a selection: an experiment's when the runs are one.
func Build(sel *Selection, data []*RunData, opts Options) (*Report, error) {
	bl, err := ParseBaselines(opts.Baseline)
	if err != nil {
		return nil, errkind.Usagef("--%v", err)
	}
	if axes, specs, ok := sel.experimentSpecs(data, bl); ok && len(opts.Axes) == 0 && len(data) > 1 {
		if opts.Title == "" {
			opts.Title = "Experiment " + sel.Exp.Name
		}
		e, err := newExperiment(sel.Exp.Name, axes, specs)
		if err != nil {
			return nil, errkind.Usagef("%v", err)
		}
		rep, err := newWithExperiment(e, opts)
		if err != nil {
			return nil, errkind.Usagef("%v", err)
		}
		return rep, nil
	}
	rep, err := New(data, opts)
	if err != nil {
		return nil, errkind.Usagef("%v", err)
	}
	return rep, nil
}

// DefaultDir is where a selection's report goes by default.
func DefaultDir(sel *Selection) string {
	if sel.Exp != nil {
		return "report-" + filepath.Base(sanitizeName(sel.Exp.Name))
	}
	ids := make([]int64, 0, len(sel.Runs))
	for _, r := range sel.Runs {
		ids = append(ids, r.ID)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	if len(ids) == 1 {
		return fmt.Sprintf("report-run-%d", ids[0])
	}
	return fmt.Sprintf("report-runs-%d-%d", ids[0], ids[len(ids)-1])
}

func sanitizeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ' ' || r == ':' {
			return '-'
		}
		return r
	}, s)
}

// parseRunArg reads a run id, or last.
func parseRunArg(ctx context.Context, st store.Store, arg string) (int64, error) {
	if arg == "last" || arg == "latest" {
		id, err := st.LatestRunID(ctx)
		if errors.Is(err, store.ErrNotFound) { // the same kind of outcome as an id not there
			return 0, errkind.Usagef("no runs in %s yet: try `fathom quickstart`, or --store for another store", st.Path())
		}
		if err != nil {
			return 0, errkind.WithKind(errkind.Failed, err)
		}
		return id, nil
	}
	id, err := strconv.ParseInt(strings.TrimPrefix(arg, "#"), 10, 64)
	if err != nil || id < 1 {
		return 0, errkind.Usagef("%q is not a run id: use a number from `fathom runs`, or last", arg)
	}
	return id, nil
}

func parseKV(s, what string) (string, string, error) {
	k, v, ok := strings.Cut(s, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		return "", "", fmt.Errorf("%s %q must look like key=value", what, s)
	}
	return k, v, nil
}
