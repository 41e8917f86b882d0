package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fathom-lab/fathom/internal/check"
	"github.com/fathom-lab/fathom/internal/db"
	"github.com/fathom-lab/fathom/internal/target"
)

// errReported is returned by commands that printed their own outcome (check's Nagios
// line) and only need their exit code: Run prints nothing more for it.
var errReported = errors.New("")

// reported exits with code without printing anything more.
func reported(code int) error {
	if code == 0 {
		return nil
	}
	return &exitError{code: code, err: errReported}
}

type checkOpts struct {
	check.Flags    // what to check
	target         string
	defaultsFile   string
	stateDir       string
	cacheAge       time.Duration
	timeout        time.Duration
	connectFailure string
	list           bool
}

func newCheckCmd(env *Env) *cobra.Command {
	var o checkOpts
	cmd := &cobra.Command{
		Use:   "check --target DSN --mode MODE [-w RANGE] [-c RANGE]",
		Short: "Nagios/Icinga plugin: alert on expressions over server status, replication lag and more",
		Long: `check is a Nagios/Icinga plugin for PostgreSQL and MySQL/MariaDB. It reads the server's
status once, evaluates one or more checks on it and prints one plugin line

  NAME STATUS - message | 'label'=value[UOM];warn;crit;min;max

exiting 0 OK, 1 WARNING, 2 CRITICAL or 3 UNKNOWN.

Modes:
` + check.ModeHelp() + `
Expressions (varcomp, lastrun-varcomp) use the server's variables by name, case-insensitive:
MySQL GLOBAL STATUS and VARIABLES (status wins on a clash), the first replication channel's
SHOW REPLICA STATUS columns, processlist and InnoDB figures; PostgreSQL settings,
pg_stat_database totals, pg_stat_bgwriter, connections_<state>, longest_*_seconds,
xid_wraparound_age and replication figures. --list prints them all. Functions: rate(X),
delta(X) (against the previous run), current{X}, lastrun{X}, elapsed(), abs, min, max,
round, ceil, floor.

Thresholds are Nagios ranges: 10 (alert outside 0..10), 10: (below 10), ~:10 (above 10),
10:20 (outside), @10:20 (inside); or --comparison_warning "> 75" style.`,
		Example: `  fathom check --target mysql://monitor@db1/ --mode varcomp \
      --expression 'Threads_connected / max_connections * 100' \
      --comparison_warning '> 75' --comparison_critical '> 80' --shortname threads
  fathom check --target mysql://monitor@db1/ --mode lastrun-varcomp \
      --expression 'current{Open_table_definitions} - lastrun{Open_table_definitions}' -w 10 -c 50
  fathom check --target postgres://monitor@db2/postgres --mode varcomp --expression 'rate(xact_commit)' -w 5000
  fathom check --target mysql://monitor@replica1/app --mode replication-lag --heartbeat -w 5 -c 30
  fathom check --target postgres://monitor@db2/postgres --config /etc/fathom/checks.yaml`,
		Args: cobra.ArbitraryArgs, // checked in RunE, to answer with a plugin line
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				fmt.Fprintf(env.Stdout, "FATHOM UNKNOWN - %s\n", check.PluginText(fmt.Sprintf("fathom check takes no arguments (got %q): give the server with --target", oneLineMsg(args[0]))))
				return reported(int(check.Unknown))
			}
			return runCheck(cmd.Context(), env, cmd.Flags(), &o)
		},
	}
	fs := cmd.Flags()
	fs.SetNormalizeFunc(func(f *pflag.FlagSet, name string) pflag.NormalizedName {
		// The original plugin's spellings: --comparison_warning, --cache_dir …
		return pflag.NormalizedName(strings.ReplaceAll(name, "_", "-"))
	})
	fs.StringVar(&o.target, "target", env.Getenv("FATHOM_TARGET"), "server: postgres://… or mysql://… (also $FATHOM_TARGET); credentials from .pgpass/PG* or ~/.my.cnf")
	o.Flags.Register(fs)
	fs.StringVar(&o.defaultsFile, "defaults-file", "", "MySQL: read [client] options (user, password, host) from this file instead of ~/.my.cnf")
	fs.StringVar(&o.stateDir, "state-dir", defaultStateDir(env), "where state for deltas and the sample cache live (also $FATHOM_CHECK_STATE_DIR)")
	fs.StringVar(&o.stateDir, "cache-dir", defaultStateDir(env), "same as --state-dir")
	_ = fs.MarkHidden("cache-dir")
	durationVarP(fs, &o.cacheAge, "cache-age", "", 5*time.Second, "reuse a sample of the same host and port this young (0: always read the server)")
	durationVarP(fs, &o.cacheAge, "max-cache-age", "", 5*time.Second, "same as --cache-age")
	_ = fs.MarkHidden("max-cache-age")
	positiveDurationVarP(fs, &o.timeout, "timeout", "t", 10*time.Second, "give up after this long")
	fs.StringVar(&o.connectFailure, "connect-failure", "critical", "status when the server cannot be reached: critical or unknown")
	fs.BoolVar(&o.list, "list", false, "print the server's variables usable in expressions, and exit")
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		fmt.Fprintf(env.Stdout, "FATHOM UNKNOWN - %s (see `fathom check --help`)\n", check.PluginText(oneLineMsg(err.Error())))
		return reported(int(check.Unknown))
	})
	return cmd
}

// defaultStateDir is $FATHOM_CHECK_STATE_DIR, else $XDG_STATE_HOME/fathom/check, else
// ~/.local/state/fathom/check, else fathom-check-UID in the temporary directory: named
// by the numeric user id (a user name can be chosen or reused by someone else), created
// private, and refused when it exists and belongs to another user.
func defaultStateDir(env *Env) string {
	if d := env.Getenv("FATHOM_CHECK_STATE_DIR"); d != "" {
		return d
	}
	if d := env.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "fathom", "check")
	}
	if h := env.Getenv("HOME"); h != "" && h != "/" {
		return filepath.Join(h, ".local", "state", "fathom", "check")
	}
	tmp := env.Getenv("TMPDIR")
	if tmp == "" {
		tmp = "/tmp"
	}
	return filepath.Join(tmp, "fathom-check-"+strconv.Itoa(os.Geteuid()))
}

func oneLineMsg(s string) string {
	return target.RedactString(strings.Join(strings.Fields(s), " "))
}

// runCheck prints the plugin output and returns the Nagios exit code as an error.
func runCheck(ctx context.Context, env *Env, fs *pflag.FlagSet, o *checkOpts) error {
	unknown := func(name, format string, args ...any) error {
		// A name that the check refused (it may hold '|' or spaces) is not printed as one.
		if name == "" || strings.ContainsAny(name, "\n|'= ") {
			name = "FATHOM"
		}
		fmt.Fprintf(env.Stdout, "%s UNKNOWN - %s\n", name, check.PluginText(oneLineMsg(fmt.Sprintf(format, args...))))
		return reported(int(check.Unknown))
	}
	name := o.Shortname
	var (
		checks []*check.Check
		title  string
		err    error
	)
	if !o.list {
		if checks, title, err = o.Checks(fs); err != nil {
			return unknown(name, "%v", err)
		}
	}
	connectFailure, err := check.ParseStatus(o.connectFailure)
	if err != nil || connectFailure != check.Critical && connectFailure != check.Unknown {
		return unknown(name, "--connect-failure %q: use critical or unknown", o.connectFailure)
	}
	if o.timeout <= 0 {
		return unknown(name, "--timeout must be positive")
	}
	dsn := strings.TrimSpace(o.target)
	if dsn == "" {
		return unknown(name, "no server to check: give --target postgres://user@host/db or mysql://user@host/db (or set FATHOM_TARGET)")
	}
	if o.defaultsFile != "" {
		of, ok := db.ForDSN(dsn).(db.OptionFiler)
		if !ok {
			return unknown(name, "--defaults-file is for MySQL/MariaDB targets")
		}
		dsn, err = target.WithParam(dsn, of.OptionFileParam(), o.defaultsFile)
		if err != nil {
			return unknown(name, "%v", err)
		}
	}
	source := db.CheckOf(db.KindOf(dsn))
	if k := db.ForDSN(dsn); k != nil && source == nil {
		return unknown(name, "fathom check reads server status: use a PostgreSQL or MySQL/MariaDB target, not %s", k.Title())
	}
	tg, err := db.Open(dsn, target.Config{ConnectTimeout: o.timeout, AppName: "fathom check", Getenv: env.Getenv})
	if err != nil {
		return unknown(name, "%v", err)
	}
	defer tg.Close()

	runner := check.NewRunner(tg, check.Options{
		State:          check.Dir{Path: o.stateDir},
		CacheAge:       o.cacheAge,
		ConnectFailure: connectFailure,
		Now:            env.Now,
		Timeout:        o.timeout,
		Dialect:        source,
	})

	if o.list {
		s, abandoned, err := runner.SampleWithin(ctx)
		if !abandoned {
			defer runner.Close()
		}
		if err != nil {
			fmt.Fprintf(env.Stdout, "FATHOM %s - %s\n", connectFailure, check.PluginText(oneLineMsg(err.Error())))
			return reported(int(connectFailure))
		}
		tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
		for _, n := range s.Vars.Names() {
			v, _ := s.Vars.Get(n)
			fmt.Fprintf(tw, "%s\t%s\n", n, oneLineMsg(v.String()))
		}
		for what, why := range s.Missing {
			fmt.Fprintf(env.Stderr, "fathom: %s not read: %s\n", what, why)
		}
		return tw.Flush()
	}
	results, abandoned := runner.RunWithin(ctx, checks)
	if !abandoned {
		runner.Close()
	}
	status, out := check.Combine(title, results)
	fmt.Fprint(env.Stdout, target.RedactString(out))
	return reported(int(status))
}
