package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/fathom-lab/fathom/internal/collect"
	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/plan"
	"github.com/fathom-lab/fathom/internal/runner"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/target/targets"
	"github.com/fathom-lab/fathom/internal/workload"
)

type experimentOpts struct {
	store       string
	check       bool
	resume      string
	retryFailed bool
	keep        bool
	quiet       bool
	instanceDir string
}

func newExperimentCmd(env *Env) *cobra.Command {
	o := &experimentOpts{}
	cmd := &cobra.Command{
		Use:   "experiment PLAN.yaml | --resume ID",
		Short: "Run an experiment plan: a workload over a matrix of options and server settings, repeated, interleaved, with hooks",
		Long: `Runs every cell of a plan's matrix (clients, transactions, workload options, server
settings, number of instances …) the planned number of times, in interleaved order by
default, applying each cell's server settings and verifying them before each run. Every
run is stored with its cell and repetition; an interrupted experiment continues with
--resume. See the Experiments section of the README for the plan format.`,
		Example: `  fathom experiment --check examples/pg-durability.yaml
  fathom experiment examples/pg-durability.yaml
  fathom experiment --resume pg-durability
  fathom experiments pg-durability`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case o.resume != "" && len(args) > 0:
				return usagef("give a plan file or --resume, not both")
			case o.resume == "" && len(args) != 1:
				return usagef("%s needs a plan file (e.g. `fathom experiment examples/pg-durability.yaml`) or --resume ID", cmd.CommandPath())
			case o.check && o.resume != "":
				return usagef("--check takes a plan file, not --resume")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.resume != "" {
				return o.resumeExperiment(cmd.Context(), env)
			}
			return o.start(cmd.Context(), env, args[0])
		},
	}
	fs := cmd.Flags()
	storeFlag(fs, env, &o.store)
	fs.BoolVar(&o.check, "check", false, "check the plan (every problem at once, with line numbers) without touching any server")
	fs.StringVar(&o.resume, "resume", "", "continue an interrupted experiment (its id or name): finished runs are kept, the interrupted one runs again")
	fs.BoolVar(&o.retryFailed, "retry-failed", false, "with --resume: run failed cells again too")
	fs.BoolVar(&o.keep, "keep", false, "leave the experiment's instances (stopped, with their data) instead of removing them")
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "no live interval lines (progress and results only)")
	def := env.Getenv("FATHOM_INSTANCE_DIR")
	fs.StringVar(&o.instanceDir, "instance-dir", def, "base directory for instances (default: the plan's instance.dir, $FATHOM_INSTANCE_DIR or "+instance.DefaultDir()+")")
	return cmd
}

// planError turns plan problems into a usage error (exit 2, every problem on its line).
func planError(err error) error {
	var pe *plan.Error
	if errors.As(err, &pe) {
		return usagef("%v", err)
	}
	return withCode(ExitFailure, err)
}

// readPlan reads and checks a plan, including its target DSN.
func readPlan(path string) (*plan.Plan, error) {
	p, err := plan.ReadFile(path)
	if err != nil {
		return nil, planError(err)
	}
	if p.Target != "" {
		t, err := targets.Open(p.Target, target.Config{})
		if err != nil {
			return nil, usagef("%s:%d: target: %v", path, p.TargetLine, target.RedactString(err.Error()))
		}
		t.Close()
	}
	if len(p.CollectOnly) > 0 && p.Kind() != "" {
		if _, _, err := collect.Select(p.Kind(), p.CollectOnly, nil); err != nil {
			return nil, usagef("%s:%d: collect: %v", path, p.CollectLine, err)
		}
	}
	return p, nil
}

func (o *experimentOpts) start(ctx context.Context, env *Env, path string) error {
	p, err := readPlan(path)
	if err != nil {
		return err
	}
	cells := p.Cells()
	if o.check {
		writePlanCheck(env.Stdout, p, cells)
		return nil
	}
	st, err := openStore(o.store)
	if err != nil {
		return err
	}
	defer st.Close()

	x := &experimentRun{o: o, env: env, st: st, p: p, cells: cells, prepared: map[int]string{}, used: map[int]bool{}}
	if !p.Managed() {
		if err := x.openExternal(ctx); err != nil {
			return err
		}
	}
	seed := p.Seed
	if !p.HasSeed {
		seed = uint64(env.Now().UnixNano())
	}
	schedule := plan.Schedule(len(cells), p.Repetitions, p.Order, seed)
	exp := &store.Experiment{
		Name: p.Name, Description: p.Description, PlanPath: path, PlanDir: p.Dir, Plan: target.RedactString(string(p.Data)),
		Repetitions: p.Repetitions, Order: p.Order, Target: x.targetText(), ToolVersion: version(),
		Host: collect.HostFacts().Hostname, PID: instance.CurrentPID(), CreatedAt: env.Now(),
	}
	for _, ax := range p.Axes {
		ea := store.ExperimentAxis{Name: plan.ShortAxis(ax.Name)}
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
		return withCode(ExitFailure, fmt.Errorf("recording the experiment in %s: %v", o.store, err))
	}
	x.exp, x.slots = exp, slots
	return x.run(ctx)
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
	b, _ := json.Marshal(m)
	return b
}

func (o *experimentOpts) resumeExperiment(ctx context.Context, env *Env) error {
	st, err := openStore(o.store)
	if err != nil {
		return err
	}
	defer st.Close()
	exp, err := findExperiment(ctx, st, o.resume)
	if err != nil {
		return err
	}
	if exp.Status == "complete" && !o.retryFailed {
		fmt.Fprintf(env.Stdout, "experiment %d %q is complete: nothing to resume (see `fathom experiments %d`)\n", exp.ID, exp.Name, exp.ID)
		return nil
	}
	host := collect.HostFacts().Hostname
	if exp.Status == "running" && exp.Host == host && instance.ProcessAlive(exp.PID) && exp.PID != instance.CurrentPID() {
		return withCode(ExitFailure, fmt.Errorf("experiment %d is still being run by process %d on this machine: stop it first (Ctrl-C there)", exp.ID, exp.PID))
	}
	p, err := resumePlan(exp)
	if err != nil {
		return err
	}
	cells := p.Cells()
	stored, err := st.ExperimentCells(ctx, exp.ID)
	if err != nil {
		return withCode(ExitFailure, err)
	}
	if len(stored) != len(cells) {
		return withCode(ExitFailure, fmt.Errorf("experiment %d: its plan now gives %d cells but %d were stored: it cannot be resumed", exp.ID, len(cells), len(stored)))
	}
	for i := range cells {
		if cells[i].Key() != stored[i].Key {
			return withCode(ExitFailure, fmt.Errorf("experiment %d: cell %d is now %q but was %q: it cannot be resumed", exp.ID, i, cells[i].Key(), stored[i].Key))
		}
	}
	slots, err := st.ExperimentSlots(ctx, exp.ID)
	if err != nil {
		return withCode(ExitFailure, err)
	}
	// Runs left "running" by a process that died are marked so.
	eruns, err := st.ExperimentRuns(ctx, exp.ID)
	if err != nil {
		return withCode(ExitFailure, err)
	}
	for _, er := range eruns {
		if r, err := st.Run(ctx, er.RunID); err == nil && r.Status == "running" {
			_ = st.MarkAbandoned(ctx, er.RunID, "the fathom running it stopped before the run ended (experiment resumed)")
		}
	}
	x := &experimentRun{o: o, env: env, st: st, p: p, cells: cells, exp: exp, prepared: map[int]string{}, used: map[int]bool{}, resumed: true}
	for _, sl := range slots {
		x.slots = append(x.slots, store.ExperimentSlot{Seq: sl.Seq, Cell: sl.Cell, Repetition: sl.Repetition, Status: sl.Status})
	}
	if !p.Managed() {
		if err := x.openExternal(ctx); err != nil {
			return err
		}
	}
	if err := st.ResumeExperiment(ctx, exp.ID, host, instance.CurrentPID()); err != nil {
		return withCode(ExitFailure, err)
	}
	return x.run(ctx)
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
		if err != nil || target.RedactString(string(p.Data)) != exp.Plan {
			return nil, withCode(ExitFailure, fmt.Errorf("experiment %d: its plan held a password, which fathom does not store, and %s no longer says the same: it cannot be resumed", exp.ID, path))
		}
		text = p.Data
	}
	p, err := plan.Read(exp.PlanPath, exp.PlanDir, text)
	if err != nil {
		return nil, withCode(ExitFailure, fmt.Errorf("experiment %d: its stored plan no longer checks (a workload file changed?):\n%v", exp.ID, err))
	}
	return p, nil
}

// findExperiment resolves an experiment id or name (the newest with that name).
func findExperiment(ctx context.Context, st *store.Store, arg string) (*store.Experiment, error) {
	var exp *store.Experiment
	var err error
	if id, perr := strconv.ParseInt(strings.TrimPrefix(arg, "#"), 10, 64); perr == nil {
		exp, err = st.Experiment(ctx, id)
	} else {
		exp, err = st.ExperimentByName(ctx, arg)
	}
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, usagef("%v: see `fathom experiments`", err)
		}
		return nil, withCode(ExitFailure, err)
	}
	return exp, nil
}

// experimentRun is one execution of an experiment (a start or a resume).
type experimentRun struct {
	o       *experimentOpts
	env     *Env
	st      *store.Store
	p       *plan.Plan
	exp     *store.Experiment
	cells   []*plan.Cell
	slots   []store.ExperimentSlot
	resumed bool

	servers  []*plan.Server // managed: instance i+1; external: one
	prepared map[int]string // server index -> workload signature this process prepared
	used     map[int]bool   // servers whose before_experiment hooks ran
	shellRan bool           // before_experiment shell hooks ran

	mu      sync.Mutex // guards out between concurrent instance runs
	started time.Time
	done    int // slots finished in this execution
	// Timing for the estimate of the time left.
	lastOverhead time.Duration // the last timed slot's wall time beyond its planned time
	txSpent      time.Duration // wall time of finished slots that ran by transactions
	txDone       int
}

func (x *experimentRun) out() io.Writer { return x.env.Stdout }

func (x *experimentRun) printf(format string, args ...any) {
	x.mu.Lock()
	defer x.mu.Unlock()
	fmt.Fprintf(x.env.Stdout, format, args...)
}

// openExternal prepares the one external server and, before anything runs, checks
// the plan's settings against it.
func (x *experimentRun) openExternal(ctx context.Context) error {
	t, err := targets.Open(x.p.Target, target.Config{})
	if err != nil {
		return usagef("%s:%d: target: %v", x.p.Path, x.p.TargetLine, target.RedactString(err.Error()))
	}
	redacted := t.Redacted()
	t.Close()
	srv := plan.NewExternal(x.p.Target, redacted, x.p.RestartCommand, x.p.Dir, nil)
	x.servers = []*plan.Server{srv}
	hasSettings := false
	for _, c := range x.cells {
		hasSettings = hasSettings || len(c.Settings) > 0
	}
	if !hasSettings {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, x.p.ConnectTimeout+30*time.Second)
	defer cancel()
	cat, name, err := srv.Catalog(cctx)
	if err != nil {
		return withCode(ExitFailure, fmt.Errorf("reading the settings of %s to check the plan: %v", redacted, err))
	}
	if err := x.p.CheckSettings(cat, name); err != nil {
		return planError(err)
	}
	return nil
}

func (x *experimentRun) targetText() string {
	if x.p.Managed() {
		v, _ := instance.Version(x.p.Instance.Kind, x.p.Instance.Version)
		return fmt.Sprintf("instance %s %s", x.p.Instance.Kind, v)
	}
	if len(x.servers) > 0 {
		return x.servers[0].Redacted()
	}
	return target.RedactString(x.p.Target)
}

func (x *experimentRun) instanceDir() string {
	if x.o.instanceDir != "" {
		return x.o.instanceDir
	}
	if x.p.Instance != nil && x.p.Instance.Dir != "" {
		return x.p.Instance.Dir
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

func (x *experimentRun) owner() string {
	abs, err := filepath.Abs(x.st.Path())
	if err != nil {
		abs = x.st.Path()
	}
	return fmt.Sprintf("experiment %d in %s", x.exp.ID, abs)
}

// run executes the slots that are not finished, then tears down.
func (x *experimentRun) run(ctx context.Context) (err error) {
	env, p := x.env, x.p
	x.started = env.Now()
	ctx, stopSignals := env.Interrupts(ctx)
	defer stopSignals()

	todo := x.todo()
	maxInst := 1
	for _, c := range x.cells {
		maxInst = max(maxInst, c.Instances)
	}
	verb := "experiment"
	if x.resumed {
		verb = "resuming experiment"
	}
	where := x.targetText()
	if p.Managed() {
		where = "throwaway " + strings.TrimPrefix(where, "instance ")
		if maxInst > 1 {
			where += fmt.Sprintf(" (up to %d instances)", maxInst)
		}
	}
	fmt.Fprintf(env.Stdout, "%s %d %q: %d cells × %d repetitions = %d runs (%s), %d to run, on %s\n",
		verb, x.exp.ID, x.exp.Name, len(x.cells), p.Repetitions, len(x.slots), p.Order, len(todo), where)
	fmt.Fprintf(env.Stdout, "results in %s; if interrupted, continue with `fathom experiment --resume %d`\n", x.st.Path(), x.exp.ID)

	status, reason := "complete", ""
	defer func() {
		bg := context.WithoutCancel(ctx)
		x.afterExperiment(bg)
		x.teardown(bg)
		if status == "complete" && x.failedCount(bg) > 0 {
			status, reason = "failed", fmt.Sprintf("%d runs failed", x.failedCount(bg))
		}
		if ferr := x.st.FinishExperiment(bg, x.exp.ID, status, reason, env.Now()); ferr != nil {
			fmt.Fprintf(env.Stderr, "fathom: warning: could not record the end of experiment %d: %v\n", x.exp.ID, ferr)
		}
		x.summary(bg, status)
		switch status {
		case "interrupted":
			err = withCode(ExitInterrupted, fmt.Errorf("experiment %d interrupted; finished runs are kept: continue with `fathom experiment --resume %d`", x.exp.ID, x.exp.ID))
		case "failed":
			err = withCode(ExitFailure, fmt.Errorf("experiment %d failed: %s", x.exp.ID, reason))
		}
	}()

	if p.Managed() {
		x.removeLeftovers(ctx, maxInst)
	}
	for n, i := range todo {
		if ctx.Err() != nil {
			status, reason = "interrupted", "interrupted"
			return nil
		}
		sl := &x.slots[i]
		res := x.runSlot(ctx, sl, n, len(todo))
		switch {
		case res == "interrupted" || ctx.Err() != nil:
			status, reason = "interrupted", "interrupted"
			return nil
		case res == "failed" && p.OnError == "stop":
			status, reason = "failed", fmt.Sprintf("run %d of %d (%s, repetition %d) failed, and on_error is stop", sl.Seq+1, len(x.slots), x.cells[sl.Cell].Key(), sl.Repetition)
			return nil
		}
		if n < len(todo)-1 && p.Cooldown > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(p.Cooldown):
			}
		}
	}
	return nil
}

// todo lists the indexes of the slots still to run.
func (x *experimentRun) todo() []int {
	var out []int
	for i, s := range x.slots {
		if s.Status == "complete" || (s.Status == "failed" && !x.o.retryFailed) {
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
	for i := 0; i < n; i++ {
		inst, err := instance.Find(x.instanceDir(), x.instanceName(i))
		if err != nil || inst.Owner != x.owner() {
			continue
		}
		fmt.Fprintf(x.env.Stdout, "removing instance %s left by an earlier fathom\n", inst.Name)
		if err := inst.Remove(ctx); err != nil {
			fmt.Fprintf(x.env.Stderr, "fathom: warning: %v\n", err)
		}
	}
}

// teardown stops and removes the instances (or leaves them with --keep) and restores
// an external server's settings.
func (x *experimentRun) teardown(ctx context.Context) {
	for _, srv := range x.servers {
		if srv.Inst == nil {
			if err := srv.Restore(ctx); err != nil {
				fmt.Fprintf(x.env.Stderr, "fathom: warning: restoring the settings of %s: %v\n", srv.Redacted(), err)
			}
			continue
		}
		inst := srv.Inst
		if x.o.keep || x.p.Instance.Keep {
			if err := inst.Stop(ctx); err != nil {
				fmt.Fprintf(x.env.Stderr, "fathom: warning: %v\n", err)
			}
			dir := ""
			if d := x.instanceDir(); d != "" {
				dir = " --dir " + d
			}
			fmt.Fprintf(x.env.Stdout, "kept instance %s (stopped) in %s: `fathom instance start%s --name %s` to use it, `fathom instance stop%s %s` to remove it\n",
				inst.Name, inst.Path, dir, inst.Name, dir, inst.Name)
			continue
		}
		if err := inst.Remove(ctx); err != nil {
			fmt.Fprintf(x.env.Stderr, "fathom: warning: instance %s: %v (see `fathom instance list`)\n", inst.Name, err)
			continue
		}
		fmt.Fprintf(x.env.Stdout, "removed instance %s\n", inst.Name)
	}
}

// server returns the server for instance index i, creating the instance if needed.
func (x *experimentRun) server(ctx context.Context, i int) (*plan.Server, error) {
	for len(x.servers) <= i {
		n := len(x.servers)
		inst, err := instance.Create(ctx, instance.Options{
			Kind: x.p.Instance.Kind, Name: x.instanceName(n), Dir: x.instanceDir(), Version: x.p.Instance.Version,
			StartTimeout: x.p.Instance.StartTimeout, Owner: x.owner(),
		})
		if err != nil {
			return nil, err
		}
		x.printf("  created instance %s (%s %s) in %s, port %d\n", inst.Name, inst.Kind, inst.Version, inst.Path, inst.Port)
		x.servers = append(x.servers, plan.NewManaged(inst))
	}
	return x.servers[i], nil
}

// slotResult is complete, failed or interrupted.
type slotResult = string

// runSlot runs one cell's repetition: servers, settings, preparation, hooks, the run.
func (x *experimentRun) runSlot(ctx context.Context, sl *store.ExperimentSlot, n, of int) slotResult {
	env := x.env
	cell := x.cells[sl.Cell]
	bg := context.WithoutCancel(ctx)
	t0 := env.Now()
	attempt, err := x.st.StartSlot(ctx, x.exp.ID, sl.Seq, t0)
	if err != nil {
		fmt.Fprintf(env.Stderr, "fathom: recording run %d in %s: %v\n", sl.Seq+1, x.st.Path(), err)
		return "failed"
	}
	x.progress(sl, n, of)

	finish := func(status, reason string) slotResult {
		sl.Status = status
		if err := x.st.FinishSlot(bg, x.exp.ID, sl.Seq, status, reason, env.Now()); err != nil {
			fmt.Fprintf(env.Stderr, "fathom: warning: recording the end of run %d: %v\n", sl.Seq+1, err)
		}
		x.done++
		if cell.Planned() > 0 {
			x.lastOverhead = env.Now().Sub(t0) - cell.Planned()
		} else {
			x.txSpent += env.Now().Sub(t0)
			x.txDone++
		}
		if status == "failed" {
			x.printf("  ✗ failed: %s\n", indent(reason, "    "))
		}
		return status
	}
	fail := func(err error) slotResult {
		if ctx.Err() != nil {
			return finish("interrupted", "interrupted")
		}
		return finish("failed", target.RedactString(err.Error()))
	}

	// Servers and settings.
	servers, err := x.applySettings(ctx, sl, cell)
	if err != nil {
		return fail(err)
	}
	// Preparation, then hooks that run once per server and per experiment.
	for i, srv := range servers {
		if err := x.prepare(ctx, i, srv, cell); err != nil {
			return fail(err)
		}
	}
	hookEnv := x.hookEnv(sl, cell, servers)
	if !x.shellRan {
		x.shellRan = true
		if err := x.hooks(ctx, plan.BeforeExperiment, -1, 0, servers, hookEnv, true, false); err != nil {
			return fail(err)
		}
	}
	var fresh []*plan.Server
	for i, srv := range servers {
		if !x.used[i] {
			x.used[i] = true
			fresh = append(fresh, srv)
		}
	}
	if len(fresh) > 0 {
		if err := x.hooks(ctx, plan.BeforeExperiment, -1, 0, fresh, hookEnv, false, true); err != nil {
			return fail(err)
		}
	}
	if err := x.hooks(ctx, plan.BeforeRun, sl.Seq, attempt, servers, hookEnv, true, true); err != nil {
		return fail(err)
	}

	// The run.
	sums, runErr := x.measure(ctx, sl, attempt, cell, servers)

	// After-run hooks run whatever happened to the run.
	var ids []string
	status := "complete"
	for _, s := range sums {
		if s == nil {
			continue
		}
		ids = append(ids, strconv.FormatInt(s.RunID, 10))
		if s.Status == runner.StatusFailed {
			status = "failed"
		} else if s.Status == runner.StatusInterrupted && status != "failed" {
			status = "interrupted"
		}
	}
	if runErr != nil && status == "complete" {
		status = "failed"
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
	case hookErr != nil:
		return fail(hookErr)
	}
	return finish("complete", "")
}

func indent(s, pad string) string { return strings.ReplaceAll(s, "\n", "\n"+pad) }

// progress prints the overall progress line above the run's own lines.
func (x *experimentRun) progress(sl *store.ExperimentSlot, n, of int) {
	cell := x.cells[sl.Cell]
	doneAll := 0
	for _, s := range x.slots {
		if s.Status == "complete" || s.Status == "failed" {
			doneAll++
		}
	}
	const width = 20
	filled := width * doneAll / max(len(x.slots), 1)
	bar := "[" + strings.Repeat("=", filled) + strings.Repeat(" ", width-filled) + "]"
	fmt.Fprintf(x.env.Stdout, "\n%s run %d/%d · %s · repetition %d/%d%s\n", bar, sl.Seq+1, len(x.slots), cell.Key(), sl.Repetition, x.p.Repetitions, x.timeLeft(n, of))
}

// timeLeft estimates the time left from the planned durations of the runs still to
// go, corrected by the overhead seen so far (restarts, preparation, hooks).
func (x *experimentRun) timeLeft(n, of int) string {
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
				return " · time left unknown (runs by transaction count)"
			}
			return fmt.Sprintf(" · more than %s left", planned.Round(time.Second))
		}
		planned += x.txSpent / time.Duration(x.txDone) * time.Duration(unknown)
	}
	return fmt.Sprintf(" · ~%s left", planned.Round(time.Second))
}

// applySettings makes the cell's servers run with its settings and verifies them.
func (x *experimentRun) applySettings(ctx context.Context, sl *store.ExperimentSlot, cell *plan.Cell) ([]*plan.Server, error) {
	n := 1
	if x.p.Managed() {
		n = cell.Instances
	}
	var servers []*plan.Server
	for i := 0; i < n; i++ {
		srv, err := x.server(ctx, i)
		if err != nil {
			return nil, err
		}
		servers = append(servers, srv)
	}
	// Instances the cell does not use are stopped, so that they take no memory or CPU.
	for _, srv := range x.servers[n:] {
		if srv.Inst != nil && srv.Inst.Running() {
			if err := srv.Inst.Stop(ctx); err != nil {
				return nil, err
			}
			x.printf("  stopped %s (this cell uses %d)\n", srv.Name(), n)
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
		line := "  " + srv.Name() + ": " + ch.String()
		if len(effs) > 0 {
			var parts []string
			for _, e := range effs {
				parts = append(parts, e.Name+"="+e.Value)
			}
			line += "; in effect: " + strings.Join(parts, ", ")
		}
		if ch.Action != "unchanged" || len(effs) > 0 {
			x.printf("%s\n", line)
		}
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

// targetOptsFor are the target options of a cell on a server.
func (x *experimentRun) targetOptsFor(cell *plan.Cell, srv *plan.Server) targetOpts {
	t := targetOpts{target: srv.DSN(), workload: x.p.WorkloadPath(cell.Workload), queryMode: cell.QueryMode, connectTimeout: x.p.ConnectTimeout}
	for _, kv := range cell.Options {
		t.set = append(t.set, kv.Name+"="+kv.Value)
	}
	return t
}

// prepare loads the workload's data on server i when the plan says so.
func (x *experimentRun) prepare(ctx context.Context, i int, srv *plan.Server, cell *plan.Cell) error {
	if x.p.Prepare == "never" {
		return nil
	}
	sig := cell.Workload + "\x00" + fmt.Sprint(cell.Options)
	to := x.targetOptsFor(cell, srv)
	if x.p.Prepare == "auto" {
		if x.prepared[i] == sig {
			return nil
		}
		if x.prepared[i] == "" && srv.Inst == nil {
			ready, err := isPrepared(ctx, &to)
			if err != nil {
				return err
			}
			if ready {
				x.prepared[i] = sig
				x.printf("  %s: the tables of %s are there (prepare: auto)\n", srv.Name(), cell.Workload)
				return nil
			}
		}
	}
	start := x.env.Now()
	if err := prepareQuietly(ctx, &to); err != nil {
		return fmt.Errorf("preparing %s on %s: %v", cell.Workload, srv.Name(), err)
	}
	x.printf("  %s: prepared %s in %s\n", srv.Name(), cell.Workload, x.env.Now().Sub(start).Round(time.Millisecond))
	x.prepared[i] = sig
	return nil
}

// prepareQuietly is fathom prepare without its progress lines: drop the workload's
// tables, create and load them.
func prepareQuietly(ctx context.Context, to *targetOpts) error {
	_, wl, err := to.openWorkload()
	if err != nil {
		return err
	}
	tgt, err := to.openTarget()
	if err != nil {
		return err
	}
	defer tgt.Close()
	conn, err := connect(ctx, tgt)
	if err != nil {
		return err
	}
	err = wl.Cleanup(ctx, conn)
	conn.Close()
	if err != nil {
		return fmt.Errorf("dropping existing tables: %v", err)
	}
	return wl.Prepare(ctx, tgt, func(string, int64, int64) {})
}

// isPrepared reports whether the workload's tables exist on the target.
func isPrepared(ctx context.Context, to *targetOpts) (bool, error) {
	_, wl, err := to.openWorkload()
	if err != nil {
		return false, err
	}
	tgt, err := to.openTarget()
	if err != nil {
		return false, err
	}
	defer tgt.Close()
	conn, err := connect(ctx, tgt)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	err = wl.Setup(ctx, conn)
	if errors.Is(err, workload.ErrNotPrepared) {
		return false, nil
	}
	return err == nil, err
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
			env = append(env, servers[0].Inst.ClientEnv()...)
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
		var results []*plan.HookResult
		if h.Kind() == "shell" {
			if !shell {
				continue
			}
			r := plan.RunShell(ctx, h.Shell, x.p.Dir, append(env, "FATHOM_PHASE="+phase), h.Timeout)
			results = append(results, r)
		} else {
			if !sql {
				continue
			}
			for _, srv := range servers {
				conn, err := srv.Connect(ctx)
				if err != nil {
					results = append(results, &plan.HookResult{Kind: "sql", Command: strings.Join(h.SQL, ";\n"), Server: srv.Redacted(),
						Started: x.env.Now(), ExitCode: -1, Error: "cannot connect: " + target.RedactString(err.Error())})
					break
				}
				r := plan.RunSQL(ctx, conn, h.SQL, h.Timeout)
				conn.Close()
				r.Server = srv.Redacted()
				results = append(results, r)
				if !r.OK {
					break
				}
			}
		}
		for _, r := range results {
			r.Phase, r.Index = phase, i+1
			if err := x.st.AddHook(context.WithoutCancel(ctx), x.exp.ID, store.ExperimentHook{
				Seq: seq, Attempt: attempt, Phase: phase, Index: i + 1, Kind: r.Kind, Command: r.Command, Server: r.Server,
				ExitCode: r.ExitCode, OK: r.OK, Output: r.Output, Error: r.Error, Started: r.Started, Elapsed: r.Elapsed,
			}); err != nil {
				fmt.Fprintf(x.env.Stderr, "fathom: warning: recording a hook's result: %v\n", err)
			}
			on := ""
			if r.Server != "" && len(servers) > 1 {
				on = " on " + r.Server
			}
			if r.OK {
				x.printf("  %s hook %d (%s %s)%s: ok in %s\n%s", phase, i+1, r.Kind, h.Describe(), on, r.Elapsed.Round(time.Millisecond), shellOutput(r))
				continue
			}
			return errors.New(r.Failure())
		}
	}
	return nil
}

// shellOutput is the end of a successful shell hook's output, indented, for the
// screen (all of it is stored).
func shellOutput(r *plan.HookResult) string {
	out := strings.TrimSpace(r.Output)
	if r.Kind != "shell" || out == "" {
		return ""
	}
	lines := strings.Split(out, "\n")
	if len(lines) > 5 {
		lines = append([]string{fmt.Sprintf("… (%d lines in all, stored)", len(lines))}, lines[len(lines)-5:]...)
	}
	return "    | " + strings.Join(lines, "\n    | ") + "\n"
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
		fmt.Fprintf(x.env.Stderr, "fathom: warning: %v\n", err)
	}
}

// measure runs the cell on its servers (concurrently when there are several) through
// fathom run's path, and stores the aggregate of several instances.
func (x *experimentRun) measure(ctx context.Context, sl *store.ExperimentSlot, attempt int, cell *plan.Cell, servers []*plan.Server) ([]*measure.Summary, error) {
	multi := len(servers) > 1
	sums := make([]*measure.Summary, len(servers))
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, srv := range servers {
		part := 0
		if multi {
			part = i + 1
		}
		o := x.runOptsFor(sl, cell, srv, part)
		o.bench = &benchHooks{
			settings:  effectiveMap(ctx, srv, cell),
			noSummary: true,
			onCreate: func(ctx context.Context, st *store.Store, runID int64) error {
				return st.LinkRun(ctx, x.exp.ID, sl.Seq, attempt, part, runID)
			},
		}
		env := *x.env
		// fathom run's path stops measuring on its env's interrupts and keeps writing
		// the store with the context it is given: an experiment's interrupt must stop
		// the run, not the writes that keep what it measured.
		env.Interrupts = func(c context.Context) (context.Context, context.CancelFunc) {
			rc, cancel := x.env.Interrupts(c)
			stop := context.AfterFunc(ctx, cancel)
			return rc, func() { stop(); cancel() }
		}
		if multi {
			env.Terminal = false
			o.bench.live = &prefixWriter{w: x.env.Stdout, mu: &x.mu, prefix: fmt.Sprintf("[%d] ", i+1)}
			if o.quiet {
				o.bench.live = io.Discard
			}
		} else {
			env.Stdout = &lockedWriter{w: x.env.Stdout, mu: &x.mu}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sums[i], errs[i] = o.execute(context.WithoutCancel(ctx), &env, nil)
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
		x.printf("  → %srun %d %s: %s\n", partLabel(multi, i), s.RunID, s.Status, resultLine(s))
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
	x.printf("  → aggregate of %d instances, run %d %s: %s\n", len(servers), agg.RunID, agg.Status, resultLine(agg))
	return append([]*measure.Summary{agg}, sums...), nil
}

func partLabel(multi bool, i int) string {
	if !multi {
		return ""
	}
	return fmt.Sprintf("instance %d, ", i+1)
}

func resultLine(s *measure.Summary) string {
	line := fmt.Sprintf("%.1f tps, p95 %s ms, p99 %s ms, %d errors", s.TPS, fmtMS(s.Latency.P95), fmtMS(s.Latency.P99), s.Errors)
	if s.Reason != "" {
		line += " (" + s.Reason + ")"
	}
	return line
}

// runOptsFor builds fathom run's options for a cell on a server.
func (x *experimentRun) runOptsFor(sl *store.ExperimentSlot, cell *plan.Cell, srv *plan.Server, part int) *runOpts {
	o := &runOpts{
		targetOpts:   x.targetOptsFor(cell, srv),
		store:        x.st.Path(),
		clients:      cell.Clients,
		duration:     cell.Duration,
		transactions: cell.Transactions,
		warmup:       cell.Warmup,
		rate:         cell.Rate,
		interval:     cell.Interval,
		latencyLimit: cell.LatencyLimit,
		maxTries:     cell.MaxTries,
		quiet:        x.o.quiet,
		reconnect:    x.p.ReconnectTimeout,
	}
	o.sampling.off, o.sampling.only = x.p.CollectOff, x.p.CollectOnly
	if x.p.HasSeed {
		o.seed = strconv.FormatUint(plan.RunSeed(x.p.Seed, fmt.Sprintf("%s#%d", cell.Key(), part), sl.Repetition), 10)
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
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		o.labels = append(o.labels, k+"="+labels[k])
	}
	return o
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

// prefixWriter writes whole lines with a prefix to a shared writer.
type prefixWriter struct {
	w      io.Writer
	mu     *sync.Mutex
	prefix string
	buf    []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.buf = append(p.buf, b...)
	for {
		i := strings.IndexByte(string(p.buf), '\n')
		if i < 0 {
			break
		}
		p.mu.Lock()
		_, err := fmt.Fprintf(p.w, "%s%s\n", p.prefix, p.buf[:i])
		p.mu.Unlock()
		p.buf = p.buf[i+1:]
		if err != nil {
			return len(b), err
		}
	}
	return len(b), nil
}

// lockedWriter serialises writes to a shared writer.
type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// summary prints the cell table at the end.
func (x *experimentRun) summary(ctx context.Context, status string) {
	exp, err := x.st.Experiment(ctx, x.exp.ID)
	if err != nil {
		return
	}
	fmt.Fprintf(x.env.Stdout, "\nexperiment %d %q %s: %d of %d runs complete, %d failed, in %s\n", exp.ID, exp.Name, status,
		exp.Complete, exp.Slots, exp.Failed, x.env.Now().Sub(x.started).Round(time.Second))
	if err := writeExperimentTable(ctx, x.env.Stdout, x.st, exp); err != nil {
		fmt.Fprintf(x.env.Stderr, "fathom: warning: %v\n", err)
	}
	fmt.Fprintf(x.env.Stdout, "\nmore: `fathom experiments %d`, `fathom report exp:%d`\n", exp.ID, exp.ID)
}

// clientsText says how many clients a cell runs: the workload's client groups when
// it has them (fanout's writers and readers), else the cell's clients.
func clientsText(p *plan.Plan, c *plan.Cell) string {
	if wl, err := p.OpenWorkload(c); err == nil {
		if g, ok := wl.(workload.Grouped); ok && len(g.Groups()) > 0 {
			var parts []string
			for _, grp := range g.Groups() {
				parts = append(parts, fmt.Sprintf("%d %s", grp.Clients, grp.Name))
			}
			return strings.Join(parts, " + ") + " (the workload's client groups)"
		}
	}
	if c.Clients == 1 {
		return "1 client"
	}
	return fmt.Sprintf("%d clients", c.Clients)
}

// writePlanCheck prints what a valid plan would do.
func writePlanCheck(w io.Writer, p *plan.Plan, cells []*plan.Cell) {
	where := "target " + target.RedactString(p.Target)
	if p.Managed() {
		v, _ := instance.Version(p.Instance.Kind, p.Instance.Version)
		where = fmt.Sprintf("throwaway %s %s instances", p.Instance.Kind, v)
	}
	fmt.Fprintf(w, "%s: ok: experiment %q, %d cells × %d repetitions = %d runs (%s) on %s\n",
		p.Path, p.Name, len(cells), p.Repetitions, len(cells)*p.Repetitions, p.Order, where)
	var planned time.Duration
	unknown := false
	for i, c := range cells {
		length := c.Duration.String()
		if c.Transactions > 0 {
			length = fmt.Sprintf("%d tx/client", c.Transactions)
			unknown = true
		}
		if c.Warmup > 0 {
			length += " after " + c.Warmup.String() + " warm-up"
		}
		extra := ""
		if c.Instances > 1 {
			extra = fmt.Sprintf(", %d instances", c.Instances)
		}
		var sets []string
		for _, kv := range c.Settings {
			sets = append(sets, kv.Name+"="+kv.Value)
		}
		if len(sets) > 0 {
			extra += "; settings " + strings.Join(sets, ", ")
		}
		fmt.Fprintf(w, "  cell %d: %s — %s, %s, %s%s\n", i+1, c.Key(), c.Workload, clientsText(p, c), length, extra)
		planned += c.Planned() * time.Duration(p.Repetitions)
	}
	planned += time.Duration(max(len(cells)*p.Repetitions-1, 0)) * p.Cooldown
	more := ", plus preparation, restarts and hooks"
	if unknown {
		more = ", plus the runs by transaction count" + more
	}
	if planned == 0 && unknown {
		fmt.Fprintf(w, "planned run time: unknown (the runs are by transaction count)%s\n", strings.TrimPrefix(more, ", plus the runs by transaction count"))
	} else {
		fmt.Fprintf(w, "planned run time: %s%s\n", planned.Round(time.Second), more)
	}
	if !p.Managed() && len(cells) > 0 && len(cells[0].Settings) > 0 {
		fmt.Fprintln(w, "settings are checked against the server when the experiment starts")
	}
}
