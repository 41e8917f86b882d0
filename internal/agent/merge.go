package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/run"
	"github.com/fathom-lab/fathom/internal/runner"
	"github.com/fathom-lab/fathom/internal/store"
)

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // a Spec always encodes
	}
	return b
}

// ended reports whether an agent will store no more intervals.
func ended(state string) bool {
	return state == store.AgentDone || state == store.AgentFailed || state == store.AgentLost
}

// Run starts the agents at one instant of the store's clock and merges their
// intervals, each as soon as every agent still running has stored it, into the run
// through sink. Cancelling ctx asks every agent to stop (through the store).
func (c *coordinator) Run(ctx context.Context, sink runner.Sink) runner.Result {
	bg := context.WithoutCancel(ctx)
	res := runner.Result{Status: runner.StatusComplete}
	off, rtt, err := storeClock(bg, c.as)
	var startAt time.Time
	if err == nil {
		startAt, err = c.as.StartAgentJob(bg, c.job.ID, c.runID, c.plan.Lead)
	}
	if err != nil {
		c.finish(store.JobFinished, "could not start")
		now := time.Now()
		return runner.Result{Status: runner.StatusFailed, Reason: "starting the agents: " + err.Error(), Start: now, End: now}
	}
	c.start = startAt.Add(-clockApplied(off, rtt))
	c.clock = [2]time.Duration{off, rtt}
	for _, w := range c.clockWarnings() {
		c.plan.Events.Event(Warning{Text: w})
		res.Warnings = append(res.Warnings, runner.Warning{Kind: warnClock, Text: w})
	}
	res.Start = c.start
	m := &merger{c: c, types: c.spec.Types, cover: map[int][]int{}}
	var stopAt time.Time
	stopping := false
	lastHeard := time.Now() // the last time the store answered the coordinator
	for {
		if ctx.Err() != nil && !stopping {
			stopping, stopAt = true, time.Now()
			res.Status, res.Reason = runner.StatusInterrupted, "interrupted by signal; every agent was asked to stop"
			_ = c.as.SetAgentJobState(bg, c.job.ID, store.JobStopping, "interrupted on the coordinator")
		}
		state := store.JobStarted
		if stopping {
			state = store.JobStopping
		}
		err := c.as.SetAgentJobState(bg, c.job.ID, state, "")
		var members []store.AgentMember
		if err == nil {
			members, err = c.as.AgentMembers(bg, c.job.ID)
		}
		if err != nil {
			// The coordinator lost the store: the agents will see it silent and stop.
			res.Status, res.Reason = runner.StatusFailed, "the coordinator lost the store: "+err.Error()
			break
		}
		c.members = members
		if time.Since(lastHeard) > c.plan.LossTimeout {
			// The store was out of reach (a store that rides out outages answers
			// late): the agents could not beat either, and get LossTimeout from now.
			m.grace = time.Now().Add(c.plan.LossTimeout)
		}
		lastHeard = time.Now()
		m.lose(bg, stopping && time.Since(stopAt) > c.plan.LossTimeout)
		more, err := m.merge(bg, sink)
		if err != nil {
			res.Status, res.Reason = runner.StatusFailed, err.Error()
			_ = c.as.SetAgentJobState(bg, c.job.ID, store.JobStopping, "the coordinator failed: "+err.Error())
			break
		}
		if !more && m.allEnded() {
			break
		}
		sleepUntil(context.Background(), time.Now().Add(c.plan.Poll))
	}
	res.End = time.Now()
	if res.Status == runner.StatusComplete && len(m.gone) > 0 {
		res.Status, res.Reason = run.StatusPartial, strings.Join(m.gone, "; ")
		if m.next == 0 {
			res.Status = runner.StatusFailed
		}
	} else if len(m.gone) > 0 {
		res.Reason += " (" + strings.Join(m.gone, "; ") + ")"
	}
	for _, w := range m.coverage() {
		res.Warnings = append(res.Warnings, w)
		if res.Status == run.StatusPartial {
			res.Reason += "; " + w.Text
		}
	}
	c.finish(store.JobFinished, res.Status)
	return res
}

// merger merges the agents' intervals in order.
type merger struct {
	c      *coordinator
	types  []string
	next   int           // the next merged interval's index
	nextOf map[int]int   // agent -> the index of its next interval to merge
	cover  map[int][]int // interval index -> the agents it covers, when not all
	gone   []string      // agents lost or failed, for the reason
	known  map[int]bool
	grace  time.Time // no agent is lost for silence before this (the store was back then)
}

// lose marks lost the agents silent for longer than the loss timeout (or, with all,
// every agent still running: it did not stop when asked) and notes the agents that
// failed.
func (m *merger) lose(ctx context.Context, all bool) {
	if m.known == nil {
		m.known = map[int]bool{}
	}
	c := m.c
	for i := range c.members {
		a := &c.members[i]
		if !ended(a.State) && (all || a.Age > c.plan.LossTimeout && time.Now().After(m.grace)) {
			why := fmt.Sprintf("no heartbeat for %s", a.Age.Round(time.Millisecond))
			if all {
				why = "did not stop when asked"
			}
			if err := c.as.MarkAgentLost(ctx, c.job.ID, a.Index, why); err == nil {
				a.State, a.Reason = store.AgentLost, why
				a.Ended = time.Now().Add(-a.Age)
			}
		}
		if (a.State == store.AgentLost || a.State == store.AgentFailed) && !m.known[a.Index] {
			m.known[a.Index] = true
			when := a.Ended
			if when.IsZero() {
				when = time.Now()
			}
			m.gone = append(m.gone, fmt.Sprintf("agent %d (%s) %s at %s UTC after storing %d intervals: %s",
				a.Index, a.Host, a.State, when.UTC().Format("15:04:05.000"), a.Intervals, a.Reason))
		}
	}
}

func (m *merger) allEnded() bool {
	for _, a := range m.c.members {
		if !ended(a.State) {
			return false
		}
	}
	return true
}

// merge merges and sinks every interval that each agent has stored or will never
// store; more says whether stored intervals are left for later. Agents' intervals are
// matched by time, not by their numbers: an agent whose cut came late skips a
// boundary (its interval then spans two), and the others' intervals of that span are
// merged with it (align).
func (m *merger) merge(ctx context.Context, sink runner.Sink) (more bool, err error) {
	c := m.c
	if m.nextOf == nil {
		m.nextOf = map[int]int{}
	}
	from := -1
	for _, a := range c.members {
		if n := m.nextOf[a.Index]; from < 0 || n < from {
			from = n
		}
	}
	ivs, err := c.as.AgentIntervals(ctx, c.job.ID, max(from, 0), m.types)
	if err != nil {
		return false, fmt.Errorf("reading the agents' intervals: %v", err)
	}
	queues := map[int][]*measure.Interval{}
	for _, a := range ivs {
		if a.Interval.Index >= m.nextOf[a.Agent] {
			queues[a.Agent] = append(queues[a.Agent], a.Interval)
		}
	}
	live := map[int]bool{}
	for _, a := range c.members {
		live[a.Index] = !ended(a.State)
	}
	for {
		take, ok := align(queues, live, c.cfg.Interval)
		if !ok {
			for _, q := range queues {
				if len(q) > 0 {
					return true, nil
				}
			}
			return false, nil
		}
		iv, agents := combine(m.next, m.types, queues, take)
		for _, a := range agents {
			m.nextOf[a] += take[a]
		}
		if len(agents) < c.plan.Agents {
			m.cover[m.next] = agents
		}
		if c.onCut != nil {
			c.onCut(m.next)
		}
		if err := sink(iv); err != nil {
			return false, err
		}
		m.next++
	}
}

// combine makes merged interval index of the intervals align chose (take) from the
// front of each agent's queue, and takes them off the queues: histograms merged and
// counts added, from the earliest start to the latest end, warm-up if any part is. It
// returns the agents it covers, in order.
func combine(index int, types []string, queues map[int][]*measure.Interval, take map[int]int) (*measure.Interval, []int) {
	iv := measure.NewInterval(index, types)
	agents := sortedAgents(take)
	first := true
	for _, a := range agents {
		for _, part := range queues[a][:take[a]] {
			if first || part.Start < iv.Start {
				iv.Start = part.Start
			}
			first = false
			iv.End = max(iv.End, part.End)
			iv.Warmup = iv.Warmup || part.Warmup
			iv.Add(part)
		}
		queues[a] = queues[a][take[a]:]
	}
	return iv, agents
}

// align chooses the agents' intervals that make the next merged interval: from each
// agent's queue of stored, unmerged intervals (in order), how many to take (take), so
// that every agent's share ends within half an interval of the others'. An agent that
// skipped a boundary has one long interval where the others have two; both of theirs
// are taken with it. ok is false while an agent that will store more has not stored
// enough yet, or when nothing is left. An agent that stores nothing more drops out
// once its queue is empty.
func align(queues map[int][]*measure.Interval, live map[int]bool, interval time.Duration) (take map[int]int, ok bool) {
	take = map[int]int{}
	var end time.Duration
	for a, q := range queues {
		if len(q) > 0 {
			take[a] = 1
			end = max(end, q[0].End)
		}
	}
	for a, l := range live {
		if l && take[a] == 0 {
			return nil, false // a running agent has not stored its next interval
		}
	}
	if len(take) == 0 {
		return nil, false
	}
	tol := interval / 2
	for changed := true; changed; {
		changed = false
		for a, n := range take {
			q := queues[a]
			for q[n-1].End < end-tol {
				if n == len(q) {
					if live[a] {
						return nil, false
					}
					break // this agent stored nothing later
				}
				n++
				changed = true
			}
			take[a] = n
			if q[n-1].End > end {
				end, changed = q[n-1].End, true
			}
		}
	}
	return take, true
}

// sortedAgents returns take's agents in order.
func sortedAgents(take map[int]int) []int {
	out := make([]int, 0, len(take))
	for a := range take {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

// coverage is one warning per run of intervals that left some agents out.
func (m *merger) coverage() []runner.Warning {
	var out []runner.Warning
	for i := 0; i < m.next; i++ {
		cov, ok := m.cover[i]
		if !ok {
			continue
		}
		j := i
		for j+1 < m.next && fmt.Sprint(m.cover[j+1]) == fmt.Sprint(cov) {
			if _, ok := m.cover[j+1]; !ok {
				break
			}
			j++
		}
		out = append(out, runner.Warning{Kind: "agents", Text: fmt.Sprintf("intervals %d to %d cover agents %s of %d only",
			i, j, joinInts(cov), m.c.plan.Agents)})
		i = j
	}
	return out
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}
