package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/spf13/cobra"

	"github.com/fathom-lab/fathom/internal/agent"
	"github.com/fathom-lab/fathom/internal/analyze"
	"github.com/fathom-lab/fathom/internal/cli/view"
	"github.com/fathom-lab/fathom/internal/compat"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/promexp"
	"github.com/fathom-lab/fathom/internal/report"
	"github.com/fathom-lab/fathom/internal/run"
	"github.com/fathom-lab/fathom/internal/runner"
	"github.com/fathom-lab/fathom/internal/secret"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload/pgscript"
	"github.com/fathom-lab/fathom/internal/workload/sblua"
)

type runOpts struct {
	targetOpts
	store        secret.DSN
	clients      int
	duration     time.Duration
	transactions int64
	warmup       time.Duration
	rate         float64
	interval     time.Duration
	intervalSet  func() bool // --report-interval (-P) was given
	latencyLimit time.Duration
	maxTries     int
	maxErrorRate percentValue
	seed         string
	labels       []string
	series       string
	thresholds   []string
	json         bool
	quiet        bool
	reconnect    time.Duration
	sampling     samplingOpts    // server and OS metrics (sampling.go)
	compat       compat.RunFlags // pgbench's and sysbench's flags
	scripts      pgscript.Flags  // pgbench scripts: -f, -b, -S, -N, -D, -r
	workloadSet  func() bool
	metricsAddr  string
	agents       agent.RunFlags
	outage       outageOpts
}

func (o *runOpts) register(cmd *cobra.Command, env *Env) {
	fs := cmd.Flags()
	o.targetOpts.register(fs, env)
	storeFlag(fs, env, &o.store)
	o.outage.register(fs)
	fs.IntVarP(&o.clients, "clients", "c", 1, "number of clients, each with its own connection")
	positiveDurationVarP(fs, &o.duration, "time", "T", 0, "measured duration after warm-up, e.g. 60 or 5m (default 10s unless -t)")
	positiveIntVarP(fs, &o.transactions, "transactions", "t", 0, "transactions per client after warm-up (instead of -T)")
	durationVarP(fs, &o.warmup, "warmup", "", 0, "warm-up before measuring: recorded, tagged, excluded from the summary")
	fs.Float64VarP(&o.rate, "rate", "R", 0, "open loop: total intended transactions per second on a Poisson schedule (default closed loop)")
	millisDurationVarP(fs, &o.latencyLimit, "latency-limit", "L", 0, "open loop: skip (count as dropped) transactions already this late at their start; a plain number is milliseconds, as in pgbench (5 = 5ms)")
	positiveDurationVarP(fs, &o.interval, "report-interval", "P", time.Second, "interval for live lines and stored histograms, e.g. 1, 10s, 250ms")
	fs.IntVar(&o.maxTries, "max-tries", 1, "tries per transaction for serialization failures and deadlocks (1 = no retry)")
	fs.Var(&o.maxErrorRate, "max-error-rate", "fail the run (exit 4) if more than this percent of its transactions failed, e.g. 1 or 0.5% (retried ones that succeeded do not count)")
	fs.StringVar(&o.seed, "seed", "", "random seed for reproducible values (default: random, recorded)")
	fs.StringArrayVar(&o.labels, "label", nil, "label key=value stored with the run (repeatable)")
	fs.StringArrayVar(&o.thresholds, "threshold", nil, "a bar the run must pass, checked at its end, e.g. 'p99<20ms', 'tps>1000', 'errors<0.1%' (repeatable; exit 7 when one fails); ';abort' stops the run once it fails (after 10s measured, or ';abort=30s')")
	fs.StringVar(&o.series, "series", "", "the series this run belongs to, by name (the label series=NAME; default: the series of its workload, options, target, clients, rate and duration: see fathom history)")
	fs.BoolVar(&o.json, "json", false, "print the final summary as JSON on stdout (live lines go to stderr)")
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "no live interval lines")
	positiveDurationVarP(fs, &o.reconnect, "reconnect-timeout", "", 30*time.Second, "fail the run if a client cannot reconnect for this long")
	fs.StringVar(&o.metricsAddr, "metrics-addr", "", "serve this run's metrics for Prometheus on host:port while it runs, e.g. :9464")
	o.sampling.register(fs)
	o.agents.Register(fs)
	o.compat.Register(fs)
	o.scripts.Register(fs) // pgbench scripts: -f, -b, -S, -N, -D, -r, --allow-shell
	o.workloadSet = func() bool { return fs.Changed("workload") }
	o.intervalSet = func() bool { return fs.Changed("report-interval") }
	fs.SetNormalizeFunc(compat.Normalize) // pgbench's --client, --protocol, --progress
	o.lua.register(cmd, env.Args)         // a sysbench script's options (lua.go)
}

func newRunCmd(env *Env) *cobra.Command {
	o := &runOpts{}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run a workload and store the results",
		Example: `  fathom run --workload tpcb -c 8 -T 60 --target postgres://bench@db1/bench
  fathom run --workload oltp_read_write --tables 4 -c 16 -T 5m -P 10 --target mysql://root@127.0.0.1/sbtest
  fathom run --workload tpcb-select -c 4 -R 2000 -T 60 --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 && !sblua.IsScript(o.workload) {
				return noArgs(cmd, args)
			}
			if len(args) > 1 {
				return usagef("a sysbench script runs one command at a time (got %q): `fathom run -w SCRIPT.lua [COMMAND]`", args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 && args[0] != "run" {
				return luaCommand(cmd.Context(), env, &o.targetOpts, args[0])
			}
			sum, err := o.execute(cmd.Context(), env)
			if err == nil && sum != nil {
				err = thresholdsError(sum)
			}
			return err
		},
	}
	o.register(cmd, env)
	return cmd
}

// options turns the flags into the engine's options; mistakes are usage errors.
func (o *runOpts) options(env *Env) (run.Options, error) {
	params, err := o.params()
	if err != nil {
		return run.Options{}, err
	}
	labels, err := o.labelMap()
	if err != nil {
		return run.Options{}, err
	}
	portable, err := portablePaths(env)
	if err != nil {
		return run.Options{}, err
	}
	scripts, err := o.scripts.Options(o.workloadSet != nil && o.workloadSet(), env.Stderr)
	if err != nil {
		return run.Options{}, usagef("%v", err)
	}
	if scripts != nil { // \shell prints on stdout as in pgbench; with --json, on stderr
		scripts.Stdout = env.Stdout
		if o.json {
			scripts.Stdout = env.Stderr
		}
	}
	ro := run.Options{Scripts: scripts,
		Target:   run.Target{DSN: o.target, QueryMode: o.queryMode, ConnectTimeout: o.connectTimeout, PollerSockets: portable, Getenv: env.Getenv},
		Workload: o.workload, Params: params,
		Clients: o.clients, Duration: o.duration, Transactions: o.transactions, Warmup: o.warmup,
		Rate: o.rate, LatencyLimit: o.latencyLimit, Interval: o.interval, MaxTries: o.maxTries,
		ReconnectTimeout: o.reconnect, Labels: labels, Sampling: o.sampling.Sampling,
		MaxErrorRate: o.maxErrorRate.v, HasMaxErrorRate: o.maxErrorRate.set,
		ToolVersion: version(), Command: redactArgs(env.Args), Now: env.Now, OpenFiles: env.openFiles(), Tuner: env.tuner(),
		PrepareHint: func(tgt string, sizes map[string]string) string {
			return fmt.Sprintf("`fathom prepare --workload %s%s --target %s`", o.workload, o.sizeFlagsWith(sizes), shellQuote(tgt))
		},
	}
	ro.Sampling.NoProcfs = portable
	for _, th := range o.thresholds {
		t, err := measure.ParseThreshold(th)
		if err != nil {
			return ro, usagef("--threshold: %v", err)
		}
		ro.Thresholds = append(ro.Thresholds, t)
	}
	if o.seed != "" {
		if _, err := fmt.Sscan(o.seed, &ro.Seed); err != nil {
			return ro, usagef("--seed %q: use a non-negative whole number", o.seed)
		}
		ro.HasSeed = true
	}
	if err := o.compat.Apply(env.Stderr, &ro); err != nil {
		return ro, err
	}
	if sblua.IsScript(ro.Workload) {
		o.luaRunParams(&ro)
		ro.Output = env.Stdout // the script's print(), as under sysbench
		if o.json {
			ro.Output = env.Stderr
		}
	}
	return ro, o.agents.Apply(&ro, o.store, &view.AgentLines{W: env.Stderr, Prefix: "fathom: "})
}

func (o *runOpts) labelMap() (map[string]string, error) {
	m := map[string]string{}
	for _, l := range o.labels {
		k, v, err := parseKV(l, "--label")
		if err != nil {
			return nil, usagef("%v", err)
		}
		m[k] = v
	}
	if o.series != "" {
		if v, ok := m[report.SeriesLabel]; ok && v != o.series {
			return nil, usagef("--series %s and --label series=%s: give one of them", o.series, v)
		}
		m[report.SeriesLabel] = o.series
	}
	return m, nil
}

// execute runs the workload through the engine and prints what it reports. Everything
// measured is stored before an error is returned.
func (o *runOpts) execute(ctx context.Context, env *Env) (*measure.Summary, error) {
	ro, err := o.options(env)
	if err != nil {
		return nil, err
	}
	live := io.Writer(env.Stdout)
	if o.json {
		live = env.Stderr
	}
	if o.quiet {
		live = io.Discard
	}
	lines := &view.RunLines{W: live, Warn: env.Stderr}
	if env.Terminal {
		lines.Bar = env.Stderr
	}
	// Mistakes in the options are refused before the store is opened (or created).
	if err := ro.Check(); err != nil {
		return nil, err
	}
	st, err := o.outage.open(env, o.store) // a PostgreSQL store rides out outages (store/durable)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	runCtx, stopSignals := env.Interrupts(ctx)
	defer stopSignals()
	l, stopMetrics, err := promexp.ForRun(o.metricsAddr, lines, env.Stderr)
	if err != nil {
		return nil, err
	}
	defer stopMetrics()
	res, err := run.Execute(runCtx, st, ro, l)
	if res == nil {
		return nil, o.runError(err)
	}
	sum := &res.Summary
	if o.json {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(jsonRun(sum, res.Sampling))
		// The warning goes with a finished run: a failed or interrupted one has
		// its one error line on stderr.
		if res.Sampling != nil && res.Sampling.Host != "" && sum.Status == runner.StatusComplete {
			fmt.Fprintf(env.Stderr, "fathom: warning: %s\n", res.Sampling.Host)
		}
	} else {
		report.WriteSummary(env.Stdout, res.Run, sum)
		view.WriteSampling(env.Stdout, res.Sampling, sum.RunID)
		if res.TxnLog != "" {
			fmt.Fprintf(env.Stdout, "transaction log: %s\n", res.TxnLog)
		}
		o.sysbenchLatency(ctx, env, st, sum.RunID)
	}
	return sum, err
}

// sysbenchLatency prints sysbench's --percentile line and --histogram, from the run's
// stored measured intervals.
func (o *runOpts) sysbenchLatency(ctx context.Context, env *Env, st store.Store, id int64) {
	p, given := o.compat.Percentile()
	if (!given || p == 0) && !o.compat.Histogram() {
		return
	}
	h, err := measuredLatency(context.WithoutCancel(ctx), st, id)
	if err != nil {
		fmt.Fprintf(env.Stderr, "fathom: warning: reading the run's latencies for --percentile/--histogram: %v\n", err)
		return
	}
	if given {
		compat.WritePercentile(env.Stdout, h, p)
	}
	if o.compat.Histogram() {
		compat.WriteHistogram(env.Stdout, h)
	}
}

// measuredLatency merges the successful transactions' latencies of the run's
// measured (not warm-up) intervals.
func measuredLatency(ctx context.Context, st store.Store, id int64) (*hdr.Histogram, error) {
	ivs, err := st.Intervals(ctx, id)
	if err != nil {
		return nil, err
	}
	h := measure.NewHistogram()
	for _, iv := range ivs {
		if iv.Warmup {
			continue
		}
		for _, ty := range iv.Types {
			if ty.Latency != nil {
				h.Merge(ty.Latency)
			}
		}
	}
	return h, nil
}

// runError adds the command to prepare a missing workload to the engine's error.
func (o *runOpts) runError(err error) error {
	var np *run.NotPreparedError
	if errors.As(err, &np) {
		return withCode(exitFailure, fmt.Errorf("%v: run `fathom prepare --workload %s%s --target %s` first", np, o.workload, o.sizeFlags(), shellQuote(np.Target)))
	}
	return err
}

// redactArgs renders the command line with passwords masked.
func redactArgs(args []string) string { return target.RedactArgs("fathom", args) }

// runJSONOut is `run --json`: the summary, with what the screen says after it too: the
// saturated-host warning among the warnings, and the stalls found (or why they were
// not looked for).
type runJSONOut struct {
	*measure.Summary
	// Stalls is null when they were not looked for (StallsNotAnalysed says why),
	// [] when none was found.
	Stalls            []store.Stall `json:"stalls"`
	StallsNotAnalysed string        `json:"stalls_not_analysed,omitempty"`
}

func jsonRun(sum *measure.Summary, rs *run.SamplingResult) runJSONOut {
	out := runJSONOut{Summary: sum}
	if rs == nil {
		out.StallsNotAnalysed = "server and OS sampling was off"
		return out
	}
	if rs.Host != "" && sum.Status == runner.StatusComplete {
		s := *sum
		s.Warnings = append(append([]string(nil), sum.Warnings...), rs.Host)
		out.Summary = &s
	}
	switch {
	case rs.StallErr != nil:
		out.StallsNotAnalysed = rs.StallErr.Error()
	case rs.Measured < analyze.MinStallIntervals && len(rs.Stalls) == 0:
		out.StallsNotAnalysed = fmt.Sprintf("too few measured intervals to look for them (%d; a stall is judged against the run's own baseline)", rs.Measured)
	default:
		out.Stalls = append([]store.Stall{}, rs.Stalls...)
	}
	return out
}
