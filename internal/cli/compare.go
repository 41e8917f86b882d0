package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/fathom-lab/fathom/internal/report"
	"github.com/fathom-lab/fathom/internal/secret"
)

func newCompareCmd(env *Env) *cobra.Command {
	var path secret.DSN
	var format, judge string
	var asJSON bool
	var maxPoints int
	cmd := &cobra.Command{
		Use:   "compare A B",
		Short: "Compare two runs or sets of runs: medians, confidence intervals, change and a Mann–Whitney U test, like benchstat",
		Long: `compare prints, per metric (throughput, latency p50/p95/p99, error rate), the median of A
and of B with 95% confidence intervals, the change of the median from A to B in percent, and beside it a
judgement from a two-sided Mann–Whitney U test over the runs of each side: "significant",
"~" for a difference the data do not show, or "cannot tell with n=3+3" when there are
too few runs for any difference to be significant (4 per side are needed at p<0.05).
Runs at a rate (open loop) are compared on late starts, dropped transactions and
service time too.

With client groups (the fanout workload's writers and readers), every transaction
counts unless --judge names the group or transaction type that matters.

Before the numbers it lists what differs between A and B (labels, server settings,
workload options, clients, server and tool versions, host), so that a comparison shows
what was compared.

A and B are runs (12, 3-7, 3,5,9), runs carrying labels (label:variant=on) or
experiment cells (exp:NAME:clients=16,variant=on).`,
		Example: `  fathom compare label:sync=off label:sync=on
  fathom compare 3-7 8-12 --format markdown
  fathom compare exp:durability:flush=0 exp:durability:flush=1 --format json
  fathom compare label:build=main label:build=pr --format junit > compare.xml`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usagef("%s needs two sides, A and B: e.g. `fathom compare label:variant=off label:variant=on` or `fathom compare 3-7 8-12`", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			out, err := chooseFormat(cmd.CommandPath(), format, asJSON, report.KindComparison)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			st, err := openStore(path)
			if err != nil {
				return err
			}
			defer st.Close()
			var sides [2]report.Side
			for i, arg := range args {
				sel, err := report.Select(ctx, st, []string{arg})
				if err != nil {
					return err
				}
				data, err := report.LoadRuns(ctx, st, sel.Runs, maxPoints)
				if err != nil {
					return withCode(exitFailure, err)
				}
				sides[i] = report.Side{Name: arg, Runs: data}
				if judge == "" && sel.Exp != nil {
					judge = sel.Exp.Judge // an experiment's cells are judged as its plan says
				}
			}
			if err := report.SetJudge(append(append([]*report.RunData(nil), sides[0].Runs...), sides[1].Runs...), judge); err != nil {
				return usagef("--%v", err)
			}
			for _, a := range sides[0].Runs {
				for _, b := range sides[1].Runs {
					if a.Run.ID == b.Run.ID {
						return usagef("run %d is on both sides: A and B must be different runs", a.Run.ID)
					}
				}
			}
			// A run that did not complete is compared on its finished intervals: say so
			// (--json has it in its notes too).
			c := report.Compare("", sides[0], sides[1])
			for _, n := range c.Incomplete() {
				fmt.Fprintf(env.Stderr, "fathom: note: %s\n", n)
			}
			return out.Write(ctx, env.Stdout, c)
		},
	}
	fs := cmd.Flags()
	storeFlag(fs, env, &path)
	fs.BoolVar(&asJSON, "json", false, "print the comparison as JSON (-f json), its notes and warnings included")
	formatFlag(fs, &format, "text", report.KindComparison)
	fs.StringVar(&judge, "judge", "", "judge the runs by one transaction `type or group` (e.g. writers or writers/insert_a) instead of every transaction (default: the experiment's judge for exp: sides)")
	positiveIntVarP(fs, &maxPoints, "max-points", "", 16, "points kept per run's time series while loading (compare needs none)")
	_ = fs.MarkHidden("max-points")
	return cmd
}
