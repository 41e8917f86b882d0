package run

import (
	"context"
	"fmt"
	"maps"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
)

// Keys of the run's options that record how the run was driven (pgbench's -n and -C,
// and the protocol its statements went in).
const (
	OptionPreRun        = "pre_run"
	OptionConnectPerTxn = "connect_per_transaction"
	OptionQueryMode     = "query_mode"
)

// queryMode is the protocol a run's statements go in, by pgbench's names, as recorded
// with the run (default prepared; pgbench's scripts get simple from the front end).
// On PostgreSQL a built-in workload's statements carry parameters, so -M simple sends
// them as unnamed statements: pgbench's extended, which is recorded, with a note.
func queryMode(kind, mode string, scripts bool) (recorded, note string) {
	if mode == "" {
		mode = "prepared"
	}
	if mode == "simple" && !scripts && kind == "postgres" {
		return "extended", "-M simple: a built-in workload on PostgreSQL sends its statements unnamed with parameters, which is pgbench's -M extended (recorded as such); the simple protocol is for pgbench scripts (-f, -b)"
	}
	return mode, ""
}

// preRun tidies the workload's tables before the run as pgbench does (unless o's
// NoVacuum, pgbench -n; with VacuumAll, -v, pgbench_accounts too) and says what was
// done, for the run's options. A failure is returned as a warning: pgbench, too,
// carries on.
func preRun(ctx context.Context, o *Options, wl workload.Workload, conn target.Conn, d *target.Dialect) (string, error) {
	pr, ok := wl.(workload.PreRunner)
	if !ok {
		return "", nil
	}
	if o.NoVacuum {
		return "skipped (-n)", nil
	}
	done, err := pr.PreRun(ctx, conn, d, o.VacuumAll)
	if err != nil {
		_ = conn.Rollback(ctx)
		if done != "" {
			done += "; "
		}
		return done + "failed: " + err.Error(), fmt.Errorf("pre-run (as pgbench's, which goes on too): %v; the run went ahead; -n skips the pre-run", err)
	}
	return done, nil
}

// runOptions are the workload's options and how the run was driven.
func runOptions(wl workload.Workload, preRun, mode string, connectPerTxn bool) map[string]string {
	m := maps.Clone(wl.Options())
	if m == nil {
		m = map[string]string{}
	}
	m[OptionQueryMode] = mode
	if preRun != "" {
		m[OptionPreRun] = preRun
	}
	if connectPerTxn {
		m[OptionConnectPerTxn] = "on"
	}
	return m
}

// openLoop reports whether any client has an intended schedule (a rate).
func openLoop(wl workload.Workload, rate float64) bool {
	if rate > 0 {
		return true
	}
	if g, ok := wl.(workload.Grouped); ok {
		for _, gr := range g.Groups() {
			if gr.Rate > 0 {
				return true
			}
		}
	}
	return false
}
