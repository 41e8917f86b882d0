package cli

import (
	"cmp"
	"context"
	"errors"
	"slices"

	"github.com/spf13/cobra"

	"github.com/fathom-lab/fathom/internal/compat"
	"github.com/fathom-lab/fathom/internal/db"
	"github.com/fathom-lab/fathom/internal/report"
	fathomrun "github.com/fathom-lab/fathom/internal/run"
	"github.com/fathom-lab/fathom/internal/safefile"
	"github.com/fathom-lab/fathom/internal/secret"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/storecopy"
)

func openStore(path secret.DSN) (store.Store, error) { return fathomrun.OpenStore(path.Reveal()) }

// storeError is a usage mistake when the path or a copy's selection cannot work.
func storeError(err error) error {
	if errors.Is(err, store.ErrPath) || errors.Is(err, store.ErrUnsupported) || errors.Is(err, safefile.ErrUnsafe) || errors.Is(err, storecopy.ErrSelect) {
		return usagef("%v", err)
	}
	return withCode(exitFailure, err)
}

func newRunsCmd(env *Env) *cobra.Command {
	var path secret.DSN
	var workload, status string
	var limit int
	var labels []string
	var asJSON bool
	var format string
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List stored runs, newest first",
		RunE: func(cmd *cobra.Command, args []string) error {
			out, err := chooseFormat(cmd.CommandPath(), format, asJSON, report.KindRuns)
			if err != nil {
				return err
			}
			switch status {
			case "", "complete", "interrupted", "failed", "running", "aborted":
			default:
				return usagef("--status %q: use complete, interrupted, failed, aborted or running", status)
			}
			if limit < 0 {
				return usagef("--limit %d: use 0 for all runs or a positive number", limit)
			}
			f := store.RunFilter{Limit: limit, Workload: workload, Status: status, Labels: map[string]string{}}
			for _, l := range labels {
				k, v, err := parseKV(l, "--label")
				if err != nil {
					return usagef("%v", err)
				}
				f.Labels[k] = v
			}
			st, err := openStore(path)
			if err != nil {
				return err
			}
			defer st.Close()
			runs, err := runsOf(cmd.Context(), st, f)
			if err != nil {
				return withCode(exitFailure, err)
			}
			if out.Name != "json" {
				// The JSON keeps the runs as stored; the table shows a run whose
				// process is gone with the summary of its finished intervals.
				report.FillGoneSummaries(cmd.Context(), st, runs)
			}
			return out.Write(cmd.Context(), env.Stdout, &report.RunList{Runs: runs, Filter: f, Store: path.String()})
		},
	}
	fs := cmd.Flags()
	storeFlag(fs, env, &path)
	fs.IntVarP(&limit, "limit", "n", 50, "show at most this many runs (0 = all)")
	fs.StringVarP(&workload, "workload", "w", "", "only runs of this workload")
	fs.StringVar(&status, "status", "", "only runs with this status (complete, interrupted, failed, aborted, running)")
	fs.StringArrayVar(&labels, "label", nil, "only runs with label key=value (repeatable)")
	fs.BoolVar(&asJSON, "json", false, "print the runs as JSON (-f json)")
	formatFlag(fs, &format, "text", report.KindRuns)
	return cmd
}

// runsOf lists the runs f selects; a workload selects every spelling of its
// benchmark (tpcb-select finds the runs of pgbench -S too, and the other way round).
func runsOf(ctx context.Context, st store.Store, f store.RunFilter) ([]store.Run, error) {
	names := compat.WorkloadSpellings(f.Workload)
	if len(names) == 1 {
		return st.Runs(ctx, f)
	}
	var all []store.Run
	for _, n := range names {
		g := f
		g.Workload = n
		rs, err := st.Runs(ctx, g)
		if err != nil {
			return nil, err
		}
		all = append(all, rs...)
	}
	slices.SortFunc(all, func(a, b store.Run) int { return cmp.Compare(b.ID, a.ID) })
	if f.Limit > 0 && len(all) > f.Limit {
		all = all[:f.Limit]
	}
	return all, nil
}

func newShowCmd(env *Env) *cobra.Command {
	var path secret.DSN
	var asJSON bool
	var format string
	cmd := &cobra.Command{
		Use:   "show RUN|EXPERIMENT",
		Short: "Show a stored run: provenance and summary (RUN is an id or last); or an experiment's cell table (its name, or exp:ID)",
		Example: `  fathom show last
  fathom show 12 --json
  fathom show last -f junit > fathom-run.xml     # the run's thresholds as JUnit test cases for CI
  fathom show pg-durability`,
		Args: exactArgs(1, "RUN"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			ref, isExp := experimentRef(args[0])
			kind := report.KindRun
			if isExp {
				kind = report.KindExperiment
			}
			out, err := chooseFormat(cmd.CommandPath(), format, asJSON, kind)
			if err != nil {
				return err
			}
			st, err := openStore(path)
			if err != nil {
				return err
			}
			defer st.Close()
			if isExp { // experiment_show.go
				return showExperimentRef(ctx, env, st, ref, out)
			}
			v, err := report.LoadRunView(ctx, st, db.Figures(), args[0])
			if err != nil {
				return err
			}
			return out.Write(ctx, env.Stdout, v)
		},
	}
	storeFlag(cmd.Flags(), env, &path)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the run and its summary as JSON (-f json)")
	formatFlag(cmd.Flags(), &format, "text", report.KindRun, report.KindExperiment)
	return cmd
}

func newExportCmd(env *Env) *cobra.Command {
	var path secret.DSN
	var format, perCommand = "", false
	cmd := &cobra.Command{
		Use:   "export RUN",
		Short: "Export a run's per-interval throughput, errors and latency percentiles as CSV or JSON, or its figures as JUnit XML or OpenMetrics",
		Long: `export writes a run's intervals (CSV or JSON: one row per interval and transaction type),
its per-command latencies (--per-command), or the whole run in a format that renders a run:
JUnit XML for CI (the run a test suite, its thresholds test cases) or an OpenMetrics text
exposition of its figures.`,
		Example: `  fathom export last > run.csv
  fathom export 12 -f json
  fathom export last -f junit > fathom.xml
  fathom export last -f openmetrics > run.om.txt`,
		Args: exactArgs(1, "RUN"),
		RunE: func(cmd *cobra.Command, args []string) error {
			kinds := []report.Kind{report.KindIntervals, report.KindRun}
			if perCommand {
				kinds = []report.Kind{report.KindCommands}
			}
			out, err := report.Choose(cmd.CommandPath(), format, kinds...)
			if err != nil {
				return err
			}
			st, err := openStore(path)
			if err != nil {
				return err
			}
			defer st.Close()
			v, err := report.LoadRunView(cmd.Context(), st, db.Figures(), args[0])
			if err != nil {
				return err
			}
			return out.Write(cmd.Context(), env.Stdout, v)
		},
	}
	storeFlag(cmd.Flags(), env, &path)
	formatFlag(cmd.Flags(), &format, "csv", report.KindIntervals, report.KindRun)
	cmd.Flags().BoolVar(&perCommand, "per-command", false, "the per-command latencies of a run with -r instead of the intervals")
	return cmd
}

func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s needs %s (e.g. `%s 1` or `%s last`)", cmd.CommandPath(), what, cmd.CommandPath(), cmd.CommandPath())
		}
		return nil
	}
}
