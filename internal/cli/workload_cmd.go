package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fathom-lab/fathom/internal/workload"
	"github.com/fathom-lab/fathom/internal/workload/builtin"
	"github.com/fathom-lab/fathom/internal/workload/spec"
)

// newWorkloadCmd is `fathom workload check FILE…` and `fathom workload show NAME|FILE`.
func newWorkloadCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "workload",
		Short: "Check and show workload files (your own, or the built-in fanout, seqrand, ycsb)",
		Long: `A workload file describes tables, data and transactions in YAML; run it with
fathom prepare/run/cleanup --workload path/to/file.yaml. See docs/workload-file.md
for the format.`,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newWorkloadCheckCmd(env), newWorkloadShowCmd(env))
	return cmd
}

func newWorkloadCheckCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "check FILE...",
		Short: "Validate workload files without a database, listing every problem with its line",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("workload check needs a workload file: fathom workload check FILE.yaml")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			bad, problems := 0, 0
			for _, path := range args {
				w, err := spec.CheckFile(path)
				var perr *spec.Error
				switch {
				case errors.As(err, &perr):
					fmt.Fprintln(env.Stdout, perr.Error())
					bad++
					problems += len(perr.Problems)
				case err != nil:
					return usagef("%v", err)
				default:
					fmt.Fprintf(env.Stdout, "%s: ok: workload %s, %s\n", path, w.Name(), w.Summary())
				}
			}
			if bad > 0 {
				// A file with mistakes is a usage mistake, exit 2, as with experiment --check.
				return usagef("%d problem%s in %d of %d file%s", problems, wlPlural(problems), bad, len(args), wlPlural(len(args)))
			}
			return nil
		},
	}
}

func wlPlural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func newWorkloadShowCmd(env *Env) *cobra.Command {
	var (
		set     []string
		dialect string
		source  bool
	)
	cmd := &cobra.Command{
		Use:   "show NAME|FILE",
		Short: "Print a workload resolved: parameters, DDL, loading, groups, statements and their value generators",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("workload show takes one workload name or file (see `fathom workloads`)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if source {
				data, _, ok := builtin.Source(name)
				if !ok {
					return usagef("--source: %s is not a shipped workload file (those are: %s)", name, strings.Join(shippedNames(), ", "))
				}
				_, err := env.Stdout.Write(data)
				return err
			}
			s, err := builtin.Lookup(name)
			if err != nil {
				return usagef("%v", err)
			}
			p := workload.Params{}
			for _, kv := range set {
				k, v, err := parseKV(kv, "--set")
				if err != nil {
					return usagef("%v", err)
				}
				p[k] = v
			}
			wl, err := s.New(p)
			if err != nil {
				return usagef("%v", err)
			}
			if sw, ok := wl.(*spec.Workload); ok {
				if !slices.Contains(spec.Dialects(), dialect) {
					return usagef("--dialect %q: use %s", dialect, strings.Join(spec.Dialects(), ", "))
				}
				return sw.Describe(env.Stdout, dialect)
			}
			return builtin.Describe(env.Stdout, s, wl)
		},
	}
	fs := cmd.Flags()
	fs.StringArrayVar(&set, "set", nil, "parameter key=value (repeatable)")
	fs.StringVar(&dialect, "dialect", "postgres", "render DDL and SQL for postgres, mysql or sqlite")
	fs.BoolVar(&source, "source", false, "print the shipped workload file itself (a starting point for your own)")
	return cmd
}

func shippedNames() []string {
	var out []string
	for _, n := range builtin.Names() {
		if builtin.Shipped(n) {
			out = append(out, n)
		}
	}
	return out
}
