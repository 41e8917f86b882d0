package pgscript

import (
	"errors"
	"io"

	"github.com/spf13/pflag"
)

// Flags are pgbench's script flags as a front end takes them: -f, -b, -S, -N, -D and
// fathom's --allow-shell.
type Flags struct {
	Files, Builtins, Defines []string
	SelectOnly, SimpleUpdate bool
	AllowShell               bool
	PerStatement             bool // -r
}

// Register adds the flags to fs with pgbench's letters.
func (f *Flags) Register(fs *pflag.FlagSet) {
	fs.StringArrayVarP(&f.Files, "file", "f", nil, "run a pgbench script `FILE[@weight]` (repeatable, mixes with -b)")
	fs.StringArrayVarP(&f.Builtins, "builtin", "b", nil, "run a pgbench built-in `NAME[@weight]`: tpcb-like, simple-update, select-only")
	fs.BoolVarP(&f.SelectOnly, "select-only", "S", false, "pgbench's -S: -b select-only")
	fs.BoolVarP(&f.SimpleUpdate, "skip-some-updates", "N", false, "pgbench's -N: -b simple-update")
	fs.StringArrayVarP(&f.Defines, "define", "D", nil, "script variable `name=value` (repeatable)")
	fs.BoolVarP(&f.PerStatement, "report-per-command", "r", false, "pgbench's -r: latency of each script command over the measured intervals (warm-up excluded), stored with the run")
	fs.BoolVar(&f.AllowShell, "allow-shell", false, "let scripts run \\shell and \\setshell commands on this machine")
}

// Options returns the scripts to run, or nil when no script flag was given.
// workloadGiven says that a named workload was asked for too, which does not mix.
func (f *Flags) Options(workloadGiven bool, debug io.Writer) (*Options, error) {
	b := f.Builtins
	if f.SelectOnly {
		b = append(b, "select-only")
	}
	if f.SimpleUpdate {
		b = append(b, "simple-update")
	}
	if len(f.Files)+len(b) == 0 {
		switch {
		case (len(f.Defines) > 0 || f.PerStatement) && !workloadGiven:
			// pgbench with no script runs tpcb-like: `pgbench -r -T 60` runs unchanged.
			b = []string{"tpcb-like"}
		case len(f.Defines) > 0 || f.AllowShell || f.PerStatement:
			return nil, errors.New("-D, -r and --allow-shell are for pgbench scripts: add -f FILE or -b NAME")
		default:
			return nil, nil
		}
	}
	if workloadGiven {
		return nil, errors.New("--workload and pgbench scripts (-f, -b, -S, -N) do not mix: give one or the other")
	}
	return &Options{Files: f.Files, Builtins: b, Defines: f.Defines, AllowShell: f.AllowShell, PerStatement: f.PerStatement, Debug: debug}, nil
}
