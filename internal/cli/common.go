package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/target/targets"
	"github.com/fathom-lab/fathom/internal/workload"
	"github.com/fathom-lab/fathom/internal/workload/builtin"
)

// DefaultTarget is the embedded SQLite database used when --target is not given.
const DefaultTarget = "sqlite:fathom-target.db"

// targetOpts are the flags every command that talks to a database shares.
type targetOpts struct {
	target    string
	workload  string
	queryMode string
	// workload options
	scale, tables, tableSize, randType string
	set                                []string
	connectTimeout                     time.Duration
}

func (o *targetOpts) register(fs *pflag.FlagSet, env *Env) {
	def := env.Getenv("FATHOM_TARGET")
	if def == "" {
		def = DefaultTarget
	}
	fs.StringVar(&o.target, "target", def, "database: postgres://…, mysql://…[?socket=…], sqlite:PATH (also $FATHOM_TARGET)")
	fs.StringVarP(&o.workload, "workload", "w", "tpcb", "workload name (see `fathom workloads`)")
	fs.StringVarP(&o.queryMode, "query-mode", "M", "prepared", "prepared (server-side prepared statements) or simple (statement text each time)")
	fs.StringVarP(&o.scale, "scale", "s", "", "tpcb scale factor: 100,000 accounts per unit (default 1; detected at run time)")
	fs.StringVar(&o.tables, "tables", "", "oltp: number of sbtest tables (default 1)")
	fs.StringVar(&o.tableSize, "table-size", "", "oltp: rows per table (default 10000; detected at run time)")
	fs.StringVar(&o.randType, "rand-type", "", "oltp: key distribution uniform|zipfian|gaussian|special (default special)")
	fs.StringArrayVar(&o.set, "set", nil, "workload option key=value (repeatable; see `fathom workloads`)")
	durationVarP(fs, &o.connectTimeout, "connect-timeout", "", 10*time.Second, "time allowed for each connection attempt")
}

// params collects the workload options the user gave.
func (o *targetOpts) params() (workload.Params, error) {
	p := workload.Params{}
	for _, kv := range []struct{ name, v string }{{"scale", o.scale}, {"tables", o.tables}, {"table_size", o.tableSize}, {"rand_type", o.randType}} {
		if kv.v != "" {
			p[kv.name] = kv.v
		}
	}
	for _, s := range o.set {
		k, v, err := parseKV(s, "--set")
		if err != nil {
			return nil, usagef("%v", err)
		}
		p[k] = v
	}
	return p, nil
}

// openWorkload resolves the workload and its options. Mistakes are usage errors.
func (o *targetOpts) openWorkload() (*workload.Spec, workload.Workload, error) {
	spec, err := builtin.Lookup(o.workload)
	if err != nil {
		return nil, nil, usagef("%v", err)
	}
	p, err := o.params()
	if err != nil {
		return nil, nil, err
	}
	wl, err := spec.New(p)
	if err != nil {
		return nil, nil, usagef("%v", err)
	}
	return spec, wl, nil
}

// openTarget parses the DSN (a mistake there is a usage error).
func (o *targetOpts) openTarget() (target.Target, error) {
	cfg := target.Config{ConnectTimeout: o.connectTimeout, AppName: "fathom"}
	switch o.queryMode {
	case "prepared", "extended":
		// extended without preparing is not distinct enough to be worth a mode
	case "simple":
		cfg.Unprepared = true
	default:
		return nil, usagef("--query-mode %q: use prepared or simple", o.queryMode)
	}
	t, err := targets.Open(o.target, cfg)
	if err != nil {
		return nil, usagef("%v", err)
	}
	return t, nil
}

// connect opens one setup connection with a clear message when it fails.
func connect(ctx context.Context, t target.Target) (target.Conn, error) {
	conn, err := t.Connect(ctx)
	if err != nil {
		return nil, connectError(t, err)
	}
	return conn, nil
}

func connectError(t target.Target, err error) error {
	hint := ""
	switch target.ClassOf(err) {
	case target.ClassAuth:
		hint = " (check the user and password: in the DSN, PG*/.pgpass or ~/.my.cnf)"
	case target.ClassConnection:
		if t.Kind() != "sqlite" {
			hint = " (is the server running and listening there?)"
		}
	case target.ClassUndefined:
		hint = " (does the database exist?)"
	}
	return withCode(ExitFailure, fmt.Errorf("cannot connect to %s: %v%s", t.Redacted(), err, hint))
}

// setupError turns a workload Setup error into one actionable line.
func setupError(o *targetOpts, t target.Target, err error) error {
	if errors.Is(err, workload.ErrNotPrepared) {
		return withCode(ExitFailure, fmt.Errorf("%v in %s: run `fathom prepare --workload %s%s --target %s` first", err, t.Redacted(), o.workload, o.sizeFlags(), shellQuote(t.Redacted())))
	}
	return withCode(ExitFailure, err)
}

// sizeFlags repeats the workload options the user gave, for a suggested command.
func (o *targetOpts) sizeFlags() string {
	var b strings.Builder
	for _, f := range []struct{ name, v string }{{"--scale", o.scale}, {"--tables", o.tables}, {"--table-size", o.tableSize}} {
		if f.v != "" {
			b.WriteString(" " + f.name + " " + shellQuote(f.v))
		}
	}
	for _, s := range o.set {
		b.WriteString(" --set " + shellQuote(s))
	}
	return b.String()
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`&;|<>()*?[]{}!#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
