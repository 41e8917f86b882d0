package compat

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/fathom-lab/fathom/internal/fault"
	"github.com/fathom-lab/fathom/internal/run"
	"github.com/fathom-lab/fathom/internal/txlog"
	"github.com/fathom-lab/fathom/internal/workload"
)

// RunFlags are the run flags pgbench and sysbench users bring.
type RunFlags struct {
	jobs, threads, aggregate int
	events                   int64
	noVacuum, connect, log   bool
	logPrefix                string
	sampling                 float64
	fs                       *pflag.FlagSet
}

// Register adds the flags to fs (the run command's).
func (o *RunFlags) Register(fs *pflag.FlagSet) {
	o.fs = fs
	fs.IntVarP(&o.jobs, "jobs", "j", 0, "pgbench's threads: accepted and not needed (fathom spreads its clients over every CPU)")
	fs.IntVar(&o.threads, "threads", 0, "sysbench's name for -c/--clients")
	fs.Int64Var(&o.events, "events", 0, "sysbench's total transaction count, split evenly over the clients (instead of -T)")
	fs.BoolVarP(&o.noVacuum, "no-vacuum", "n", false, "skip pgbench's pre-run vacuum of the tpcb tables (VACUUM branches, tellers; TRUNCATE history)")
	fs.BoolVarP(&o.connect, "connect", "C", false, "a new connection for every transaction, as pgbench -C (its time is in each latency)")
	fs.BoolVarP(&o.log, "log", "l", false, "write pgbench's transaction log to PREFIX.PID (pgbench_log.PID)")
	fs.StringVar(&o.logPrefix, "log-prefix", "pgbench_log", "file name prefix (may include a directory) of the -l log")
	fs.IntVar(&o.aggregate, "aggregate-interval", 0, "-l: one line per interval of this many seconds, in pgbench's aggregated format")
	fs.Float64Var(&o.sampling, "sampling-rate", 0, "-l: log this fraction of transactions, chosen at random (e.g. 0.01)")
}

// Apply puts the flags into the run's options; notes for the user go to w. Mistakes
// are usage errors.
func (o *RunFlags) Apply(w io.Writer, ro *run.Options) error {
	fs := o.fs
	if o.jobs != 0 {
		fmt.Fprintln(w, "fathom: note: -j is not needed: fathom schedules its clients over every CPU itself; -j is ignored")
	}
	if fs.Changed("threads") {
		if o.threads < 1 || fs.Changed("clients") && o.threads != ro.Clients {
			return fault.Usagef("--threads %d: it is sysbench's name for -c; give one of them, 1 or more", o.threads)
		}
		ro.Clients = o.threads
	}
	if fs.Changed("events") {
		switch {
		case ro.Transactions > 0 || ro.Duration > 0:
			return fault.Usagef("--events counts the whole run's transactions: give it without -t and -T")
		case o.events < 1 || ro.Clients < 1 || o.events%int64(ro.Clients) != 0:
			return fault.Usagef("--events %d cannot be split evenly over %d clients (fathom counts per client, as -t): give a multiple of %d", o.events, ro.Clients, ro.Clients)
		}
		ro.Transactions = o.events / int64(ro.Clients)
	}
	ro.NoVacuum, ro.ConnectPerTxn = o.noVacuum, o.connect
	if (fs.Changed("log-prefix") || fs.Changed("aggregate-interval") || fs.Changed("sampling-rate")) && !o.log {
		return fault.Usagef("--log-prefix, --aggregate-interval and --sampling-rate shape the -l log: add -l")
	}
	if o.aggregate < 0 || fs.Changed("aggregate-interval") && o.aggregate == 0 {
		return fault.Usagef("--aggregate-interval %d: give a whole number of seconds, 1 or more", o.aggregate)
	}
	if o.sampling < 0 || o.sampling > 1 || fs.Changed("sampling-rate") && o.sampling == 0 {
		return fault.Usagef("--sampling-rate %v: give a fraction above 0 and at most 1 (e.g. 0.01)", o.sampling)
	}
	if o.log {
		ro.TxnLog = &txlog.Options{Prefix: o.logPrefix, Aggregate: time.Duration(o.aggregate) * time.Second, SamplingRate: o.sampling}
	}
	return nil
}

// RegisterLayout adds prepare's table options from pgbench -i and sysbench prepare.
func RegisterLayout(fs *pflag.FlagSet, l *workload.Layout) {
	fs.IntVarP(&l.FillFactor, "fillfactor", "F", 0, "tpcb, PostgreSQL: fill factor of the tables, 10-100 (pgbench -F)")
	fs.BoolVar(&l.Unlogged, "unlogged-tables", false, "tpcb, PostgreSQL: create UNLOGGED tables")
	fs.IntVar(&l.Partitions, "partitions", 0, "tpcb, PostgreSQL: split pgbench_accounts into this many partitions")
	fs.StringVar(&l.PartitionMethod, "partition-method", "", "tpcb: range (default) or hash, with --partitions")
	fs.BoolVar(&l.ForeignKeys, "foreign-keys", false, "tpcb: add pgbench's foreign keys between the tables")
	fs.Var(onOff{&l.AutoInc}, "auto-inc", "oltp: id is an auto-increment column (on, the default, or off)")
	fs.Lookup("auto-inc").NoOptDefVal = "on"
	fs.BoolVar(&l.Secondary, "secondary", false, "oltp: an index on id in place of the primary key")
	fs.Var(onOff{&l.CreateSecondary}, "create-secondary", "oltp: create the index on k (on, the default, or off)")
	fs.Lookup("create-secondary").NoOptDefVal = "on"
	fs.StringVar(&l.Engine, "mysql-storage-engine", "", "oltp, MySQL: storage engine of the tables (default InnoDB)")
}

// onOff is sysbench's boolean: on/off (or true/false), nil until given.
type onOff struct{ p **bool }

func (v onOff) String() string {
	if v.p == nil || *v.p == nil {
		return ""
	}
	return map[bool]string{true: "on", false: "off"}[**v.p]
}
func (v onOff) Type() string { return "on|off" }
func (v onOff) Set(s string) error {
	b, err := workload.Bool(map[string]string{"v": s}, "v")
	if err != nil || s == "" {
		return fmt.Errorf("%q: use on or off", s)
	}
	*v.p = &b
	return nil
}

// FlagHint is the usage line for an unknown flag: fathom's equivalent of a pgbench or
// sysbench flag, or the command's flag closest to a misspelt one (names: the
// command's flags); "" when there is nothing to suggest.
func FlagHint(cmd, err string, names []string) string {
	flag, hint := Foreign(err)
	if hint != "" {
		return fmt.Sprintf("%s is not a fathom %s flag: %s", flag, cmd, hint)
	}
	if len(flag) > 2 && flag[1] == '-' {
		if best := Closest(flag[2:], names); best != "" {
			return fmt.Sprintf("%s: did you mean --%s?", err, best)
		}
	}
	return ""
}
