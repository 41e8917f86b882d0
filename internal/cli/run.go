package cli

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fathom-lab/fathom/internal/collect"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/report"
	"github.com/fathom-lab/fathom/internal/runner"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/target"
)

type runOpts struct {
	targetOpts
	store        string
	clients      int
	duration     time.Duration
	transactions int64
	warmup       time.Duration
	rate         float64
	interval     time.Duration
	latencyLimit time.Duration
	maxTries     int
	seed         string
	labels       []string
	json         bool
	quiet        bool
	reconnect    time.Duration
	sampling     samplingOpts // server and OS metrics (sampling.go)
	bench        *benchHooks  // set when an experiment drives the run (bench.go)
}

func (o *runOpts) register(cmd *cobra.Command, env *Env) {
	fs := cmd.Flags()
	o.targetOpts.register(fs, env)
	storeFlag(fs, env, &o.store)
	fs.IntVarP(&o.clients, "clients", "c", 1, "number of clients, each with its own connection")
	durationVarP(fs, &o.duration, "time", "T", 0, "measured duration after warm-up, e.g. 60 or 5m (default 10s unless -t)")
	fs.Int64VarP(&o.transactions, "transactions", "t", 0, "transactions per client after warm-up (instead of -T)")
	durationVarP(fs, &o.warmup, "warmup", "", 0, "warm-up before measuring: recorded, tagged, excluded from the summary")
	fs.Float64VarP(&o.rate, "rate", "R", 0, "open loop: total intended transactions per second on a Poisson schedule (default closed loop)")
	durationVarP(fs, &o.latencyLimit, "latency-limit", "L", 0, "open loop: skip (count as dropped) transactions already this late at their start")
	durationVarP(fs, &o.interval, "report-interval", "P", time.Second, "interval for live lines and stored histograms, e.g. 1, 10s, 250ms")
	fs.IntVar(&o.maxTries, "max-tries", 1, "tries per transaction for serialization failures and deadlocks (1 = no retry)")
	fs.StringVar(&o.seed, "seed", "", "random seed for reproducible values (default: random, recorded)")
	fs.StringArrayVar(&o.labels, "label", nil, "label key=value stored with the run (repeatable)")
	fs.BoolVar(&o.json, "json", false, "print the final summary as JSON on stdout (live lines go to stderr)")
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "no live interval lines")
	durationVarP(fs, &o.reconnect, "reconnect-timeout", "", 30*time.Second, "fail the run if a client cannot reconnect for this long")
	o.sampling.register(fs)
}

func newRunCmd(env *Env) *cobra.Command {
	o := &runOpts{}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run a workload and store the results",
		Example: `  fathom run --workload tpcb -c 8 -T 60 --target postgres://bench@db1/bench
  fathom run --workload oltp_read_write --tables 4 -c 16 -T 5m -P 10 --target mysql://root@127.0.0.1/sbtest
  fathom run --workload tpcb-select -c 4 -R 2000 -T 60 --json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := o.execute(cmd.Context(), env, cmd)
			return err
		},
	}
	o.register(cmd, env)
	return cmd
}

func (o *runOpts) runnerConfig() (runner.Config, error) {
	cfg := runner.Config{
		Clients:          o.clients,
		Duration:         o.duration,
		Transactions:     o.transactions,
		Warmup:           o.warmup,
		Rate:             o.rate,
		LatencyLimit:     o.latencyLimit,
		Interval:         o.interval,
		MaxTries:         o.maxTries,
		ReconnectTimeout: o.reconnect,
	}
	if cfg.Duration == 0 && cfg.Transactions == 0 {
		cfg.Duration = 10 * time.Second
	}
	if o.seed != "" {
		var s uint64
		if _, err := fmt.Sscan(o.seed, &s); err != nil {
			return cfg, usagef("--seed %q: use a non-negative whole number", o.seed)
		}
		cfg.Seed = s
	} else {
		var b [8]byte
		_, _ = rand.Read(b[:])
		cfg.Seed = binary.LittleEndian.Uint64(b[:]) >> 1
	}
	if o.rate < 0 {
		return cfg, usagef("--rate %v: use a positive number of transactions per second", o.rate)
	}
	if err := cfg.Validate(); err != nil {
		return cfg, usagef("%v", err)
	}
	return cfg, nil
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
	return m, nil
}

// execute runs the workload and returns its summary. Everything measured is stored
// before an error is returned.
func (o *runOpts) execute(ctx context.Context, env *Env, cmd *cobra.Command) (*measure.Summary, error) {
	_, wl, err := o.openWorkload()
	if err != nil {
		return nil, err
	}
	cfg, err := o.runnerConfig()
	if err != nil {
		return nil, err
	}
	labels, err := o.labelMap()
	if err != nil {
		return nil, err
	}
	tgt, err := o.openTarget()
	if err != nil {
		return nil, err
	}
	defer tgt.Close()
	if err := o.sampling.check(tgt.Kind()); err != nil {
		return nil, err
	}

	setupCtx, cancel := context.WithTimeout(ctx, o.connectTimeout+time.Minute)
	defer cancel()
	conn, err := connect(setupCtx, tgt)
	if err != nil {
		return nil, err
	}
	err = wl.Setup(setupCtx, conn)
	conn.Close()
	if err != nil {
		return nil, setupError(&o.targetOpts, tgt, err)
	}
	info, err := tgt.Info(setupCtx)
	if err != nil {
		info = target.Info{Version: "unknown (" + err.Error() + ")"}
	}

	st, err := store.Open(o.store)
	if err != nil {
		return nil, withCode(ExitFailure, err)
	}
	defer st.Close()

	r, err := runner.Connect(setupCtx, tgt, wl, cfg)
	if err != nil {
		if target.ClassOf(err) == target.ClassAuth || target.ClassOf(err) == target.ClassConnection {
			return nil, connectError(tgt, err)
		}
		return nil, withCode(ExitFailure, fmt.Errorf("starting %d clients: %v", cfg.Clients, err))
	}
	defer r.Close()
	cfg.Clients = r.Clients() // client groups decide their own number

	h := collect.HostFacts()
	run := &store.Run{
		ToolVersion:   version(),
		Command:       redactArgs(env.Args),
		Workload:      wl.Name(),
		Options:       wl.Options(),
		Seed:          cfg.Seed,
		TargetKind:    tgt.Kind(),
		Target:        tgt.Redacted(),
		ServerVersion: info.Version,
		Settings:      info.Settings,
		Host: store.Host{Hostname: h.Hostname, OS: h.OS, Kernel: h.Kernel, CPUModel: h.CPUModel,
			CPUs: h.CPUs, MemoryBytes: h.MemoryBytes, GoVersion: h.GoVersion},
		Labels:       labels,
		Clients:      cfg.Clients,
		Rate:         cfg.Rate,
		Duration:     cfg.Duration,
		Transactions: cfg.Transactions,
		Warmup:       cfg.Warmup,
		Interval:     cfg.Interval,
		TxnTypes:     wl.TxnTypes(),
		StartedAt:    env.Now(),
	}
	o.bench.record(run)
	id, err := st.CreateRun(ctx, run)
	if err != nil {
		return nil, withCode(ExitFailure, fmt.Errorf("recording the run in %s: %v", o.store, err))
	}
	if err := o.bench.created(ctx, st, id); err != nil {
		return nil, withCode(ExitFailure, err)
	}
	smp := o.sampling.startRun(ctx, env, tgt, o.target, st, id, cfg.Interval)

	live := io.Writer(env.Stdout)
	if o.json {
		live = env.Stderr
	}
	if o.quiet {
		live = io.Discard
	}
	live = o.bench.liveWriter(live)
	lp := newLivePrinter(live, env, cfg, id, wl.Name(), tgt.Redacted())
	lp.header()
	totals := measure.NewTotals(wl.TxnTypes())
	runCtx, stopSignals := env.Interrupts(ctx)
	defer stopSignals()
	res := r.Run(runCtx, func(iv *measure.Interval) error {
		if err := st.AddInterval(ctx, id, iv); err != nil {
			return fmt.Errorf("writing interval %d to %s: %v", iv.Index, o.store, err)
		}
		totals.Add(iv)
		lp.interval(iv)
		smp.interval(r.Start(), iv)
		return nil
	})
	lp.done()
	smp.finish(ctx, r.Start())

	sum := totals.Summary()
	sum.RunID, sum.Status, sum.Reason = id, res.Status, res.Reason
	sum.Workload, sum.Target, sum.Clients, sum.Rate = wl.Name(), tgt.Redacted(), cfg.Clients, cfg.Rate
	js, _ := json.Marshal(sum)
	if err := st.FinishRun(context.WithoutCancel(ctx), id, res.Status, res.Reason, res.End, js); err != nil {
		fmt.Fprintf(env.Stderr, "fathom: warning: could not mark run %d %s in %s: %v\n", id, res.Status, o.store, err)
	}
	if o.json {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(sum)
	} else if o.bench.summary() {
		report.WriteSummary(env.Stdout, run, &sum)
		smp.report(env.Stdout)
	}
	switch res.Status {
	case runner.StatusInterrupted:
		return &sum, withCode(ExitInterrupted, fmt.Errorf("run %d interrupted; %d finished intervals kept in %s", id, sum.Intervals, o.store))
	case runner.StatusFailed:
		return &sum, withCode(ExitFailure, fmt.Errorf("run %d failed: %s (what ran is kept in %s)", id, res.Reason, o.store))
	}
	return &sum, nil
}

// redactArgs renders the command line with passwords masked.
func redactArgs(args []string) string {
	out := make([]string, 0, len(args)+1)
	out = append(out, "fathom")
	for _, a := range args {
		a = target.RedactString(a)
		if strings.ContainsAny(a, " \t'\"") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out = append(out, a)
	}
	return strings.Join(out, " ")
}
