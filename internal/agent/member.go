package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fathom-lab/fathom/internal/errkind"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/run"
	"github.com/fathom-lab/fathom/internal/runner"
	"github.com/fathom-lab/fathom/internal/store"
)

// agent is one fathom process that runs its share of jobs: `fathom agent`.
type agent struct {
	Store store.AgentStore
	// Target overrides the job's target DSN (e.g. to reach the server by another
	// address, or to carry a password); "" uses the job's, whose password comes from
	// Getenv (PGPASSWORD, .pgpass, MYSQL_PWD …).
	Target        string
	Getenv        func(string) string
	PollerSockets bool
	Host, Version string
	PID           int
	Tuner         runner.Tuner
	// Events hears the agent's progress (nil: nobody).
	Events Listener
	// LossTimeout: an agent that cannot reach the store, or does not hear from the
	// coordinator, for this long stops (default 10s).
	LossTimeout time.Duration
	// StoreOutage, when longer than LossTimeout, is how long an agent whose store
	// rides out outages (store/durable) goes on without reaching it; after an outage
	// the coordinator's silence counts only once the store has been back LossTimeout.
	StoreOutage time.Duration
	// Poll is how often it beats and looks for work (default 200ms).
	Poll time.Duration
}

// Outcome is how an agent's part of a job ended.
type Outcome struct {
	Job   string
	Share Share
	runner.Result
	Intervals    int
	Transactions int64
}

func (a *agent) defaults() {
	if a.LossTimeout <= 0 {
		a.LossTimeout = 10 * time.Second
	}
	if a.Poll <= 0 {
		a.Poll = 200 * time.Millisecond
	}
	if a.Events == nil {
		a.Events = nobody{}
	}
}

// once joins the job named name at index (waiting up to wait for a coordinator to
// open it) and runs the agent's share of it.
func (a *agent) once(ctx context.Context, name string, index int, wait time.Duration) (*Outcome, error) {
	a.defaults()
	deadline := time.Now().Add(wait)
	a.Events.Event(WaitingForJob{Job: name, Wait: wait})
	for {
		j, err := a.Store.AgentJob(ctx, name)
		switch {
		case err == nil && j.State == store.JobWaiting:
			return a.join(ctx, j, index)
		case err != nil && !errors.Is(err, store.ErrNotFound):
			return nil, errkind.WithKind(errkind.Failed, err)
		case time.Now().After(deadline):
			state := "no job of that name"
			if j != nil {
				state = "its newest job is " + j.State
			}
			return nil, errkind.WithKind(errkind.Failed, fmt.Errorf("job %q did not open for agents within %s (%s): start the coordinator with `fathom run --agents N --name %s --store …`", name, wait, state, name))
		}
		if !sleepUntil(ctx, time.Now().Add(a.Poll)) {
			return nil, errkind.WithKind(errkind.Interrupted, errors.New("interrupted while waiting for the job"))
		}
	}
}

// serve joins waiting jobs, one at a time, at the lowest free index, until ctx ends.
// Each job's outcome (or error) goes to done.
func (a *agent) serve(ctx context.Context, done func(*Outcome, error)) error {
	a.defaults()
	a.Events.Event(WaitingForWork{})
	for {
		jobs, err := a.Store.WaitingAgentJobs(ctx)
		if err != nil && ctx.Err() == nil {
			return errkind.WithKind(errkind.Failed, err)
		}
		for i := range jobs {
			out, err := a.tryJoin(ctx, &jobs[i])
			if errors.Is(err, store.ErrTaken) {
				continue
			}
			done(out, err)
			break
		}
		if !sleepUntil(ctx, time.Now().Add(a.Poll)) {
			return nil
		}
	}
}

func (a *agent) tryJoin(ctx context.Context, j *store.AgentJob) (*Outcome, error) {
	for i := 0; i < j.Agents; i++ {
		out, err := a.join(ctx, j, i)
		if !errors.Is(err, store.ErrTaken) || err == nil {
			return out, err
		}
	}
	return nil, store.ErrTaken
}

// join registers at index in j and runs the share.
func (a *agent) join(ctx context.Context, j *store.AgentJob, index int) (*Outcome, error) {
	spec, err := decodeSpec(j)
	if err != nil {
		return nil, errkind.WithKind(errkind.Failed, err)
	}
	sh, err := split(spec.Clients, spec.Rate, spec.Seed, j.Agents, index)
	if err != nil {
		return nil, errkind.Usagef("job %q: %v", j.Name, err)
	}
	dsn := a.Target
	if dsn == "" {
		dsn = spec.Target
	}
	ro := spec.runOptions(dsn, a.Getenv, a.PollerSockets)
	wl, err := ro.LoadWorkload()
	if err != nil {
		return nil, err
	}
	tgt, err := ro.Target.Open()
	if err != nil {
		return nil, err
	}
	defer tgt.Close()
	off, rtt, err := storeClock(ctx, a.Store)
	if err != nil {
		return nil, errkind.WithKind(errkind.Failed, fmt.Errorf("reading the store's clock: %v", err))
	}
	m := &store.AgentMember{Index: index, Host: a.Host, Version: a.Version, PID: a.PID, Offset: off, RTT: rtt,
		Clients: sh.Clients, Rate: sh.Rate, Seed: sh.Seed}
	if err := a.Store.JoinAgentJob(ctx, j.ID, m); err != nil {
		if errors.Is(err, store.ErrTaken) {
			return nil, errkind.WithKind(errkind.Failed, fmt.Errorf("job %q: %w", j.Name, err))
		}
		return nil, errkind.WithKind(errkind.Failed, err)
	}
	a.Events.Event(JoinedJob{Job: j.Name, Index: index, Agents: j.Agents, Share: sh, Offset: off, RTT: rtt, Applied: clockApplied(off, rtt)})
	out := &Outcome{Job: j.Name, Share: sh}
	fail := func(err error) (*Outcome, error) {
		a.final(j.ID, index, store.AgentFailed, err.Error())
		return out, err
	}
	conn, err := run.Connect(ctx, tgt)
	if err != nil {
		return fail(err)
	}
	err = wl.Setup(ctx, conn)
	conn.Close()
	if err != nil {
		return fail(errkind.WithKind(errkind.Failed, err))
	}
	cfg := spec.config(sh)
	cfg.Tuner = a.Tuner
	r, err := runner.Connect(ctx, tgt, wl, cfg)
	if err != nil {
		return fail(run.ConnectError(tgt, err))
	}
	defer r.Close()
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	b := &beat{a: a, job: j.ID, index: index, state: store.AgentRegistered, started: make(chan time.Time, 1), cancel: cancel}
	stopBeat := b.loop(runCtx)
	var start time.Time
	select {
	case start = <-b.started:
	case <-runCtx.Done():
	}
	if start.IsZero() || !sleepUntil(runCtx, start.Add(-clockApplied(off, rtt))) {
		stopBeat()
		cause := context.Cause(runCtx)
		a.final(j.ID, index, store.AgentDone, "stopped before the start: "+cause.Error())
		return out, errkind.WithKind(errkind.Interrupted, fmt.Errorf("job %q: stopped before the start (%v)", j.Name, cause))
	}
	b.set(store.AgentRunning)
	a.Events.Event(AgentStarted{})
	bg := context.WithoutCancel(ctx)
	out.Result = r.Run(runCtx, func(iv *measure.Interval) error {
		wctx, cancel := context.WithTimeout(bg, a.LossTimeout)
		defer cancel()
		if err := a.Store.AddAgentInterval(wctx, j.ID, index, iv); err != nil {
			return fmt.Errorf("writing interval %d to the store: %v", iv.Index, err)
		}
		out.Intervals++
		t := iv.Total()
		out.Transactions += t.OK
		return nil
	})
	stopBeat()
	if cause := context.Cause(runCtx); cause != nil && !errors.Is(cause, context.Canceled) && out.Status == runner.StatusInterrupted {
		out.Reason = cause.Error()
		if !errors.Is(cause, errStopped) {
			out.Status = runner.StatusFailed
		}
	}
	state := store.AgentDone
	if out.Status == runner.StatusFailed {
		state = store.AgentFailed
	}
	if err := a.final(j.ID, index, state, out.Reason); err != nil {
		return out, errkind.WithKind(errkind.Failed, fmt.Errorf("job %q: could not report the end to the store: %v", j.Name, err))
	}
	a.Events.Event(AgentEnded{Outcome: out})
	if out.Status == runner.StatusFailed {
		return out, errkind.WithKind(errkind.Failed, fmt.Errorf("job %q: %s", j.Name, out.Reason))
	}
	return out, nil
}

// final reports the agent's end, with a bounded wait.
func (a *agent) final(job int64, index int, state, reason string) error {
	ctx, cancel := context.WithTimeout(context.Background(), a.LossTimeout)
	defer cancel()
	_, err := a.Store.AgentBeat(ctx, job, index, state, reason)
	if errors.Is(err, store.ErrLost) {
		return nil // the coordinator already accounted for this agent
	}
	return err
}

// beat tells the store the agent is alive and hears from the coordinator: the start
// instant, a stop, or silence.
type beat struct {
	a      *agent
	job    int64
	index  int
	mu     sync.Mutex
	state  string
	sent   bool
	cancel context.CancelCauseFunc
	// started receives the job's start instant once.
	started chan time.Time
}

func (b *beat) set(state string) { b.mu.Lock(); b.state = state; b.mu.Unlock() }

func (b *beat) loop(ctx context.Context) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		lastOK := time.Now()
		backAt := time.Time{} // when the store answered again after an outage
		storeLoss := max(b.a.LossTimeout, b.a.StoreOutage)
		t := time.NewTicker(b.a.Poll)
		defer t.Stop()
		for {
			b.mu.Lock()
			state := b.state
			b.mu.Unlock()
			bctx, cancel := context.WithTimeout(ctx, b.a.LossTimeout)
			j, err := b.a.Store.AgentBeat(bctx, b.job, b.index, state, "")
			cancel()
			if err == nil && time.Since(lastOK) > b.a.LossTimeout {
				// Back after an outage: the coordinator could not beat either.
				backAt = time.Now()
			}
			switch {
			case errors.Is(err, store.ErrLost):
				b.cancel(err)
			case err != nil:
				if time.Since(lastOK) > storeLoss && ctx.Err() == nil {
					b.cancel(fmt.Errorf("lost the store for %s: %v", time.Since(lastOK).Round(time.Millisecond), err))
				}
			case j.State == store.JobStopping || j.State == store.JobFinished:
				lastOK = time.Now()
				b.cancel(fmt.Errorf("%w by the coordinator%s", errStopped, reasonText(j.Reason)))
			case j.CoordinatorAge > b.a.LossTimeout && time.Since(backAt) < b.a.LossTimeout:
				lastOK = time.Now() // the coordinator gets LossTimeout after the store's return to beat
			case j.CoordinatorAge > b.a.LossTimeout:
				b.cancel(fmt.Errorf("the coordinator has been silent for %s", j.CoordinatorAge.Round(time.Millisecond)))
			default:
				lastOK = time.Now()
				if j.State == store.JobStarted && !b.sent {
					b.sent = true
					b.started <- j.StartAt
				}
			}
			select {
			case <-t.C:
			case <-done:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func reasonText(r string) string {
	if r == "" {
		return ""
	}
	return ": " + r
}
