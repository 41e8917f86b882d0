package cli

import (
	"github.com/spf13/cobra"

	"github.com/fathom-lab/fathom/internal/store/storecopy"
)

func newStoreCmd(env *Env) *cobra.Command {
	var o storecopy.Options
	var keyFile string
	cp := &cobra.Command{
		Use:   "copy FROM TO [RUN|FIRST-LAST|exp:NAME…]",
		Short: "Copy runs (intervals, histograms, samples, stalls, provenance) and experiments between two stores, idempotently (none named: all)",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usagef("store copy needs FROM and TO: two --store values (SQLite files or postgres:// URLs)")
			}
			if keyFile != "" {
				if !o.Anonymize {
					return usagef("--pseudonym-key goes with --anonymize")
				}
				key, err := storecopy.ReadKey(keyFile)
				if err != nil {
					return usagef("%v", err)
				}
				o.Key = key
			}
			if o.KeepHardware && !o.Anonymize {
				return usagef("--keep-hardware goes with --anonymize")
			}
			return storeError(storecopy.Between(cmd.Context(), args[0], args[1], args[2:], o, env.Stdout, env.Stderr))
		},
	}
	cp.Flags().BoolVar(&o.Anonymize, "anonymize", false, "replace host names, addresses, ports, users, databases, paths, devices, pids, UUIDs, kernel and CPU strings with stable pseudonyms, wherever they stand")
	cp.Flags().BoolVar(&o.KeepHardware, "keep-hardware", false, "with --anonymize: keep the kernel and CPU model strings")
	cp.Flags().StringVar(&keyFile, "pseudonym-key", "", "with --anonymize: file holding the secret the pseudonyms are made from (mode 600; default a random key per copy), for the same pseudonyms in later copies")
	cp.Flags().StringSliceVar(&o.DropLabels, "drop-label", nil, "leave out this label (repeatable)")
	st := &cobra.Command{Use: "store", Short: "Work on results stores: store copy, store upload", Args: noArgs}
	st.AddCommand(cp, newStoreUploadCmd(env))
	return st
}
