package cli

import (
	"github.com/spf13/cobra"

	"github.com/fathom-lab/fathom/internal/store/storecopy"
)

func newStoreCmd(env *Env) *cobra.Command {
	var o storecopy.Options
	cp := &cobra.Command{
		Use:   "copy FROM TO [RUN|FIRST-LAST|exp:NAME…]",
		Short: "Copy runs (intervals, histograms, samples, stalls, provenance) and experiments between two stores, idempotently (none named: all)",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usagef("store copy needs FROM and TO: two --store values (SQLite files or postgres:// URLs)")
			}
			return storeError(storecopy.Between(cmd.Context(), args[0], args[1], args[2:], o, env.Stdout, env.Stderr))
		},
	}
	cp.Flags().BoolVar(&o.Anonymize, "anonymize", false, "drop host names, targets, command lines, plan texts and paths, hook commands and outputs")
	cp.Flags().StringSliceVar(&o.DropLabels, "drop-label", nil, "leave out this label (repeatable)")
	st := &cobra.Command{Use: "store", Short: "Work on results stores: store copy", Args: noArgs}
	st.AddCommand(cp)
	return st
}
