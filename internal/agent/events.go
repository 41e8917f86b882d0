package agent

import "time"

// Listener hears what a coordinator (a run made by agents) or an agent does, as typed
// events; the front end turns them into lines. Event may be called from the
// goroutine that runs the job: it must not block for long.
type Listener interface {
	Event(Event)
}

// Event is one of the types below.
type Event interface{ agentEvent() }

// Waiting: the coordinator opened job Job and waits up to Wait for Agents agents,
// which join it through the store shown as Store (without password).
type Waiting struct {
	Job    string
	Agents int
	Wait   time.Duration
	Store  string
}

// Joined: agent Index joined the coordinator's job. The clock figures are the
// agent's clock against the store's: its offset, the offset's uncertainty (half the
// round trip) and the correction applied.
type Joined struct {
	Index                        int
	Host, Version                string
	Clients                      int
	Rate                         float64 // 0: closed loop
	Offset, Uncertainty, Applied time.Duration
}

// Warning: something the user should know that did not stop the run (a clock known
// too loosely to line the intervals up).
type Warning struct{ Text string }

// Closed: a job whose coordinator was gone was closed (Recover).
type Closed struct{ Recovered *Recovered }

// WaitingForJob: an agent started with --run waits up to Wait for job Job to open.
type WaitingForJob struct {
	Job  string
	Wait time.Duration
}

// WaitingForWork: an agent without --run waits for any job.
type WaitingForWork struct{}

// JoinedJob: this agent joined job Job as agent Index of Agents with its Share; the
// store's clock against this machine's: Offset, Round trip, and the correction applied.
type JoinedJob struct {
	Job                  string
	Index, Agents        int
	Share                Share
	Offset, RTT, Applied time.Duration
}

// AgentStarted: this agent's clients started at the job's instant.
type AgentStarted struct{}

// AgentEnded: this agent's part of a job ended (Outcome's Status and Reason).
type AgentEnded struct{ Outcome *Outcome }

// JobFailed: a job this agent served (without --run) failed; it waits for the next.
type JobFailed struct{ Err error }

func (Waiting) agentEvent()        {}
func (Joined) agentEvent()         {}
func (Warning) agentEvent()        {}
func (Closed) agentEvent()         {}
func (WaitingForJob) agentEvent()  {}
func (WaitingForWork) agentEvent() {}
func (JoinedJob) agentEvent()      {}
func (AgentStarted) agentEvent()   {}
func (AgentEnded) agentEvent()     {}
func (JobFailed) agentEvent()      {}

// nobody is the Listener of a Plan or an Agent that was given none.
type nobody struct{}

func (nobody) Event(Event) {}
