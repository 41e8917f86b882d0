package cli

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/spf13/cobra"
)

func newPrepareCmd(env *Env) *cobra.Command {
	o := &targetOpts{}
	cmd := &cobra.Command{
		Use:   "prepare",
		Short: "Create the workload's tables and load its data (existing ones are dropped first)",
		Example: `  fathom prepare --workload tpcb --scale 10 --target postgres://postgres@127.0.0.1/bench
  fathom prepare --workload oltp_read_write --tables 8 --table-size 100000 --target mysql://root@127.0.0.1/sbtest`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return prepare(cmd.Context(), env, o)
		},
	}
	o.register(cmd.Flags(), env)
	return cmd
}

func prepare(ctx context.Context, env *Env, o *targetOpts) error {
	_, wl, err := o.openWorkload()
	if err != nil {
		return err
	}
	tgt, err := o.openTarget()
	if err != nil {
		return err
	}
	defer tgt.Close()
	conn, err := connect(ctx, tgt)
	if err != nil {
		return err
	}
	err = wl.Cleanup(ctx, conn)
	conn.Close()
	if err != nil {
		return withCode(ExitFailure, fmt.Errorf("dropping existing tables: %v", err))
	}
	ctx, stop := env.Interrupts(ctx)
	defer stop()
	start := env.Now()
	fmt.Fprintf(env.Stdout, "preparing %s on %s\n", wl.Name(), tgt.Redacted())
	pp := newProgressPrinter(env)
	err = wl.Prepare(ctx, tgt, pp.update)
	pp.finish()
	if ctx.Err() != nil {
		return withCode(ExitInterrupted, fmt.Errorf("prepare interrupted: the tables are incomplete; run prepare again"))
	}
	if err != nil {
		return withCode(ExitFailure, fmt.Errorf("prepare failed: %v", err))
	}
	fmt.Fprintf(env.Stdout, "prepared %s in %s\n", wl.Name(), env.Now().Sub(start).Round(time.Millisecond))
	return nil
}

// progressPrinter shows loading progress: a rewritten line on a terminal, a line per
// table (and every 10%) when piped.
type progressPrinter struct {
	env  *Env
	mu   sync.Mutex
	last map[string]int64 // last printed tenth per table
	t0   time.Time
}

func newProgressPrinter(env *Env) *progressPrinter {
	return &progressPrinter{env: env, last: map[string]int64{}, t0: env.Now()}
}

func (p *progressPrinter) update(table string, done, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.env.Terminal {
		if total > 0 {
			fmt.Fprintf(p.env.Stderr, "\r\033[K%s: %d of %d rows (%.0f%%)", table, done, total, 100*float64(done)/float64(total))
		} else {
			fmt.Fprintf(p.env.Stderr, "\r\033[K%s: %d rows", table, done)
		}
		return
	}
	tenth := int64(-1)
	if total > 0 {
		tenth = done * 10 / total
	}
	if prev, ok := p.last[table]; ok && prev == tenth && done != total {
		return
	}
	p.last[table] = tenth
	if total > 0 && (tenth > 0 || done == total) {
		fmt.Fprintf(p.env.Stdout, "  %s: %d of %d rows (%d%%) %s\n", table, done, total, done*100/total, p.env.Now().Sub(p.t0).Round(time.Millisecond))
	}
}

func (p *progressPrinter) finish() {
	if p.env.Terminal {
		fmt.Fprint(p.env.Stderr, "\r\033[K")
	}
}

func newCleanupCmd(env *Env) *cobra.Command {
	o := &targetOpts{}
	cmd := &cobra.Command{
		Use:   "cleanup",
		Short: "Drop the workload's tables",
		RunE: func(cmd *cobra.Command, args []string) error {
			_, wl, err := o.openWorkload()
			if err != nil {
				return err
			}
			tgt, err := o.openTarget()
			if err != nil {
				return err
			}
			defer tgt.Close()
			conn, err := connect(cmd.Context(), tgt)
			if err != nil {
				return err
			}
			defer conn.Close()
			if err := wl.Cleanup(cmd.Context(), conn); err != nil {
				return withCode(ExitFailure, fmt.Errorf("cleanup failed: %v", err))
			}
			fmt.Fprintf(env.Stdout, "dropped the tables of %s on %s\n", wl.Name(), tgt.Redacted())
			return nil
		},
	}
	o.register(cmd.Flags(), env)
	return cmd
}
