package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fathom-lab/fathom/internal/collect"
	"github.com/fathom-lab/fathom/internal/db"
	"github.com/fathom-lab/fathom/internal/run"
	"github.com/fathom-lab/fathom/internal/target"
)

func newSnapshotCmd(env *Env) *cobra.Command {
	var (
		dsn, out       string
		interval, long time.Duration
		connectTimeout time.Duration
		top, samples   int
	)
	cmd := &cobra.Command{
		Use:   "snapshot",
		Short: "Collect a review bundle of a server and its host: settings, configuration files, status sampled N times, sessions, logs, replication, users, sizes, schema, OS facts",
		Long: `snapshot collects what a consultant reviewing a server gathers, in one go, one file
per source with a summary page on top (summary.txt): server version and settings, the
configuration files the server reads and their contents, every status counter (and
InnoDB status) sampled --samples times --interval apart with the differences, sessions
with the long-running and blocked ones, the error log's tail, the statements that took
the most time (performance_schema, pg_stat_statements or the slow log), the binary log
digest, replication (replica status by column name, connected replicas), users and
privileges without password hashes, database and largest table sizes, the schema,
network interfaces and listening sockets, OS and hardware facts, and vmstat-like samples
every second. A source that cannot be read is listed and the others are still taken.
Passwords are masked in every file.

The bundle is a directory (created with its parents, mode 0700) or a .tar.gz archive
when -o names one (the default). An -o that cannot be written is refused before
anything is sampled.`,
		Example: `  fathom snapshot --target postgres://postgres@db1/app
  fathom snapshot --target mysql://root@127.0.0.1/test -o reviews/db1/ --interval 30s --samples 5`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if interval < time.Second {
				return usagef("--interval %s: use at least 1s", interval)
			}
			if top < 1 {
				return usagef("--top %d: use at least 1", top)
			}
			if samples < 2 {
				return usagef("--samples %d: use at least 2 (status is compared between samples)", samples)
			}
			tgt, err := db.Open(dsn, target.Config{ConnectTimeout: connectTimeout, AppName: "fathom snapshot", Getenv: env.Getenv})
			if err != nil {
				return usagef("%v", err)
			}
			defer tgt.Close()
			if out == "" {
				out = fmt.Sprintf("fathom-snapshot-%s.tar.gz", env.Now().UTC().Format("20060102-150405"))
			}
			archive := strings.HasSuffix(out, ".tar.gz") || strings.HasSuffix(out, ".tgz")
			// The output's place is made and proven writable now, before any sampling.
			if err := collect.PrepareOutput(out, archive); err != nil {
				return usagef("-o %s: %v", out, err)
			}
			ctx, stop := env.Interrupts(cmd.Context())
			defer stop()
			fmt.Fprintf(env.Stderr, "snapshot of %s (about %s)\n", tgt.Redacted(), time.Duration(samples-1)*interval+5*time.Second)
			b, err := collect.Snapshot(ctx, tgt, collect.SnapshotOptions{
				Kind: db.CollectOf(tgt.Kind()), Interval: interval, Samples: samples, TopTables: top, LongRunning: long, DSN: dsn, Version: version(),
				Secrets:  target.DSNSecrets(dsn),
				Progress: func(s string) { fmt.Fprintf(env.Stderr, "  %s\n", s) },
			})
			if err != nil {
				return run.ConnectError(tgt, err)
			}
			if ctx.Err() != nil {
				return withCode(exitInterrupted, fmt.Errorf("snapshot interrupted: nothing written"))
			}
			if archive {
				err = b.WriteTarGz(out)
			} else {
				err = b.WriteDir(out)
			}
			if err != nil {
				return withCode(exitFailure, fmt.Errorf("writing the snapshot: %v", err))
			}
			fmt.Fprintf(env.Stdout, "snapshot written to %s: %d files", out, len(b.Files))
			if len(b.Errors) > 0 {
				fmt.Fprintf(env.Stdout, ", %d sources could not be read (see errors.txt)", len(b.Errors))
			}
			fmt.Fprintln(env.Stdout)
			if f := b.File("summary.txt"); f != nil {
				env.Stdout.Write(f.Data)
			}
			return nil
		},
	}
	fs := cmd.Flags()
	def := env.Getenv("FATHOM_TARGET")
	if def == "" {
		def = defaultTarget
	}
	fs.StringVar(&dsn, "target", def, "database: postgres://…, mysql://…, sqlite:PATH (also $FATHOM_TARGET)")
	fs.StringVarP(&out, "output", "o", "", "directory, or FILE.tar.gz (default fathom-snapshot-DATE-TIME.tar.gz)")
	positiveDurationVarP(fs, &interval, "interval", "i", 10*time.Second, "time between status samples (vmstat every second meanwhile)")
	durationVarP(fs, &long, "long-running", "", time.Minute, "list statements and transactions older than this as long-running")
	positiveDurationVarP(fs, &connectTimeout, "connect-timeout", "", 10*time.Second, "time allowed for each connection attempt")
	fs.IntVar(&top, "top", 25, "how many of the largest tables to list")
	fs.IntVarP(&samples, "samples", "n", 2, "how many times to sample status (and InnoDB status), --interval apart")
	return cmd
}
