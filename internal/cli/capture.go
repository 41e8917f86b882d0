package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fathom-lab/fathom/internal/capture"
	"github.com/fathom-lab/fathom/internal/db"
	"github.com/fathom-lab/fathom/internal/run"
	"github.com/fathom-lab/fathom/internal/safefile"
)

func newCaptureCmd(env *Env) *cobra.Command {
	var o capture.Options
	var dsn, out string
	cmd := &cobra.Command{
		Use:   "capture",
		Short: "Write a workload file from the server's statement statistics (pg_stat_statements, performance_schema, a slow log)",
		Example: `  fathom capture --target postgres://postgres@db1/app --top 10 -o app.yaml
  fathom capture --target mysql://root@db2/shop --by time -o shop.yaml
  fathom capture --target mysql://root@db2/shop --slow-log /var/log/mysql/slow.log -o shop.yaml
  fathom capture --target postgres://postgres@db1/app --slow-log /var/log/postgresql/postgresql-15-main.log -o app.yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(dsn) == "" {
				return usagef("capture needs a server: give --target postgres://… or mysql://… (or set FATHOM_TARGET)")
			}
			if o.Top < 1 {
				return usagef("--top %d: keep 1 statement or more", o.Top)
			}
			if o.By != "calls" && o.By != "time" {
				return usagef("--by %q: use calls or time", o.By)
			}
			tgt, err := run.Target{DSN: dsn, ConnectTimeout: 10 * time.Second, Getenv: env.Getenv}.Open()
			if err != nil {
				return err
			}
			defer tgt.Close()
			o.Now, o.Reader = env.Now(), db.CaptureOf(tgt.Kind())
			if o.Reader == nil && o.SlowLog != "" {
				// A kind without a reader of its own: the log is read in the format most
				// tools write, by the kind whose reader says it reads that.
				o.Reader = db.CommonLogReader()
			}
			w, err := capture.Capture(cmd.Context(), tgt, o)
			if errors.Is(err, capture.ErrNotAvailable) {
				return withCode(exitFailure, err)
			} else if err != nil {
				return withCode(exitFailure, fmt.Errorf("capturing from %s: %v", tgt.Redacted(), err))
			}
			dst := io.Writer(env.Stdout)
			if out != "" && out != "-" {
				f, err := safefile.Create(out)
				if err != nil {
					return usagef("-o %s: %v", out, err)
				}
				defer f.Close()
				dst = f
			}
			if err := w.Write(dst); err != nil {
				return withCode(exitFailure, fmt.Errorf("writing %s: %v", out, err))
			}
			if out != "" && out != "-" {
				fmt.Fprintf(env.Stderr, "captured %d statements into %s; check it with `fathom workload check %s`\n", len(w.Statements), out, shellQuote(out))
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&dsn, "target", env.Getenv("FATHOM_TARGET"), "the server to capture from: postgres://… or mysql://… (also $FATHOM_TARGET)")
	fs.IntVar(&o.Top, "top", 10, "statements to keep, the busiest first")
	fs.StringVar(&o.By, "by", "calls", "what ranks the statements: calls or time (total execution time)")
	fs.StringVar(&o.SlowLog, "slow-log", "", "read this log of every statement instead of the statistics: MySQL's slow log (long_query_time=0) or PostgreSQL's log (log_min_duration_statement=0); groups transactions and fits the values' skew")
	fs.StringVar(&o.Name, "name", "captured", "the workload's name")
	fs.StringVarP(&out, "output", "o", "", "write the workload file here (default: standard output)")
	return cmd
}
