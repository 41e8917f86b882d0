package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/fathom-lab/fathom/internal/analyze"
	"github.com/fathom-lab/fathom/internal/collect"
	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/store"
)

func newExperimentsCmd(env *Env) *cobra.Command {
	var path string
	var limit int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "experiments [EXPERIMENT]",
		Short: "List experiments, or show one's cell table (EXPERIMENT is an id or a name)",
		Example: `  fathom experiments
  fathom experiments pg-durability
  fathom experiments 3 --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usagef("%s takes at most one experiment (an id or a name)", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := openStore(path)
			if err != nil {
				return err
			}
			defer st.Close()
			ctx := cmd.Context()
			if len(args) == 1 {
				return showExperiment(ctx, env, st, args[0], asJSON)
			}
			exps, err := st.Experiments(ctx, limit)
			if err != nil {
				return withCode(ExitFailure, err)
			}
			if asJSON {
				enc := json.NewEncoder(env.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(exps)
			}
			if len(exps) == 0 {
				fmt.Fprintf(env.Stdout, "no experiments in %s yet: see examples/ and `fathom experiment --help`\n", path)
				return nil
			}
			host := collect.HostFacts().Hostname
			tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tCREATED\tSTATUS\tRUNS\tFAILED\tTARGET")
			for _, e := range exps {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d/%d\t%d\t%s\n", e.ID, e.Name, e.CreatedAt.Local().Format(time.DateTime),
					experimentStatus(&e, host), e.Complete, e.Slots, e.Failed, e.Target)
			}
			return tw.Flush()
		},
	}
	fs := cmd.Flags()
	storeFlag(fs, env, &path)
	fs.IntVarP(&limit, "limit", "n", 50, "list at most this many experiments (0 = all)")
	fs.BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

// experimentStatus tells a running experiment whose process is gone apart.
func experimentStatus(e *store.Experiment, host string) string {
	if e.Status == "running" && e.Host == host && !instance.ProcessAlive(e.PID) {
		return "interrupted (process gone)"
	}
	return e.Status
}

// cellRow is one line of an experiment's cell table.
type cellRow struct {
	Cell     int           `json:"cell"`
	Key      string        `json:"key"`
	Coords   []store.Coord `json:"coords"`
	Runs     int           `json:"runs"` // completed repetitions
	Planned  int           `json:"planned"`
	Failed   int           `json:"failed"`
	TPS      float64       `json:"tps_median"`
	TPSMin   float64       `json:"tps_min"`
	TPSMax   float64       `json:"tps_max"`
	P95      float64       `json:"p95_ms_median"`
	P99      float64       `json:"p99_ms_median"`
	Errors   int64         `json:"errors"`
	RunIDs   []int64       `json:"run_ids"`
	Settings []string      `json:"-"`
}

func experimentRows(ctx context.Context, st *store.Store, exp *store.Experiment) ([]*cellRow, []store.ExperimentSlot, error) {
	cells, err := st.ExperimentCells(ctx, exp.ID)
	if err != nil {
		return nil, nil, err
	}
	slots, err := st.ExperimentSlots(ctx, exp.ID)
	if err != nil {
		return nil, nil, err
	}
	rows := make([]*cellRow, len(cells))
	for i, c := range cells {
		rows[i] = &cellRow{Cell: c.Cell, Key: c.Key, Coords: c.Coords}
	}
	type vals struct{ tps, p95, p99 []float64 }
	v := make([]vals, len(cells))
	for _, sl := range slots {
		if sl.Cell >= len(rows) {
			continue
		}
		r := rows[sl.Cell]
		r.Planned++
		if sl.Status == "failed" {
			r.Failed++
		}
		if sl.Status != "complete" || sl.RunID == 0 {
			continue
		}
		run, err := st.Run(ctx, sl.RunID)
		if err != nil {
			return nil, nil, err
		}
		var s measure.Summary
		if len(run.Summary) == 0 || json.Unmarshal(run.Summary, &s) != nil {
			continue
		}
		r.Runs++
		r.RunIDs = append(r.RunIDs, sl.RunID)
		r.Errors += s.Errors
		v[sl.Cell].tps = append(v[sl.Cell].tps, s.TPS)
		v[sl.Cell].p95 = append(v[sl.Cell].p95, s.Latency.P95)
		v[sl.Cell].p99 = append(v[sl.Cell].p99, s.Latency.P99)
	}
	for i, r := range rows {
		if len(v[i].tps) == 0 {
			continue
		}
		r.TPS, r.P95, r.P99 = analyze.Median(v[i].tps), analyze.Median(v[i].p95), analyze.Median(v[i].p99)
		r.TPSMin, r.TPSMax = v[i].tps[0], v[i].tps[0]
		for _, t := range v[i].tps {
			r.TPSMin, r.TPSMax = min(r.TPSMin, t), max(r.TPSMax, t)
		}
	}
	return rows, slots, nil
}

// writeExperimentTable prints the cell table: axis values, repetitions done, median
// TPS (with the range over repetitions), median p95 and p99, errors.
func writeExperimentTable(ctx context.Context, w io.Writer, st *store.Store, exp *store.Experiment) error {
	rows, _, err := experimentRows(ctx, st, exp)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	var head []string
	for _, a := range exp.Axes {
		head = append(head, strings.ToUpper(a.Name))
	}
	if len(head) == 0 {
		head = []string{"CELL"}
	}
	head = append(head, "RUNS", "TPS (MEDIAN)", "TPS RANGE", "P95 MS", "P99 MS", "ERRORS", "")
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, r := range rows {
		var cols []string
		for _, c := range r.Coords {
			cols = append(cols, c.Value)
		}
		if len(cols) == 0 {
			cols = []string{r.Key}
		}
		runs := fmt.Sprintf("%d/%d", r.Runs, r.Planned)
		tps, rng, p95, p99 := "-", "-", "-", "-"
		if r.Runs > 0 {
			tps = fmt.Sprintf("%.1f", r.TPS)
			rng = fmt.Sprintf("%.1f–%.1f", r.TPSMin, r.TPSMax)
			p95, p99 = fmtMS(r.P95), fmtMS(r.P99)
		}
		note := ""
		if r.Failed > 0 {
			note = fmt.Sprintf("%d failed", r.Failed)
		}
		cols = append(cols, runs, tps, rng, p95, p99, fmt.Sprint(r.Errors), note)
		fmt.Fprintln(tw, strings.Join(cols, "\t"))
	}
	return tw.Flush()
}

func showExperiment(ctx context.Context, env *Env, st *store.Store, arg string, asJSON bool) error {
	exp, err := findExperiment(ctx, st, arg)
	if err != nil {
		return err
	}
	if asJSON {
		rows, slots, err := experimentRows(ctx, st, exp)
		if err != nil {
			return withCode(ExitFailure, err)
		}
		hooks, err := st.ExperimentHooks(ctx, exp.ID)
		if err != nil {
			return withCode(ExitFailure, err)
		}
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Experiment *store.Experiment      `json:"experiment"`
			Cells      []*cellRow             `json:"cells"`
			Slots      []store.ExperimentSlot `json:"slots"`
			Hooks      []store.ExperimentHook `json:"hooks"`
		}{exp, rows, slots, hooks})
	}
	w := env.Stdout
	fmt.Fprintf(w, "experiment %d %q: %s\n", exp.ID, exp.Name, experimentStatus(exp, collect.HostFacts().Hostname))
	if exp.Description != "" {
		fmt.Fprintf(w, "  %s\n", exp.Description)
	}
	fmt.Fprintf(w, "  plan %s, %d repetitions, %s order, on %s\n", exp.PlanPath, exp.Repetitions, exp.Order, exp.Target)
	end := "running"
	if !exp.EndedAt.IsZero() {
		end = exp.EndedAt.Local().Format(time.DateTime)
	}
	fmt.Fprintf(w, "  started %s, ended %s; %d of %d runs complete, %d failed\n", exp.CreatedAt.Local().Format(time.DateTime), end, exp.Complete, exp.Slots, exp.Failed)
	if exp.Reason != "" {
		fmt.Fprintf(w, "  %s\n", exp.Reason)
	}
	fmt.Fprintln(w)
	if err := writeExperimentTable(ctx, w, st, exp); err != nil {
		return withCode(ExitFailure, err)
	}
	_, slots, err := experimentRows(ctx, st, exp)
	if err != nil {
		return withCode(ExitFailure, err)
	}
	cells, _ := st.ExperimentCells(ctx, exp.ID)
	var bad []string
	for _, sl := range slots {
		if sl.Status != "failed" && sl.Status != "interrupted" && sl.Status != "running" {
			continue
		}
		key := ""
		if sl.Cell < len(cells) {
			key = cells[sl.Cell].Key
		}
		reason := strings.SplitN(sl.Reason, "\n", 2)[0]
		bad = append(bad, fmt.Sprintf("  run %d (%s, repetition %d): %s: %s", sl.Seq+1, key, sl.Repetition, sl.Status, reason))
	}
	if len(bad) > 0 {
		fmt.Fprintf(w, "\nruns that did not complete (full reasons: --json):\n%s\n", strings.Join(bad, "\n"))
	}
	fmt.Fprintf(w, "\nruns: `fathom runs --label experiment=%s`; charts: `fathom report exp:%d`\n", exp.Name, exp.ID)
	return nil
}

// experimentRef reports whether a `fathom show` argument names an experiment rather
// than a run: exp:ID, exp:NAME, experiment:…, or a name (experiment names start with a
// letter; run references are numbers, last or latest).
func experimentRef(arg string) (string, bool) {
	for _, p := range []string{"exp:", "experiment:"} {
		if strings.HasPrefix(arg, p) {
			return strings.TrimPrefix(arg, p), true
		}
	}
	if arg == "" || arg == "last" || arg == "latest" {
		return "", false
	}
	c := arg[0]
	return arg, c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// showExperimentRef is `fathom show` for an experiment: one that does not exist is
// a usage error naming both kinds of reference.
func showExperimentRef(ctx context.Context, env *Env, st *store.Store, ref string, asJSON bool) error {
	if _, err := findExperiment(ctx, st, ref); err != nil {
		if codeOf(err) == ExitUsage {
			return usagef("%q is not a run id nor an experiment in %s: use a number from `fathom runs`, last, or a name from `fathom experiments`", ref, st.Path())
		}
		return err
	}
	return showExperiment(ctx, env, st, ref, asJSON)
}
