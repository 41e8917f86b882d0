package cli

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fathom-lab/fathom/internal/analyze"
	"github.com/fathom-lab/fathom/internal/db"
	"github.com/fathom-lab/fathom/internal/report"
	"github.com/fathom-lab/fathom/internal/secret"
	"github.com/fathom-lab/fathom/internal/store"
)

// newStallsCmd shows a run's stalls, re-analysing them with other thresholds when
// asked: shown only, unless --save replaces the stored analysis with it.
func newStallsCmd(env *Env) *cobra.Command {
	var path secret.DSN
	var asJSON, save bool
	var o samplingOpts
	cmd := &cobra.Command{
		Use:   "stalls RUN",
		Short: "Show a run's stalls and their explanations; --threshold/--window re-analyse it",
		Long: `A stall is a stretch of report intervals whose throughput fell below a fraction
(--threshold, default 0.5) of the run's baseline: the median of the --window (default
31) nearest intervals that are not themselves in a stall, so that stalls of any length
are found and never drag the baseline down. Each stall lists the server and OS metrics
that rose unusually and materially against the run's own baseline and, where a known
cause's minimum evidence is there, names it with the settings that govern it on the
server's version. Analysis reads only stored data, so old runs can be re-analysed.

--threshold and --window show what other parameters find without changing the
stored analysis (the one reports and fathom show use); add --save to replace it.`,
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
			run, _, _, err := report.LoadRun(cmd.Context(), st, args[0])
			if err != nil {
				return err
			}
			stalls, _, analyzed, err := st.Stalls(cmd.Context(), run.ID)
			if err != nil {
				return withCode(exitFailure, err)
			}
			retry := o.Threshold != 0 || o.Window != 0
			switch {
			case !analyzed || retry && save:
				if stalls, err = analyze.AnalyzeStored(cmd.Context(), st, run, p, db.StallOf(run.TargetKind)); err != nil {
					return withCode(exitFailure, err)
				}
			case retry:
				in, err := analyze.StallsFromStore(cmd.Context(), st, run, db.StallOf(run.TargetKind))
				if err != nil {
					return withCode(exitFailure, err)
				}
				stalls = analyze.FindStalls(in, p)
			}
			if retry && !save && !asJSON {
				fmt.Fprintf(env.Stdout, "re-analysed with %s (not stored: the stored analysis is unchanged; --save replaces it)\n", stallParamText(o))
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
			report.WriteStalls(env.Stdout, stalls, run.ID)
			return nil
		},
	}
	storeFlag(cmd.Flags(), env, &path)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the stalls as JSON")
	fractionVar(cmd.Flags(), &o.Threshold, "threshold", 0, "re-analyse: a stall is throughput below this fraction of the baseline (default 0.5)")
	positiveIntVarP(cmd.Flags(), &o.Window, "window", "", 0, "re-analyse: the baseline is the median of this many healthy intervals nearby (default 31)")
	cmd.Flags().BoolVar(&save, "save", false, "with --threshold/--window: replace the stored analysis with the new one")
	return cmd
}

func stallParamText(o samplingOpts) string {
	var parts []string
	if o.Threshold != 0 {
		parts = append(parts, fmt.Sprintf("--threshold %g", o.Threshold))
	}
	if o.Window != 0 {
		parts = append(parts, fmt.Sprintf("--window %d", o.Window))
	}
	return strings.Join(parts, " ")
}
