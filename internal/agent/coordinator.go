package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fathom-lab/fathom/internal/db"
	"github.com/fathom-lab/fathom/internal/errkind"
	"github.com/fathom-lab/fathom/internal/run"
	"github.com/fathom-lab/fathom/internal/runner"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
)

// Plan is a run made by agents: `fathom run --agents N`.
type Plan struct {
	Agents int
	Name   string        // the job's name, which agents started with --run join
	Wait   time.Duration // for every agent to join (default 2m)
	// LossTimeout: an agent silent this long is lost (default 10s).
	LossTimeout time.Duration
	// Lead is how far ahead of the start instant the agents are told (default 2s).
	Lead time.Duration
	Poll time.Duration // how often the store is read (default: a quarter interval, 50ms to 500ms)
	// StoreShown names the store in messages (without password).
	StoreShown string
	// Events hears the coordinator's progress (nil: nobody).
	Events Listener
}

// Remote is the engine's hook that runs o's clients on the plan's agents (o is
// copied: give the options as they will run).
func (p Plan) Remote(o run.Options) run.Remote {
	return func(ctx context.Context, st store.Store, tgt target.Target, wl workload.Workload, cfg runner.Config) (run.Clients, error) {
		as, err := agentStore(st)
		if err != nil {
			return nil, err
		}
		if db.IsEmbedded(tgt.Kind()) {
			return nil, errkind.Usagef("--agents: a %s target lives on this machine; agents on other machines need a server they reach over the network", tgt.Kind())
		}
		if g, ok := wl.(workload.Grouped); ok && len(g.Groups()) > 0 {
			return nil, errkind.Usagef("workload %s has client groups, which agents do not split yet: run it from one machine", wl.Name())
		}
		for i := 0; i < p.Agents; i++ {
			if _, err := split(cfg.Clients, cfg.Rate, cfg.Seed, p.Agents, i); err != nil {
				return nil, errkind.Usagef("%v", err)
			}
		}
		sp := spec{Target: withoutPassword(o.Target.DSN), QueryMode: o.Target.QueryMode, ConnectTimeout: o.Target.ConnectTimeout,
			Workload: o.Workload, Params: o.Params, Types: wl.TxnTypes(), Clients: cfg.Clients, Rate: cfg.Rate, Seed: cfg.Seed,
			Duration: cfg.Duration, Transactions: cfg.Transactions, Warmup: cfg.Warmup, Interval: cfg.Interval,
			LatencyLimit: cfg.LatencyLimit, MaxTries: cfg.MaxTries, ReconnectTimeout: cfg.ReconnectTimeout, ConnectPerTxn: cfg.ConnectPerTxn,
			Token: newToken()}
		c := &coordinator{plan: p, as: as, st: st, spec: sp, cfg: cfg}
		c.defaults()
		if err := c.gather(ctx); err != nil {
			return nil, err
		}
		return c, nil
	}
}

type coordinator struct {
	plan    Plan
	as      store.AgentStore
	st      store.Store // the same store, for closing a dead coordinator's run
	spec    spec
	cfg     runner.Config
	job     store.AgentJob
	members []store.AgentMember
	runID   int64
	start   time.Time
	clock   [2]time.Duration // the coordinator's own offset from the store and round trip
	onCut   func(int)
	done    bool
}

func (c *coordinator) defaults() {
	p := &c.plan
	if p.Wait <= 0 {
		p.Wait = 2 * time.Minute
	}
	if p.LossTimeout <= 0 {
		p.LossTimeout = 10 * time.Second
	}
	if p.Lead <= 0 {
		p.Lead = 2 * time.Second
	}
	if p.Poll <= 0 {
		p.Poll = min(max(c.cfg.Interval/4, 50*time.Millisecond), 500*time.Millisecond)
	}
	if p.Events == nil {
		p.Events = nobody{}
	}
}

// gather opens the job and waits for every agent to join.
func (c *coordinator) gather(ctx context.Context) error {
	c.job = store.AgentJob{Name: c.plan.Name, Agents: c.plan.Agents, Spec: mustJSON(c.spec)}
	err := c.as.CreateAgentJob(ctx, &c.job)
	if errors.Is(err, store.ErrTaken) && c.st != nil {
		// A job of that name whose coordinator is gone is closed (its agents' late
		// intervals merged into its run) and the name taken anew.
		rec, rerr := recoverRun(ctx, c.st, c.plan.Name, c.plan.LossTimeout)
		if rerr == nil {
			c.plan.Events.Event(Closed{Recovered: rec})
			err = c.as.CreateAgentJob(ctx, &c.job)
		}
	}
	if err != nil {
		if errors.Is(err, store.ErrTaken) {
			return errkind.Usagef("%v: its coordinator is alive; give the run another --name, or wait for that run to end", err)
		}
		return errkind.WithKind(errkind.Failed, err)
	}
	c.plan.Events.Event(Waiting{Job: c.plan.Name, Agents: c.plan.Agents, Wait: c.plan.Wait, Store: c.plan.StoreShown})
	deadline := time.Now().Add(c.plan.Wait)
	seen := map[int]bool{}
	for {
		members, err := c.as.AgentMembers(ctx, c.job.ID)
		if err == nil {
			err = c.as.SetAgentJobState(ctx, c.job.ID, store.JobWaiting, "")
		}
		if err != nil && ctx.Err() == nil {
			c.finish(store.JobFinished, "the coordinator lost the store")
			return errkind.WithKind(errkind.Failed, fmt.Errorf("waiting for agents: %v", err))
		}
		for _, m := range members {
			if !seen[m.Index] {
				seen[m.Index] = true
				c.plan.Events.Event(Joined{Index: m.Index, Host: m.Host, Version: m.Version, Clients: m.Clients, Rate: m.Rate,
					Offset: -m.Offset, Uncertainty: m.RTT / 2, Applied: -clockApplied(m.Offset, m.RTT)})
			}
		}
		if len(members) == c.plan.Agents {
			c.members = members
			return nil
		}
		if time.Now().After(deadline) {
			missing := c.missing(members)
			c.finish(store.JobFinished, "agents missing: "+missing)
			return errkind.WithKind(errkind.Failed, fmt.Errorf("only %d of %d agents joined %q within %s; missing: agent %s. Start them with `fathom agent --store %s --run %s --index I` (or JOB_COMPLETION_INDEX), or wait longer with --agents-wait",
				len(members), c.plan.Agents, c.plan.Name, c.plan.Wait, missing, c.plan.StoreShown, c.plan.Name))
		}
		if !sleepUntil(ctx, time.Now().Add(c.plan.Poll)) {
			c.finish(store.JobFinished, "interrupted while waiting for agents")
			return errkind.WithKind(errkind.Interrupted, fmt.Errorf("interrupted while waiting for agents (missing: agent %s)", c.missing(members)))
		}
	}
}

func (c *coordinator) missing(ms []store.AgentMember) string {
	var out []string
	for i := 0; i < c.plan.Agents; i++ {
		if !slices.ContainsFunc(ms, func(m store.AgentMember) bool { return m.Index == i }) {
			out = append(out, strconv.Itoa(i))
		}
	}
	return strings.Join(out, ", ")
}

// finish closes the job, with a bounded wait.
func (c *coordinator) finish(state, reason string) {
	ctx, cancel := context.WithTimeout(context.Background(), c.plan.LossTimeout)
	defer cancel()
	_ = c.as.SetAgentJobState(ctx, c.job.ID, state, reason)
	c.done = state == store.JobFinished
}

func (c *coordinator) Clients() int            { return c.cfg.Clients }
func (c *coordinator) Tuning() string          { return fmt.Sprintf("%d agents", c.plan.Agents) }
func (c *coordinator) Start() time.Time        { return c.start }
func (c *coordinator) OnCut(f func(index int)) { c.onCut = f }
func (c *coordinator) Recorded(id int64)       { c.runID = id }

func (c *coordinator) Close() {
	if !c.done {
		c.finish(store.JobFinished, "the coordinator ended")
	}
}

// RunOptions records the agents with the run: who they were and their shares.
func (c *coordinator) RunOptions() map[string]string {
	m := map[string]string{"agents": strconv.Itoa(c.plan.Agents), "agents.name": c.plan.Name}
	for _, a := range c.members {
		m[fmt.Sprintf("agent.%d", a.Index)] = fmt.Sprintf("host=%s version=%s clients=%d rate=%g seed=%d clock_offset=%+.3fms clock_uncertainty=%.3fms clock_applied=%+.3fms rtt=%.3fms",
			a.Host, a.Version, a.Clients, a.Rate, a.Seed, -ms(a.Offset), ms(a.RTT/2), ms(-clockApplied(a.Offset, a.RTT)), ms(a.RTT))
	}
	return m
}

// warnClock: a machine's clock is known too loosely, or was off by enough, for the
// intervals of the agents to line up within 5% of the interval.
const warnClock = "clock"

// clockWarnings are the coordinator's and the agents' clock warnings.
func (c *coordinator) clockWarnings() []string {
	var out []string
	if w := clockWarning("the coordinator", c.clock[0], c.clock[1], c.spec.Interval); w != "" {
		out = append(out, w)
	}
	for _, a := range c.members {
		if w := clockWarning(fmt.Sprintf("agent %d (%s)", a.Index, a.Host), a.Offset, a.RTT, c.spec.Interval); w != "" {
			out = append(out, w)
		}
	}
	return out
}
