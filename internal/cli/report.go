package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fathom-lab/fathom/internal/report"
	"github.com/fathom-lab/fathom/internal/store"
)

// selection is a set of runs chosen on the command line, with their place in an
// experiment when they were chosen as one.
type selection struct {
	what  string // how the user chose them, for titles
	runs  []*store.Run
	exp   *store.Experiment
	specs map[int64]store.ExperimentRun // run id → its slot, for experiment runs
}

// selectRuns resolves run selectors:
//
//	12, last, 3-7, 3,5,9         runs by id
//	label:k=v[,k2=v2]            runs carrying every label given
//	exp:NAME or exp:ID           the counted runs of an experiment
//	exp:NAME:k=v[,k2=v2]         one cell (or slice) of an experiment
func selectRuns(ctx context.Context, st *store.Store, args []string) (*selection, error) {
	sel := &selection{specs: map[int64]store.ExperimentRun{}}
	seen := map[int64]bool{}
	add := func(r *store.Run) {
		if !seen[r.ID] {
			seen[r.ID] = true
			sel.runs = append(sel.runs, r)
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
				return nil, withCode(ExitFailure, err)
			}
			if len(runs) == 0 {
				return nil, usagef("no runs carry %s in %s: see `fathom runs`", arg, st.Path())
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
						return nil, usagef("%v: see `fathom runs`", err)
					}
					return nil, withCode(ExitFailure, err)
				}
				add(r)
			}
		}
	}
	if len(sel.runs) == 0 {
		return nil, usagef("no runs selected")
	}
	sel.what = strings.Join(whats, " ")
	return sel, nil
}

func parseLabelList(s string) (map[string]string, error) {
	m := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, err := parseKV(kv, "label")
		if err != nil {
			return nil, usagef("%v (e.g. label:variant=on,clients=16)", err)
		}
		m[k] = v
	}
	return m, nil
}

// parseRunIDs reads "12", "last", "3-7" or "3,5,9".
func parseRunIDs(ctx context.Context, st *store.Store, arg string) ([]int64, error) {
	var ids []int64
	for _, part := range strings.Split(arg, ",") {
		if lo, hi, ok := strings.Cut(part, "-"); ok && lo != "" {
			a, err1 := strconv.ParseInt(lo, 10, 64)
			b, err2 := strconv.ParseInt(hi, 10, 64)
			if err1 != nil || err2 != nil || a < 1 || b < a || b-a > 100000 {
				return nil, usagef("%q is not a run range: use e.g. 3-7", part)
			}
			for id := a; id <= b; id++ {
				ids = append(ids, id)
			}
			continue
		}
		id, err := runID(ctx, st, part)
		if err != nil {
			return nil, usagef("%q is not a run: use an id from `fathom runs`, last, a range 3-7, label:k=v or exp:NAME", part)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

func selectExperiment(ctx context.Context, st *store.Store, arg string, sel *selection, add func(*store.Run)) error {
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
			return usagef("no experiment %q in %s", name, st.Path())
		}
		return withCode(ExitFailure, err)
	}
	if sel.exp != nil && sel.exp.ID != exp.ID {
		return usagef("select runs of one experiment at a time (got %s and %s)", sel.exp.Name, exp.Name)
	}
	sel.exp = exp
	want := map[string]string{}
	if filter != "" {
		if want, err = parseLabelList(filter); err != nil {
			return err
		}
	}
	eruns, err := st.ExperimentRuns(ctx, exp.ID)
	if err != nil {
		return withCode(ExitFailure, err)
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
			return withCode(ExitFailure, err)
		}
		sel.specs[r.ID] = er
		add(r)
		n++
	}
	if n == 0 {
		return usagef("experiment %s has no completed runs matching %q", exp.Name, arg)
	}
	return nil
}

// experimentSpecs turns an experiment selection into report members.
func (s *selection) experimentSpecs(data []*report.RunData) (axes []string, specs []report.MemberSpec, ok bool) {
	if s.exp == nil || len(s.specs) != len(s.runs) {
		return nil, nil, false
	}
	for _, a := range s.exp.Axes {
		axes = append(axes, a.Name)
	}
	for _, d := range data {
		er := s.specs[d.Run.ID]
		m := report.MemberSpec{Data: d, Values: map[string]string{}, Rep: er.Repetition}
		for _, c := range er.Coords {
			m.Values[c.Axis] = c.Value
		}
		specs = append(specs, m)
	}
	return axes, specs, true
}

func newReportCmd(env *Env) *cobra.Command {
	var (
		path, out, slo, compareBy, title string
		labels, axes                     []string
		maxPoints                        int
	)
	cmd := &cobra.Command{
		Use:   "report RUN|EXPERIMENT [more…]",
		Short: "Write an HTML report (charts, tables, provenance), summary.md and CSV files for runs or an experiment",
		Long: `report writes a directory with index.html (one self-contained page: inline SVG charts,
embedded data, no network needed, prints well), summary.md and CSV files of every number
behind the charts, and prints the path of index.html.

Runs are chosen by id (12, last, 3-7, 3,5,9), by labels (label:clients=16,variant=on or
--label clients=16), or as an experiment (exp:NAME). Several runs form an experiment:
axes are the labels that differ between them (or --axis), repetitions are numbered by a
rep label or in the order the runs ran.`,
		Example: `  fathom report last
  fathom report exp:pgbench-sweep --slo 'p99<10ms'
  fathom report --label study=durability --axis clients --axis variant -o durability`,
		Args: func(cmd *cobra.Command, args []string) error { return nil },
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			var sloSpec *report.SLO
			if slo != "" {
				s, err := report.ParseSLO(slo)
				if err != nil {
					return usagef("--slo: %v", err)
				}
				sloSpec = s
			}
			if len(labels) > 0 {
				args = append(args, "label:"+strings.Join(labels, ","))
			}
			if len(args) == 0 {
				return usagef("%s needs runs: e.g. `fathom report last`, `fathom report 3-7`, `fathom report exp:NAME` or --label k=v", cmd.CommandPath())
			}
			var axisList []string
			for _, a := range axes {
				for _, s := range strings.Split(a, ",") {
					if s = strings.TrimSpace(s); s != "" {
						axisList = append(axisList, s)
					}
				}
			}
			st, err := openStore(path)
			if err != nil {
				return err
			}
			defer st.Close()
			sel, err := selectRuns(ctx, st, args)
			if err != nil {
				return err
			}
			data, err := report.LoadRuns(ctx, st, sel.runs, maxPoints)
			if err != nil {
				return withCode(ExitFailure, err)
			}
			if err := report.LoadSamples(ctx, st, data, true); err != nil {
				return withCode(ExitFailure, err)
			}
			opts := report.Options{Title: title, Axes: axisList, SLO: sloSpec, CompareBy: compareBy, Selection: sel.what,
				Generated: fmt.Sprintf("fathom %s on %s", version(), env.Now().UTC().Format("2006-01-02 15:04 MST"))}
			rep, err := buildReport(sel, data, opts)
			if err != nil {
				return err
			}
			if out == "" {
				out = defaultReportDir(sel)
			}
			files, err := rep.Files()
			if err != nil {
				return withCode(ExitFailure, err)
			}
			index, err := report.WriteDir(out, files)
			if err != nil {
				return withCode(ExitFailure, fmt.Errorf("writing the report: %v", err))
			}
			fmt.Fprintln(env.Stdout, index)
			return nil
		},
	}
	fs := cmd.Flags()
	storeFlag(fs, env, &path)
	fs.StringVarP(&out, "output", "o", "", "directory to write (default report-<runs>)")
	fs.StringArrayVar(&labels, "label", nil, "select runs with label key=value (repeatable; all must match)")
	fs.StringArrayVar(&axes, "axis", nil, "experiment axis, in order: first groups the bars, second splits them (repeatable or comma-separated; default: labels that differ)")
	fs.StringVar(&slo, "slo", "", "latency objective, e.g. 'p99<10ms': marks the highest throughput that met it (the knee)")
	fs.StringVar(&compareBy, "compare-by", "", "axis with two values to compare within each cell of the others (default: the first such axis; - for none)")
	fs.StringVar(&title, "title", "", "report title")
	fs.IntVar(&maxPoints, "max-points", report.DefaultMaxPoints, "most points per time-series chart; longer runs merge intervals (CSV files keep all)")
	return cmd
}

func buildReport(sel *selection, data []*report.RunData, opts report.Options) (*report.Report, error) {
	if axes, specs, ok := sel.experimentSpecs(data); ok && len(opts.Axes) == 0 && len(data) > 1 {
		if opts.Title == "" {
			opts.Title = "Experiment " + sel.exp.Name
		}
		e, err := report.NewExperiment(sel.exp.Name, axes, specs)
		if err != nil {
			return nil, usagef("%v", err)
		}
		rep, err := report.NewWithExperiment(e, opts)
		if err != nil {
			return nil, usagef("%v", err)
		}
		return rep, nil
	}
	rep, err := report.New(data, opts)
	if err != nil {
		return nil, usagef("%v", err)
	}
	return rep, nil
}

func defaultReportDir(sel *selection) string {
	if sel.exp != nil {
		return "report-" + filepath.Base(sanitizeName(sel.exp.Name))
	}
	ids := make([]int64, 0, len(sel.runs))
	for _, r := range sel.runs {
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

// writeRunReport writes the report of one stored run to report-run-ID and returns
// its index.html.
func writeRunReport(ctx context.Context, env *Env, storePath string, id int64) (string, error) {
	st, err := openStore(storePath)
	if err != nil {
		return "", err
	}
	defer st.Close()
	sel, err := selectRuns(ctx, st, []string{strconv.FormatInt(id, 10)})
	if err != nil {
		return "", err
	}
	data, err := report.LoadRuns(ctx, st, sel.runs, report.DefaultMaxPoints)
	if err != nil {
		return "", withCode(ExitFailure, err)
	}
	if err := report.LoadSamples(ctx, st, data, true); err != nil {
		return "", withCode(ExitFailure, err)
	}
	rep, err := report.New(data, report.Options{Generated: fmt.Sprintf("fathom %s on %s", version(), env.Now().UTC().Format("2006-01-02 15:04 MST"))})
	if err != nil {
		return "", withCode(ExitFailure, err)
	}
	files, err := rep.Files()
	if err != nil {
		return "", withCode(ExitFailure, err)
	}
	index, err := report.WriteDir(defaultReportDir(sel), files)
	if err != nil {
		return "", withCode(ExitFailure, fmt.Errorf("writing the report: %v", err))
	}
	return index, nil
}
