package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fathom-lab/fathom/internal/cli/view"
	"github.com/fathom-lab/fathom/internal/experiment"
	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/report"
	"github.com/fathom-lab/fathom/internal/run"
	"github.com/fathom-lab/fathom/internal/secret"
	"github.com/fathom-lab/fathom/internal/store"
)

type experimentOpts struct {
	store       secret.DSN
	outage      outageOpts
	check       bool
	resume      string
	retryFailed bool
	keep        bool
	quiet       bool
	instanceDir string
}

func newExperimentCmd(env *Env) *cobra.Command {
	o := &experimentOpts{}
	cmd := &cobra.Command{
		Use:   "experiment PLAN.yaml | --resume ID",
		Short: "Run an experiment plan: a workload over a matrix of options and server settings, repeated, interleaved, with hooks",
		Long: `Runs every cell of a plan's matrix (clients, transactions, workload options, server
settings, number of instances …) the planned number of times, in interleaved order by
default, applying each cell's server settings and verifying them before each run. Every
run is stored with its cell and repetition; an interrupted experiment continues with
--resume. See docs/plan-file.md for the plan format.`,
		Example: `  fathom experiment --check examples/pg-durability.yaml
  fathom experiment examples/pg-durability.yaml
  fathom experiment --resume pg-durability
  fathom experiments pg-durability`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case o.resume != "" && len(args) > 0:
				return usagef("give a plan file or --resume, not both")
			case o.resume == "" && len(args) != 1:
				return usagef("%s needs a plan file (e.g. `fathom experiment examples/pg-durability.yaml`) or --resume ID", cmd.CommandPath())
			case o.check && o.resume != "":
				return usagef("--check takes a plan file, not --resume")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.resume != "" {
				return o.resumeExperiment(cmd.Context(), env)
			}
			return o.start(cmd.Context(), env, args[0])
		},
	}
	fs := cmd.Flags()
	storeFlag(fs, env, &o.store)
	o.outage.register(fs)
	fs.BoolVar(&o.check, "check", false, "check the plan (every problem at once, with line numbers) without touching any server")
	fs.StringVar(&o.resume, "resume", "", "continue an interrupted experiment (its id or name): finished runs are kept, the interrupted one runs again")
	fs.BoolVar(&o.retryFailed, "retry-failed", false, "with --resume: run failed cells again too")
	fs.BoolVar(&o.keep, "keep", false, "leave the experiment's instances (stopped, with their data) instead of removing them")
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "no live interval lines (progress and results only)")
	def := env.Getenv("FATHOM_INSTANCE_DIR")
	fs.StringVar(&o.instanceDir, "instance-dir", def, "base directory for instances (default: the plan's instance.dir, $FATHOM_INSTANCE_DIR or "+instance.DefaultDir()+")")
	return cmd
}

func (o *experimentOpts) start(ctx context.Context, env *Env, path string) error {
	p, err := experiment.ReadPlan(path)
	if err != nil {
		return err
	}
	if o.check {
		experiment.WritePlanCheck(env.Stdout, p, p.Cells())
		return nil
	}
	st, err := o.outage.open(env, o.store)
	if err != nil {
		return err
	}
	defer st.Close()
	ctx, stop := env.Interrupts(ctx)
	defer stop()
	xo, err := o.options(env)
	if err != nil {
		return err
	}
	out, err := experiment.Start(ctx, st, p, path, xo)
	printOutcome(context.WithoutCancel(ctx), env, st, out)
	if err == nil && out != nil {
		err = experimentThresholds(context.WithoutCancel(ctx), st, out.Experiment.ID)
	}
	return err
}

func (o *experimentOpts) resumeExperiment(ctx context.Context, env *Env) error {
	st, err := o.outage.open(env, o.store)
	if err != nil {
		return err
	}
	defer st.Close()
	exp, err := experiment.Find(ctx, st, o.resume)
	if err != nil {
		return err
	}
	ctx, stop := env.Interrupts(ctx)
	defer stop()
	xo, err := o.options(env)
	if err != nil {
		return err
	}
	out, err := experiment.Resume(ctx, st, exp, xo)
	printOutcome(context.WithoutCancel(ctx), env, st, out)
	if err == nil && out != nil {
		err = experimentThresholds(context.WithoutCancel(ctx), st, out.Experiment.ID)
	}
	return err
}

// experimentThresholds is exit 7 when a run of the experiment failed a threshold of
// its plan or workload file (or was aborted by one), naming the first few; nil when
// none did.
func experimentThresholds(ctx context.Context, st store.Store, expID int64) error {
	slots, err := st.ExperimentSlots(ctx, expID)
	if err != nil {
		return withCode(exitFailure, fmt.Errorf("reading experiment %d's runs to check their thresholds: %v", expID, err))
	}
	checked, failedRuns := 0, 0
	var shown []string
	for _, sl := range slots {
		ids := sl.Parts
		if len(ids) == 0 && sl.RunID != 0 {
			ids = []int64{sl.RunID}
		}
		for _, id := range ids {
			r, err := st.Run(ctx, id)
			if err != nil || len(r.Summary) == 0 {
				continue
			}
			var sum measure.Summary
			if json.Unmarshal(r.Summary, &sum) != nil || len(sum.Thresholds) == 0 {
				continue
			}
			checked++
			failed := measure.FailedThresholds(sum.Thresholds)
			if len(failed) == 0 {
				continue
			}
			failedRuns++
			if len(shown) < 3 {
				var parts []string
				for _, f := range failed {
					parts = append(parts, f.String())
				}
				what := "run " + strconv.FormatInt(id, 10)
				if r.Status == run.StatusAborted {
					what += " (aborted)"
				}
				shown = append(shown, what+": "+strings.Join(parts, "; "))
			}
		}
	}
	if failedRuns == 0 {
		return nil
	}
	more := ""
	if failedRuns > len(shown) {
		more = fmt.Sprintf("; %d more", failedRuns-len(shown))
	}
	return withCode(exitThresholds, fmt.Errorf("experiment %d: %d of %d runs failed thresholds: %s%s", expID, failedRuns, checked, strings.Join(shown, " | "), more))
}

func (o *experimentOpts) options(env *Env) (experiment.Options, error) {
	portable, err := portablePaths(env)
	lines := &view.ExperimentLines{W: env.Stdout, Err: env.Stderr, Quiet: o.quiet}
	if env.Terminal {
		lines.Bar = env.Stderr // a run on one server shows a progress bar
	}
	return experiment.Options{Keep: o.keep, RetryFailed: o.retryFailed, InstanceDir: o.instanceDir,
		ToolVersion: version(), Command: redactArgs(env.Args), NoProcfs: portable, OpenFiles: env.openFiles(), Tuner: env.tuner(),
		Listener: lines, Now: env.Now, Getenv: env.Getenv, Environ: env.Environ}, err
}

// printOutcome prints the cell table at the end.
func printOutcome(ctx context.Context, env *Env, st store.Store, out *experiment.Outcome) {
	if out == nil {
		return
	}
	if err := report.WriteExperimentEnd(ctx, env.Stdout, st, out.Experiment.ID, out.Status, out.Elapsed); err != nil {
		fmt.Fprintf(env.Stderr, "fathom: warning: %v\n", err)
	}
}
