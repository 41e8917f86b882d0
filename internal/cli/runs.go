package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/fathom-lab/fathom/internal/compat"
	"github.com/fathom-lab/fathom/internal/measure"
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
	return withCode(ExitFailure, err)
}

func newRunsCmd(env *Env) *cobra.Command {
	var path secret.DSN
	var workload, status string
	var limit int
	var labels []string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List stored runs, newest first",
		RunE: func(cmd *cobra.Command, args []string) error {
			switch status {
			case "", "complete", "interrupted", "failed", "running":
			default:
				return usagef("--status %q: use complete, interrupted, failed or running", status)
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
				return withCode(ExitFailure, err)
			}
			if asJSON {
				enc := json.NewEncoder(env.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(runs)
			}
			if len(runs) == 0 {
				if f.Workload != "" || f.Status != "" || len(f.Labels) > 0 {
					fmt.Fprintf(env.Stdout, "no runs in %s match %s: see `fathom runs` for all\n", path, report.DescribeFilter(f))
					return nil
				}
				fmt.Fprintf(env.Stdout, "no runs in %s yet: try `fathom quickstart`\n", path)
				return nil
			}
			report.FillGoneSummaries(cmd.Context(), st, runs)
			report.WriteRuns(env.Stdout, runs)
			return nil
		},
	}
	fs := cmd.Flags()
	storeFlag(fs, env, &path)
	fs.IntVarP(&limit, "limit", "n", 50, "show at most this many runs (0 = all)")
	fs.StringVarP(&workload, "workload", "w", "", "only runs of this workload")
	fs.StringVar(&status, "status", "", "only runs with this status (complete, interrupted, failed, running)")
	fs.StringArrayVar(&labels, "label", nil, "only runs with label key=value (repeatable)")
	fs.BoolVar(&asJSON, "json", false, "print the runs as JSON")
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
	cmd := &cobra.Command{
		Use:   "show RUN|EXPERIMENT",
		Short: "Show a stored run: provenance and summary (RUN is an id or last); or an experiment's cell table (its name, or exp:ID)",
		Args:  exactArgs(1, "RUN"),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := openStore(path)
			if err != nil {
				return err
			}
			defer st.Close()
			if ref, ok := experimentRef(args[0]); ok { // experiment_show.go
				return showExperimentRef(cmd.Context(), env, st, ref, asJSON)
			}
			run, _, sum, err := report.LoadRun(cmd.Context(), st, args[0])
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(env.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(struct {
					Run      *store.Run           `json:"run"`
					Summary  *measure.Summary     `json:"summary"`
					Sampling *report.SamplingJSON `json:"sampling,omitempty"`
				}{run, sum, report.SamplingFor(cmd.Context(), st, run)})
			}
			report.WriteProvenance(env.Stdout, run)
			for _, w := range run.Warnings {
				fmt.Fprintf(env.Stdout, "  warning:  %s\n", w)
			}
			if run.Workload != fathomrun.WatchWorkload {
				report.WriteSummary(env.Stdout, run, sum)
			}
			return report.WriteSampling(cmd.Context(), env.Stdout, st, run)
		},
	}
	storeFlag(cmd.Flags(), env, &path)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the run and its summary as JSON")
	return cmd
}

func newExportCmd(env *Env) *cobra.Command {
	var path secret.DSN
	var format, perCommand = "", false
	cmd := &cobra.Command{
		Use:   "export RUN",
		Short: "Export a run's per-interval throughput, errors and latency percentiles as CSV or JSON",
		Args:  exactArgs(1, "RUN"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "csv" && format != "json" {
				return usagef("--format %q: use csv or json", format)
			}
			st, err := openStore(path)
			if err != nil {
				return err
			}
			defer st.Close()
			run, ivs, sum, err := report.LoadRun(cmd.Context(), st, args[0])
			if err != nil {
				return err
			}
			if perCommand {
				return report.WriteCommands(env.Stdout, run, sum, format)
			}
			rows := report.IntervalRows(run, ivs)
			if format == "json" {
				return report.WriteIntervalsJSON(env.Stdout, run, rows)
			}
			return report.WriteIntervalsCSV(env.Stdout, rows)
		},
	}
	storeFlag(cmd.Flags(), env, &path)
	cmd.Flags().StringVarP(&format, "format", "f", "csv", "csv or json")
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
