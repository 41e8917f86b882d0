package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/fathom-lab/fathom/internal/db"
	"github.com/fathom-lab/fathom/internal/report"
)

func newQuickstartCmd(env *Env) *cobra.Command {
	o := &runOpts{}
	cmd := &cobra.Command{
		Use:   "quickstart",
		Short: "Prepare a small TPC-B-like data set in an embedded SQLite file, benchmark it, print the summary",
		Long: `quickstart needs no server: it prepares pgbench's TPC-B-like tables (scale 1, 100,000
accounts) in an embedded SQLite database, runs a short benchmark with a warm-up, stores
the run and prints its summary. Every run flag works here too, e.g. --target to point
it at a real server, or -T for a longer run.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("target") && env.Getenv("FATHOM_TARGET") == "" {
				o.target = "sqlite:fathom-quickstart.db"
			}
			if err := prepare(cmd.Context(), env, &o.targetOpts, nil, o.quiet); err != nil {
				return err
			}
			fmt.Fprintln(env.Stdout)
			sum, err := o.execute(cmd.Context(), env)
			if err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "\nstored as run %d in %s: `fathom show %d`, `fathom export %d --format csv`\n", sum.RunID, o.store, sum.RunID, sum.RunID)
			st, err := openStore(o.store)
			if err != nil {
				return err
			}
			defer st.Close()
			index, err := report.WriteRunDir(cmd.Context(), st, db.Figures(), sum.RunID, fmt.Sprintf("fathom %s on %s", version(), env.Now().UTC().Format("2006-01-02 15:04 MST")))
			if err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "report: %s (charts, summary.md, CSV files)\n", index)
			return nil
		},
	}
	o.register(cmd, env)
	fs := cmd.Flags()
	// Short defaults that still show something real.
	_ = fs.Set("clients", "2")
	_ = fs.Set("time", "10s")
	_ = fs.Set("warmup", "2s")
	for _, n := range []string{"clients", "time", "warmup"} {
		f := fs.Lookup(n)
		f.DefValue = f.Value.String()
		f.Changed = false
	}
	// fathom run's -T help names its own default; quickstart's is the one above.
	fs.Lookup("time").Usage = "measured duration after warm-up, e.g. 60 or 5m"
	return cmd
}
