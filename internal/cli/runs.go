package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/report"
	"github.com/fathom-lab/fathom/internal/store"
)

func openStore(path string) (*store.Store, error) {
	st, err := store.Open(path)
	if err != nil {
		return nil, withCode(ExitFailure, err)
	}
	return st, nil
}

// runID parses a run argument: a number, or "last".
func runID(ctx context.Context, st *store.Store, arg string) (int64, error) {
	if arg == "last" || arg == "latest" {
		id, err := st.LatestRunID(ctx)
		if err != nil {
			return 0, withCode(ExitFailure, err)
		}
		return id, nil
	}
	id, err := strconv.ParseInt(strings.TrimPrefix(arg, "#"), 10, 64)
	if err != nil || id < 1 {
		return 0, usagef("%q is not a run id: use a number from `fathom runs`, or last", arg)
	}
	return id, nil
}

// loadRun reads a run and recomputes its summary from the stored intervals.
func loadRun(ctx context.Context, st *store.Store, arg string) (*store.Run, []*measure.Interval, *measure.Summary, error) {
	id, err := runID(ctx, st, arg)
	if err != nil {
		return nil, nil, nil, err
	}
	run, err := st.Run(ctx, id)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil, nil, usagef("%v: see `fathom runs`", err)
		}
		return nil, nil, nil, withCode(ExitFailure, err)
	}
	ivs, err := st.Intervals(ctx, id)
	if err != nil {
		return nil, nil, nil, withCode(ExitFailure, err)
	}
	s := measure.Summarize(run.TxnTypes, ivs)
	s.RunID, s.Status, s.Reason = run.ID, run.Status, run.Reason
	s.Workload, s.Target, s.Clients, s.Rate = run.Workload, run.Target, run.Clients, run.Rate
	return run, ivs, &s, nil
}

func newRunsCmd(env *Env) *cobra.Command {
	var path, workload, status string
	var limit int
	var labels []string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List stored runs, newest first",
		RunE: func(cmd *cobra.Command, args []string) error {
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
			runs, err := st.Runs(cmd.Context(), f)
			if err != nil {
				return withCode(ExitFailure, err)
			}
			if asJSON {
				enc := json.NewEncoder(env.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(runs)
			}
			if len(runs) == 0 {
				fmt.Fprintf(env.Stdout, "no runs in %s yet: try `fathom quickstart`\n", path)
				return nil
			}
			writeRuns(env.Stdout, runs)
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

func writeRuns(w io.Writer, runs []store.Run) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTARTED\tWORKLOAD\tTARGET\tCLIENTS\tLENGTH\tSTATUS\tTPS\tP95 MS\tLABELS")
	for _, r := range runs {
		var s measure.Summary
		tps, p95 := "-", "-"
		if len(r.Summary) > 0 && json.Unmarshal(r.Summary, &s) == nil {
			tps = fmt.Sprintf("%.1f", s.TPS)
			p95 = fmt.Sprintf("%.3f", s.Latency.P95)
		}
		length := r.Duration.String()
		if r.Transactions > 0 {
			length = fmt.Sprintf("%d tx/client", r.Transactions)
		}
		var ls []string
		for _, k := range slices.Sorted(maps.Keys(r.Labels)) {
			ls = append(ls, k+"="+r.Labels[k])
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.StartedAt.Local().Format(time.DateTime), r.Workload,
			r.Target, r.Clients, length, r.Status, tps, p95, strings.Join(ls, ","))
	}
	tw.Flush()
}

func newShowCmd(env *Env) *cobra.Command {
	var path string
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
			run, _, sum, err := loadRun(cmd.Context(), st, args[0])
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(env.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(struct {
					Run      *store.Run       `json:"run"`
					Summary  *measure.Summary `json:"summary"`
					Sampling *samplingJSON    `json:"sampling,omitempty"`
				}{run, sum, samplingFor(cmd.Context(), st, run)})
			}
			report.WriteProvenance(env.Stdout, run)
			if run.Workload != watchWorkload {
				report.WriteSummary(env.Stdout, run, sum)
			}
			return writeSampling(cmd.Context(), env.Stdout, st, run)
		},
	}
	storeFlag(cmd.Flags(), env, &path)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the run and its summary as JSON")
	return cmd
}

func newExportCmd(env *Env) *cobra.Command {
	var path, format string
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
			run, ivs, _, err := loadRun(cmd.Context(), st, args[0])
			if err != nil {
				return err
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
