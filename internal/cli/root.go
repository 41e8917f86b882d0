package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fathom-lab/fathom/internal/compat"
	"github.com/fathom-lab/fathom/internal/target"
)

// Run runs fathom with env and returns the exit code. Errors are printed as one line.
func Run(ctx context.Context, env *Env) int {
	root := newRoot(env)
	root.SetArgs(env.Args)
	err := root.ExecuteContext(ctx)
	if err != nil && !errors.Is(err, errReported) { // check prints its own Nagios line
		msg := target.RedactString(strings.TrimSpace(err.Error()))
		fmt.Fprintf(env.Stderr, "fathom: %s\n", msg)
	}
	return codeOf(err)
}

func newRoot(env *Env) *cobra.Command {
	root := &cobra.Command{
		Use:   "fathom",
		Short: "A database performance lab: run workloads, measure exactly, keep every result",
		Long: `fathom runs pgbench- and sysbench-style workloads against PostgreSQL, MySQL/MariaDB
and SQLite, measures latency exactly (HDR histograms, coordinated-omission correct in
open loop), and keeps every run with its provenance in a results store.

Start with:  fathom quickstart`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
					return usagef("unknown command %q: did you mean %s? (see `fathom --help`)", args[0], strings.Join(s, " or "))
				}
				return usagef("unknown command %q: see `fathom --help`", args[0])
			}
			return nil
		},
		RunE:    func(cmd *cobra.Command, args []string) error { return cmd.Help() },
		Version: version(),
	}
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	root.SuggestionsMinimumDistance = 2
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		var names []string
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden && f.Deprecated == "" {
				names = append(names, f.Name)
			}
		})
		if s := compat.FlagHint(cmd.Name(), err.Error(), names); s != "" {
			return usagef("%s (see `%s --help`)", s, cmd.CommandPath())
		}
		return usagef("%s (see `%s --help`)", err, cmd.CommandPath())
	})
	root.CompletionOptions.DisableDefaultCmd = true
	root.AddCommand(
		newPrepareCmd(env),
		newRunCmd(env),
		newCleanupCmd(env),
		newQuickstartCmd(env),
		newRunsCmd(env),
		newShowCmd(env),
		newExportCmd(env),
		newReportCmd(env),
		newCompareCmd(env),
		newWorkloadsCmd(env),
		newWorkloadCmd(env),
		newCheckCmd(env),
		newHeartbeatCmd(env),
		newExperimentCmd(env),
		newExperimentsCmd(env),
		newInstanceCmd(env),
		newWatchCmd(env),
		newSnapshotCmd(env),
		newStallsCmd(env),
		newCollectorsCmd(env),
		newServeCmd(env),
		newStoreCmd(env),
		newCaptureCmd(env),
		newAgentCmd(env),
		newK8sCmd(env),
		newVersionCmd(env),
	)
	for _, c := range root.Commands() {
		if c.Args == nil {
			c.Args = noArgs
		}
	}
	return root
}

func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("%s takes no arguments (got %q): see `%s --help`", cmd.CommandPath(), args[0], cmd.CommandPath())
	}
	return nil
}

// storeFlag adds --store, defaulting to $FATHOM_STORE or fathom.db.
func storeFlag(fs *pflag.FlagSet, env *Env, p *string) {
	def := env.Getenv("FATHOM_STORE")
	if def == "" {
		def = "fathom.db"
	}
	fs.StringVar(p, "store", def, "results store: a SQLite file or a postgres:// URL (also $FATHOM_STORE)")
}
