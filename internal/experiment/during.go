package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/fathom-lab/fathom/internal/db"
	"github.com/fathom-lab/fathom/internal/plan"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/target"
)

// during fires the plan's during_run hooks at their offsets into one run, on the
// run's clock: Clock hears the run's start, each hook then waits for its own moment,
// so that a slow hook does not delay a later one.
type during struct {
	clock chan time.Time
	stop  chan struct{}
	wg    sync.WaitGroup
	mu    sync.Mutex
	errs  []error
	late  []error // hooks whose moment the run did not reach
}

// startDuring starts the slot's during_run hooks; nil when the plan has none.
func (x *experimentRun) startDuring(ctx context.Context, sl *store.ExperimentSlot, attempt int, servers []*plan.Server, env []string) *during {
	hooks := x.p.Hooks.DuringRun
	if !slices.ContainsFunc(hooks, func(h *plan.Hook) bool { return h.Applies(x.cells[sl.Cell]) }) {
		return nil
	}
	d := &during{clock: make(chan time.Time, 1), stop: make(chan struct{})}
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		var start time.Time
		select {
		case start = <-d.clock:
		case <-d.stop:
			return // the run never started: its failure says why
		case <-ctx.Done():
			return
		}
		for i, h := range hooks {
			if !h.Applies(x.cells[sl.Cell]) {
				continue
			}
			d.wg.Add(1)
			go func() {
				defer d.wg.Done()
				t := time.NewTimer(time.Until(start.Add(h.At)))
				defer t.Stop()
				select {
				case <-t.C:
					if err := x.runHook(ctx, plan.DuringRun, i+1, h, sl.Seq, attempt, servers, env, true, true, &start); err != nil {
						d.add(&d.errs, err)
					}
				case <-d.stop:
					ended := time.Since(start)
					msg := fmt.Sprintf("not run: the run ended %.3f s into it, before this hook's moment (at: %s)", ended.Seconds(), h.At)
					_ = x.st.AddHook(context.WithoutCancel(ctx), x.exp.ID, store.ExperimentHook{Seq: sl.Seq, Attempt: attempt, Phase: plan.DuringRun,
						Index: i + 1, Kind: h.Kind(), Command: target.MaskSecrets(h.Describe()), ExitCode: -1, Error: msg, Started: x.now()})
					d.add(&d.late, fmt.Errorf("%s hook %d (%s): %s", plan.DuringRun, i+1, h.Describe(), msg))
				case <-ctx.Done():
				}
			}()
		}
	}()
	return d
}

func (d *during) add(list *[]error, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	*list = append(*list, err)
}

// onClock is the run's OnClock.
func (d *during) onClock(start time.Time) {
	select {
	case d.clock <- start:
	default:
	}
}

// finish waits for the hooks that are running and cancels those whose moment has not
// come. It returns the first failure, and for a run that completed, a hook it never
// reached (a run by transaction count, shorter than the plan thought).
func (d *during) finish(completed bool) error {
	if d == nil {
		return nil
	}
	close(d.stop)
	d.wg.Wait()
	if len(d.errs) > 0 {
		return d.errs[0]
	}
	if completed && len(d.late) > 0 {
		return d.late[0]
	}
	return nil
}

// clockOf is what a run hands its clock to (nil without during_run hooks).
func (d *during) clockOf() func(time.Time) {
	if d == nil {
		return nil
	}
	return d.onClock
}

// measureRestarts restarts each instance of the slot from each file the plan's
// measure_restart lists, timing each start, and records every one.
func (x *experimentRun) measureRestarts(ctx context.Context, sl *store.ExperimentSlot, attempt int, servers []*plan.Server) error {
	if len(x.p.MeasureRestart) == 0 {
		return nil
	}
	for _, srv := range servers {
		if srv.Inst == nil {
			continue
		}
		rt, ok := db.ForInstance(srv.Inst.Kind).(db.RestartTimer)
		if !ok {
			return fmt.Errorf("measure_restart: %s instances cannot be restarted from a chosen file", srv.Inst.Kind)
		}
		began := x.now()
		facts, err := rt.MeasureRestarts(ctx, srv.Inst, x.p.MeasureRestart)
		for k, f := range facts {
			out, _ := json.Marshal(f)
			el := time.Duration(f.Seconds * float64(time.Second))
			if err := x.st.AddHook(context.WithoutCancel(ctx), x.exp.ID, store.ExperimentHook{Seq: sl.Seq, Attempt: attempt, Phase: plan.Restart,
				Index: k + 1, Kind: f.Format, Command: "restart from " + restartTitle(f.Format), Server: srv.Redacted(), OK: true,
				Output: string(out), Started: began, Elapsed: el}); err != nil {
				x.warn("recording a restart: %v", err)
			}
			x.emit(Restarted{Server: srv.Name(), Format: restartTitle(f.Format), Seconds: f.Seconds, FileBytes: f.FileBytes, Keys: f.Keys, Memory: f.Memory})
		}
		if err != nil {
			msg := target.RedactString(err.Error())
			_ = x.st.AddHook(context.WithoutCancel(ctx), x.exp.ID, store.ExperimentHook{Seq: sl.Seq, Attempt: attempt, Phase: plan.Restart,
				Index: len(facts) + 1, Kind: x.p.MeasureRestart[min(len(facts), len(x.p.MeasureRestart)-1)], Command: "measured restart",
				Server: srv.Redacted(), ExitCode: -1, Error: msg, Started: began})
			return errors.New(srv.Name() + ": measured " + msg)
		}
	}
	return nil
}

// restartTitle names a restart format for people.
func restartTitle(f string) string {
	switch f {
	case plan.RestartAOF:
		return "AOF (RDB preamble)"
	case plan.RestartAOFPlain:
		return "AOF (commands only)"
	}
	return "RDB"
}
