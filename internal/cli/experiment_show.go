package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fathom-lab/fathom/internal/experiment"
	"github.com/fathom-lab/fathom/internal/report"
	"github.com/fathom-lab/fathom/internal/secret"
	"github.com/fathom-lab/fathom/internal/store"
)

func newExperimentsCmd(env *Env) *cobra.Command {
	var path secret.DSN
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
				return withCode(exitFailure, err)
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
			return report.WriteExperiments(env.Stdout, exps)
		},
	}
	fs := cmd.Flags()
	storeFlag(fs, env, &path)
	fs.IntVarP(&limit, "limit", "n", 50, "list at most this many experiments (0 = all)")
	fs.BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func showExperiment(ctx context.Context, env *Env, st store.Store, arg string, asJSON bool) error {
	exp, err := experiment.Find(ctx, st, arg)
	if err != nil {
		return err
	}
	if asJSON {
		v, err := report.ExperimentJSON(ctx, st, exp)
		if err != nil {
			return withCode(exitFailure, err)
		}
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	if err := report.WriteExperiment(ctx, env.Stdout, st, exp, report.ExperimentStatus(exp)); err != nil {
		return withCode(exitFailure, err)
	}
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
func showExperimentRef(ctx context.Context, env *Env, st store.Store, ref string, out report.Choice) error {
	exp, err := experiment.Find(ctx, st, ref)
	if err != nil {
		if codeOf(err) == exitUsage {
			return usagef("%q is not a run id nor an experiment in %s: use a number from `fathom runs`, last, or a name from `fathom experiments`", ref, st.Path())
		}
		return err
	}
	if err := out.Write(ctx, env.Stdout, &report.ExperimentView{Exp: exp, Store: st}); err != nil {
		return withCode(exitFailure, err)
	}
	return nil
}
