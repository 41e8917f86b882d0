package view

import (
	"fmt"
	"io"
	"time"

	"github.com/fathom-lab/fathom/internal/agent"
)

// AgentLines prints a coordinator's or an agent's events (an agent.Listener) as lines
// on W, each after Prefix ("fathom: " for a run made by agents, "fathom agent: " for
// `fathom agent`).
type AgentLines struct {
	W      io.Writer
	Prefix string
}

// Event prints e.
func (l *AgentLines) Event(e agent.Event) {
	if line := agentText(e); line != "" {
		fmt.Fprintf(l.W, "%s%s\n", l.Prefix, line)
	}
}

// agentText is an agent event in one line ("" for none).
func agentText(e agent.Event) string {
	switch e := e.(type) {
	case agent.Waiting:
		return fmt.Sprintf("waiting up to %s for %d agents to join %q: `fathom agent --store %s --run %s --index I` (I = 0 to %d), or agents without --run",
			e.Wait, e.Agents, e.Job, e.Store, e.Job, e.Agents-1)
	case agent.Joined:
		return fmt.Sprintf("agent %d joined from %s (fathom %s): %d clients%s; clock %+.3fms ±%.3fms from the store's (%+.3fms applied)", e.Index, e.Host, e.Version,
			e.Clients, rateText(e.Rate), ms(e.Offset), ms(e.Uncertainty), ms(e.Applied))
	case agent.Warning:
		return "warning: " + e.Text
	case agent.Closed:
		r := e.Recovered
		if r.RunID == 0 {
			return fmt.Sprintf("closed %q: %s, before its run was recorded; the name is free", r.Job, r.Reason)
		}
		return fmt.Sprintf("closed %q (run %d, now interrupted): %s; the name is free", r.Job, r.RunID, r.Reason)
	case agent.WaitingForJob:
		return fmt.Sprintf("waiting for job %q (up to %s)", e.Job, e.Wait)
	case agent.WaitingForWork:
		return "waiting for work"
	case agent.JoinedJob:
		return fmt.Sprintf("joined job %q as agent %d of %d: %d clients%s, seed %d; store clock %+.3fms ±%.3fms from ours (round trip %.3fms), %+.3fms applied",
			e.Job, e.Index, e.Agents, e.Share.Clients, rateText(e.Share.Rate), e.Share.Seed, ms(e.Offset), ms(e.RTT/2), ms(e.RTT), ms(e.Applied))
	case agent.AgentStarted:
		return "started"
	case agent.AgentEnded:
		o := e.Outcome
		reason := ""
		if o.Reason != "" {
			reason = ": " + o.Reason
		}
		return fmt.Sprintf("%s: %d intervals, %d transactions%s", o.Status, o.Intervals, o.Transactions, reason)
	case agent.JobFailed:
		return e.Err.Error()
	}
	return ""
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func rateText(r float64) string {
	if r == 0 {
		return " (closed loop)"
	}
	return fmt.Sprintf(" at %.6g tx/s", r)
}
