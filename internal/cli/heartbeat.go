package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fathom-lab/fathom/internal/check"
	"github.com/fathom-lab/fathom/internal/db"
	"github.com/fathom-lab/fathom/internal/target"
)

func newHeartbeatCmd(env *Env) *cobra.Command {
	var (
		dsn      string
		table    string
		serverID int64
		interval time.Duration
		once     bool
	)
	cmd := &cobra.Command{
		Use:   "heartbeat [--target] DSN",
		Short: "Keep writing a heartbeat row on a primary, for `fathom check --mode replication-lag --heartbeat` on its replicas",
		Long: `heartbeat writes a timestamp row for this server (keyed by MySQL's @@server_id or
PostgreSQL's system identifier) every --interval, as pt-heartbeat --update does, until
it is stopped (SIGINT or SIGTERM). Replicas receive the row through replication, so its
age on a replica is the replica's true lag, even when its I/O thread is starved and
Seconds_Behind_Master says 0. It creates the table if needed. A lost connection is
retried for as long as it takes; run it under systemd or similar.

The timestamp is the primary's clock (UTC) and the check compares it with the
replica's clock: keep both servers' clocks synchronised (NTP).`,
		Example: `  fathom heartbeat mysql://heartbeat@db1/monitoring
  fathom heartbeat --target postgres://postgres@db2/postgres --interval 500ms`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				if cmd.Flags().Changed("target") {
					return usagef("give the target once: as --target or as the argument")
				}
				dsn = args[0]
			}
			if strings.TrimSpace(dsn) == "" {
				return usagef("no primary to write to: give --target postgres://… or mysql://… (or set FATHOM_TARGET)")
			}
			dialect := db.CheckOf(db.KindOf(dsn))
			if dialect == nil {
				return usagef("fathom heartbeat writes to a PostgreSQL or MySQL/MariaDB primary: give a postgres:// or mysql:// DSN")
			}
			tg, err := db.Open(dsn, target.Config{ConnectTimeout: 10 * time.Second, AppName: "fathom heartbeat", Getenv: env.Getenv})
			if err != nil {
				return usagef("%v", err)
			}
			defer tg.Close()
			hb := &check.Heartbeat{
				Target: tg, Dialect: dialect, Table: table, ServerID: serverID, Interval: interval,
				Log: func(s string) {
					fmt.Fprintf(env.Stderr, "%s fathom heartbeat: %s\n", env.Now().Format(time.RFC3339), target.RedactString(s))
				},
			}
			if err := hb.Prepare(); err != nil {
				return usagef("%v", err)
			}
			ctx := cmd.Context()
			if env.Interrupts != nil {
				var stop func()
				ctx, stop = env.Interrupts(ctx)
				defer stop()
			}
			if err := hb.Run(ctx, once); err != nil {
				return withCode(exitFailure, fmt.Errorf("heartbeat on %s: %v", tg.Redacted(), err))
			}
			if once {
				fmt.Fprintf(env.Stdout, "heartbeat written for server id %d in %s\n", hb.ID(), table)
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&dsn, "target", env.Getenv("FATHOM_TARGET"), "the primary: postgres://… or mysql://…/dbname (also $FATHOM_TARGET)")
	fs.StringVar(&table, "table", check.DefaultHeartbeatTable, "heartbeat table ([schema.]name), created if missing")
	fs.Int64Var(&serverID, "server-id", 0, "id to write the row under (default: @@server_id, or PostgreSQL's system identifier)")
	positiveDurationVarP(fs, &interval, "interval", "i", time.Second, "time between heartbeats")
	fs.BoolVar(&once, "once", false, "write one heartbeat and exit")
	return cmd
}
