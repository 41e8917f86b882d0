package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fathom-lab/fathom/internal/workload"
)

func newCheckDataCmd(env *Env) *cobra.Command {
	o := &targetOpts{}
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "check-data",
		Short: "Check that a workload's data still obeys its rules after runs (tpcc: TPC-C's consistency conditions, per warehouse)",
		Long: `Reads the workload's tables and checks the rules its transactions must keep: for tpcc,
conditions 1 to 5 of TPC-C clause 3.3.2, per warehouse and district. Run it after a run
(not during one). Exit 0: consistent; 5: the data breaks a rule (each violation is
listed; a score measured on such data is not valid); 1: the check could not be made;
2: a usage mistake (a workload without rules to check).`,
		Example: `  fathom check-data -w tpcc --target postgres://postgres@127.0.0.1/tpcc
  fathom check-data -w tpcc --target mysql://root@127.0.0.1/tpcc --json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, wl, err := o.openWorkload()
			if err != nil {
				return err
			}
			dc, ok := wl.(workload.DataChecker)
			if !ok {
				return usagef("workload %s has no data rules to check; check-data knows tpcc", wl.Name())
			}
			tgt, err := o.openTarget()
			if err != nil {
				return err
			}
			defer tgt.Close()
			ctx, stop := env.Interrupts(cmd.Context())
			defer stop()
			conn, err := connect(ctx, tgt)
			if err != nil {
				return err
			}
			defer conn.Close()
			rep, err := dc.CheckData(ctx, conn)
			if errors.Is(err, workload.ErrNotPrepared) {
				return withCode(exitFailure, fmt.Errorf("%v in %s", err, tgt.Redacted()))
			}
			if err != nil {
				return withCode(exitFailure, fmt.Errorf("checking the data of %s on %s: %v", wl.Name(), tgt.Redacted(), err))
			}
			if asJSON {
				enc := json.NewEncoder(env.Stdout)
				enc.SetIndent("", "  ")
				if err := enc.Encode(struct {
					Workload string `json:"workload"`
					Target   string `json:"target"`
					OK       bool   `json:"ok"`
					*workload.DataReport
				}{wl.Name(), tgt.Redacted(), rep.OK(), rep}); err != nil {
					return err
				}
			} else {
				printDataReport(env, wl.Name(), tgt.Redacted(), rep)
			}
			if !rep.OK() {
				var bad []string
				for _, p := range rep.Parts {
					if p.Violations > 0 {
						bad = append(bad, p.Name)
					}
				}
				return withCode(exitInconsistent, fmt.Errorf("the %s data on %s is inconsistent: %d violations in %s; results measured on it are not valid (prepare again: fathom prepare -w %s)",
					wl.Name(), tgt.Redacted(), len(rep.Violations), strings.Join(bad, ", "), wl.Name()))
			}
			return nil
		},
	}
	o.register(cmd.Flags(), env)
	f := cmd.Flags().Lookup("workload")
	f.DefValue = "tpcc"
	_ = f.Value.Set("tpcc")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the rules, the parts checked and the violations as JSON")
	return cmd
}

func printDataReport(env *Env, name, tgt string, rep *workload.DataReport) {
	w := env.Stdout
	parts := "parts"
	if len(rep.Parts) == 1 {
		parts = "part"
	}
	fmt.Fprintf(w, "%s data on %s: %d %s checked against\n", name, tgt, len(rep.Parts), parts)
	for _, r := range rep.Rules {
		fmt.Fprintf(w, "  %s\n", r)
	}
	byPart := map[string][]workload.DataViolation{}
	for _, v := range rep.Violations {
		byPart[v.Part] = append(byPart[v.Part], v)
	}
	for _, p := range rep.Parts {
		if p.Violations == 0 {
			fmt.Fprintf(w, "%s: consistent\n", p.Name)
			continue
		}
		fmt.Fprintf(w, "%s: INCONSISTENT (%d)\n", p.Name, p.Violations)
		for _, v := range byPart[p.Name] {
			where := ""
			if v.Where != "" {
				where = " " + v.Where
			}
			fmt.Fprintf(w, "  %s%s: %s\n", v.Rule, where, v.Detail)
		}
	}
}
