package cli

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/fathom-lab/fathom/internal/run"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
)

// defaultTarget is the embedded SQLite database used when --target is not given.
const defaultTarget = "sqlite:fathom-target.db"

// targetOpts are the flags every command that talks to a database shares.
type targetOpts struct {
	getenv    func(string) string // the environment, for the DSN's defaults
	target    string
	workload  string
	queryMode string
	// workload options
	scale, tables, tableSize, randType, pipeline, warehouses string
	set                                                      []string
	connectTimeout                                           time.Duration
	// pollerSockets: Go's network poller instead of blocking sockets (FATHOM_PORTABLE).
	pollerSockets bool
	// lua: a sysbench script's options (lua.go)
	lua luaFlags
}

// portablePaths reads FATHOM_PORTABLE: 1 takes the paths every system but Linux takes
// (sockets through Go's network poller, no /proc reads), to test or compare them on
// Linux. Not in --help; see docs/install.md, Platforms.
func portablePaths(env *Env) (bool, error) {
	v := env.Getenv("FATHOM_PORTABLE")
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, usagef("FATHOM_PORTABLE=%q: use 1 (the portable paths) or 0", v)
	}
	return b, nil
}

func (o *targetOpts) register(fs *pflag.FlagSet, env *Env) {
	o.getenv = env.Getenv
	def := env.Getenv("FATHOM_TARGET")
	if def == "" {
		def = defaultTarget
	}
	fs.StringVar(&o.target, "target", def, "database: postgres://…, mysql://…[?socket=…], sqlite:PATH, redis://host:port/db (also $FATHOM_TARGET; Redis password also $REDISCLI_AUTH)")
	fs.StringVarP(&o.workload, "workload", "w", "tpcb", "workload `name` or workload file (see: fathom workloads)")
	fs.StringVarP(&o.queryMode, "query-mode", "M", "prepared", "prepared (server-side prepared statements), extended or simple (statement text each time)")
	fs.StringVarP(&o.scale, "scale", "s", "", "tpcb scale factor: 100,000 accounts per unit (default 1; detected at run time)")
	fs.StringVar(&o.tables, "tables", "", "oltp: number of sbtest tables (default 1)")
	fs.StringVar(&o.tableSize, "table-size", "", "oltp: rows per table (default 10000; detected at run time)")
	fs.StringVar(&o.warehouses, "warehouses", "", "tpcc: warehouses (default 1; detected at run time)")
	fs.StringVar(&o.randType, "rand-type", "", "oltp: key distribution uniform|zipfian|gaussian|special (default special)")
	fs.StringVar(&o.pipeline, "pipeline", "", "Redis workloads: commands per round trip, redis-benchmark's -P (default 1)")
	fs.StringArrayVar(&o.set, "set", nil, "workload option `key=value` (repeatable; see: fathom workloads)")
	positiveDurationVarP(fs, &o.connectTimeout, "connect-timeout", "", 10*time.Second, "time allowed for each connection attempt")
}

// params collects the workload options the user gave.
func (o *targetOpts) params() (workload.Params, error) {
	if o.lua.err != nil {
		return nil, usagef("%v", o.lua.err)
	}
	p := workload.Params{}
	for k, v := range o.lua.vals {
		p[k] = v
	}
	for _, kv := range []struct{ name, v string }{{"scale", o.scale}, {"tables", o.tables}, {"table_size", o.tableSize}, {"rand_type", o.randType}, {"pipeline", o.pipeline}, {"warehouses", o.warehouses}} {
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
	p, err := o.params()
	if err != nil {
		return nil, nil, err
	}
	return run.OpenWorkload(o.workload, p)
}

// openTarget parses the DSN (a mistake there is a usage error).
func (o *targetOpts) openTarget() (target.Target, error) {
	return run.Target{DSN: o.target, QueryMode: o.queryMode, ConnectTimeout: o.connectTimeout, PollerSockets: o.pollerSockets, Getenv: o.getenv}.Open()
}

// connect opens one setup connection with a clear message when it fails.
func connect(ctx context.Context, t target.Target) (target.Conn, error) { return run.Connect(ctx, t) }

// sizeFlags repeats the workload options the user gave, for a suggested command.
func (o *targetOpts) sizeFlags() string { return o.sizeFlagsWith(nil) }

// sizeFlagsWith is sizeFlags with the sizes an unfinished prepare was given
// (workload.SizeOptions) in place of this command's: preparing again must repeat them.
func (o *targetOpts) sizeFlagsWith(sizes map[string]string) string {
	var b strings.Builder
	for _, f := range []struct{ name, opt, v string }{{"--scale", "scale", o.scale}, {"--tables", "tables", o.tables},
		{"--table-size", "table_size", o.tableSize}, {"--pipeline", "", o.pipeline}, {"--warehouses", "warehouses", o.warehouses}} {
		if v, ok := sizes[f.opt]; ok && f.opt != "" {
			f.v = v
		}
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
