package run

import (
	"context"
	"fmt"
	"io"

	"github.com/fathom-lab/fathom/internal/errkind"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
)

// PrepareListener hears about a prepare: Preparing once connected, then the rows of
// each table as they load (from the loading goroutines).
type PrepareListener interface {
	Preparing(workload, target string)
	Progress(table string, done, total int64)
}

// Prepare drops the workload's tables on the target and loads them again, laid out
// as layout asks (nil: the defaults). Its marker
// (workload.MarkerTable) is written before the tables are dropped and removed when
// they are loaded, so that a run on a prepare killed part-way says so. Cancelling ctx
// stops it (an Interrupted error: the tables are incomplete).
func Prepare(ctx context.Context, t Target, name string, params workload.Params, layout *workload.Layout, l PrepareListener) error {
	_, wl, err := OpenWorkload(name, params)
	if err != nil {
		return err
	}
	tgt, err := t.Open()
	if err != nil {
		return err
	}
	defer tgt.Close()
	if layout != nil && !layout.IsZero() {
		lw, ok := wl.(workload.Layouter)
		if !ok {
			return errkind.Usagef("workload %s takes no table options (--fillfactor, --auto-inc …): leave them out", wl.Name())
		}
		d := tgt.Dialect()
		if err := lw.SetLayout(*layout, &d); err != nil {
			return errkind.Usagef("%v", err)
		}
	}
	if err := useTarget(wl, tgt); err != nil {
		return err
	}
	if p, ok := wl.(workload.Printer); ok {
		if o, ok := l.(interface{ Output() io.Writer }); ok {
			p.SetOutput(o.Output())
		}
	}
	conn, err := Connect(context.WithoutCancel(ctx), tgt)
	if err != nil {
		return err
	}
	conn.Close()
	l.Preparing(wl.Name(), tgt.Redacted())
	_, keep := wl.(workload.KeepsExisting)
	err = workload.Prepare(ctx, tgt, wl, !keep, l.Progress)
	if ctx.Err() != nil {
		return errkind.WithKind(errkind.Interrupted, fmt.Errorf("prepare interrupted: the tables are incomplete; run prepare again"))
	}
	if err != nil {
		return errkind.WithKind(errkind.Failed, fmt.Errorf("prepare failed: %v", err))
	}
	return nil
}

// useTarget gives the workload its target when it needs one (a sysbench script);
// a target it cannot use is a usage mistake.
func useTarget(wl workload.Workload, tgt target.Target) error {
	if u, ok := wl.(workload.TargetUser); ok {
		if err := u.UseTarget(tgt); err != nil {
			return errkind.Usagef("%v", err)
		}
	}
	return nil
}
