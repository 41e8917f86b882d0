package durable

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/sample"
	"github.com/fathom-lab/fathom/internal/store"
)

// What a run writes as it goes: written now, or kept in order through an outage.

func (s *durableStore) AddInterval(ctx context.Context, runID int64, iv *measure.Interval) error {
	o := intervalOp(opInterval, s.o.Now(), iv)
	o.Run = runID
	return s.write(ctx, o, func(ctx context.Context) error { return s.Store.AddInterval(ctx, runID, iv) })
}

func (s *durableStore) AddRunWarning(ctx context.Context, runID int64, warning string) error {
	o := &op{Op: opWarning, At: s.o.Now(), Run: runID, Text: warning}
	return s.write(ctx, o, func(ctx context.Context) error { return s.Store.AddRunWarning(ctx, runID, warning) })
}

func (s *durableStore) SaveRunErrors(ctx context.Context, runID int64, errs []measure.SeenError) error {
	errs = append([]measure.SeenError(nil), errs...)
	o := &op{Op: opErrors, At: s.o.Now(), Run: runID, Errors: errs}
	return s.write(ctx, o, func(ctx context.Context) error { return s.Store.SaveRunErrors(ctx, runID, errs) })
}

// FinishRun waits until it and everything before it is written, or kept in the spool
// file past the bound.
func (s *durableStore) FinishRun(ctx context.Context, runID int64, status, reason string, endedAt time.Time, summary json.RawMessage) error {
	o := &op{Op: opFinish, At: s.o.Now(), Run: runID, Status: status, Reason: reason, EndedAt: endedAt, Summary: summary}
	s.mu.Lock()
	delete(s.open, runID)
	s.mu.Unlock()
	return s.writeWait(ctx, o, func(ctx context.Context) error {
		return s.Store.FinishRun(ctx, runID, status, reason, endedAt, summary)
	})
}

// The rest waits for what is kept and is tried again through an outage.

func (s *durableStore) CreateRun(ctx context.Context, r *store.Run) (int64, error) {
	id, err := get(s, ctx, func(ctx context.Context) (int64, error) { return s.Store.CreateRun(ctx, r) })
	if err == nil {
		s.mu.Lock()
		s.open[id] = true
		s.mu.Unlock()
	}
	return id, err
}

func (s *durableStore) MarkAbandoned(ctx context.Context, runID int64, reason string) error {
	return s.call(ctx, func(ctx context.Context) error { return s.Store.MarkAbandoned(ctx, runID, reason) })
}

func (s *durableStore) RunErrors(ctx context.Context, runID int64) ([]measure.SeenError, error) {
	return get(s, ctx, func(ctx context.Context) ([]measure.SeenError, error) { return s.Store.RunErrors(ctx, runID) })
}

func (s *durableStore) Runs(ctx context.Context, f store.RunFilter) ([]store.Run, error) {
	return get(s, ctx, func(ctx context.Context) ([]store.Run, error) { return s.Store.Runs(ctx, f) })
}

func (s *durableStore) Run(ctx context.Context, id int64) (*store.Run, error) {
	return get(s, ctx, func(ctx context.Context) (*store.Run, error) { return s.Store.Run(ctx, id) })
}

func (s *durableStore) LatestRunID(ctx context.Context) (int64, error) {
	return get(s, ctx, s.Store.LatestRunID)
}

func (s *durableStore) Intervals(ctx context.Context, runID int64) ([]*measure.Interval, error) {
	return get(s, ctx, func(ctx context.Context) ([]*measure.Interval, error) { return s.Store.Intervals(ctx, runID) })
}

func (s *durableStore) EncodedIntervals(ctx context.Context, run *store.Run) ([]store.EncodedInterval, error) {
	return get(s, ctx, func(ctx context.Context) ([]store.EncodedInterval, error) { return s.Store.EncodedIntervals(ctx, run) })
}

func (s *durableStore) HasSamples(ctx context.Context, runID int64) (bool, error) {
	return get(s, ctx, func(ctx context.Context) (bool, error) { return s.Store.HasSamples(ctx, runID) })
}

func (s *durableStore) SampleSource(ctx context.Context, runID int64) (*store.SampleSource, error) {
	return get(s, ctx, func(ctx context.Context) (*store.SampleSource, error) { return s.Store.SampleSource(ctx, runID) })
}

func (s *durableStore) Metrics(ctx context.Context, runID int64) ([]store.Metric, error) {
	return get(s, ctx, func(ctx context.Context) ([]store.Metric, error) { return s.Store.Metrics(ctx, runID) })
}

func (s *durableStore) MetricSeries(ctx context.Context, runID int64, names ...string) ([]store.MetricSeries, error) {
	return get(s, ctx, func(ctx context.Context) ([]store.MetricSeries, error) {
		return s.Store.MetricSeries(ctx, runID, names...)
	})
}

func (s *durableStore) Collectors(ctx context.Context, runID int64) ([]store.CollectorRun, error) {
	return get(s, ctx, func(ctx context.Context) ([]store.CollectorRun, error) { return s.Store.Collectors(ctx, runID) })
}

func (s *durableStore) SampleStatuses(ctx context.Context, runID int64) ([]store.SampleStatus, error) {
	return get(s, ctx, func(ctx context.Context) ([]store.SampleStatus, error) { return s.Store.SampleStatuses(ctx, runID) })
}

func (s *durableStore) Downsample(ctx context.Context, runID int64, now time.Duration, tiers []store.DownsampleTier) (int64, error) {
	return get(s, ctx, func(ctx context.Context) (int64, error) { return s.Store.Downsample(ctx, runID, now, tiers) })
}

func (s *durableStore) SaveStalls(ctx context.Context, runID int64, params any, stalls []store.Stall) error {
	return s.call(ctx, func(ctx context.Context) error { return s.Store.SaveStalls(ctx, runID, params, stalls) })
}

func (s *durableStore) Stalls(ctx context.Context, runID int64) (stalls []store.Stall, params json.RawMessage, analyzed bool, err error) {
	err = s.call(ctx, func(ctx context.Context) error {
		var err error
		stalls, params, analyzed, err = s.Store.Stalls(ctx, runID)
		return err
	})
	return
}

// Experiments: every write is tried again through an outage.

func (s *durableStore) CreateExperiment(ctx context.Context, e *store.Experiment, cells []store.ExperimentCell, slots []store.ExperimentSlot) (int64, error) {
	return get(s, ctx, func(ctx context.Context) (int64, error) { return s.Store.CreateExperiment(ctx, e, cells, slots) })
}

func (s *durableStore) ResumeExperiment(ctx context.Context, id int64, host string, pid int) error {
	return s.call(ctx, func(ctx context.Context) error { return s.Store.ResumeExperiment(ctx, id, host, pid) })
}

func (s *durableStore) FinishExperiment(ctx context.Context, id int64, status, reason string, endedAt time.Time) error {
	return s.call(ctx, func(ctx context.Context) error { return s.Store.FinishExperiment(ctx, id, status, reason, endedAt) })
}

func (s *durableStore) StartSlot(ctx context.Context, expID int64, seq int, at time.Time) (int, error) {
	return get(s, ctx, func(ctx context.Context) (int, error) { return s.Store.StartSlot(ctx, expID, seq, at) })
}

func (s *durableStore) SlotServer(ctx context.Context, expID int64, seq int, change string, effective json.RawMessage) error {
	return s.call(ctx, func(ctx context.Context) error { return s.Store.SlotServer(ctx, expID, seq, change, effective) })
}

func (s *durableStore) LinkRun(ctx context.Context, expID int64, seq, attempt, instance int, runID int64) error {
	return s.call(ctx, func(ctx context.Context) error { return s.Store.LinkRun(ctx, expID, seq, attempt, instance, runID) })
}

func (s *durableStore) FinishSlot(ctx context.Context, expID int64, seq int, status, reason string, at time.Time) error {
	return s.call(ctx, func(ctx context.Context) error { return s.Store.FinishSlot(ctx, expID, seq, status, reason, at) })
}

func (s *durableStore) AddHook(ctx context.Context, expID int64, h store.ExperimentHook) error {
	return s.call(ctx, func(ctx context.Context) error { return s.Store.AddHook(ctx, expID, h) })
}

func (s *durableStore) Experiments(ctx context.Context, limit int) ([]store.Experiment, error) {
	return get(s, ctx, func(ctx context.Context) ([]store.Experiment, error) { return s.Store.Experiments(ctx, limit) })
}

func (s *durableStore) Experiment(ctx context.Context, id int64) (*store.Experiment, error) {
	return get(s, ctx, func(ctx context.Context) (*store.Experiment, error) { return s.Store.Experiment(ctx, id) })
}

func (s *durableStore) ExperimentByName(ctx context.Context, name string) (*store.Experiment, error) {
	return get(s, ctx, func(ctx context.Context) (*store.Experiment, error) { return s.Store.ExperimentByName(ctx, name) })
}

func (s *durableStore) ExperimentCells(ctx context.Context, id int64) ([]store.ExperimentCell, error) {
	return get(s, ctx, func(ctx context.Context) ([]store.ExperimentCell, error) { return s.Store.ExperimentCells(ctx, id) })
}

func (s *durableStore) ExperimentSlots(ctx context.Context, id int64) ([]store.ExperimentSlot, error) {
	return get(s, ctx, func(ctx context.Context) ([]store.ExperimentSlot, error) { return s.Store.ExperimentSlots(ctx, id) })
}

func (s *durableStore) ExperimentRuns(ctx context.Context, id int64) ([]store.ExperimentRun, error) {
	return get(s, ctx, func(ctx context.Context) ([]store.ExperimentRun, error) { return s.Store.ExperimentRuns(ctx, id) })
}

func (s *durableStore) ExperimentHooks(ctx context.Context, id int64) ([]store.ExperimentHook, error) {
	return get(s, ctx, func(ctx context.Context) ([]store.ExperimentHook, error) { return s.Store.ExperimentHooks(ctx, id) })
}

// RunList keeps the inner store's quick list when it has one.
func (s *durableStore) RunList(ctx context.Context, f store.RunFilter) ([]store.Run, error) {
	if l, ok := s.Store.(store.RunLister); ok {
		return get(s, ctx, func(ctx context.Context) ([]store.Run, error) { return l.RunList(ctx, f) })
	}
	return s.Runs(ctx, f)
}

// Samples: kept in memory through an outage up to Options.Samples bytes; beyond it
// they are counted as skipped (with the sampler's own count) and said in the run's
// warning.

type sampleWriter struct {
	s        *durableStore
	w        store.SampleWriter
	run      int64
	dropped  int64 // samples not kept
	told     int64 // dropped samples already added to the stored count
	reported int64 // the sampler's own count of skipped samples
}

func (s *durableStore) SampleWriter(ctx context.Context, runID int64, origin time.Time, src *sample.Server, interval time.Duration) (store.SampleWriter, error) {
	w, err := get(s, ctx, func(ctx context.Context) (store.SampleWriter, error) {
		return s.Store.SampleWriter(ctx, runID, origin, src, interval)
	})
	if err != nil {
		return nil, err
	}
	sw := &sampleWriter{s: s, w: w, run: runID}
	s.mu.Lock()
	s.writers = append(s.writers, sw)
	s.mu.Unlock()
	return sw, nil
}

func (w *sampleWriter) SetOrigin(t time.Time) { w.w.SetOrigin(t) }

func (w *sampleWriter) Skipped(ctx context.Context, n int64) error {
	s := w.s
	s.mu.Lock()
	w.reported = n
	total := n + w.told
	s.mu.Unlock()
	return s.call(ctx, func(ctx context.Context) error { return w.w.Skipped(ctx, total) })
}

// Add never waits for an outage: the sampler keeps its schedule.
func (w *sampleWriter) Add(ctx context.Context, smp *sample.Sample) error {
	s := w.s
	s.mu.Lock()
	if s.gaveUp == nil && !s.down && len(s.queue) == 0 && (s.file == nil || s.file.left == 0) {
		s.mu.Unlock()
		err := s.attempt(ctx, func(ctx context.Context) error { return w.w.Add(ctx, smp) })
		if err == nil || !s.o.Unreachable(err) {
			return err
		}
		s.mu.Lock()
		s.goDown(err)
	}
	defer s.mu.Unlock()
	size := sampleSize(smp)
	if s.gaveUp != nil || s.smpBytes+size > s.o.Samples {
		w.dropped++
		return nil
	}
	s.smpBytes += size
	s.lateOf(w.run).samples++
	s.queue = append(s.queue, &entry{sample: smp, w: w, size: size})
	s.poke()
	return nil
}

// sampleSize is about how much memory a sample holds.
func sampleSize(smp *sample.Sample) int64 {
	n := int64(64)
	for i := range smp.Results {
		r := &smp.Results[i]
		n += 96 + int64(len(r.Collector)+len(r.Source)+len(r.Error))
	}
	for i := range smp.Readings {
		r := &smp.Readings[i]
		n += 96 + int64(len(r.Name)+len(r.Collector)+len(r.Unit))
	}
	return n
}

// Agents: their intervals are kept like a run's; the coordination is tried again.

var _ store.AgentStore = (*durableStore)(nil)

func (s *durableStore) agents() (store.AgentStore, error) {
	as, ok := s.Store.(store.AgentStore)
	if !ok {
		return nil, fmt.Errorf("%s does not coordinate agents", s.Path())
	}
	return as, nil
}

func (s *durableStore) AddAgentInterval(ctx context.Context, jobID int64, index int, iv *measure.Interval) error {
	as, err := s.agents()
	if err != nil {
		return err
	}
	o := intervalOp(opAgentInterval, s.o.Now(), iv)
	o.Job, o.Agent = jobID, index
	return s.write(ctx, o, func(ctx context.Context) error { return as.AddAgentInterval(ctx, jobID, index, iv) })
}

func agentCall[T any](s *durableStore, ctx context.Context, fn func(context.Context, store.AgentStore) (T, error)) (T, error) {
	as, err := s.agents()
	if err != nil {
		var zero T
		return zero, err
	}
	return get(s, ctx, func(ctx context.Context) (T, error) { return fn(ctx, as) })
}

func (s *durableStore) Clock(ctx context.Context) (time.Time, error) {
	// The clock is read directly: a reading that waited for a queue would be wrong.
	as, err := s.agents()
	if err != nil {
		return time.Time{}, err
	}
	return as.Clock(ctx)
}

func (s *durableStore) CreateAgentJob(ctx context.Context, j *store.AgentJob) error {
	_, err := agentCall(s, ctx, func(ctx context.Context, as store.AgentStore) (struct{}, error) {
		return struct{}{}, as.CreateAgentJob(ctx, j)
	})
	return err
}

func (s *durableStore) AgentJob(ctx context.Context, name string) (*store.AgentJob, error) {
	return agentCall(s, ctx, func(ctx context.Context, as store.AgentStore) (*store.AgentJob, error) { return as.AgentJob(ctx, name) })
}

func (s *durableStore) WaitingAgentJobs(ctx context.Context) ([]store.AgentJob, error) {
	return agentCall(s, ctx, func(ctx context.Context, as store.AgentStore) ([]store.AgentJob, error) {
		return as.WaitingAgentJobs(ctx)
	})
}

func (s *durableStore) JoinAgentJob(ctx context.Context, jobID int64, m *store.AgentMember) error {
	_, err := agentCall(s, ctx, func(ctx context.Context, as store.AgentStore) (struct{}, error) {
		return struct{}{}, as.JoinAgentJob(ctx, jobID, m)
	})
	return err
}

func (s *durableStore) AgentMembers(ctx context.Context, jobID int64) ([]store.AgentMember, error) {
	return agentCall(s, ctx, func(ctx context.Context, as store.AgentStore) ([]store.AgentMember, error) {
		return as.AgentMembers(ctx, jobID)
	})
}

func (s *durableStore) StartAgentJob(ctx context.Context, jobID, runID int64, lead time.Duration) (time.Time, error) {
	return agentCall(s, ctx, func(ctx context.Context, as store.AgentStore) (time.Time, error) {
		return as.StartAgentJob(ctx, jobID, runID, lead)
	})
}

func (s *durableStore) SetAgentJobState(ctx context.Context, jobID int64, state, reason string) error {
	_, err := agentCall(s, ctx, func(ctx context.Context, as store.AgentStore) (struct{}, error) {
		return struct{}{}, as.SetAgentJobState(ctx, jobID, state, reason)
	})
	return err
}

func (s *durableStore) AgentBeat(ctx context.Context, jobID int64, index int, state, reason string) (*store.AgentJob, error) {
	return agentCall(s, ctx, func(ctx context.Context, as store.AgentStore) (*store.AgentJob, error) {
		return as.AgentBeat(ctx, jobID, index, state, reason)
	})
}

func (s *durableStore) MarkAgentLost(ctx context.Context, jobID int64, index int, reason string) error {
	_, err := agentCall(s, ctx, func(ctx context.Context, as store.AgentStore) (struct{}, error) {
		return struct{}{}, as.MarkAgentLost(ctx, jobID, index, reason)
	})
	return err
}

func (s *durableStore) AgentIntervals(ctx context.Context, jobID int64, from int, types []string) ([]store.AgentInterval, error) {
	return agentCall(s, ctx, func(ctx context.Context, as store.AgentStore) ([]store.AgentInterval, error) {
		return as.AgentIntervals(ctx, jobID, from, types)
	})
}
