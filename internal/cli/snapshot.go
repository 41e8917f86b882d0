package cli

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fathom-lab/fathom/internal/collect"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/target/targets"
)

func newSnapshotCmd(env *Env) *cobra.Command {
	var (
		dsn, out       string
		interval, long time.Duration
		connectTimeout time.Duration
		top            int
	)
	cmd := &cobra.Command{
		Use:   "snapshot",
		Short: "Collect a review bundle of a server and its host: settings, status twice with differences, sessions, sizes, schema, logs, OS facts",
		Long: `snapshot collects what a consultant reviewing a server gathers, in one go, one file
per source with a summary page on top (summary.txt): server version and settings,
configuration file locations, every status counter sampled twice --interval apart with
the differences, sessions with the long-running and blocked ones, InnoDB status twice,
replication status, database and largest table sizes, the schema, error and slow log
locations, OS and hardware facts, and vmstat-like samples every second. A source that
cannot be read is listed and the others are still taken. Passwords are masked in every
file.

The bundle is a directory, or a .tar.gz archive when -o names one (the default).`,
		Example: `  fathom snapshot --target postgres://postgres@db1/app
  fathom snapshot --target mysql://root@127.0.0.1/test -o review-db1/ --interval 30s`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if interval < time.Second {
				return usagef("--interval %s: use at least 1s", interval)
			}
			if top < 1 {
				return usagef("--top %d: use at least 1", top)
			}
			tgt, err := targets.Open(dsn, target.Config{ConnectTimeout: connectTimeout, AppName: "fathom snapshot"})
			if err != nil {
				return usagef("%v", err)
			}
			defer tgt.Close()
			if out == "" {
				out = fmt.Sprintf("fathom-snapshot-%s.tar.gz", env.Now().UTC().Format("20060102-150405"))
			}
			archive := strings.HasSuffix(out, ".tar.gz") || strings.HasSuffix(out, ".tgz")
			if archive {
				if _, err := os.Stat(out); err == nil {
					return usagef("-o %s already exists: name another file", out)
				}
			} else if ents, err := os.ReadDir(out); err == nil && len(ents) > 0 {
				return usagef("-o %s already holds files: name a new directory or a FILE.tar.gz", out)
			}
			if dir := filepath.Dir(out); dir != "." {
				if st, err := os.Stat(dir); err != nil || !st.IsDir() {
					return usagef("-o %s: directory %s does not exist", out, dir)
				}
			}
			ctx, stop := env.Interrupts(cmd.Context())
			defer stop()
			fmt.Fprintf(env.Stderr, "snapshot of %s (about %s)\n", tgt.Redacted(), interval+5*time.Second)
			b, err := collect.Snapshot(ctx, tgt, collect.SnapshotOptions{
				Interval: interval, TopTables: top, LongRunning: long, DSN: dsn, Version: version(),
				Secrets:  dsnSecrets(dsn),
				Progress: func(s string) { fmt.Fprintf(env.Stderr, "  %s\n", s) },
			})
			if err != nil {
				return connectError(tgt, err)
			}
			if ctx.Err() != nil {
				return withCode(ExitInterrupted, fmt.Errorf("snapshot interrupted: nothing written"))
			}
			if archive {
				err = b.WriteTarGz(out)
			} else {
				err = b.WriteDir(out)
			}
			if err != nil {
				return withCode(ExitFailure, fmt.Errorf("writing the snapshot: %v", err))
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
		def = DefaultTarget
	}
	fs.StringVar(&dsn, "target", def, "database: postgres://…, mysql://…, sqlite:PATH (also $FATHOM_TARGET)")
	fs.StringVarP(&out, "output", "o", "", "directory, or FILE.tar.gz (default fathom-snapshot-DATE-TIME.tar.gz)")
	durationVarP(fs, &interval, "interval", "i", 10*time.Second, "time between the two status samples (vmstat every second meanwhile)")
	durationVarP(fs, &long, "long-running", "", time.Minute, "list statements and transactions older than this as long-running")
	durationVarP(fs, &connectTimeout, "connect-timeout", "", 10*time.Second, "time allowed for each connection attempt")
	fs.IntVar(&top, "top", 25, "how many of the largest tables to list")
	return cmd
}

// dsnSecrets returns the password of a URL or key=value DSN, to be masked wherever it
// might appear.
func dsnSecrets(dsn string) []string {
	var out []string
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok && p != "" {
			out = append(out, p)
		}
		if p := u.Query().Get("password"); p != "" {
			out = append(out, p)
		}
	}
	for _, f := range strings.Fields(dsn) {
		if k, v, ok := strings.Cut(f, "="); ok && strings.EqualFold(k, "password") && v != "" {
			out = append(out, strings.Trim(v, "'"))
		}
	}
	return out
}
