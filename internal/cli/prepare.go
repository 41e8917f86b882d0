package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/fathom-lab/fathom/internal/cli/view"
	"github.com/fathom-lab/fathom/internal/compat"
	"github.com/fathom-lab/fathom/internal/run"
	"github.com/fathom-lab/fathom/internal/workload"
	"github.com/fathom-lab/fathom/internal/workload/sblua"
)

func newPrepareCmd(env *Env) *cobra.Command {
	o := &targetOpts{}
	lo := &workload.Layout{}
	var quiet bool
	cmd := &cobra.Command{
		Use:   "prepare",
		Short: "Create the workload's tables and load its data (existing ones are dropped first)",
		Example: `  fathom prepare --workload tpcb --scale 10 --target postgres://postgres@127.0.0.1/bench
  fathom prepare --workload oltp_read_write --tables 8 --table-size 100000 --target mysql://root@127.0.0.1/sbtest`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return prepare(cmd.Context(), env, o, lo, quiet)
		},
	}
	o.register(cmd.Flags(), env)
	compat.RegisterLayout(cmd.Flags(), lo)
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "no progress: only the last line (prepared … in …)")
	o.lua.register(cmd, env.Args)
	return cmd
}

func prepare(ctx context.Context, env *Env, o *targetOpts, lo *workload.Layout, quiet bool) error {
	p, err := o.params()
	if err != nil {
		return err
	}
	if sblua.IsScript(o.workload) {
		// sysbench's table options are the script's own options (oltp_common's).
		luaLayout(p, lo)
		lo = nil
	}
	t := run.Target{DSN: o.target, QueryMode: o.queryMode, ConnectTimeout: o.connectTimeout, PollerSockets: o.pollerSockets, Getenv: env.Getenv}
	ctx, stop := env.Interrupts(ctx)
	defer stop()
	pp := &view.PrepareLines{W: env.Stdout, Now: env.Now, Quiet: quiet}
	if env.Terminal {
		pp.Bar = env.Stderr
	}
	err = run.Prepare(ctx, t, o.workload, p, lo, pp)
	pp.Finish(err)
	return err
}

func newCleanupCmd(env *Env) *cobra.Command {
	o := &targetOpts{}
	cmd := &cobra.Command{
		Use:   "cleanup",
		Short: "Drop the workload's tables",
		RunE: func(cmd *cobra.Command, args []string) error {
			_, wl, err := o.openWorkload()
			if err != nil {
				return err
			}
			tgt, err := o.openTarget()
			if err != nil {
				return err
			}
			defer tgt.Close()
			if u, ok := wl.(workload.TargetUser); ok {
				if err := u.UseTarget(tgt); err != nil {
					return usagef("%v", err)
				}
				if p, ok := wl.(workload.Printer); ok {
					p.SetOutput(env.Stdout)
				}
			}
			conn, err := connect(cmd.Context(), tgt)
			if err != nil {
				return err
			}
			defer conn.Close()
			if err := wl.Cleanup(cmd.Context(), conn); err != nil {
				return withCode(exitFailure, fmt.Errorf("cleanup failed: %v", err))
			}
			if err := workload.ClearMarkers(cmd.Context(), tgt, conn, wl); err != nil {
				return withCode(exitFailure, fmt.Errorf("removing the prepare marker %s: %v", workload.MarkerTable, err))
			}
			fmt.Fprintf(env.Stdout, "dropped the tables of %s on %s\n", wl.Name(), tgt.Redacted())
			return nil
		},
	}
	o.register(cmd.Flags(), env)
	o.lua.register(cmd, env.Args)
	return cmd
}
