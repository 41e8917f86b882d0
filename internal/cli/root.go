package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fathom-lab/fathom/internal/compat"
	"github.com/fathom-lab/fathom/internal/secret"
	"github.com/fathom-lab/fathom/internal/store/stores"
	"github.com/fathom-lab/fathom/internal/target"
)

// Run runs fathom with env and returns the exit code. Errors are printed as one line.
func Run(ctx context.Context, env *Env) int {
	root := newRoot(env)
	maskDefaults(root)
	root.SetArgs(env.Args)
	cmd, err := root.ExecuteContextC(ctx)
	if err != nil && !errors.Is(err, errReported) { // check prints its own Nagios line
		msg := target.RedactString(strings.TrimSpace(err.Error()))
		fmt.Fprintf(env.Stderr, "fathom: %s\n", msg)
	}
	code := codeOf(err)
	// After a command that did its work (or was stopped): a command refused or failed
	// says its one line and nothing else.
	if code == exitOK || code == exitInterrupted {
		warnCommandLinePasswords(env.Args, env.Stderr)
		if cmd != nil {
			oldStoreNote(cmd, env)
		}
	}
	return code
}

func newRoot(env *Env) *cobra.Command {
	root := &cobra.Command{
		Use:   "fathom",
		Short: "A database performance lab: run workloads, measure exactly, keep every result",
		Long: `fathom runs pgbench- and sysbench-style workloads against PostgreSQL, MySQL/MariaDB
and SQLite, measures latency exactly (HDR histograms, coordinated-omission correct in
open loop), and keeps every run with its provenance in a results store.

Start with:  fathom quickstart`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
					return usagef("unknown command %q: did you mean %s? (see `fathom --help`)", args[0], strings.Join(s, " or "))
				}
				return usagef("unknown command %q: see `fathom --help`", args[0])
			}
			return nil
		},
		RunE:    func(cmd *cobra.Command, args []string) error { return cmd.Help() },
		Version: version(),
	}
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	root.SuggestionsMinimumDistance = 2
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		var names []string
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden && f.Deprecated == "" {
				names = append(names, f.Name)
			}
		})
		if s := compat.FlagHint(cmd.Name(), err.Error(), names); s != "" {
			return usagef("%s (see `%s --help`)", s, cmd.CommandPath())
		}
		return usagef("%s (see `%s --help`)", err, cmd.CommandPath())
	})
	root.AddCommand(
		newPrepareCmd(env),
		newRunCmd(env),
		newCleanupCmd(env),
		newCheckDataCmd(env),
		newQuickstartCmd(env),
		newRunsCmd(env),
		newShowCmd(env),
		newExportCmd(env),
		newReportCmd(env),
		newCompareCmd(env),
		newHistoryCmd(env),
		newRegressionsCmd(env),
		newWorkloadsCmd(env),
		newWorkloadCmd(env),
		newCheckCmd(env),
		newHeartbeatCmd(env),
		newExperimentCmd(env),
		newExperimentsCmd(env),
		newInstanceCmd(env),
		newWatchCmd(env),
		newSnapshotCmd(env),
		newStallsCmd(env),
		newCollectorsCmd(env),
		newServeCmd(env),
		newStoreCmd(env),
		newCaptureCmd(env),
		newAgentCmd(env),
		newK8sCmd(env),
		newVersionCmd(env),
	)
	addCompletions(root, env)
	for _, c := range root.Commands() {
		if c.Args == nil {
			c.Args = noArgs
		}
	}
	return root
}

func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("%s takes no arguments (got %q): see `%s --help`", cmd.CommandPath(), args[0], cmd.CommandPath())
	}
	return nil
}

// storeFlag adds --store, defaulting to $FATHOM_STORE or defaultStore. The value is
// held as a secret.DSN: wherever it is formatted (messages, errors, help) it shows
// without its password; only Reveal hands it to the store.
func storeFlag(fs *pflag.FlagSet, env *Env, p *secret.DSN) {
	def := env.Getenv("FATHOM_STORE")
	if def == "" {
		def = defaultStore(env)
	}
	*p = stores.DSN(def)
	fs.Var(storeValue{p}, "store", "results store: a SQLite file, a postgres:// URL or libpq's host=… dbname=… (also $FATHOM_STORE)")
}

// defaultStore is the results store used when neither --store nor $FATHOM_STORE says
// one: fathom.db in the user's data directory, so that every run of the user is in one
// place whatever the working directory ($XDG_DATA_HOME/fathom, else
// ~/.local/share/fathom; ~/Library/Application Support/fathom on macOS;
// %LOCALAPPDATA%\fathom on Windows). SQLite makes the directory when it first writes.
// Without a home directory it is fathom.db in the working directory, as it used to be.
func defaultStore(env *Env) string {
	var dir string
	switch runtime.GOOS {
	case "windows":
		dir = env.Getenv("LOCALAPPDATA")
	case "darwin":
		if h := env.Getenv("HOME"); h != "" {
			dir = filepath.Join(h, "Library", "Application Support")
		}
	default:
		if d := env.Getenv("XDG_DATA_HOME"); filepath.IsAbs(d) { // the spec ignores a relative one
			dir = d
		} else if h := env.Getenv("HOME"); h != "" && h != "/" {
			dir = filepath.Join(h, ".local", "share")
		}
	}
	if dir == "" {
		return "fathom.db"
	}
	return filepath.Join(dir, "fathom", "fathom.db")
}

// oldStoreNote is the migration note for a user who has runs in ./fathom.db, the
// per-directory default of fathom before 2026-11: said (once, on stderr) by the
// commands that open the default store while such a file is in the working directory.
func oldStoreNote(cmd *cobra.Command, env *Env) {
	f := cmd.Flags().Lookup("store")
	if f == nil || f.Changed || env.Getenv("FATHOM_STORE") != "" || cmd.Flags().Changed("help") {
		return
	}
	def := defaultStore(env)
	if def == "fathom.db" {
		return
	}
	here, err := os.Stat("fathom.db")
	if err != nil || !here.Mode().IsRegular() {
		return
	}
	if there, err := os.Stat(def); err == nil && os.SameFile(here, there) {
		return
	}
	fmt.Fprintf(env.Stderr, "fathom: note: the results store is %s by default now; ./fathom.db here is a store of the old per-directory default: use --store fathom.db (or FATHOM_STORE) for it, or `fathom store copy fathom.db %s` to keep its runs with the others\n", def, shellQuote(def))
}

// storeValue is --store as a pflag.Value.
type storeValue struct{ p *secret.DSN }

func (v storeValue) String() string     { return v.p.Masked() }
func (v storeValue) Set(s string) error { *v.p = stores.DSN(s); return nil }
func (v storeValue) Type() string       { return "string" }

// dsnFlags are the flags whose values are DSNs, which may hold a password.
var dsnFlags = map[string]string{
	"--target": "PGPASSWORD or ~/.pgpass (MySQL: MYSQL_PWD or ~/.my.cnf [client]; Redis: REDISCLI_AUTH), or the whole DSN in $FATHOM_TARGET",
	"--store":  "PGPASSWORD or ~/.pgpass, or the whole URL in $FATHOM_STORE",
}

// warnCommandLinePasswords warns, one line per flag, when a --target or --store on the
// command line held a password: every user of the machine can read a process's
// arguments (ps, /proc/PID/cmdline) for as long as it runs. It is said when the
// command ends, so that a refusal or a failure stays one line.
func warnCommandLinePasswords(args []string, w io.Writer) {
	warned := map[string]bool{}
	for i, a := range args {
		if a == "--" {
			return
		}
		name, val, ok := strings.Cut(a, "=")
		if !ok {
			if i+1 >= len(args) {
				continue
			}
			val = args[i+1]
		}
		alt, isDSN := dsnFlags[name]
		if !isDSN || warned[name] || secret.MaskDSN(val) == val {
			continue
		}
		warned[name] = true
		fmt.Fprintf(w, "fathom: warning: the password in %s could be read by every user of this machine (ps, /proc) while fathom ran: put it in %s instead\n", name, alt)
	}
}

// maskDefaults masks passwords in the flags' defaults ($FATHOM_TARGET, $FATHOM_STORE
// …), which --help and errors show.
func maskDefaults(c *cobra.Command) {
	mask := func(f *pflag.Flag) { f.DefValue = target.RedactString(f.DefValue) }
	c.Flags().VisitAll(mask)
	c.PersistentFlags().VisitAll(mask)
	for _, sub := range c.Commands() {
		maskDefaults(sub)
	}
}
