package cli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/fathom-lab/fathom/internal/analyze"
	"github.com/fathom-lab/fathom/internal/store"
)

// newStallsCmd shows a run's stalls, re-analysing them with other thresholds when
// asked (the result replaces the stored stalls).
func newStallsCmd(env *Env) *cobra.Command {
	var path string
	var asJSON bool
	var o samplingOpts
	cmd := &cobra.Command{
		Use:   "stalls RUN",
		Short: "Show a run's stalls and their explanations; --threshold/--window re-analyse it",
		Long: `A stall is a stretch of report intervals whose throughput fell below a fraction
(--threshold, default 0.5) of the run's rolling median throughput (over --window
intervals, default 31). Each stall lists the server and OS metrics that changed most
unusually against the run's own baseline and, where the pattern is known, names it
with the settings that usually govern it. Analysis reads only stored data, so old runs
can be re-analysed.`,
		Args: exactArgs(1, "RUN"),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := o.stallParams()
			if err != nil {
				return err
			}
			st, err := openStore(path)
			if err != nil {
				return err
			}
			defer st.Close()
			run, _, _, err := loadRun(cmd.Context(), st, args[0])
			if err != nil {
				return err
			}
			stalls, _, analyzed, err := st.Stalls(cmd.Context(), run.ID)
			if err != nil {
				return withCode(ExitFailure, err)
			}
			if !analyzed || o.threshold != 0 || o.window != 0 {
				if stalls, err = analyze.AnalyzeStored(cmd.Context(), st, run, p); err != nil {
					return withCode(ExitFailure, err)
				}
			}
			if asJSON {
				if stalls == nil {
					stalls = []store.Stall{}
				}
				enc := json.NewEncoder(env.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(stalls)
			}
			if ok, _ := st.HasSamples(cmd.Context(), run.ID); !ok {
				fmt.Fprintf(env.Stdout, "run %d has no server or OS samples (run with sampling to get explanations)\n", run.ID)
			}
			writeStalls(env.Stdout, stalls, run.ID)
			return nil
		},
	}
	storeFlag(cmd.Flags(), env, &path)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the stalls as JSON")
	cmd.Flags().Float64Var(&o.threshold, "threshold", 0, "re-analyse: a stall is throughput below this fraction of the rolling median (default 0.5)")
	cmd.Flags().IntVar(&o.window, "window", 0, "re-analyse: rolling median window in intervals (default 31)")
	return cmd
}
