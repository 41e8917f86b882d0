package run

import (
	"context"
	"time"

	"github.com/fathom-lab/fathom/internal/errkind"
	"github.com/fathom-lab/fathom/internal/runner"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
)

// StatusPartial is a run some of whose clients stopped reporting (an agent died or
// lost the store): what the others measured is kept and the reason says who and when.
const StatusPartial = "partial"

// Clients run the workload and deliver its intervals: this process's runner, or
// clients on other machines (Options.Remote).
type Clients interface {
	Clients() int
	Tuning() string
	Start() time.Time
	OnCut(func(index int))
	Run(ctx context.Context, sink runner.Sink) runner.Result
	Close()
}

// Remote starts the clients elsewhere once the workload is set up on tgt (the target
// is opened and checked here, as for a local run); st is the run's open store.
type Remote func(ctx context.Context, st store.Store, tgt target.Target, wl workload.Workload, cfg runner.Config) (Clients, error)

// Recorded is an optional ability of remote Clients: what they add to the run's
// options (who ran it, with what share) and the run's id once it is recorded.
type Recorded interface {
	RunOptions() map[string]string
	Recorded(runID int64)
}

// LoadWorkload opens the workload the options name (a built-in, a file or pgbench
// scripts): what an agent on another machine runs.
func (o Options) LoadWorkload() (workload.Workload, error) { return o.openWorkload() }

// clients starts this process's runner, or the remote clients.
func (o *Options) clients(ctx context.Context, st store.Store, tgt target.Target, wl workload.Workload, cfg runner.Config) (Clients, error) {
	if o.Remote != nil {
		if o.TxnLog != nil {
			return nil, errkind.Usagef("a transaction log (-l) is written by the process that runs the clients: leave it out with agents")
		}
		return o.Remote(ctx, st, tgt, wl, cfg)
	}
	return runner.Connect(ctx, tgt, wl, cfg)
}
