package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/fathom-lab/fathom/internal/workload/builtin"
)

func newWorkloadsCmd(env *Env) *cobra.Command {
	var verbose bool
	cmd := &cobra.Command{
		Use:   "workloads",
		Short: "List the built-in workloads and their options",
		RunE: func(cmd *cobra.Command, args []string) error {
			tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
			for _, n := range builtin.Names() {
				spec, _ := builtin.Lookup(n)
				fmt.Fprintf(tw, "%s\t%s\n", spec.Name, spec.Description)
				if verbose {
					for _, o := range spec.Options {
						def := o.Default
						if def == "" {
							def = "(detected)"
						}
						fmt.Fprintf(tw, "  --set %s=\t%s (default %s)\n", o.Name, o.Help, def)
					}
				}
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "also list each workload's options")
	return cmd
}
