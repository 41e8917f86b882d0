package run

import (
	"context"
	"fmt"
	"maps"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
)

// Keys of the run's options that record how the run was driven (pgbench's -n and -C).
const (
	OptionPreRun        = "pre_run"
	OptionConnectPerTxn = "connect_per_transaction"
)

// preRun tidies the workload's tables before the run as pgbench does (unless skip,
// pgbench -n) and says what was done, for the run's options. A failure is returned
// as a warning: pgbench, too, carries on.
func preRun(ctx context.Context, skip bool, wl workload.Workload, conn target.Conn, d *target.Dialect) (string, error) {
	pr, ok := wl.(workload.PreRunner)
	if !ok {
		return "", nil
	}
	if skip {
		return "skipped (-n)", nil
	}
	done, err := pr.PreRun(ctx, conn, d)
	if err != nil {
		_ = conn.Rollback(ctx)
		return "failed: " + err.Error(), fmt.Errorf("the pre-run vacuum failed (the run went ahead, as pgbench's does): %v; -n skips it", err)
	}
	return done, nil
}

// runOptions are the workload's options and how the run was driven.
func runOptions(wl workload.Workload, preRun string, connectPerTxn bool) map[string]string {
	m := maps.Clone(wl.Options())
	if m == nil {
		m = map[string]string{}
	}
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
