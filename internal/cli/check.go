package cli

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fathom-lab/fathom/internal/check"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/target/targets"
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
	target         string
	defaultsFile   string
	mode           string
	expression     string
	warning        string
	critical       string
	cmpWarning     string
	cmpCritical    string
	shortname      string
	uom            string
	min, max       string
	config         string
	stateDir       string
	cacheAge       time.Duration
	timeout        time.Duration
	baseline       string
	connectFailure string
	heartbeat      bool
	heartbeatTable string
	serverID       int64
	channel        string
	minReplicas    int
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
` + modeHelp() + `
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
				fmt.Fprintf(env.Stdout, "FATHOM UNKNOWN - fathom check takes no arguments (got %q): give the server with --target\n", oneLineMsg(args[0]))
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
	fs.StringVar(&o.defaultsFile, "defaults-file", "", "MySQL: read [client] options (user, password, host) from this file instead of ~/.my.cnf")
	fs.StringVarP(&o.mode, "mode", "m", "varcomp", "what to check: "+modeNames())
	fs.StringVarP(&o.expression, "expression", "e", "", "varcomp: the expression, e.g. 'Threads_connected / max_connections * 100'")
	fs.StringVarP(&o.warning, "warning", "w", "", "warning threshold (Nagios range)")
	fs.StringVarP(&o.critical, "critical", "c", "", "critical threshold (Nagios range)")
	fs.StringVar(&o.cmpWarning, "comparison-warning", "", `warning as a comparison: "> 75", ">= 75", "< 10", "== 0" …`)
	fs.StringVar(&o.cmpCritical, "comparison-critical", "", `critical as a comparison: "> 80" …`)
	fs.StringVarP(&o.shortname, "shortname", "n", "", "name at the start of the output and perfdata label (default: the mode)")
	fs.StringVar(&o.uom, "uom", "", "perfdata unit: s, ms, us, %, B, KB, MB, TB or c")
	fs.StringVar(&o.min, "min", "", "perfdata minimum")
	fs.StringVar(&o.max, "max", "", "perfdata maximum")
	fs.StringVar(&o.config, "config", "", "run the named checks of this YAML file (see the README) in one invocation")
	fs.StringVar(&o.stateDir, "state-dir", defaultStateDir(env), "where state for deltas and the sample cache live (also $FATHOM_CHECK_STATE_DIR)")
	fs.StringVar(&o.stateDir, "cache-dir", defaultStateDir(env), "same as --state-dir")
	_ = fs.MarkHidden("cache-dir")
	durationVarP(fs, &o.cacheAge, "cache-age", "", 5*time.Second, "reuse a sample of the same host and port this young (0: always read the server)")
	durationVarP(fs, &o.cacheAge, "max-cache-age", "", 5*time.Second, "same as --cache-age")
	_ = fs.MarkHidden("max-cache-age")
	durationVarP(fs, &o.timeout, "timeout", "t", 10*time.Second, "give up after this long")
	fs.StringVar(&o.baseline, "baseline-status", "unknown", "status of a run with no previous run to compare with, or after a counter reset")
	fs.StringVar(&o.connectFailure, "connect-failure", "critical", "status when the server cannot be reached: critical or unknown")
	fs.BoolVar(&o.heartbeat, "heartbeat", false, "replication-lag: measure lag from the heartbeat row `fathom heartbeat` writes on the primary")
	fs.StringVar(&o.heartbeatTable, "heartbeat-table", check.DefaultHeartbeatTable, "heartbeat table ([schema.]name)")
	fs.Int64Var(&o.serverID, "server-id", 0, "heartbeat: the primary's server id (default: MySQL Master_Server_Id, PostgreSQL system identifier)")
	fs.StringVar(&o.channel, "channel", "", "replication-lag, MySQL: only this replication channel (default: all)")
	fs.IntVar(&o.minReplicas, "min-replicas", 1, "replication-lag on a PostgreSQL primary: standbys that must be streaming")
	fs.BoolVar(&o.list, "list", false, "print the server's variables usable in expressions, and exit")
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		fmt.Fprintf(env.Stdout, "FATHOM UNKNOWN - %s (see `fathom check --help`)\n", oneLineMsg(err.Error()))
		return reported(int(check.Unknown))
	})
	return cmd
}

func modeNames() string {
	var names []string
	for _, m := range check.Modes {
		names = append(names, m.Name)
	}
	return strings.Join(names, ", ")
}

func modeHelp() string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, m := range check.Modes {
		fmt.Fprintf(tw, "  %s\t%s\n", m.Name, m.Help)
	}
	_ = tw.Flush()
	return b.String()
}

// defaultStateDir is $FATHOM_CHECK_STATE_DIR, else $XDG_STATE_HOME/fathom/check, else
// ~/.local/state/fathom/check, else a directory in the temporary directory.
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
	user := env.Getenv("USER")
	if user == "" {
		user = "nobody"
	}
	return filepath.Join(tmp, "fathom-check-"+user)
}

func oneLineMsg(s string) string {
	return target.RedactString(strings.Join(strings.Fields(s), " "))
}

// runCheck prints the plugin output and returns the Nagios exit code as an error.
func runCheck(ctx context.Context, env *Env, fs *pflag.FlagSet, o *checkOpts) error {
	unknown := func(name, format string, args ...any) error {
		if name == "" {
			name = "FATHOM"
		}
		fmt.Fprintf(env.Stdout, "%s UNKNOWN - %s\n", name, oneLineMsg(fmt.Sprintf(format, args...)))
		return reported(int(check.Unknown))
	}
	name := o.shortname
	var (
		checks []*check.Check
		title  string
		err    error
	)
	if !o.list {
		if checks, title, err = o.checks(fs); err != nil {
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
		if targets.Kind(dsn) != "mysql" {
			return unknown(name, "--defaults-file is for MySQL/MariaDB targets")
		}
		dsn, err = dsnWithParam(dsn, "defaults-file", o.defaultsFile)
		if err != nil {
			return unknown(name, "%v", err)
		}
	}
	switch targets.Kind(dsn) {
	case "postgres", "mysql":
	case "sqlite":
		return unknown(name, "fathom check reads server status: use a PostgreSQL or MySQL/MariaDB target, not SQLite")
	}
	tg, err := targets.Open(dsn, target.Config{ConnectTimeout: o.timeout, AppName: "fathom check"})
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
	})

	if o.list {
		s, abandoned, err := runner.SampleWithin(ctx)
		if !abandoned {
			defer runner.Close()
		}
		if err != nil {
			fmt.Fprintf(env.Stdout, "FATHOM %s - %s\n", connectFailure, oneLineMsg(err.Error()))
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

// checks builds the checks from --config or from the flags.
func (o *checkOpts) checks(fs *pflag.FlagSet) ([]*check.Check, string, error) {
	baseline, err := check.ParseStatus(o.baseline)
	if err != nil {
		return nil, "", fmt.Errorf("--baseline-status: %v", err)
	}
	if o.config != "" {
		for _, f := range []string{"expression", "warning", "critical", "comparison-warning", "comparison-critical", "uom", "min", "max", "heartbeat", "server-id", "channel", "min-replicas"} {
			if fs.Changed(f) {
				return nil, "", fmt.Errorf("--%s goes in the config file's checks when --config is given", f)
			}
		}
		if fs.Changed("mode") {
			return nil, "", errors.New("--mode goes in the config file's checks when --config is given")
		}
		f, err := os.Open(o.config)
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				return nil, "", fmt.Errorf("config %s: %v", o.config, pe.Err)
			}
			return nil, "", err
		}
		defer f.Close()
		cfg, err := check.ParseConfig(f)
		if err != nil {
			return nil, "", fmt.Errorf("config %s: %v", o.config, err)
		}
		if fs.Changed("baseline-status") {
			for _, c := range cfg.Checks {
				if c.Baseline == nil {
					c.Baseline = &baseline
				}
			}
		}
		if o.shortname != "" {
			cfg.Name = o.shortname
		}
		return cfg.Checks, cfg.Name, nil
	}
	c := &check.Check{
		Name: o.shortname, Mode: o.mode, Expression: o.expression, UOM: o.uom, Baseline: &baseline,
		Heartbeat: o.heartbeat, HeartbeatTable: o.heartbeatTable, ServerID: o.serverID,
		Channel: o.channel, MinReplicas: o.minReplicas,
	}
	if c.Warning, c.Critical, err = check.Thresholds(o.warning, o.critical, o.cmpWarning, o.cmpCritical); err != nil {
		return nil, "", err
	}
	for _, m := range []struct {
		v, flag string
		dst     **float64
	}{{o.min, "--min", &c.Min}, {o.max, "--max", &c.Max}} {
		if m.v == "" {
			continue
		}
		r, err := check.ParseRange("~:" + m.v)
		if err != nil {
			return nil, "", fmt.Errorf("%s %q is not a number", m.flag, m.v)
		}
		f := r.End
		*m.dst = &f
	}
	if o.heartbeat && c.Mode != "replication-lag" {
		return nil, "", fmt.Errorf("--heartbeat goes with --mode replication-lag")
	}
	if err := c.Prepare(); err != nil {
		return nil, "", err
	}
	return []*check.Check{c}, c.Name, nil
}

// dsnWithParam adds a query parameter to a URL DSN.
func dsnWithParam(dsn, key, value string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", fmt.Errorf("cannot add %s to the DSN: it is not a URL", key)
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String(), nil
}
