package compat

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/fathom-lab/fathom/internal/errkind"
	"github.com/fathom-lab/fathom/internal/run"
	"github.com/fathom-lab/fathom/internal/suggest"
	"github.com/fathom-lab/fathom/internal/txlog"
	"github.com/fathom-lab/fathom/internal/workload"
)

// RunFlags are the run flags pgbench and sysbench users bring.
type RunFlags struct {
	jobs, threads, aggregate int
	events                   int64
	noVacuum, connect, log   bool
	vacuumAll, debug         bool
	verboseErrors            bool
	failuresDetailed         bool
	logPrefix                string
	sampling                 float64
	randomSeed, psMode       string
	percentile               int
	histogram                *bool
	warmupTime               int
	randSeed                 uint64
	fs                       *pflag.FlagSet
}

// aliases are pgbench's long names of flags fathom spells otherwise: the same flag.
var aliases = map[string]string{
	"client":   "clients",         // pgbench -c, --client
	"protocol": "query-mode",      // pgbench -M, --protocol
	"progress": "report-interval", // pgbench -P, --progress
}

// Normalize maps an alias to its flag (a pflag normalize function).
func Normalize(_ *pflag.FlagSet, name string) pflag.NormalizedName {
	if n, ok := aliases[name]; ok {
		return pflag.NormalizedName(n)
	}
	return pflag.NormalizedName(name)
}

// Register adds the flags to fs (the run command's).
func (o *RunFlags) Register(fs *pflag.FlagSet) {
	o.fs = fs
	fs.IntVarP(&o.jobs, "jobs", "j", 0, "pgbench's threads: accepted and not needed (fathom spreads its clients over every CPU)")
	fs.IntVar(&o.threads, "threads", 0, "sysbench's name for -c/--clients")
	fs.Int64Var(&o.events, "events", 0, "sysbench's total transaction count, split evenly over the clients (instead of -T)")
	fs.BoolVarP(&o.noVacuum, "no-vacuum", "n", false, "skip pgbench's pre-run vacuum (VACUUM pgbench_branches, pgbench_tellers; TRUNCATE pgbench_history)")
	fs.BoolVarP(&o.vacuumAll, "vacuum-all", "v", false, "pgbench's -v: the pre-run vacuum also runs VACUUM ANALYZE pgbench_accounts")
	fs.BoolVarP(&o.connect, "connect", "C", false, "a new connection for every transaction, as pgbench -C (its time is in each latency)")
	fs.BoolVarP(&o.log, "log", "l", false, "write pgbench's transaction log to PREFIX.PID (pgbench_log.PID)")
	fs.StringVar(&o.logPrefix, "log-prefix", "pgbench_log", "file name prefix (may include a directory) of the -l log")
	fs.IntVar(&o.aggregate, "aggregate-interval", 0, "-l: one line per interval of this many seconds, in pgbench's aggregated format")
	fs.Float64Var(&o.sampling, "sampling-rate", 0, "-l: log this fraction of transactions, chosen at random (e.g. 0.01)")
	fs.StringVar(&o.randomSeed, "random-seed", "", "pgbench's seed: an integer, time (from the clock) or rand (random, the default); same as --seed")
	fs.BoolVarP(&o.debug, "debug", "d", false, "pgbench's -d: accepted; fathom has no statement trace, and says so")
	fs.BoolVar(&o.verboseErrors, "verbose-errors", false, "pgbench's --verbose-errors: accepted; errors are counted by class (fathom show RUN)")
	fs.BoolVar(&o.failuresDetailed, "failures-detailed", false, "pgbench's --failures-detailed: failures are always counted by class")
	// sysbench 1.0 (--warmup-time: 1.1)
	fs.StringVar(&o.psMode, "db-ps-mode", "", "sysbench's prepared statements: auto (-M prepared) or disable (-M simple)")
	fs.IntVar(&o.percentile, "percentile", 95, "sysbench's: print this latency percentile (1-100) after the summary; 0 prints none")
	fs.Var(onOff{&o.histogram}, "histogram", "sysbench's: print a latency histogram after the summary (on or off)")
	fs.Lookup("histogram").NoOptDefVal = "on"
	fs.IntVar(&o.warmupTime, "warmup-time", 0, "sysbench's warm-up in seconds: the same as --warmup")
	fs.Uint64Var(&o.randSeed, "rand-seed", 0, "sysbench's seed: 0 takes it from the clock; the same as --seed")
}

// Percentile is sysbench's --percentile when it was given (0: none to print).
func (o *RunFlags) Percentile() (int, bool) { return o.percentile, o.fs.Changed("percentile") }

// Histogram reports whether sysbench's --histogram asked for a latency histogram.
func (o *RunFlags) Histogram() bool { return o.histogram != nil && *o.histogram }

// pgbenchRoute reports whether the run is pgbench's: scripts (-f, -b, -S, -N, or -r or
// -D alone, which run tpcb-like as in pgbench) rather than a --workload.
func pgbenchRoute(ro *run.Options) bool { return ro.Scripts != nil }

// Apply puts the flags into the run's options; notes for the user go to w. Mistakes
// are usage errors, found before anything connects.
func (o *RunFlags) Apply(w io.Writer, ro *run.Options) error {
	pg := pgbenchRoute(ro)
	if err := refuseLua(ro); err != nil {
		return err
	}
	if err := o.applyNotes(w); err != nil {
		return err
	}
	if err := o.applyCounts(ro); err != nil {
		return err
	}
	if err := o.applyModes(pg, ro); err != nil {
		return err
	}
	if err := o.applySeeds(ro); err != nil {
		return err
	}
	if err := o.applyEnds(pg, ro); err != nil {
		return err
	}
	if err := o.checkRate(pg, ro); err != nil {
		return err
	}
	ro.NoVacuum, ro.VacuumAll, ro.ConnectPerTxn = o.noVacuum, o.vacuumAll, o.connect
	return o.applyLog(ro)
}

// applyNotes refuses a bad -j and notes the pgbench options fathom does not need.
func (o *RunFlags) applyNotes(w io.Writer) error {
	fs := o.fs
	if fs.Changed("jobs") && o.jobs < 1 {
		return errkind.Usagef("-j %d: give 1 or more threads (pgbench's range; fathom needs none)", o.jobs)
	}
	if o.jobs != 0 {
		fmt.Fprintln(w, "fathom: note: -j is not needed: fathom schedules its clients over every CPU itself; -j is ignored")
	}
	if o.debug {
		fmt.Fprintln(w, "fathom: note: -d: fathom has no statement trace; each failed transaction is counted by class (fathom show RUN)")
	}
	if o.verboseErrors {
		fmt.Fprintln(w, "fathom: note: --verbose-errors: failures are counted by class (fathom show RUN); fathom does not print every error's message")
	}
	return nil
}

// applyCounts reads sysbench's --threads (-c) and --events (the whole run's
// transactions, split evenly over the clients).
func (o *RunFlags) applyCounts(ro *run.Options) error {
	fs := o.fs
	if fs.Changed("threads") {
		if o.threads < 1 || fs.Changed("clients") && o.threads != ro.Clients {
			return errkind.Usagef("--threads %d: it is sysbench's name for -c; give one of them, 1 or more", o.threads)
		}
		ro.Clients = o.threads
	}
	if fs.Changed("events") {
		switch {
		case ro.Transactions > 0 || ro.Duration > 0:
			return errkind.Usagef("--events counts the whole run's transactions: give it without -t and -T")
		case o.events < 1 || ro.Clients < 1 || o.events%int64(ro.Clients) != 0:
			return errkind.Usagef("--events %d cannot be split evenly over %d clients (fathom counts per client, as -t): give a multiple of %d", o.events, ro.Clients, ro.Clients)
		}
		ro.Transactions = o.events / int64(ro.Clients)
	}
	return nil
}

// applyEnds reads sysbench's --warmup-time and --percentile, pgbench's default of 10
// transactions per client and --max-tries 0 (unlimited).
func (o *RunFlags) applyEnds(pg bool, ro *run.Options) error {
	fs := o.fs
	if fs.Changed("warmup-time") {
		if o.warmupTime < 0 || fs.Changed("warmup") && ro.Warmup != time.Duration(o.warmupTime)*time.Second {
			return errkind.Usagef("--warmup-time %d: it is sysbench's name for --warmup; give one of them, 0 or more seconds", o.warmupTime)
		}
		ro.Warmup = time.Duration(o.warmupTime) * time.Second
	}
	if fs.Changed("percentile") && (o.percentile < 0 || o.percentile > 100) {
		return errkind.Usagef("--percentile %d: give a percentile from 1 to 100, or 0 for none (as sysbench)", o.percentile)
	}
	// pgbench runs 10 transactions per client when given neither -t nor -T.
	if pg && !fs.Changed("time") && !fs.Changed("transactions") && !fs.Changed("events") && ro.Transactions == 0 && ro.Duration == 0 {
		ro.Transactions = 10
	}
	if fs.Changed("max-tries") && ro.MaxTries == 0 {
		// pgbench: 0 is unlimited tries, which needs an end other than a count.
		if ro.Duration == 0 && ro.LatencyLimit == 0 {
			return errkind.Usagef("--max-tries 0 (unlimited tries) needs -T or -L, as in pgbench: add one, or give a number of tries")
		}
		ro.MaxTries = math.MaxInt32
	}
	return nil
}

// applyModes sets the query mode: pgbench's default (simple) for its scripts,
// sysbench's --db-ps-mode, or -M/--protocol as given.
func (o *RunFlags) applyModes(pg bool, ro *run.Options) error {
	fs := o.fs
	if fs.Changed("db-ps-mode") {
		var mode string
		switch o.psMode {
		case "auto":
			mode = "prepared"
		case "disable":
			mode = "simple"
		default:
			return errkind.Usagef("--db-ps-mode %q: use auto (prepared statements) or disable (as sysbench)", o.psMode)
		}
		if fs.Changed("query-mode") && ro.QueryMode != mode {
			return errkind.Usagef("--db-ps-mode %s is -M %s, but -M %s was given too: give one of them", o.psMode, mode, ro.QueryMode)
		}
		ro.QueryMode = mode
		return nil
	}
	if pg && !fs.Changed("query-mode") {
		ro.QueryMode = "simple" // pgbench's default protocol
	}
	return nil
}

// applySeeds reads pgbench's --random-seed and sysbench's --rand-seed into --seed.
func (o *RunFlags) applySeeds(ro *run.Options) error {
	fs := o.fs
	given := 0
	for _, f := range []string{"seed", "random-seed", "rand-seed"} {
		if fs.Changed(f) {
			given++
		}
	}
	if given > 1 {
		return errkind.Usagef("--seed, --random-seed (pgbench) and --rand-seed (sysbench) are the same seed: give one of them")
	}
	now := ro.Now
	if now == nil {
		now = time.Now
	}
	switch {
	case fs.Changed("random-seed"):
		switch s := strings.TrimSpace(o.randomSeed); s {
		case "rand":
			ro.Seed, ro.HasSeed = 0, false // random, recorded with the run
		case "time":
			ro.Seed, ro.HasSeed = uint64(now().UnixNano()), true
		default:
			n, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				return errkind.Usagef("--random-seed %q: use an integer, time or rand (as pgbench)", o.randomSeed)
			}
			ro.Seed, ro.HasSeed = n, true
		}
	case fs.Changed("rand-seed"):
		ro.Seed, ro.HasSeed = o.randSeed, true
		if o.randSeed == 0 {
			ro.Seed = uint64(now().UnixNano()) // sysbench: 0 seeds from the clock
		}
	}
	return nil
}

// checkRate refuses pgbench's rate of zero (pgbench: "invalid rate limit") for its
// scripts and the tpcb workloads; elsewhere --rate=0 is sysbench's "no limit", the
// closed loop.
func (o *RunFlags) checkRate(pg bool, ro *run.Options) error {
	if !o.fs.Changed("rate") || ro.Rate != 0 {
		return nil
	}
	if pg || strings.HasPrefix(ro.Workload, "tpcb") {
		return errkind.Usagef("--rate 0: give a rate above 0 transactions per second, or leave -R out for the closed loop (pgbench refuses 0 too)")
	}
	return nil
}

// applyLog checks pgbench's -l options as pgbench does, and sets the log.
func (o *RunFlags) applyLog(ro *run.Options) error {
	fs := o.fs
	if (fs.Changed("log-prefix") || fs.Changed("aggregate-interval") || fs.Changed("sampling-rate")) && !o.log {
		return errkind.Usagef("--log-prefix, --aggregate-interval and --sampling-rate shape the -l log: add -l")
	}
	if o.aggregate < 0 || fs.Changed("aggregate-interval") && o.aggregate == 0 {
		return errkind.Usagef("--aggregate-interval %d: give a whole number of seconds, 1 or more", o.aggregate)
	}
	if agg := time.Duration(o.aggregate) * time.Second; agg > 0 && ro.Duration > 0 {
		switch {
		case agg > ro.Duration:
			return errkind.Usagef("--aggregate-interval %d is longer than -T %s: give an interval of at most the run's duration (as pgbench)", o.aggregate, ro.Duration)
		case ro.Duration%agg != 0:
			return errkind.Usagef("-T %s is not a multiple of --aggregate-interval %d: give a duration of whole intervals (as pgbench)", ro.Duration, o.aggregate)
		}
	}
	if o.sampling < 0 || o.sampling > 1 || fs.Changed("sampling-rate") && o.sampling == 0 {
		return errkind.Usagef("--sampling-rate %v: give a fraction above 0 and at most 1 (e.g. 0.01)", o.sampling)
	}
	if o.log {
		ro.TxnLog = &txlog.Options{Prefix: o.logPrefix, Aggregate: time.Duration(o.aggregate) * time.Second, SamplingRate: o.sampling}
	}
	return nil
}

// refuseLua refuses a sysbench Lua script given as a pgbench script: it would be
// sent to the server as SQL and fail every transaction. (-w takes it.)
func refuseLua(ro *run.Options) error {
	var names []string
	if ro.Scripts != nil {
		for _, f := range ro.Scripts.Files {
			if i := strings.LastIndexByte(f, '@'); i > 0 {
				f = f[:i]
			}
			names = append(names, f)
		}
	}
	for _, n := range names {
		if strings.HasSuffix(strings.ToLower(n), ".lua") {
			return errkind.Usagef("%s: -f takes pgbench scripts; a sysbench Lua script goes in -w: `fathom run -w %s [sysbench options]`", n, n)
		}
	}
	return nil
}

// RegisterLayout adds prepare's table options from pgbench -i and sysbench prepare.
func RegisterLayout(fs *pflag.FlagSet, l *workload.Layout) {
	fs.IntVarP(&l.FillFactor, "fillfactor", "F", 0, "tpcb, PostgreSQL: fill factor of the tables, 10-100 (pgbench -F)")
	fs.BoolVar(&l.Unlogged, "unlogged-tables", false, "tpcb, PostgreSQL: create UNLOGGED tables")
	fs.IntVar(&l.Partitions, "partitions", 0, "tpcb, PostgreSQL: split pgbench_accounts into this many partitions; tpcc, PostgreSQL and MySQL: split the tables by warehouse")
	fs.StringVar(&l.PartitionMethod, "partition-method", "", "tpcb, tpcc: range (default) or hash, with --partitions")
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
		if best := suggest.Nearest(flag[2:], names); best != "" {
			return fmt.Sprintf("%s: did you mean --%s?", err, best)
		}
	}
	return ""
}
