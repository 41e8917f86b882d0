package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fathom-lab/fathom/internal/db"
	"github.com/fathom-lab/fathom/internal/report"
	"github.com/fathom-lab/fathom/internal/safefile"
	"github.com/fathom-lab/fathom/internal/secret"
)

func newReportCmd(env *Env) *cobra.Command {
	var (
		path                       secret.DSN
		out, slo, compareBy, title string
		judge, baseline            string
		labels, axes               []string
		maxPoints                  int
		force                      bool
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
			if out != "" {
				// Refuse a directory or file fathom may not write before reading anything.
				if err := report.CanWrite(out, []string{"index.html", "summary.md"}, force); err != nil {
					return withCode(exitUsage, err)
				}
			}
			st, err := openStore(path)
			if err != nil {
				return err
			}
			defer st.Close()
			sel, err := report.Select(ctx, st, args)
			if err != nil {
				return err
			}
			data, err := report.LoadRuns(ctx, st, sel.Runs, maxPoints)
			if err != nil {
				return withCode(exitFailure, err)
			}
			if err := report.LoadSamples(ctx, st, db.Figures(), data, true); err != nil {
				return withCode(exitFailure, err)
			}
			if judge == "" && sel.Exp != nil {
				judge = sel.Exp.Judge
			}
			if err := report.SetJudge(data, judge); err != nil {
				return usagef("--%v", err)
			}
			if _, err := report.ParseBaselines(baseline); err != nil {
				return usagef("--%v", err)
			}
			opts := report.Options{Title: title, Axes: axisList, SLO: sloSpec, CompareBy: compareBy, Selection: sel.What, Judge: judge, Baseline: baseline,
				Generated: fmt.Sprintf("fathom %s on %s", version(), env.Now().UTC().Format("2006-01-02 15:04 MST"))}
			rep, err := report.Build(sel, data, opts)
			if err != nil {
				return err
			}
			if sel.Exp != nil {
				if rep.Restarts, err = report.ExperimentRestarts(ctx, st, sel.Exp); err != nil {
					return withCode(exitFailure, err)
				}
			}
			if out == "" {
				out = report.DefaultDir(sel)
			}
			files, err := rep.Files()
			if err != nil {
				return withCode(exitFailure, err)
			}
			index, err := report.WriteDir(out, files, force)
			if err != nil {
				if errors.Is(err, safefile.ErrUnsafe) {
					return withCode(exitUsage, err)
				}
				return withCode(exitFailure, fmt.Errorf("writing the report: %v", err))
			}
			fmt.Fprintln(env.Stdout, index)
			return nil
		},
	}
	fs := cmd.Flags()
	storeFlag(fs, env, &path)
	fs.StringVarP(&out, "output", "o", "", "directory to write (default report-<runs>; created private to you)")
	fs.BoolVar(&force, "force", false, "replace files in the -o directory that fathom did not write there")
	fs.StringArrayVar(&labels, "label", nil, "select runs with label key=value (repeatable; all must match)")
	fs.StringArrayVar(&axes, "axis", nil, "experiment axis, in order: first groups the bars, second splits them (repeatable or comma-separated; default: labels that differ)")
	fs.StringVar(&slo, "slo", "", "latency objective, e.g. 'p99<10ms': marks the highest throughput that met it (the knee)")
	fs.StringVar(&compareBy, "compare-by", "", "axis whose values to compare with its baseline within each cell of the others (default: the first non-sweep axis with two values, else with more, else the only axis; - for none)")
	fs.StringVar(&title, "title", "", "report title")
	fs.StringVar(&judge, "judge", "", "judge each run by one transaction `type or group` (e.g. writers) instead of every transaction (default: the plan's judge)")
	fs.StringVar(&baseline, "baseline", "", "the `axis=value` comparisons start from (side A; default: the plan's baseline, else the first value listed)")
	positiveIntVarP(fs, &maxPoints, "max-points", "", report.DefaultMaxPoints, "most points per time-series chart; longer runs merge intervals (CSV files keep all)")
	return cmd
}
