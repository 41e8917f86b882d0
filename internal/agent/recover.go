package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/fathom-lab/fathom/internal/errkind"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/store"
)

// Recovered is what closing a job whose coordinator is gone did.
type Recovered struct {
	Job      string
	RunID    int64 // 0: the coordinator died before the run was recorded
	Merged   int   // intervals the run had from its coordinator
	Added    int   // agent intervals merged into the run afterwards
	Lost     []int // agents marked lost while closing
	Reason   string
	Silently time.Duration // how long the coordinator had been silent
}

// recoverRun closes the open job name whose coordinator is gone (silent for longer than
// stale, and its run no longer held by a live writer): it asks the agents to stop,
// waits up to stale for them to end (marking the silent ones lost), merges every
// agent interval the coordinator left unmerged into the run, exactly as the
// coordinator would have, and ends the run interrupted, saying so, and the job, so
// that the name can be used again. A job whose coordinator is alive is refused.
func recoverRun(ctx context.Context, st store.Store, name string, stale time.Duration) (*Recovered, error) {
	as, err := agentStore(st)
	if err != nil {
		return nil, err
	}
	j, err := as.AgentJob(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errkind.Usagef("no run made by agents is named %q in this store", name)
	}
	if err != nil {
		return nil, err
	}
	if j.State == store.JobFinished {
		return nil, errkind.Usagef("the run %q has ended (%s): nothing to recover", name, j.Reason)
	}
	var r *store.Run
	if j.RunID != 0 {
		if r, err = st.Run(ctx, j.RunID); err != nil {
			return nil, err
		}
	}
	if j.CoordinatorAge < stale || (r != nil && r.Status == "running" && !r.Gone) {
		return nil, errkind.Usagef("the coordinator of %q is alive (it showed so %s ago): stop it with Ctrl-C, or wait for it to end",
			name, j.CoordinatorAge.Round(time.Millisecond))
	}
	rec := &Recovered{Job: name, RunID: j.RunID, Silently: j.CoordinatorAge}
	why := fmt.Sprintf("the coordinator is gone (no sign of it for %s)", j.CoordinatorAge.Round(time.Second))
	if err := as.SetAgentJobState(ctx, j.ID, store.JobStopping, why); err != nil {
		return nil, err
	}
	// The agents see the job stopping at their next beat, or stop by themselves when the
	// coordinator has been silent for their --lost-after.
	var members []store.AgentMember
	deadline := time.Now().Add(stale)
	for {
		if members, err = as.AgentMembers(ctx, j.ID); err != nil {
			return nil, err
		}
		running := 0
		for i := range members {
			if !ended(members[i].State) {
				running++
			}
		}
		if running == 0 || time.Now().After(deadline) {
			break
		}
		if !sleepUntil(ctx, time.Now().Add(200*time.Millisecond)) {
			return nil, ctx.Err()
		}
	}
	for _, m := range members {
		if !ended(m.State) {
			if err := as.MarkAgentLost(ctx, j.ID, m.Index, "still running when its job was closed: "+why); err != nil {
				return nil, err
			}
			rec.Lost = append(rec.Lost, m.Index)
		}
	}
	rec.Reason = why
	if r != nil {
		if err := mergeOrphans(ctx, st, as, j, r, rec); err != nil {
			return nil, err
		}
	}
	if err := as.SetAgentJobState(ctx, j.ID, store.JobFinished, "closed: "+rec.Reason); err != nil {
		return nil, err
	}
	return rec, nil
}

// mergeOrphans merges the agent intervals past those the run holds, in the order and
// with the alignment the coordinator's merge gives them (align over every stored
// interval, replayed from the first: the run's own intervals are the first merged
// ones), and ends the run interrupted with its summary over every interval.
func mergeOrphans(ctx context.Context, st store.Store, as store.AgentStore, j *store.AgentJob, r *store.Run, rec *Recovered) error {
	spec, err := decodeSpec(j)
	if err != nil {
		return err
	}
	have, err := st.Intervals(ctx, r.ID)
	if err != nil {
		return err
	}
	rec.Merged = len(have)
	ivs, err := as.AgentIntervals(ctx, j.ID, 0, spec.Types)
	if err != nil {
		return err
	}
	queues := map[int][]*measure.Interval{}
	for _, a := range ivs {
		queues[a.Agent] = append(queues[a.Agent], a.Interval)
	}
	live := map[int]bool{} // every agent has ended: align takes what there is
	for k := 0; ; k++ {
		take, ok := align(queues, live, spec.Interval)
		if !ok {
			break
		}
		iv, _ := combine(k, spec.Types, queues, take)
		if k < len(have) {
			continue // merged by the coordinator
		}
		if err := st.AddInterval(ctx, r.ID, iv); err != nil {
			return err
		}
		have = append(have, iv)
		rec.Added++
	}
	rec.Reason += fmt.Sprintf("; closed afterwards: %d intervals from its coordinator, %d agent intervals merged after it died", rec.Merged, rec.Added)
	if len(rec.Lost) > 0 {
		rec.Reason += fmt.Sprintf(", agents %s still running were marked lost", joinInts(rec.Lost))
	}
	totals := measure.NewTotals(r.TxnTypes)
	end := r.StartedAt
	for _, iv := range have {
		totals.Add(iv)
		end = r.StartedAt.Add(iv.End)
	}
	sum := totals.Summary()
	sum.RunID, sum.Status, sum.Reason = r.ID, "interrupted", rec.Reason
	sum.Workload, sum.Target, sum.Clients, sum.Rate = r.Workload, r.Target, r.Clients, r.Rate
	js, _ := json.Marshal(sum)
	return st.FinishRun(ctx, r.ID, "interrupted", rec.Reason, end, js)
}
