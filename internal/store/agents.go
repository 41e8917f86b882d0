package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/fathom-lab/fathom/internal/measure"
)

// Agent job states: a coordinator creates a job "waiting" for its agents, starts it,
// may ask the agents to stop, and finishes it.
const (
	JobWaiting  = "waiting"
	JobStarted  = "started"
	JobStopping = "stopping"
	JobFinished = "finished"
)

// Agent states within a job.
const (
	AgentRegistered = "registered"
	AgentRunning    = "running"
	AgentDone       = "done"   // its run ended and every interval is stored
	AgentFailed     = "failed" // it stopped on an error it reported
	AgentLost       = "lost"   // the coordinator stopped hearing from it
)

// AgentJob is one distributed run: a named piece of work that N agents join by index.
// Times are on the store's clock.
type AgentJob struct {
	ID      int64
	Name    string
	Agents  int
	Spec    json.RawMessage // what every agent runs (no password)
	State   string
	RunID   int64     // 0 until the run is recorded
	StartAt time.Time // the instant every agent starts measuring; zero until started
	Reason  string
	// CoordinatorAge is how long ago the coordinator last showed it is alive.
	CoordinatorAge time.Duration
}

// AgentMember is one agent of a job: who it is, its share and how it is doing.
type AgentMember struct {
	Index   int
	Host    string
	Version string
	PID     int
	// Offset is the store's clock minus the agent's, measured when it registered (the
	// store's reading taken halfway through the round trip RTT).
	Offset  time.Duration
	RTT     time.Duration
	Clients int
	Rate    float64
	Seed    uint64
	State   string
	Reason  string
	// Age is how long ago (store clock) the agent last beat; Ended when it stopped.
	Age   time.Duration
	Ended time.Time
	// Intervals is how many intervals it has stored.
	Intervals int
}

// AgentInterval is one agent's interval.
type AgentInterval struct {
	Agent    int
	Interval *measure.Interval
}

// ErrLost is wrapped when an agent the coordinator has given up on beats: it should
// stop, since its intervals are no longer merged.
var ErrLost = errors.New("the coordinator marked this agent lost")

// ErrTaken is wrapped when an agent asks for an index another agent holds, or joins
// a job that no longer takes agents.
var ErrTaken = errors.New("taken")

// AgentStore is an optional ability of a store (found by type assertion): the
// coordination of agents on several machines. Only a store every machine can reach
// has it (PostgreSQL, not a SQLite file).
type AgentStore interface {
	// Clock reads the store's clock.
	Clock(ctx context.Context) (time.Time, error)
	// CreateAgentJob records a waiting job and sets its ID; a job of that name that
	// is not finished wraps ErrTaken, unless its Spec is byte for byte j's: then it is
	// this creation tried again (its first try committed, the acknowledgement lost),
	// and its ID is set. A coordinator's spec carries a random token for that.
	CreateAgentJob(ctx context.Context, j *AgentJob) error
	// AgentJob returns the newest job of that name (an error wrapping ErrNotFound if
	// none); WaitingAgentJobs the jobs still taking agents, oldest first.
	AgentJob(ctx context.Context, name string) (*AgentJob, error)
	WaitingAgentJobs(ctx context.Context) ([]AgentJob, error)
	// JoinAgentJob registers m in a waiting job at m.Index, or at the lowest free
	// index when m.Index < 0 (and sets it). A held index or a job that no longer
	// waits wraps ErrTaken.
	JoinAgentJob(ctx context.Context, jobID int64, m *AgentMember) error
	AgentMembers(ctx context.Context, jobID int64) ([]AgentMember, error)
	// StartAgentJob links the run and sets the start instant lead from now on the
	// store's clock, which it returns.
	StartAgentJob(ctx context.Context, jobID, runID int64, lead time.Duration) (time.Time, error)
	// SetAgentJobState changes the job's state (and beats for the coordinator).
	SetAgentJobState(ctx context.Context, jobID int64, state, reason string) error
	// AgentBeat records that agent index is alive in state (a reason with failed),
	// and returns the job as it is now; an agent marked lost gets an error wrapping
	// ErrLost.
	AgentBeat(ctx context.Context, jobID int64, index int, state, reason string) (*AgentJob, error)
	// MarkAgentLost marks an agent lost unless it already ended.
	MarkAgentLost(ctx context.Context, jobID int64, index int, reason string) error
	AddAgentInterval(ctx context.Context, jobID int64, index int, iv *measure.Interval) error
	// AgentIntervals returns the agents' intervals with an index of at least from, by
	// index then agent; types names the run's transaction types in order.
	AgentIntervals(ctx context.Context, jobID int64, from int, types []string) ([]AgentInterval, error)
}

// wireType is one transaction type of an agent's interval as stored: the counts and
// the histograms in measure.EncodeV2's encoding.
type wireType struct {
	Name string `json:"name"`
	measure.Counts
	Errors        []int64 `json:"errors"`
	Latency       []byte  `json:"latency"`
	Service       []byte  `json:"service,omitempty"`
	FailedLatency []byte  `json:"failed_latency,omitempty"`
}

// EncodeAgentTypes encodes an interval's types for an agent's interval row.
func EncodeAgentTypes(iv *measure.Interval) []byte {
	w := make([]wireType, len(iv.Types))
	for i := range iv.Types {
		t := &iv.Types[i]
		w[i] = wireType{Name: t.Name, Counts: t.Counts, Errors: t.Errors[:],
			Latency: measure.EncodeV2(t.Latency), Service: measure.EncodeV2(t.Service), FailedLatency: measure.EncodeV2(t.FailedLatency)}
	}
	b, _ := json.Marshal(w)
	return b
}

// DecodeAgentTypes fills iv's types (made by measure.NewInterval with the run's
// types) from EncodeAgentTypes's bytes; a type the run does not have is an error.
func DecodeAgentTypes(b []byte, iv *measure.Interval) error {
	var w []wireType
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	for i := range w {
		t := findType(iv, w[i].Name)
		if t == nil {
			return fmt.Errorf("transaction type %q is not one of the run's", w[i].Name)
		}
		t.Counts = w[i].Counts
		copy(t.Errors[:], w[i].Errors)
		var err error
		if t.Latency, err = measure.Decode(w[i].Latency); err != nil {
			return err
		}
		if len(w[i].Service) > 0 {
			if t.Service, err = measure.Decode(w[i].Service); err != nil {
				return err
			}
		}
		if len(w[i].FailedLatency) > 0 {
			if t.FailedLatency, err = measure.Decode(w[i].FailedLatency); err != nil {
				return err
			}
		}
	}
	return nil
}

func findType(iv *measure.Interval, name string) *measure.TypeInterval {
	for i := range iv.Types {
		if iv.Types[i].Name == name {
			return &iv.Types[i]
		}
	}
	return nil
}
