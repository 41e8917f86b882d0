// Package experiment executes a plan: its cells and repetitions in order, the
// throwaway instances, the server and OS settings applied and verified before each
// run, the hooks, each run through the run engine, the aggregate of several instances,
// and resuming an interrupted experiment. Front ends (the CLI, a web server) call
// Start or Resume with a plan they read and checked.
package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fathom-lab/fathom/internal/agent"
	"github.com/fathom-lab/fathom/internal/collect"
	"github.com/fathom-lab/fathom/internal/db"
	"github.com/fathom-lab/fathom/internal/errkind"
	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/plan"
	"github.com/fathom-lab/fathom/internal/run"
	"github.com/fathom-lab/fathom/internal/runner"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
)

// Options are how an experiment runs and whom it tells: its progress, each run's live
// events, the results and the warnings go to Listener as typed events.
type Options struct {
	Keep        bool   // leave the instances (stopped, with their data)
	RetryFailed bool   // Resume: run failed cells again too
	InstanceDir string // base directory for instances ("": the plan's, else instance's default)
	ToolVersion string
	Listener    Listener         // the events (nil: nobody)
	Now         func() time.Time // default time.Now
	Command     string           // recorded with each run, passwords masked
	OpenFiles   uint64           // the process's open-files limit (0: unknown)
	Tuner       runner.Tuner     // GOMAXPROCS and GC settings for the runs (nil: none)
	// NoProcfs takes the portable paths (Go's network poller, no /proc reads).
	NoProcfs bool
	// Getenv and Environ are the environment as the front end read it: Getenv for the
	// DSNs' defaults (target.Config.Getenv), Environ the base of every hook's, restart
	// command's and instance tool's environment.
	Getenv  func(string) string
	Environ []string
}

// Outcome is how an execution of an experiment ended.
type Outcome struct {
	Experiment *store.Experiment
	Status     string // complete, failed or interrupted
	Elapsed    time.Duration
}

func newRun(o Options, st store.Store, p *plan.Plan, cells []*plan.Cell) *experimentRun {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Listener == nil {
		o.Listener = nobody{}
	}
	return &experimentRun{o: o, st: st, p: p, cells: cells, prepared: map[int]string{}, used: map[int]bool{}}
}

func (x *experimentRun) now() time.Time { return x.o.Now() }

// open opens a DSN with the front end's environment.
func (x *experimentRun) open(dsn string, cfg target.Config) (target.Target, error) {
	cfg.Getenv = x.o.Getenv
	return db.Open(dsn, cfg)
}

// planError turns plan problems into a usage error (every problem on its line).
func planError(err error) error {
	var pe *plan.Error
	if errors.As(err, &pe) {
		return errkind.Usagef("%v", err)
	}
	return errkind.WithKind(errkind.Failed, err)
}

// Start records a new experiment for the plan read from path and runs it. Cancelling
// ctx interrupts it: the run going on is stopped and recorded, and the experiment can
// be resumed. The Outcome is nil when nothing was recorded.
func Start(ctx context.Context, st store.Store, p *plan.Plan, path string, o Options) (*Outcome, error) {
	cells := p.Cells()
	x := newRun(o, st, p, cells)
	if !p.Managed() {
		if err := x.openExternal(ctx); err != nil {
			return nil, err
		}
	}
	seed := p.Seed
	if !p.HasSeed {
		seed = uint64(x.now().UnixNano())
	}
	schedule := plan.Schedule(len(cells), p.Repetitions, p.Order, seed)
	exp := &store.Experiment{
		Name: p.Name, Description: p.Description, PlanPath: path, PlanDir: p.Dir, Plan: target.MaskText(string(p.Data)),
		Repetitions: p.Repetitions, Order: p.Order, Target: x.targetText(), ToolVersion: o.ToolVersion,
		Host: collect.HostFacts().Hostname, PID: instance.CurrentPID(), CreatedAt: x.now(),
	}
	exp.Judge = p.Judge
	for _, ax := range p.Axes {
		ea := store.ExperimentAxis{Name: plan.ShortAxis(ax.Name), Baseline: p.Baseline[plan.ShortAxis(ax.Name)]}
		for _, v := range ax.Values {
			ea.Values = append(ea.Values, v.Label)
		}
		exp.Axes = append(exp.Axes, ea)
	}
	var scells []store.ExperimentCell
	for _, c := range cells {
		sc := store.ExperimentCell{Cell: c.Index, Key: c.Key(), Params: cellParams(c)}
		for _, co := range c.Coords {
			sc.Coords = append(sc.Coords, store.Coord{Axis: co.Axis, Value: co.Value})
		}
		scells = append(scells, sc)
	}
	var slots []store.ExperimentSlot
	for _, s := range schedule {
		slots = append(slots, store.ExperimentSlot{Seq: s.Index, Cell: s.Cell, Repetition: s.Repetition, Status: "planned"})
	}
	if _, err := st.CreateExperiment(ctx, exp, scells, slots); err != nil {
		return nil, errkind.WithKind(errkind.Failed, fmt.Errorf("recording the experiment in %s: %v", st.Path(), err))
	}
	x.exp, x.slots = exp, slots
	return x.execute(ctx)
}

// cellParams is what a cell runs with, stored with the experiment.
func cellParams(c *plan.Cell) json.RawMessage {
	m := map[string]any{
		"workload": c.Workload, "clients": c.Clients, "warmup": c.Warmup.String(), "report_interval": c.Interval.String(),
		"max_tries": c.MaxTries, "query_mode": c.QueryMode, "instances": c.Instances,
	}
	if c.Duration > 0 {
		m["duration"] = c.Duration.String()
	} else {
		m["transactions"] = c.Transactions
	}
	if c.Rate > 0 {
		m["rate"] = c.Rate
		m["latency_limit"] = c.LatencyLimit.String()
	}
	opts, sets := map[string]string{}, map[string]string{}
	for _, kv := range c.Options {
		opts[kv.Name] = kv.Value
	}
	for _, kv := range c.Settings {
		sets[kv.Name] = kv.Value
	}
	m["options"], m["settings"] = opts, sets
	if len(c.Table) > 0 {
		tab := map[string]string{}
		for _, kv := range c.Table {
			tab[kv.Name] = kv.Value
		}
		m["table"] = tab
	}
	b, _ := json.Marshal(m)
	return b
}

// Resume continues an experiment recorded in st: finished runs are kept, the
// interrupted one runs again (and failed ones with RetryFailed). The Outcome is nil
// when nothing ran.
func Resume(ctx context.Context, st store.Store, exp *store.Experiment, o Options) (*Outcome, error) {
	if exp.Status == "complete" && !o.RetryFailed {
		if o.Listener != nil {
			o.Listener.Event(NothingToResume{ID: exp.ID, Name: exp.Name})
		}
		return nil, nil
	}
	host := collect.HostFacts().Hostname
	if exp.Status == "running" && exp.Host == host && instance.ProcessAlive(exp.PID) && exp.PID != instance.CurrentPID() {
		return nil, errkind.WithKind(errkind.Failed, fmt.Errorf("experiment %d is still being run by process %d on this machine: stop it first (Ctrl-C there)", exp.ID, exp.PID))
	}
	p, err := resumePlan(exp)
	if err != nil {
		return nil, err
	}
	cells := p.Cells()
	stored, err := st.ExperimentCells(ctx, exp.ID)
	if err != nil {
		return nil, errkind.WithKind(errkind.Failed, err)
	}
	if len(stored) != len(cells) {
		return nil, errkind.WithKind(errkind.Failed, fmt.Errorf("experiment %d: its plan now gives %d cells but %d were stored: it cannot be resumed", exp.ID, len(cells), len(stored)))
	}
	for i := range cells {
		if cells[i].Key() != stored[i].Key {
			return nil, errkind.WithKind(errkind.Failed, fmt.Errorf("experiment %d: cell %d is now %q but was %q: it cannot be resumed", exp.ID, i, cells[i].Key(), stored[i].Key))
		}
	}
	slots, err := st.ExperimentSlots(ctx, exp.ID)
	if err != nil {
		return nil, errkind.WithKind(errkind.Failed, err)
	}
	// Runs left "running" by a process that died are marked so.
	eruns, err := st.ExperimentRuns(ctx, exp.ID)
	if err != nil {
		return nil, errkind.WithKind(errkind.Failed, err)
	}
	for _, er := range eruns {
		if r, err := st.Run(ctx, er.RunID); err == nil && (r.Status == "running" || r.Gone) {
			_ = st.MarkAbandoned(ctx, er.RunID, "the fathom running it stopped before the run ended (experiment resumed)")
		}
	}
	x := newRun(o, st, p, cells)
	x.exp, x.resumed = exp, true
	for _, sl := range slots {
		x.slots = append(x.slots, store.ExperimentSlot{Seq: sl.Seq, Cell: sl.Cell, Repetition: sl.Repetition, Status: sl.Status})
	}
	if !p.Managed() {
		if err := x.openExternal(ctx); err != nil {
			return nil, err
		}
	}
	if err := st.ResumeExperiment(ctx, exp.ID, host, instance.CurrentPID()); err != nil {
		return nil, errkind.WithKind(errkind.Failed, err)
	}
	return x.execute(ctx)
}

// resumePlan decodes the plan an experiment was started with. The stored text has its
// passwords masked; when it had any, the plan file must still say the same.
func resumePlan(exp *store.Experiment) (*plan.Plan, error) {
	text := []byte(exp.Plan)
	if strings.Contains(exp.Plan, "xxxxx") {
		path := exp.PlanPath
		if !filepath.IsAbs(path) {
			path = filepath.Join(exp.PlanDir, filepath.Base(path))
		}
		p, err := plan.ReadFile(path)
		if err != nil || target.MaskText(string(p.Data)) != exp.Plan {
			return nil, errkind.WithKind(errkind.Failed, fmt.Errorf("experiment %d: its plan held a password, which fathom does not store, and %s no longer says the same: it cannot be resumed", exp.ID, path))
		}
		text = p.Data
	}
	p, err := plan.Read(exp.PlanPath, exp.PlanDir, text)
	if err != nil {
		return nil, errkind.WithKind(errkind.Failed, fmt.Errorf("experiment %d: its stored plan no longer checks (a workload file changed?):\n%v", exp.ID, err))
	}
	return p, nil
}

// experimentRun is one execution of an experiment (a start or a resume).
type experimentRun struct {
	o       Options
	st      store.Store
	p       *plan.Plan
	exp     *store.Experiment
	cells   []*plan.Cell
	slots   []store.ExperimentSlot
	resumed bool

	servers  []*plan.Server // managed: instance i+1 (or in the order first used, of an axis of instances); external: the plan's targets, in order
	dsns     []string       // external: each server's DSN as the plan gives it
	values   []string       // axis of instances: each server's value (its label)
	prepared map[int]string // server index -> workload signature this process prepared
	used     map[int]bool   // servers whose before_experiment hooks ran
	shellRan bool           // before_experiment shell hooks ran

	mu      sync.Mutex // one event at a time to the listener
	started time.Time
	done    int // slots finished in this execution
	// Timing for the estimate of the time left.
	lastOverhead time.Duration // the last timed slot's wall time beyond its planned time
	txSpent      time.Duration // wall time of finished slots that ran by transactions
	txDone       int
	// OS settings (settings.os.NAME): applied before each run, restored at the end;
	// osNow is what the current slot's tunables read back, recorded with its runs.
	os    *plan.OSSettings
	osNow map[string]string
	// byErrors: the last slot's failed runs all went their course and failed by their
	// transactions' errors (none succeeded, clients aborted, an error rate above its
	// maximum): the experiment goes on whatever on_error says.
	byErrors bool

	// clients is a private temporary directory of the wrappers that take the server's
	// own clients in shell hooks to an instance (instance.HookEnv); removed at the end.
	clientsMu sync.Mutex
	clients   string
}

// emit hands e to the listener, one event at a time (the runs of several instances
// emit from goroutines of their own).
func (x *experimentRun) emit(e Event) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.o.Listener.Event(e)
}

// warn emits a Warning.
func (x *experimentRun) warn(format string, args ...any) {
	x.emit(Warning{Text: fmt.Sprintf(format, args...)})
}

// openExternal prepares the external servers (the plan's target, or each target its
// target axis names) and, before anything runs, checks the plan's settings against
// its one target. With several targets each cell's settings are checked on its own
// server when they are applied.
func (x *experimentRun) openExternal(ctx context.Context) error {
	for _, dsn := range x.p.Targets() {
		if slices.Contains(x.dsns, dsn) { // two values of the axis on one server (two engines): one server
			continue
		}
		t, err := db.Open(dsn, target.Config{Getenv: x.o.Getenv})
		if err != nil {
			return errkind.Usagef("%s:%d: target: %v", x.p.Path, x.targetLine(dsn), target.RedactString(err.Error()))
		}
		redacted := t.Redacted()
		t.Close()
		kind := db.KindOf(dsn)
		x.servers = append(x.servers, plan.NewExternal(kind, db.SettingsOf(kind), x.open, dsn, redacted, x.p.RestartCommand, x.p.Dir, x.o.Environ))
		x.dsns = append(x.dsns, dsn)
	}
	if len(x.servers) != 1 {
		return nil
	}
	srv, kind := x.servers[0], db.KindOf(x.p.Target)
	hasSettings := false
	for _, c := range x.cells {
		hasSettings = hasSettings || len(c.Settings) > 0
	}
	if !hasSettings {
		return nil
	}
	if db.SettingsOf(kind) == nil {
		return errkind.Usagef("%s: settings: %v", x.p.Path, db.Missing(kind, "settings"))
	}
	cctx, cancel := context.WithTimeout(ctx, x.p.ConnectTimeout+30*time.Second)
	defer cancel()
	cat, name, err := srv.Catalog(cctx)
	if err != nil {
		return errkind.WithKind(errkind.Failed, fmt.Errorf("reading the settings of %s to check the plan: %v", srv.Redacted(), err))
	}
	if err := x.p.CheckSettings(cat, name); err != nil {
		return planError(err)
	}
	return nil
}

func (x *experimentRun) targetText() string {
	if x.p.InstanceAxis != "" {
		return instancesText(x.p)
	}
	if x.p.Managed() {
		v, _ := x.p.Instance.ServerVersion()
		return fmt.Sprintf("instance %s %s", x.p.Instance.Kind, v)
	}
	if len(x.servers) > 1 {
		var names []string
		for _, s := range x.servers {
			names = append(names, s.Redacted())
		}
		return fmt.Sprintf("%d targets (axis %s): %s", len(names), plan.ShortAxis(x.p.TargetAxis), strings.Join(names, ", "))
	}
	if len(x.servers) > 0 {
		return x.servers[0].Redacted()
	}
	return target.RedactString(x.p.Target)
}

// targetLine is the plan's line that gives a target DSN.
func (x *experimentRun) targetLine(dsn string) int {
	if dsn == x.p.Target {
		return x.p.TargetLine
	}
	for _, ax := range x.p.Axes {
		for _, av := range ax.Values {
			for _, prm := range av.Params {
				if prm.Key == "target" && prm.Value == dsn {
					return prm.Line
				}
			}
		}
	}
	return 0
}

// serverIndex is the index of a server in x.servers: an instance's number less one,
// or the external target's place in the plan.
func (x *experimentRun) serverIndex(srv *plan.Server) int {
	for i, s := range x.servers {
		if s == srv {
			return i
		}
	}
	return -1
}

func (x *experimentRun) instanceDir() string {
	return x.instanceDirOf(x.p.Instance)
}

// instanceDirOf is the base directory of the instances in (the plan's, or an axis
// value's).
func (x *experimentRun) instanceDirOf(in *plan.Instance) string {
	if x.o.InstanceDir != "" {
		return x.o.InstanceDir
	}
	if in != nil && in.Dir != "" {
		return in.Dir
	}
	return ""
}

func (x *experimentRun) instanceName(i int) string {
	name := fmt.Sprintf("%s-%d-%d", x.exp.Name, x.exp.ID, i+1)
	if len(name) > 63 {
		name = fmt.Sprintf("fathom-%d-%d", x.exp.ID, i+1)
	}
	return name
}

// valueInstanceName names the instance of value v (its place in the axis: index) of
// the plan's axis of instances.
func (x *experimentRun) valueInstanceName(index int, v string) string {
	b := []byte(v)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	name := fmt.Sprintf("%s-%d-%s", x.exp.Name, x.exp.ID, b)
	if len(name) > 63 || !instance.ValidName(name) {
		name = fmt.Sprintf("fathom-%d-v%d", x.exp.ID, index+1)
	}
	return name
}

// specOf is the instance spec server i was created from (nil for an external one).
func (x *experimentRun) specOf(i int) *plan.Instance {
	if x.p.InstanceAxis == "" {
		return x.p.Instance
	}
	if i < len(x.values) {
		for _, av := range x.p.InstanceValues() {
			if av.Label == x.values[i] {
				return av.Instance
			}
		}
	}
	return nil
}

func (x *experimentRun) owner() string {
	abs, err := filepath.Abs(x.st.Path())
	if err != nil {
		abs = x.st.Path()
	}
	return fmt.Sprintf("experiment %d in %s", x.exp.ID, abs)
}

// run executes the slots that are not finished, then tears down.
func (x *experimentRun) execute(ctx context.Context) (out *Outcome, err error) {
	p := x.p
	x.started = x.now()

	todo := x.todo()
	maxInst := 1
	for _, c := range x.cells {
		maxInst = max(maxInst, c.Instances)
	}
	where := x.targetText()
	if p.Instance != nil {
		where = "throwaway " + strings.TrimPrefix(where, "instance ")
		if maxInst > 1 {
			where += fmt.Sprintf(" (up to %d instances)", maxInst)
		}
	}
	x.emit(Started{Resumed: x.resumed, ID: x.exp.ID, Name: x.exp.Name, Cells: len(x.cells), Repetitions: p.Repetitions,
		Runs: len(x.slots), ToRun: len(todo), Order: p.Order, Where: where, Warnings: p.Warnings(), Store: x.st.Path()})

	status, reason := "complete", ""
	defer func() {
		bg := context.WithoutCancel(ctx)
		x.afterExperiment(bg)
		x.teardown(bg)
		if status == "complete" && x.failedCount(bg) > 0 {
			status, reason = "failed", fmt.Sprintf("%d runs failed", x.failedCount(bg))
		}
		if ferr := x.st.FinishExperiment(bg, x.exp.ID, status, reason, x.now()); ferr != nil {
			x.warn("could not record the end of experiment %d: %v", x.exp.ID, ferr)
		}
		out = &Outcome{Experiment: x.exp, Status: status, Elapsed: x.now().Sub(x.started)}
		x.emit(done{Outcome: out})
		switch status {
		case "interrupted":
			err = errkind.WithKind(errkind.Interrupted, fmt.Errorf("experiment %d interrupted; finished runs are kept: continue with `fathom experiment --resume %d`", x.exp.ID, x.exp.ID))
		case "failed":
			err = errkind.WithKind(errkind.Failed, fmt.Errorf("experiment %d failed: %s", x.exp.ID, reason))
		}
	}()

	if p.Managed() {
		x.removeLeftovers(ctx, maxInst)
	}
	for n, i := range todo {
		if ctx.Err() != nil {
			status, reason = "interrupted", "interrupted"
			return nil, nil
		}
		sl := &x.slots[i]
		x.byErrors = false
		res := x.runSlot(ctx, sl)
		switch {
		case res == "interrupted" || ctx.Err() != nil:
			status, reason = "interrupted", "interrupted"
			return nil, nil
		case res == "failed" && x.byErrors, res == run.StatusAborted:
			// The run went its course and measured what the cell does: a result, kept
			// and marked failed with its first errors; the next cell may do better.
			x.emit(GoesOn{Seq: sl.Seq + 1, Runs: len(x.slots), Cell: x.cells[sl.Cell].Key(), Repetition: sl.Repetition})
		case res == "failed" && p.OnError == "stop":
			status, reason = "failed", fmt.Sprintf("run %d of %d (%s, repetition %d) failed, and on_error is stop", sl.Seq+1, len(x.slots), x.cells[sl.Cell].Key(), sl.Repetition)
			return nil, nil
		}
		if n < len(todo)-1 && p.Cooldown > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(p.Cooldown):
			}
		}
	}
	return nil, nil
}

// todo lists the indexes of the slots still to run.
func (x *experimentRun) todo() []int {
	var out []int
	for i, s := range x.slots {
		if s.Status == "complete" || ((s.Status == "failed" || s.Status == run.StatusAborted) && !x.o.RetryFailed) {
			continue
		}
		out = append(out, i)
	}
	return out
}

func (x *experimentRun) failedCount(ctx context.Context) int {
	slots, err := x.st.ExperimentSlots(ctx, x.exp.ID)
	if err != nil {
		return 0
	}
	n := 0
	for _, s := range slots {
		if s.Status == "failed" {
			n++
		}
	}
	return n
}

// removeLeftovers removes instances of this experiment left by a process that died.
func (x *experimentRun) removeLeftovers(ctx context.Context, n int) {
	type leftover struct{ dir, name string }
	var names []leftover
	if x.p.InstanceAxis != "" {
		for i, av := range x.p.InstanceValues() {
			names = append(names, leftover{x.instanceDirOf(av.Instance), x.valueInstanceName(i, av.Label)})
		}
	} else {
		for i := 0; i < n; i++ {
			names = append(names, leftover{x.instanceDir(), x.instanceName(i)})
		}
	}
	for _, l := range names {
		inst, err := instance.Find(l.dir, l.name)
		if err != nil || inst.Owner != x.owner() {
			continue
		}
		x.emit(Note{Text: fmt.Sprintf("removing instance %s left by an earlier fathom", inst.Name)})
		if err := inst.Remove(ctx); err != nil {
			x.warn("%v", err)
		}
	}
}

// teardown stops and removes the instances (or leaves them with --keep) and restores
// an external server's settings.
func (x *experimentRun) teardown(ctx context.Context) {
	if x.clients != "" {
		_ = os.RemoveAll(x.clients)
	}
	if x.os != nil {
		if err := x.os.Restore(); err != nil {
			x.warn("restoring OS settings (%s): %v", strings.Join(x.os.Changed(), ", "), err)
		} else if ch := x.os.Changed(); len(ch) > 0 {
			x.emit(Note{Text: "restored OS settings: " + strings.Join(ch, ", ")})
		}
	}
	for i, srv := range x.servers {
		if srv.Inst == nil {
			if err := srv.Restore(ctx); err != nil {
				x.warn("restoring the settings of %s: %v", srv.Redacted(), err)
			}
			continue
		}
		inst := srv.Inst
		spec := x.specOf(i)
		if x.o.Keep || spec != nil && spec.Keep {
			if err := inst.Stop(ctx); err != nil {
				x.warn("%v", err)
			}
			dir := ""
			if d := x.instanceDirOf(spec); d != "" {
				dir = " --instance-dir " + d
			}
			x.emit(Note{Text: fmt.Sprintf("kept instance %s (stopped) in %s: `fathom instance start%s --name %s` to use it, `fathom instance stop%s %s` to remove it",
				inst.Name, inst.Path, dir, inst.Name, dir, inst.Name)})
			continue
		}
		if err := inst.Remove(ctx); err != nil {
			x.warn("instance %s: %v (see `fathom instance list`)", inst.Name, err)
			continue
		}
		x.emit(Note{Text: "removed instance " + inst.Name})
	}
}

// server returns the server for instance index i, creating the instance if needed.
func (x *experimentRun) server(ctx context.Context, i int) (*plan.Server, error) {
	for len(x.servers) <= i {
		srv, err := x.createInstance(ctx, x.p.Instance, x.instanceName(len(x.servers)))
		if err != nil {
			return nil, err
		}
		x.servers = append(x.servers, srv)
	}
	return x.servers[i], nil
}

// valueServer returns the server of the cell's value of the plan's axis of instances,
// creating its instance the first time a cell needs it.
func (x *experimentRun) valueServer(ctx context.Context, cell *plan.Cell) (*plan.Server, error) {
	if i := slices.Index(x.values, cell.InstanceValue); i >= 0 {
		return x.servers[i], nil
	}
	index := slices.IndexFunc(x.p.InstanceValues(), func(av *plan.AxisValue) bool { return av.Label == cell.InstanceValue })
	srv, err := x.createInstance(ctx, cell.Instance, x.valueInstanceName(index, cell.InstanceValue))
	if err != nil {
		return nil, fmt.Errorf("%s %s: %v", plan.ShortAxis(x.p.InstanceAxis), cell.InstanceValue, err)
	}
	x.servers = append(x.servers, srv)
	x.values = append(x.values, cell.InstanceValue)
	return srv, nil
}

// createInstance creates (and does not start) an instance as in says.
func (x *experimentRun) createInstance(ctx context.Context, in *plan.Instance, name string) (*plan.Server, error) {
	inst, err := instance.Create(ctx, instance.Options{
		Kind: in.Kind, Name: name, Dir: x.instanceDirOf(in), Version: in.Version, Bin: in.Bin,
		StartTimeout: in.StartTimeout, Owner: x.owner(), Env: x.o.Environ, Ports: in.Ports,
	})
	if err != nil {
		return nil, err
	}
	x.emit(Note{Text: fmt.Sprintf("  created instance %s (%s %s) in %s, port %d", inst.Name, inst.Kind, inst.Version, inst.Path, inst.Port)})
	var kind string
	if k := db.ForInstance(inst.Kind); k != nil {
		kind = k.Name()
	}
	return plan.NewManaged(inst, kind, db.SettingsOf(kind), x.open), nil
}

// slotResult is complete, failed, interrupted or aborted (a threshold stopped the run).
type slotResult = string

// runSlot runs one cell's repetition: servers, settings, preparation, hooks, the run.
func (x *experimentRun) runSlot(ctx context.Context, sl *store.ExperimentSlot) slotResult {
	cell := x.cells[sl.Cell]
	bg := context.WithoutCancel(ctx)
	t0 := x.now()
	attempt, err := x.st.StartSlot(ctx, x.exp.ID, sl.Seq, t0)
	if err != nil {
		x.emit(SlotNotRecorded{Seq: sl.Seq + 1, Store: x.st.Path(), Err: err})
		return "failed"
	}
	x.progress(sl)

	finish := func(status, reason string) slotResult {
		sl.Status = status
		if err := x.st.FinishSlot(bg, x.exp.ID, sl.Seq, status, reason, x.now()); err != nil {
			x.warn("recording the end of run %d: %v", sl.Seq+1, err)
		}
		x.done++
		if cell.Planned() > 0 {
			x.lastOverhead = x.now().Sub(t0) - cell.Planned()
		} else {
			x.txSpent += x.now().Sub(t0)
			x.txDone++
		}
		x.emit(RunDone{Seq: sl.Seq + 1, Status: status, Reason: reason})
		return status
	}
	fail := func(err error) slotResult {
		if ctx.Err() != nil {
			return finish("interrupted", "interrupted")
		}
		return finish("failed", target.RedactString(err.Error()))
	}

	servers, hookEnv, err := x.beforeRun(ctx, sl, attempt, cell)
	if err != nil {
		return fail(err)
	}

	// The run, with the hooks that fire during it, then the measured restarts.
	dur := x.startDuring(ctx, sl, attempt, servers, hookEnv)
	sums, runErr := x.measure(ctx, sl, attempt, cell, servers, dur.clockOf())

	// After-run hooks run whatever happened to the run.
	status, ids := runsStatus(sums, runErr)
	duringErr := dur.finish(status == "complete")
	var restartErr error
	if status == "complete" && duringErr == nil && ctx.Err() == nil {
		restartErr = x.measureRestarts(ctx, sl, attempt, servers)
	}
	hookEnv = append(hookEnv, "FATHOM_RUN_IDS="+strings.Join(ids, " "), "FATHOM_RUN_STATUS="+status)
	hookErr := x.hooks(bg, plan.AfterRun, sl.Seq, attempt, servers, hookEnv, true, true)

	switch {
	case ctx.Err() != nil || status == "interrupted":
		return finish("interrupted", "interrupted")
	case runErr != nil:
		return fail(runErr)
	case status == "failed":
		return finish("failed", "the run failed: "+sums[0].Reason)
	case status == run.StatusAborted:
		// A threshold stopped the run: the cell's verdict, not a breakage.
		return finish(run.StatusAborted, abortReason(sums))
	case duringErr != nil:
		return fail(duringErr)
	case restartErr != nil:
		return fail(restartErr)
	case hookErr != nil:
		return fail(hookErr)
	}
	return finish("complete", "")
}

// beforeRun readies a slot's servers for its run: their settings, the preparation,
// then the hooks that run once per experiment, once per server and before each run.
// It returns the servers and the hooks' environment.
func (x *experimentRun) beforeRun(ctx context.Context, sl *store.ExperimentSlot, attempt int, cell *plan.Cell) ([]*plan.Server, []string, error) {
	// Servers and settings.
	servers, err := x.applySettings(ctx, sl, cell)
	if err != nil {
		return nil, nil, err
	}
	// Preparation, then hooks that run once per server and per experiment.
	for _, srv := range servers {
		if err := x.prepare(ctx, x.serverIndex(srv), srv, cell); err != nil {
			return nil, nil, err
		}
	}
	hookEnv := x.hookEnv(sl, cell, servers)
	if !x.shellRan {
		x.shellRan = true
		if err := x.hooks(ctx, plan.BeforeExperiment, -1, 0, servers, hookEnv, true, false); err != nil {
			return nil, nil, err
		}
	}
	var fresh []*plan.Server
	for _, srv := range servers {
		if i := x.serverIndex(srv); !x.used[i] {
			x.used[i] = true
			fresh = append(fresh, srv)
		}
	}
	if len(fresh) > 0 {
		if err := x.hooks(ctx, plan.BeforeExperiment, -1, 0, fresh, hookEnv, false, true); err != nil {
			return nil, nil, err
		}
	}
	if err := x.hooks(ctx, plan.BeforeRun, sl.Seq, attempt, servers, hookEnv, true, true); err != nil {
		return nil, nil, err
	}
	return servers, hookEnv, nil
}

// runsStatus is a slot's status from its runs' (one per instance, nil where none was
// made) and the error that ended them: failed over interrupted over aborted over
// complete. ids are the runs' IDs.
func runsStatus(sums []*measure.Summary, runErr error) (status string, ids []string) {
	status = "complete"
	for _, s := range sums {
		if s == nil {
			continue
		}
		ids = append(ids, strconv.FormatInt(s.RunID, 10))
		if s.Status == runner.StatusFailed {
			status = "failed"
		} else if s.Status == runner.StatusInterrupted && status != "failed" {
			status = "interrupted"
		} else if s.Status == run.StatusAborted && status == "complete" {
			status = run.StatusAborted
		}
	}
	if runErr != nil && status == "complete" {
		status = "failed"
	}
	return status, ids
}

// abortReason is the reason of the first run a threshold stopped.
func abortReason(sums []*measure.Summary) string {
	for _, s := range sums {
		if s != nil && s.Status == run.StatusAborted {
			return s.Reason
		}
	}
	return ""
}

// progress prints the overall progress line above the run's own lines.
func (x *experimentRun) progress(sl *store.ExperimentSlot) {
	cell := x.cells[sl.Cell]
	doneAll := 0
	for _, s := range x.slots {
		if s.Status == "complete" || s.Status == "failed" {
			doneAll++
		}
	}
	x.emit(RunStarted{Seq: sl.Seq + 1, Runs: len(x.slots), Cell: cell.Key(), Repetition: sl.Repetition, Repetitions: x.p.Repetitions,
		Done: doneAll, Left: x.timeLeft()})
}

// timeLeft estimates the time left from the planned durations of the runs still to
// go, corrected by the overhead seen so far (restarts, preparation, hooks).
func (x *experimentRun) timeLeft() TimeLeft {
	todo := x.todo()
	var planned time.Duration
	unknown := 0
	for _, i := range todo {
		c := x.cells[x.slots[i].Cell]
		if c.Planned() > 0 {
			planned += c.Planned()
		} else {
			unknown++
		}
	}
	planned += time.Duration(max(len(todo)-1, 0)) * x.p.Cooldown
	if x.lastOverhead > 0 {
		// The last run's overhead (restart, hooks …) is the best guess for the next:
		// the first one's also holds creating and loading the servers.
		planned += x.lastOverhead * time.Duration(len(todo))
	}
	if unknown > 0 {
		if x.txDone == 0 {
			if planned == 0 {
				return TimeLeft{Unknown: true}
			}
			return TimeLeft{Left: planned.Round(time.Second), AtLeast: true}
		}
		planned += x.txSpent / time.Duration(x.txDone) * time.Duration(unknown)
	}
	return TimeLeft{Left: planned.Round(time.Second)}
}

// applySettings makes the cell's servers run with its settings and verifies them.
func (x *experimentRun) applySettings(ctx context.Context, sl *store.ExperimentSlot, cell *plan.Cell) ([]*plan.Server, error) {
	var servers []*plan.Server
	switch {
	case cell.Target != "": // the cell's own target, of the plan's target axis
		servers = []*plan.Server{x.servers[slices.Index(x.dsns, cell.Target)]}
	case cell.Instance != nil: // the instance of the cell's value of the axis of instances
		srv, err := x.valueServer(ctx, cell)
		if err != nil {
			return nil, err
		}
		servers = []*plan.Server{srv}
	case x.p.Managed():
		for i := 0; i < cell.Instances; i++ {
			srv, err := x.server(ctx, i)
			if err != nil {
				return nil, err
			}
			servers = append(servers, srv)
		}
	default:
		servers = x.servers[:1]
	}
	// Instances the cell does not use are stopped, so that they take no memory or CPU
	// (and write nothing, a checkpoint or a flush, during its run).
	for _, srv := range x.servers {
		if srv.Inst != nil && srv.Inst.Running() && !slices.Contains(servers, srv) {
			if err := srv.Inst.Stop(ctx); err != nil {
				return nil, err
			}
			why := fmt.Sprintf("this cell uses %d", len(servers))
			if cell.Instance != nil {
				why = "this cell runs on " + servers[0].Name()
			}
			x.emit(Note{Text: fmt.Sprintf("  stopped %s (%s)", srv.Name(), why)})
		}
	}
	x.osNow = nil
	if len(cell.OS) > 0 || x.os != nil {
		if x.os == nil {
			x.os = plan.NewOSSettings(x.p.OSRootDir())
		}
		got, err := x.os.Apply(cell.OS)
		if err != nil {
			return nil, err
		}
		x.osNow = got
		var parts []string
		for _, kv := range cell.OS {
			parts = append(parts, plan.OSPrefix+kv.Name+"="+got[plan.OSPrefix+kv.Name])
		}
		if len(parts) > 0 {
			x.emit(OSApplied{Settings: parts})
		}
	}
	restartEach := x.p.Restart == "each"
	var changes []string
	var effective []plan.Effective
	record := func() error {
		effJSON, _ := json.Marshal(effective)
		return x.st.SlotServer(context.WithoutCancel(ctx), x.exp.ID, sl.Seq, strings.Join(changes, "; "), effJSON)
	}
	for _, srv := range servers {
		ch, err := srv.Apply(ctx, cell.Settings, restartEach)
		if err != nil {
			changes = append(changes, srv.Name()+": "+target.RedactString(strings.SplitN(err.Error(), "\n", 2)[0]))
			_ = record()
			return nil, err
		}
		if ch.Action != "unchanged" {
			changes = append(changes, srv.Name()+": "+ch.String())
		}
		var effs []plan.Effective
		if len(cell.Settings) > 0 {
			effs, err = srv.Verify(ctx, cell.Settings, 5*time.Second)
			effective = append(effective, effs...)
			if err != nil {
				_ = record()
				return nil, err
			}
		}
		x.emit(SettingsApplied{Server: srv.Name(), Change: ch.String(), Changed: ch.Action != "unchanged", Effective: effs})
	}
	if err := record(); err != nil {
		return nil, err
	}
	return servers, nil
}

// effectiveMap is the settings read back for a run's provenance.
func effectiveMap(ctx context.Context, srv *plan.Server, cell *plan.Cell) map[string]string {
	if len(cell.Settings) == 0 {
		return nil
	}
	effs, err := srv.Verify(ctx, cell.Settings, 0)
	if err != nil && len(effs) == 0 {
		return nil
	}
	m := map[string]string{}
	for _, e := range effs {
		m[e.Name] = e.Value
	}
	return m
}

// targetFor is the target of a cell on a server, and the workload's options.
func (x *experimentRun) targetFor(cell *plan.Cell, srv *plan.Server) (run.Target, workload.Params) {
	t := run.Target{DSN: srv.DSN(), QueryMode: cell.QueryMode, ConnectTimeout: x.p.ConnectTimeout, Getenv: x.o.Getenv}
	p := workload.Params{}
	for _, kv := range cell.Options {
		p[kv.Name] = kv.Value
	}
	return t, p
}

// prepare loads the workload's data on server i when the plan says so.
func (x *experimentRun) prepare(ctx context.Context, i int, srv *plan.Server, cell *plan.Cell) error {
	if x.p.Prepare == "never" {
		return nil
	}
	layout := cell.Layout()
	sig := cell.Workload + "\x00" + fmt.Sprint(cell.Options) + "\x00" + fmt.Sprint(cell.Table)
	to, params := x.targetFor(cell, srv)
	wlName := x.p.WorkloadPath(cell.Workload)
	if x.p.Prepare == "auto" {
		if x.prepared[i] == sig {
			return nil
		}
		// Tables found on a server are used as they are only when the plan asks for no
		// layout: an engine or fill factor cannot be told from their presence.
		if x.prepared[i] == "" && srv.Inst == nil && layout.IsZero() {
			ready, err := isPrepared(ctx, to, wlName, params)
			if err != nil {
				return err
			}
			if ready {
				x.prepared[i] = sig
				x.emit(Prepared{Server: srv.Name(), Workload: cell.Workload, Already: true})
				return nil
			}
		}
	}
	start := x.now()
	if err := run.Prepare(ctx, to, wlName, params, &layout, quietPrepare{}); err != nil {
		return fmt.Errorf("preparing %s on %s: %v", cell.Workload, srv.Name(), err)
	}
	x.emit(Prepared{Server: srv.Name(), Workload: cell.Workload, Took: x.now().Sub(start)})
	x.prepared[i] = sig
	return nil
}

// quietPrepare is a run.PrepareListener that prints nothing: the experiment says
// one line when the prepare is done.
type quietPrepare struct{}

func (quietPrepare) Preparing(string, string)      {}
func (quietPrepare) Progress(string, int64, int64) {}

// isPrepared reports whether the workload's tables exist on the target.
func isPrepared(ctx context.Context, to run.Target, name string, params workload.Params) (bool, error) {
	_, wl, err := run.OpenWorkload(name, params)
	if err != nil {
		return false, err
	}
	tgt, err := to.Open()
	if err != nil {
		return false, err
	}
	defer tgt.Close()
	conn, err := run.Connect(ctx, tgt)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	err = wl.Setup(ctx, conn)
	if errors.Is(err, workload.ErrNotPrepared) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	// Tables a killed prepare left part-loaded are not prepared.
	msg, err := workload.Unfinished(ctx, tgt, conn, wl)
	return msg == "", err
}

// hookEnv is the environment of a slot's shell hooks.
func (x *experimentRun) hookEnv(sl *store.ExperimentSlot, cell *plan.Cell, servers []*plan.Server) []string {
	env := []string{
		"FATHOM_EXPERIMENT=" + x.exp.Name,
		"FATHOM_EXPERIMENT_ID=" + strconv.FormatInt(x.exp.ID, 10),
		"FATHOM_CELL=" + cell.Key(),
		"FATHOM_REPETITION=" + strconv.Itoa(sl.Repetition),
		"FATHOM_RUN_NUMBER=" + strconv.Itoa(sl.Seq+1),
		"FATHOM_STORE=" + x.st.Path(),
		"FATHOM_WORKLOAD=" + cell.Workload,
		"FATHOM_CLIENTS=" + strconv.Itoa(cell.Clients),
	}
	for _, co := range cell.Coords {
		env = append(env, "FATHOM_AXIS_"+envName(co.Axis)+"="+co.Value)
	}
	var targets, dirs []string
	for _, s := range servers {
		targets = append(targets, s.Redacted())
		if s.Inst != nil {
			dirs = append(dirs, s.Inst.Path)
		}
	}
	if len(servers) > 0 {
		env = append(env, "FATHOM_TARGET="+servers[0].Redacted())
		if servers[0].Inst != nil {
			env = append(env, "FATHOM_INSTANCE_DIR="+servers[0].Inst.Path)
		}
	}
	env = append(env, "FATHOM_TARGETS="+strings.Join(targets, " "))
	if len(dirs) > 0 {
		env = append(env, "FATHOM_INSTANCE_DIRS="+strings.Join(dirs, " "))
	}
	return env
}

func envName(s string) string {
	b := []byte(strings.ToUpper(s))
	for i, c := range b {
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '_'
		}
	}
	return string(b)
}

// shellEnv is what a shell hook's environment starts from: fathom's, made to reach the
// first instance among servers (if any) with the server's own clients, whatever the
// host's option and service files say (instance.HookEnv).
func (x *experimentRun) shellEnv(servers []*plan.Server) ([]string, error) {
	for _, s := range servers {
		if s.Inst == nil {
			continue
		}
		x.clientsMu.Lock()
		defer x.clientsMu.Unlock()
		if x.clients == "" {
			d, err := os.MkdirTemp("", "fathom-clients-")
			if err != nil {
				return nil, err
			}
			x.clients = d
		}
		return s.Inst.HookEnv(x.o.Environ, filepath.Join(x.clients, s.Inst.Name))
	}
	return slices.Clone(x.o.Environ), nil
}

// hooks runs a phase's hooks: shell ones once, SQL ones on each server. The first
// failure stops the phase and is returned with the hook's output.
func (x *experimentRun) hooks(ctx context.Context, phase string, seq, attempt int, servers []*plan.Server, env []string, shell, sql bool) error {
	var list []*plan.Hook
	switch phase {
	case plan.BeforeExperiment:
		list = x.p.Hooks.BeforeExperiment
	case plan.BeforeRun:
		list = x.p.Hooks.BeforeRun
	case plan.AfterRun:
		list = x.p.Hooks.AfterRun
	case plan.AfterExperiment:
		list = x.p.Hooks.AfterExperiment
	}
	for i, h := range list {
		if seq >= 0 && !h.Applies(x.cells[x.slots[seqIndex(x.slots, seq)].Cell]) {
			continue
		}
		if err := x.runHook(ctx, phase, i+1, h, seq, attempt, servers, env, shell, sql, nil); err != nil {
			return err
		}
	}
	return nil
}

// seqIndex is the index in slots of the slot with seq.
func seqIndex(slots []store.ExperimentSlot, seq int) int {
	for i, s := range slots {
		if s.Seq == seq {
			return i
		}
	}
	return 0
}

// runHook runs one hook (a shell one when shell is set, an SQL or Redis one on each
// server when sql is), records its results and returns the first failure. start is
// the run's clock origin for a during_run hook (nil otherwise): the moment it fires is
// recorded on that clock.
func (x *experimentRun) runHook(ctx context.Context, phase string, index int, h *plan.Hook, seq, attempt int, servers []*plan.Server, env []string, shell, sql bool, start *time.Time) error {
	var results []*plan.HookResult
	var at *time.Duration
	if start != nil {
		d := time.Since(*start)
		at = &d
	}
	if h.Kind() == "shell" {
		if !shell {
			return nil
		}
		base, err := x.shellEnv(servers)
		if err != nil {
			results = append(results, &plan.HookResult{Kind: "shell", Command: target.MaskSecrets(h.Shell), Started: x.now(), ExitCode: -1,
				Error: "preparing its environment: " + err.Error()})
		} else {
			results = append(results, plan.RunShell(ctx, h.Shell, x.p.Dir, append(append(base, env...), "FATHOM_PHASE="+phase), h.Timeout))
		}
	} else {
		if !sql {
			return nil
		}
		for _, srv := range servers {
			conn, err := srv.Connect(ctx)
			if err != nil {
				results = append(results, &plan.HookResult{Kind: h.Kind(), Command: target.MaskSecrets(strings.Join(h.SQL, ";\n")), Server: srv.Redacted(),
					Started: x.now(), ExitCode: -1, Error: "cannot connect: " + target.RedactString(err.Error())})
				break
			}
			r := plan.RunSQL(ctx, conn, h.SQL, h.Timeout)
			conn.Close()
			r.Server, r.Kind = srv.Redacted(), h.Kind()
			results = append(results, r)
			if !r.OK {
				break
			}
		}
	}
	for _, r := range results {
		r.Phase, r.Index = phase, index
		if err := x.st.AddHook(context.WithoutCancel(ctx), x.exp.ID, store.ExperimentHook{
			Seq: seq, Attempt: attempt, Phase: phase, Index: index, Kind: r.Kind, Command: r.Command, Server: r.Server,
			ExitCode: r.ExitCode, OK: r.OK, Output: r.Output, Error: r.Error, Started: r.Started, Elapsed: r.Elapsed, At: at,
		}); err != nil {
			x.warn("recording a hook's result: %v", err)
		}
		on := ""
		if r.Server != "" && len(servers) > 1 {
			on = r.Server
		}
		if r.OK {
			x.emit(HookRan{Phase: phase, Index: index, Kind: r.Kind, What: h.Describe(), On: on, At: at, Elapsed: r.Elapsed, Output: shellOutput(r)})
			continue
		}
		return errors.New(r.Failure())
	}
	return nil
}

// shellOutput is a successful shell hook's output in lines, trimmed (nil when it
// printed nothing, or for other hooks).
func shellOutput(r *plan.HookResult) []string {
	out := strings.TrimSpace(r.Output)
	if r.Kind != "shell" || out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// afterExperiment runs the after_experiment hooks once, on the servers still there.
func (x *experimentRun) afterExperiment(ctx context.Context) {
	if len(x.p.Hooks.AfterExperiment) == 0 || !x.shellRan {
		return
	}
	var live []*plan.Server
	for _, s := range x.servers {
		if s.Inst == nil || s.Inst.Running() {
			live = append(live, s)
		}
	}
	env := []string{"FATHOM_EXPERIMENT=" + x.exp.Name, "FATHOM_EXPERIMENT_ID=" + strconv.FormatInt(x.exp.ID, 10), "FATHOM_STORE=" + x.st.Path()}
	if err := x.hooks(ctx, plan.AfterExperiment, -1, 0, live, env, true, true); err != nil {
		x.warn("%v", err)
	}
}

// measure runs the cell on its servers (concurrently when there are several) through
// fathom run's path, and stores the aggregate of several instances.
func (x *experimentRun) measure(ctx context.Context, sl *store.ExperimentSlot, attempt int, cell *plan.Cell, servers []*plan.Server, onClock func(time.Time)) ([]*measure.Summary, error) {
	multi := len(servers) > 1
	sums := make([]*measure.Summary, len(servers))
	errs := make([]error, len(servers))
	defer func() {
		// Every failed run failed by its transactions' errors (see byErrors).
		x.byErrors = false
		for i, err := range errs {
			if err == nil {
				continue
			}
			if k := errkind.KindOf(err); sums[i] == nil || k != errkind.Errors && k != errkind.Threshold && k != errkind.Aborted {
				x.byErrors = false
				return
			}
			x.byErrors = true
		}
	}()
	var wg sync.WaitGroup
	for i, srv := range servers {
		part := 0
		if multi {
			part = i + 1
		}
		o := x.runOptionsFor(sl, cell, srv, part)
		settings := effectiveMap(ctx, srv, cell)
		if len(x.osNow) > 0 {
			if settings == nil {
				settings = map[string]string{}
			}
			for k, v := range x.osNow {
				settings[k] = v
			}
		}
		o.Settings = settings
		if i == 0 {
			o.OnClock = onClock // during_run hooks fire on the first instance's clock
		}
		o.OnCreate = func(ctx context.Context, st store.Store, runID int64) error {
			return st.LinkRun(ctx, x.exp.ID, sl.Seq, attempt, part, runID)
		}
		l := live{x: x, instance: part}
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := run.Execute(ctx, x.st, o, l)
			if res != nil {
				sums[i] = &res.Summary
				for _, w := range res.Summary.Warnings {
					l.Warning(w)
				}
			} else if np := (*run.NotPreparedError)(nil); errors.As(err, &np) {
				err = fmt.Errorf("%v: run `fathom prepare --workload %s%s --target %s` first", np, o.Workload, setFlags(cell), shellQuote(np.Target))
			}
			errs[i] = err
		}()
		if !multi {
			wg.Wait()
		}
	}
	wg.Wait()
	for i, s := range sums {
		if s == nil {
			continue
		}
		inst := 0
		if multi {
			inst = i + 1
		}
		x.emit(RunFinished{Instance: inst, Summary: s, Judge: x.exp.Judge})
	}
	var firstErr error
	for i, err := range errs {
		if err != nil && sums[i] == nil {
			firstErr = fmt.Errorf("%s: %v", servers[i].Name(), err)
			break
		}
	}
	if !multi || firstErr != nil {
		return sums, firstErr
	}
	agg, err := x.aggregate(ctx, sl, attempt, sums)
	if err != nil {
		return sums, fmt.Errorf("storing the aggregate of %d instances: %v", len(servers), err)
	}
	x.emit(RunFinished{Aggregate: len(servers), Summary: agg, Judge: x.exp.Judge})
	return append([]*measure.Summary{agg}, sums...), nil
}

// runOptionsFor builds the run engine's options for a cell on a server.
func (x *experimentRun) runOptionsFor(sl *store.ExperimentSlot, cell *plan.Cell, srv *plan.Server, part int) run.Options {
	t, params := x.targetFor(cell, srv)
	o := run.Options{
		Target:           t,
		Workload:         x.p.WorkloadPath(cell.Workload),
		Params:           params,
		Clients:          cell.Clients,
		Duration:         cell.Duration,
		Transactions:     cell.Transactions,
		Warmup:           cell.Warmup,
		Rate:             cell.Rate,
		Interval:         cell.Interval,
		LatencyLimit:     cell.LatencyLimit,
		MaxTries:         cell.MaxTries,
		ReconnectTimeout: x.p.ReconnectTimeout,
		Thresholds:       x.p.Thresholds,
		ToolVersion:      x.o.ToolVersion,
		Command:          x.o.Command,
		Now:              x.o.Now,
		OpenFiles:        x.o.OpenFiles,
		Tuner:            x.o.Tuner,
		PrepareHint: func(tgt string, _ map[string]string) string { // an experiment prepares such tables again itself
			return fmt.Sprintf("`fathom prepare --workload %s%s --target %s`", x.p.WorkloadPath(cell.Workload), setFlags(cell), shellQuote(tgt))
		},
	}
	o.Sampling.Off, o.Sampling.Only, o.Sampling.NoProcfs = x.p.CollectOff, x.p.CollectOnly, x.o.NoProcfs
	o.PollerSockets = x.o.NoProcfs
	if x.p.HasSeed {
		o.Seed, o.HasSeed = plan.RunSeed(x.p.Seed, fmt.Sprintf("%s#%d", cell.Key(), part), sl.Repetition), true
	}
	labels := map[string]string{}
	for k, v := range x.p.Labels {
		labels[k] = v
	}
	for _, co := range cell.Coords {
		labels[co.Axis] = co.Value
	}
	labels["experiment"] = x.exp.Name
	labels["rep"] = strconv.Itoa(sl.Repetition)
	if part > 0 {
		labels["instance"] = strconv.Itoa(part)
	}
	o.Labels = labels
	if cell.Agents > 0 {
		// Agents serving runs (fathom agent without --run) take the lowest free index.
		p := agent.Plan{Agents: cell.Agents, Name: fmt.Sprintf("exp%d-slot%d-%d", x.exp.ID, sl.Seq, part), StoreShown: x.st.Path(),
			Events: agents{x}}
		o.Remote = p.Remote(o)
	}
	return o
}

// setFlags repeats a cell's workload options as fathom prepare's flags.
func setFlags(cell *plan.Cell) string {
	var b strings.Builder
	for _, kv := range cell.Options {
		b.WriteString(" --set " + shellQuote(kv.Name+"="+kv.Value))
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

// aggregate stores the sum of several instances' runs of one slot as a run of its own:
// intervals merged by index, so that its throughput is the total and its latency
// percentiles are over every transaction of every instance.
func (x *experimentRun) aggregate(ctx context.Context, sl *store.ExperimentSlot, attempt int, parts []*measure.Summary) (*measure.Summary, error) {
	bg := context.WithoutCancel(ctx)
	var runs []*store.Run
	var ivss [][]*measure.Interval
	for _, s := range parts {
		if s == nil {
			continue
		}
		r, err := x.st.Run(bg, s.RunID)
		if err != nil {
			return nil, err
		}
		ivs, err := x.st.Intervals(bg, s.RunID)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
		ivss = append(ivss, ivs)
	}
	if len(runs) == 0 {
		return nil, errors.New("no instance run was stored")
	}
	base := runs[0]
	agg := *base
	agg.ID, agg.UUID, agg.Summary = 0, "", nil
	agg.Target = fmt.Sprintf("aggregate of %d instances", len(runs))
	agg.Clients = 0
	agg.Labels = map[string]string{}
	for k, v := range base.Labels {
		agg.Labels[k] = v
	}
	agg.Labels["instance"] = "all"
	status, reason := runner.StatusComplete, ""
	for i, r := range runs {
		agg.Clients += r.Clients
		switch {
		case r.Status == runner.StatusFailed:
			status, reason = runner.StatusFailed, fmt.Sprintf("instance %d: %s", i+1, r.Reason)
		case r.Status == runner.StatusInterrupted && status != runner.StatusFailed:
			status, reason = runner.StatusInterrupted, r.Reason
		case r.Status == run.StatusAborted && status == runner.StatusComplete:
			status, reason = run.StatusAborted, fmt.Sprintf("instance %d: %s", i+1, r.Reason)
		}
	}
	id, err := x.st.CreateRun(bg, &agg)
	if err != nil {
		return nil, err
	}
	if err := x.st.LinkRun(bg, x.exp.ID, sl.Seq, attempt, 0, id); err != nil {
		return nil, err
	}
	n := 0
	for _, ivs := range ivss {
		n = max(n, len(ivs))
	}
	var merged []*measure.Interval
	var end time.Time
	for idx := 0; idx < n; idx++ {
		var m *measure.Interval
		for _, ivs := range ivss {
			if idx >= len(ivs) {
				continue
			}
			iv := ivs[idx]
			if m == nil {
				m = measure.NewInterval(iv.Index, base.TxnTypes)
				m.Start, m.End, m.Warmup = iv.Start, iv.End, iv.Warmup
			}
			m.Add(iv)
		}
		if err := x.st.AddInterval(bg, id, m); err != nil {
			return nil, err
		}
		merged = append(merged, m)
	}
	for _, r := range runs {
		if r.EndedAt.After(end) {
			end = r.EndedAt
		}
	}
	sum := measure.Summarize(base.TxnTypes, merged)
	sum.RunID, sum.Status, sum.Reason = id, status, reason
	sum.Workload, sum.Target, sum.Clients, sum.Rate = agg.Workload, agg.Target, agg.Clients, agg.Rate
	js, _ := json.Marshal(sum)
	if err := x.st.FinishRun(bg, id, status, reason, end, js); err != nil {
		return nil, err
	}
	return &sum, nil
}
