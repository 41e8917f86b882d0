// Package run is one run as a library call: it opens the target and the workload,
// records the run in the store it is handed, drives the runner, samples the server
// and the OS, stores every interval as it ends, finds the stalls and returns the
// summary. It emits typed events (Listener) and never formats text for a person:
// front ends (the CLI, an experiment's front end, a web server) display them.
package run

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/fathom-lab/fathom/internal/collect"
	"github.com/fathom-lab/fathom/internal/errkind"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/runner"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/txlog"
	"github.com/fathom-lab/fathom/internal/workload"
	"github.com/fathom-lab/fathom/internal/workload/pgscript"
)

// Options are everything a run needs. Seed 0 with HasSeed false takes a random seed
// (recorded with the run).
type Options struct {
	Target
	Workload string          // built-in name or workload file
	Params   workload.Params // workload options
	// Scripts, when set, runs pgbench scripts (-f, -b) instead of Workload.
	Scripts *pgscript.Options
	// Output receives what a workload's script prints (a sysbench script's print()).
	Output io.Writer

	Clients          int
	Duration         time.Duration // measured, after warm-up (0 and no Transactions: 10s)
	Transactions     int64         // per client, instead of Duration
	Warmup           time.Duration
	Rate             float64 // open loop, total tx/s (0: closed loop)
	LatencyLimit     time.Duration
	Interval         time.Duration // live events and stored histograms (> 0)
	MaxTries         int           // tries per transaction (>= 1)
	ReconnectTimeout time.Duration
	Seed             uint64
	HasSeed          bool
	Labels           map[string]string
	Sampling         Sampling
	// NoVacuum skips the workload's pre-run tidying (pgbench -n); see
	// workload.PreRunner. What was done or skipped is kept in the run's options.
	NoVacuum bool
	// VacuumAll also vacuums pgbench_accounts before the run (pgbench -v).
	VacuumAll bool
	// ConnectPerTxn opens a new connection for each transaction (pgbench -C).
	ConnectPerTxn bool
	// MaxErrorRate, with HasMaxErrorRate, fails a run whose failed transactions are
	// more than this percent of those that ended (measure.Summary.ErrorRate).
	MaxErrorRate    float64
	HasMaxErrorRate bool
	// Thresholds are checked against the summary at the end and stored in it; a
	// failed one leaves the run complete (the caller decides what it means). One
	// with Abort is also checked as the run goes (measure.Threshold.AbortNow): when
	// it fails the run stops, is stored StatusAborted with the reason, and Execute
	// returns a errkind.Aborted error. A workload file's thresholds are added to these.
	Thresholds []measure.Threshold
	// TxnLog, when set, writes pgbench's transaction log (-l); Clients, Lag, Retries
	// and Seed are filled in by Execute.
	TxnLog *txlog.Options

	// Provenance.
	ToolVersion string
	Command     string            // the front end's request, passwords masked
	Settings    map[string]string // read back by the caller (an experiment); win over the target's
	// OnCreate is called with the new run's id before anything is measured (an
	// experiment links it); an error abandons the run.
	OnCreate func(ctx context.Context, st store.Store, runID int64) error
	// OnClock is called with the run's clock origin (what its intervals' and samples'
	// offsets count from) as the run starts; it must not block. A run from agents,
	// whose clock the agents keep, reports the moment just before it is started.
	OnClock func(start time.Time)
	Now     func() time.Time // default time.Now
	// Tuner changes GOMAXPROCS and the GC percent for network clients (nil: the
	// process is left as it is); what was in effect is recorded with the run.
	Tuner runner.Tuner
	// OpenFiles is the process's open-files limit (0: unknown): a client count beyond
	// it is refused before anything is opened.
	OpenFiles uint64
	// Remote, when set, runs the clients on other machines instead of this process.
	Remote Remote
	// PrepareHint is how the front end's user prepares the workload on target (shown
	// when a prepare was left unfinished), e.g. "`fathom prepare --workload tpcb …`";
	// sizes are the size options the unfinished prepare was given (workload.SizeOptions),
	// which the hint must repeat.
	PrepareHint func(target string, sizes map[string]string) string
}

// Started is the first event of a run, once it is recorded.
type Started struct {
	RunID    int64
	Workload string
	Target   string // redacted
	Config   runner.Config
	// Run is the run as recorded (UUID, labels, target kind, transaction types, start).
	Run *store.Run
}

// Listener receives a run's live events, typed; the front end turns them into text,
// a progress bar or a page. Interval is called from the runner's sink: it must not
// block for long.
type Listener interface {
	Started(*Started)
	Interval(*measure.Interval)
	Finished()
	// Warning is something the user should know that did not stop the run.
	Warning(msg string)
}

// ErrorListener is an optional ability of a Listener: it hears each distinct error
// as the run first meets it (the first measure.KeptErrors of them; the store has it
// already), from a goroutine of its own rather than a client's.
type ErrorListener interface {
	Error(e measure.SeenError)
}

// Result is a finished (complete, failed or interrupted) run.
type Result struct {
	Summary  measure.Summary // Warnings: about the numbers (the front end shows them)
	Run      *store.Run
	Sampling *SamplingResult // nil: not sampled
	TxnLog   string          // the transaction log's file, "" if none
}

// runnerConfig checks the options and turns them into the runner's; mistakes are
// usage errors.
func (o *Options) runnerConfig() (runner.Config, error) {
	cfg := runner.Config{
		Clients:          o.Clients,
		Duration:         o.Duration,
		Transactions:     o.Transactions,
		Warmup:           o.Warmup,
		Rate:             o.Rate,
		LatencyLimit:     o.LatencyLimit,
		Interval:         o.Interval,
		MaxTries:         o.MaxTries,
		ReconnectTimeout: o.ReconnectTimeout,
		Seed:             o.Seed,
		Tuner:            o.Tuner,
		ConnectPerTxn:    o.ConnectPerTxn,
	}
	if cfg.Duration == 0 && cfg.Transactions == 0 {
		cfg.Duration = 10 * time.Second
	}
	if !o.HasSeed {
		var b [8]byte
		_, _ = rand.Read(b[:])
		cfg.Seed = binary.LittleEndian.Uint64(b[:]) >> 1
	}
	if o.Rate < 0 {
		return cfg, errkind.Usagef("--rate %v: use a positive number of transactions per second", o.Rate)
	}
	if o.LatencyLimit > 0 && o.Rate == 0 {
		return cfg, errkind.Usagef("--latency-limit (-L) goes with --rate (-R): it drops transactions late against the open-loop schedule, and a closed loop has none; add -R or leave -L out")
	}
	if err := cfg.Validate(); err != nil {
		return cfg, errkind.Usagef("%v", err)
	}
	if o.TxnLog != nil {
		if err := o.TxnLog.Check(); err != nil {
			return cfg, errkind.Usagef("%v", err)
		}
	}
	if o.HasMaxErrorRate && !(o.MaxErrorRate >= 0 && o.MaxErrorRate <= 100) {
		return cfg, errkind.Usagef("--max-error-rate %v: give a percent from 0 to 100 of the transactions that may fail, e.g. 1 or 0.5%%", o.MaxErrorRate)
	}
	return cfg, nil
}

// Check refuses options that cannot work before anything is spent: the workload and
// its options, the runner's, the target's DSN (parsed, not connected), the sampling
// options and the open-files limit. Execute checks the same; a front end calls Check
// first so that nothing (a store file) is created for a usage error.
func (o Options) Check() error {
	c, err := o.check()
	if c != nil {
		c.tgt.Close()
	}
	return err
}

// checked is what Check found: the workload, the runner's config and the target.
type checked struct {
	wl      workload.Workload
	cfg     runner.Config
	tgt     target.Target
	clients int
}

func (o *Options) check() (*checked, error) {
	wl, err := o.openWorkload()
	if err != nil {
		return nil, err
	}
	cfg, err := o.runnerConfig()
	if err != nil {
		return nil, err
	}
	tgt, err := o.Target.Open()
	if err != nil {
		return nil, err
	}
	if err := o.Sampling.check(tgt.Kind()); err != nil {
		tgt.Close()
		return nil, err
	}
	if err := useTarget(wl, tgt); err != nil {
		tgt.Close()
		return nil, err
	}
	if p, ok := wl.(workload.Printer); ok {
		p.SetOutput(o.Output)
	}
	clients := workloadClients(wl, cfg.Clients)
	if o.Remote == nil {
		if err := checkOpenFiles(o.OpenFiles, tgt.Kind(), clients); err != nil {
			tgt.Close()
			return nil, err
		}
	}
	return &checked{wl: wl, cfg: cfg, tgt: tgt, clients: clients}, nil
}

// TxnLogger is an optional ability of Clients: they write pgbench's transaction log
// (-l) as their transactions end. Clients without it (agents) refuse a log.
type TxnLogger interface {
	SetTxnLog(runner.TxnLog)
}

// Execute runs the workload and records it in st, which the caller opened and
// closes. Cancelling ctx stops the run gracefully (it is recorded as interrupted);
// the store is written with a context that ctx's cancellation does not reach, so
// that what was measured is kept. Errors before the run is recorded are returned with
// a nil Result; after that, the Result is always returned, and the error says the
// run failed or was interrupted.
func Execute(ctx context.Context, st store.Store, o Options, l Listener) (*Result, error) {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	c, err := o.check()
	if err != nil {
		return nil, err
	}
	wl, cfg, tgt, clients := c.wl, c.cfg, c.tgt, c.clients
	defer tgt.Close()
	if th, ok := wl.(workload.Thresholder); ok {
		o.Thresholds = append(slices.Clone(o.Thresholds), th.Thresholds()...)
	}
	connectTimeout := o.ConnectTimeout
	if connectTimeout == 0 {
		connectTimeout = 10 * time.Second
	}
	setupCtx, cancel := context.WithTimeout(ctx, connectTimeout+time.Minute)
	defer cancel()
	preRun, warnings, err := o.setup(setupCtx, tgt, wl, clients)
	if err != nil {
		return nil, err
	}
	if n, ok := wl.(workload.Noter); ok {
		warnings = append(warnings, n.RunNotes(clients)...)
	}
	mode, note := queryMode(tgt.Kind(), o.QueryMode, o.Scripts != nil)
	if note != "" {
		warnings = append(warnings, note)
	}
	for _, w := range warnings {
		l.Warning(w)
	}
	info, err := tgt.Info(setupCtx)
	if err != nil {
		info = target.Info{Version: "unknown (" + err.Error() + ")"}
	}

	// The clients connect (and prepare their statements) within a deadline of their
	// own that grows with their number: within the setup's, 3,000 clients on a
	// PostgreSQL at load 60 on 2 CPUs (about 40 connections a second) ran out of time
	// at 2,900 ("preparing statements: deadline exceeded"). Each attempt is also
	// bounded by the connect timeout.
	clientsCtx, cancelClients := context.WithTimeout(ctx, connectTimeout+time.Minute+time.Duration(clients)*connectPerClient)
	defer cancelClients()
	r, err := o.clients(clientsCtx, st, tgt, wl, cfg)
	if err != nil {
		return nil, o.clientsError(tgt, cfg, err)
	}
	defer r.Close()
	cfg.Clients = r.Clients() // client groups decide their own number
	tlog, err := o.openTxnLog(r, wl, cfg, now)
	if err != nil {
		return nil, err
	}

	run := o.runRecord(wl, tgt, info, r, cfg, preRun, mode, warnings, now)
	rec, _ := r.(Recorded)
	bg := context.WithoutCancel(ctx)
	id, err := o.createRun(bg, st, run)
	if err != nil {
		return nil, err
	}
	if rec != nil {
		rec.Recorded(id)
	}
	smp := startSampling(bg, o.Sampling, l.Warning, tgt, o.DSN, st, id, cfg.Interval)

	l.Started(&Started{RunID: id, Workload: wl.Name(), Target: tgt.Redacted(), Config: cfg, Run: run})
	srv := startServerCount(bg, wl, tgt, l.Warning)
	r.OnCut(func(index int) {
		smp.cut(index)
		srv.cut(index)
	})
	if o.OnClock != nil {
		if s, ok := r.(interface{ OnStart(func(time.Time)) }); ok {
			s.OnStart(o.OnClock)
		} else {
			o.OnClock(now())
		}
	}
	errsDone := watchErrors(bg, st, id, r, l)
	rep, _ := wl.(workload.Reporter)
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	sink := &intervalSink{ctx: bg, st: st, id: id, thresholds: o.Thresholds, stop: stopRun, l: l, rep: rep, smp: smp, r: r,
		totals: measure.NewTotals(wl.TxnTypes()), lastWarm: -1, lastMeasured: -1}
	res := r.Run(runCtx, sink.add)
	totals, cmdTotals, aborted := sink.totals, sink.cmdTotals, sink.aborted
	lastWarm, lastMeasured := sink.lastWarm, sink.lastMeasured
	if rep != nil {
		if err := rep.ReportEnd(); err != nil {
			l.Warning(err.Error())
		}
	}
	errsDone()
	if aborted != "" && res.Status != runner.StatusFailed {
		res.Status, res.Reason = StatusAborted, aborted
	}
	l.Finished()
	sres := smp.finish(bg, r.Start())
	logPath := closeTxnLog(tlog, l)

	// The reason is kept and shown everywhere: the store's Path holds no password,
	// and whatever a driver put in its errors is masked before it is saved.
	res.Reason = target.RedactString(res.Reason)
	sum := totals.Summary()
	sum.RunID, sum.Status, sum.Reason = id, res.Status, res.Reason
	sum.Workload, sum.Target, sum.Clients, sum.Rate = wl.Name(), tgt.Redacted(), cfg.Clients, cfg.Rate
	sum.QueryMode = mode
	srv.finish(&sum, lastWarm, lastMeasured)
	addRunFigures(&sum, &res, wl, &cmdTotals, cfg.Warmup)
	if len(res.Errors) > 0 {
		if err := st.SaveRunErrors(bg, id, res.Errors); err != nil {
			l.Warning(fmt.Sprintf("could not store run %d's errors in %s: %v", id, st.Path(), err))
		}
	}
	kind := o.verdict(&res, &sum)
	sum.Thresholds = measure.CheckThresholds(o.Thresholds, &sum)
	sum.Status, sum.Reason = res.Status, res.Reason
	js, _ := json.Marshal(sum)
	if err := st.FinishRun(bg, id, res.Status, res.Reason, res.End, js); err != nil {
		l.Warning(fmt.Sprintf("could not mark run %d %s in %s: %v", id, res.Status, st.Path(), err))
	}
	run.Status, run.Reason, run.EndedAt = res.Status, res.Reason, res.End
	out := &Result{Summary: sum, Run: run, Sampling: sres, TxnLog: logPath}
	return out, resultError(st, &sum, kind)
}

// intervalSink takes each interval the runner cuts: it stores it, adds it to the
// run's totals, stops the run when an aborting threshold fails, and passes it on to
// the listener, the workload (a Reporter) and the sampling.
type intervalSink struct {
	ctx        context.Context // the store's: ctx's cancellation does not reach it
	st         store.Store
	id         int64
	thresholds []measure.Threshold
	stop       func() // stops the run, as an interrupt
	l          Listener
	rep        workload.Reporter // nil: none
	smp        *sampling
	r          Clients

	totals                 *measure.Totals
	cmdTotals              measure.Interval // -r: the measured intervals' command times
	lastWarm, lastMeasured int              // the last interval's index in warm-up and measured (-1: none)
	aborted                string           // why an aborting threshold stopped the run
}

func (s *intervalSink) add(iv *measure.Interval) error {
	if err := s.st.AddInterval(s.ctx, s.id, iv); err != nil {
		return fmt.Errorf("writing interval %d to %s: %v", iv.Index, s.st.Path(), err)
	}
	s.totals.Add(iv)
	if iv.Warmup {
		s.lastWarm = iv.Index
	} else {
		s.lastMeasured = iv.Index
		s.cmdTotals.AddCommands(iv.Commands)
		s.checkAbort()
	}
	s.l.Interval(iv)
	if s.rep != nil {
		if err := s.rep.ReportInterval(iv); err != nil {
			s.l.Warning(err.Error())
		}
	}
	s.smp.interval(s.r.Start(), iv)
	return nil
}

// checkAbort stops the run the first time an aborting threshold fails it.
func (s *intervalSink) checkAbort() {
	if s.aborted != "" || !measure.HasAbort(s.thresholds) {
		return
	}
	if why := abortReason(s.thresholds, s.totals); why != "" {
		s.aborted = why
		s.l.Warning("stopping the run: " + why)
		s.stop() // as an interrupt: every interval so far is still stored
	}
}

// closeTxnLog closes the transaction log (nil: none), warning on l if that fails, and
// returns its path ("": none).
func closeTxnLog(tlog *txlog.Log, l Listener) string {
	if tlog == nil {
		return ""
	}
	if err := tlog.Close(); err != nil {
		l.Warning(err.Error())
	}
	return tlog.Path()
}

// addRunFigures adds to a run's summary the runner's warnings and, for a workload
// that times its commands (-r), their latencies over the measured intervals.
func addRunFigures(sum *measure.Summary, res *runner.Result, wl workload.Workload, cmdTotals *measure.Interval, warmup time.Duration) {
	for _, w := range res.Warnings {
		sum.Warnings = append(sum.Warnings, w.Text)
	}
	if t, ok := wl.(workload.CommandTimer); ok {
		if names := t.Commands(); len(names) > 0 {
			sum.PerCommand = measure.CommandLatencies(names, cmdTotals.Commands)
			sum.PerCommandWindow = commandWindow(*sum, warmup)
		}
	}
}

// resultError is the error that says how a finished run ended (nil: complete), of
// the kind its exit code shows; kind is a failed run's (Options.verdict).
func resultError(st store.Store, sum *measure.Summary, kind errkind.Kind) error {
	id := sum.RunID
	switch sum.Status {
	case StatusAborted:
		return errkind.WithKind(errkind.Aborted, fmt.Errorf("run %d aborted: %s (what was measured is kept in %s)", id, sum.Reason, st.Path()))
	case runner.StatusInterrupted:
		return errkind.WithKind(errkind.Interrupted, fmt.Errorf("run %d interrupted; %d finished intervals kept in %s", id, sum.Intervals, st.Path()))
	case StatusPartial:
		return errkind.WithKind(errkind.Failed, fmt.Errorf("run %d is partial: %s (what was measured is kept in %s)", id, sum.Reason, st.Path()))
	case runner.StatusFailed:
		return errkind.WithKind(kind, fmt.Errorf("run %d failed: %s (what ran is kept in %s)", id, sum.Reason, st.Path()))
	}
	return nil
}

// setup readies the server for the run on one connection of its own: it checks
// there is room for the clients, sets the workload up and applies what must be in
// place before the run (preRun, recorded with the run). The warnings are things the
// user must know: an unfinished prepare, a pre-run step that failed.
func (o *Options) setup(ctx context.Context, tgt target.Target, wl workload.Workload, clients int) (string, []string, error) {
	conn, err := Connect(ctx, tgt)
	if err != nil {
		return "", nil, err
	}
	defer conn.Close()
	if err := checkServerRoom(ctx, conn, tgt, clients); err != nil {
		return "", nil, err
	}
	if err := wl.Setup(ctx, conn); err != nil {
		return "", nil, setupError(tgt, err)
	}
	var warnings []string
	d := tgt.Dialect()
	pre, err := preRun(ctx, o, wl, conn, &d)
	if err != nil {
		warnings = append(warnings, err.Error())
	}
	if u, err := workload.UnfinishedPrepare(ctx, tgt, conn, wl); err != nil {
		warnings = append(warnings, fmt.Sprintf("could not check for an unfinished prepare: %v", err))
	} else if u.Msg != "" {
		how := "fathom prepare"
		if o.PrepareHint != nil {
			how = o.PrepareHint(tgt.Redacted(), u.Sizes)
		}
		warnings = append(warnings, fmt.Sprintf("%s; run %s again", u.Msg, how))
	}
	return pre, warnings, nil
}

// clientsError is the error of clients that could not start: a connection's or
// authentication's as such, an agent's as it came.
func (o *Options) clientsError(tgt target.Target, cfg runner.Config, err error) error {
	if o.Remote != nil {
		return err
	}
	if target.ClassOf(err) == target.ClassAuth || target.ClassOf(err) == target.ClassConnection {
		return ConnectError(tgt, err)
	}
	return errkind.WithKind(errkind.Failed, fmt.Errorf("starting %d clients: %v", cfg.Clients, err))
}

// openTxnLog opens the transaction log (-l) and hands it to the clients (nil: no log).
func (o *Options) openTxnLog(r Clients, wl workload.Workload, cfg runner.Config, now func() time.Time) (*txlog.Log, error) {
	if o.TxnLog == nil {
		return nil, nil
	}
	lo := *o.TxnLog
	lo.Clients, lo.Seed, lo.Retries, lo.Lag = r.Clients(), cfg.Seed, cfg.MaxTries > 1, openLoop(wl, cfg.Rate)
	tl, ok := r.(TxnLogger)
	if !ok {
		return nil, errkind.Usagef("a transaction log (-l) is written by the process that runs the clients: leave it out with agents")
	}
	tlog, err := txlog.Open(lo, now())
	if err != nil {
		return nil, errkind.WithKind(errkind.Failed, err)
	}
	tl.SetTxnLog(tlog)
	return tlog, nil
}

// runRecord is the run as it is recorded when it starts.
func (o *Options) runRecord(wl workload.Workload, tgt target.Target, info target.Info, r Clients, cfg runner.Config, preRun, mode string, warnings []string, now func() time.Time) *store.Run {
	h := collect.HostFacts()
	run := &store.Run{
		ToolVersion:   o.ToolVersion,
		Command:       o.Command,
		Workload:      wl.Name(),
		Options:       runOptions(wl, preRun, mode, o.ConnectPerTxn),
		Seed:          cfg.Seed,
		TargetKind:    tgt.Kind(),
		Target:        tgt.Redacted(),
		ServerVersion: info.Version,
		Settings:      info.Settings,
		Host: store.Host{Hostname: h.Hostname, OS: h.OS, Kernel: h.Kernel, CPUModel: h.CPUModel,
			CPUs: h.CPUs, MemoryBytes: h.MemoryBytes, GoVersion: h.GoVersion, Runtime: r.Tuning(),
			Sockets: sockets(tgt), Transport: transport(tgt), OSMetrics: collect.OSMetrics(o.Sampling.NoProcfs)},
		Labels:       o.Labels,
		Clients:      cfg.Clients,
		Rate:         cfg.Rate,
		Duration:     cfg.Duration,
		Transactions: cfg.Transactions,
		Warmup:       cfg.Warmup,
		Interval:     cfg.Interval,
		TxnTypes:     wl.TxnTypes(),
		StartedAt:    now(),
		QueryMode:    mode,
		MaxTries:     cfg.MaxTries,
		LatencyLimit: cfg.LatencyLimit,
		Warnings:     warnings,
	}
	if run.Labels == nil {
		run.Labels = map[string]string{}
	}
	if rec, ok := r.(Recorded); ok {
		for k, v := range rec.RunOptions() {
			run.Options[k] = v
		}
	}
	if len(o.Settings) > 0 {
		if run.Settings == nil {
			run.Settings = map[string]string{}
		}
		for k, v := range o.Settings {
			run.Settings[k] = v
		}
	}
	if run.QueryMode == "" {
		run.QueryMode = "prepared"
	}
	return run
}

// createRun records the run in st and links it to its experiment (OnCreate); it
// returns the run's ID.
func (o *Options) createRun(bg context.Context, st store.Store, run *store.Run) (int64, error) {
	id, err := st.CreateRun(bg, run)
	if err != nil {
		return 0, errkind.WithKind(errkind.Failed, fmt.Errorf("recording the run in %s: %v", st.Path(), err))
	}
	run.ID = id
	if o.OnCreate != nil {
		if err := o.OnCreate(bg, st, id); err != nil {
			_ = st.MarkAbandoned(bg, id, "could not be linked to its experiment: "+err.Error())
			return 0, errkind.WithKind(errkind.Failed, fmt.Errorf("linking run %d to its experiment in %s: %v", id, st.Path(), err))
		}
	}
	return id, nil
}

// StatusAborted is a run stopped early by a threshold set to abort it.
const StatusAborted = "aborted"

// abortReason is why the first aborting threshold that fails the run so far stops
// it ("" while none does): "threshold p99<20ms;abort failed: p99 35.2 ms after 12.0 s
// measured and 4210 transactions".
func abortReason(ts []measure.Threshold, totals *measure.Totals) string {
	sum := totals.Summary()
	for _, t := range ts {
		if r, stop := t.AbortNow(&sum); stop {
			fig := fmt.Sprintf("%.4g %s", r.Actual, r.Unit)
			if r.Note != "" {
				fig = r.Note
			}
			return fmt.Sprintf("threshold %s failed: %s %s after %.1f s measured and %d transactions ended", t.Text, t.Metric, fig, sum.Seconds, sum.Transactions+sum.Failed)
		}
	}
	return ""
}

// watchErrors has the runner's distinct errors, as it first meets them, stored with
// the run and passed to l if it is an ErrorListener, from a goroutine of their own.
// The returned function waits for the last of them (call it once the run returned).
func watchErrors(ctx context.Context, st store.Store, id int64, r Clients, l Listener) func() {
	w, ok := r.(interface{ OnError(func(measure.SeenError)) })
	if !ok {
		return func() {}
	}
	el, _ := l.(ErrorListener)
	// The runner hands over at most measure.KeptErrors, so a send never blocks.
	ch := make(chan measure.SeenError, measure.KeptErrors)
	w.OnError(func(e measure.SeenError) {
		select {
		case ch <- e:
		default:
		}
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var seen []measure.SeenError
		warned := false
		for e := range ch {
			seen = append(seen, e)
			if err := st.SaveRunErrors(ctx, id, seen); err != nil && !warned {
				warned = true
				l.Warning(fmt.Sprintf("could not store run %d's errors in %s: %v", id, st.Path(), err))
			}
			if el != nil {
				el.Error(e)
			}
		}
	}()
	return func() {
		close(ch)
		<-done
	}
}

// verdict fills the summary's error fields from the runner's result and decides how a
// run that went its course ended: failed when no transaction succeeded, or when its
// error rate is above Options.MaxErrorRate; res's status and reason are updated. It
// returns the kind of error a failed run returns.
func (o *Options) verdict(res *runner.Result, sum *measure.Summary) errkind.Kind {
	sum.FirstErrors, sum.ErrorsUnlisted, sum.ClientsAborted = res.Errors, res.ErrorsUnlisted, res.Aborted
	if o.HasMaxErrorRate {
		m := o.MaxErrorRate
		sum.MaxErrorRate = &m
	}
	switch {
	case res.Status == runner.StatusFailed && res.ByErrors:
		return errkind.Errors
	case res.Status != runner.StatusComplete:
		return errkind.Failed
	case sum.Transactions == 0 && (sum.Failed > 0 || sum.Errors > 0):
		res.Status = runner.StatusFailed
		res.Reason = fmt.Sprintf("no transaction succeeded (%d failed)%s", sum.Failed, firstError(res.Errors))
		return errkind.Errors
	case o.HasMaxErrorRate && float64(sum.Failed)*100 > o.MaxErrorRate*float64(sum.Transactions+sum.Failed):
		res.Status = runner.StatusFailed
		rate := pct(sum.ErrorRate)
		if sum.ErrorRate == 0 {
			rate = "<0.001"
		}
		res.Reason = fmt.Sprintf("error rate %s%% (%d of %d transactions failed) is above the maximum of %s%%%s",
			rate, sum.Failed, sum.Transactions+sum.Failed, pct(o.MaxErrorRate), firstError(res.Errors))
		return errkind.Threshold
	}
	return errkind.Failed
}

// firstError names the run's first error for a reason: "; the first: …" ("" if none).
func firstError(errs []measure.SeenError) string {
	if len(errs) == 0 {
		return ""
	}
	e := errs[0]
	s := "; the first: " + e.Class + " error"
	if e.Code != "" {
		s += " " + e.Code
	}
	s += ": " + e.Message
	if e.Where != "" {
		s += " (" + e.Where + ")"
	} else if e.Txn != "" {
		s += " (in " + e.Txn + ")"
	}
	return s
}

// pct formats a percent without trailing zeros (0.5, 12.345).
func pct(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// commandWindow says which part of the run the per-command latencies cover: the
// intervals the summary counts, without the warm-up.
func commandWindow(sum measure.Summary, warmup time.Duration) string {
	w := fmt.Sprintf("the %d measured intervals (%.1f s)", sum.Intervals, sum.Seconds)
	if warmup > 0 {
		return w + ", warm-up of " + warmup.String() + " excluded"
	}
	return w + ", the whole run (no warm-up)"
}
