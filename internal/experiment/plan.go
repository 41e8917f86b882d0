package experiment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fathom-lab/fathom/internal/collect"
	"github.com/fathom-lab/fathom/internal/db"
	"github.com/fathom-lab/fathom/internal/errkind"
	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/plan"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
)

// ReadPlan reads and checks a plan, including its target DSN.
func ReadPlan(path string) (*plan.Plan, error) {
	p, err := plan.ReadFile(path)
	if err != nil {
		return nil, planError(err)
	}
	for _, dsn := range p.Targets() {
		t, err := db.Open(dsn, target.Config{})
		if err != nil {
			x := experimentRun{p: p}
			return nil, errkind.Usagef("%s:%d: target: %v", path, x.targetLine(dsn), target.RedactString(err.Error()))
		}
		t.Close()
	}
	if len(p.CollectOnly) > 0 && p.Kind() != "" {
		if _, _, err := collect.Select(db.CollectOf(p.Kind()), p.CollectOnly, nil); err != nil {
			return nil, errkind.Usagef("%s:%d: collect: %v", path, p.CollectLine, err)
		}
	}
	return p, nil
}

// Find resolves an experiment id or name (the newest with that name).
func Find(ctx context.Context, st store.Store, arg string) (*store.Experiment, error) {
	var exp *store.Experiment
	var err error
	if id, perr := strconv.ParseInt(strings.TrimPrefix(arg, "#"), 10, 64); perr == nil {
		exp, err = st.Experiment(ctx, id)
	} else {
		exp, err = st.ExperimentByName(ctx, arg)
	}
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, errkind.Usagef("%v: see `fathom experiments`", err)
		}
		return nil, errkind.WithKind(errkind.Failed, err)
	}
	return exp, nil
}

// clientsText says how many clients a cell runs: the workload's client groups when
// it has them (fanout's writers and readers), else the cell's clients.
func clientsText(p *plan.Plan, c *plan.Cell) string {
	if wl, err := p.OpenWorkload(c); err == nil {
		if g, ok := wl.(workload.Grouped); ok && len(g.Groups()) > 0 {
			var parts []string
			for _, grp := range g.Groups() {
				parts = append(parts, fmt.Sprintf("%d %s", grp.Clients, grp.Name))
			}
			return strings.Join(parts, " + ") + " (the workload's client groups)"
		}
	}
	if c.Clients == 1 {
		return "1 client"
	}
	return fmt.Sprintf("%d clients", c.Clients)
}

// WritePlanCheck prints what a valid plan would do (fathom experiment --check).
func WritePlanCheck(w io.Writer, p *plan.Plan, cells []*plan.Cell) {
	where := "target " + target.RedactString(p.Target)
	if p.TargetAxis != "" {
		var ts []string
		for _, t := range p.Targets() {
			if r := target.RedactString(t); !slices.Contains(ts, r) {
				ts = append(ts, r)
			}
		}
		where = fmt.Sprintf("%d targets (axis %s): %s", len(ts), plan.ShortAxis(p.TargetAxis), strings.Join(ts, ", "))
	}
	if p.Managed() {
		v, _ := instance.Version(p.Instance.Kind, p.Instance.Version)
		where = fmt.Sprintf("throwaway %s %s instances", p.Instance.Kind, v)
	}
	fmt.Fprintf(w, "%s: ok: experiment %q, %d cells × %d repetitions = %d runs (%s) on %s\n",
		p.Path, p.Name, len(cells), p.Repetitions, len(cells)*p.Repetitions, p.Order, where)
	for _, warn := range p.Warnings() {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	var planned time.Duration
	unknown := false
	for i, c := range cells {
		length := c.Duration.String()
		if c.Transactions > 0 {
			length = fmt.Sprintf("%d tx/client", c.Transactions)
			unknown = true
		}
		if c.Warmup > 0 {
			length += " after " + c.Warmup.String() + " warm-up"
		}
		extra := ""
		if c.Instances > 1 {
			extra = fmt.Sprintf(", %d instances", c.Instances)
		}
		var sets []string
		for _, kv := range c.Settings {
			sets = append(sets, kv.Name+"="+kv.Value)
		}
		if len(sets) > 0 {
			extra += "; settings " + strings.Join(sets, ", ")
		}
		var tab []string
		for _, kv := range c.Table {
			tab = append(tab, kv.Name+"="+kv.Value)
		}
		if len(tab) > 0 {
			extra += "; table " + strings.Join(tab, ", ")
		}
		for _, h := range p.Hooks.DuringRun {
			if h.Applies(c) {
				extra += fmt.Sprintf("; at %s: %s", h.At, h.Describe())
			}
		}
		fmt.Fprintf(w, "  cell %d: %s — %s, %s, %s%s\n", i+1, c.Key(), c.Workload, clientsText(p, c), length, extra)
		planned += c.Planned() * time.Duration(p.Repetitions)
	}
	if len(p.MeasureRestart) > 0 {
		var what []string
		for _, f := range p.MeasureRestart {
			what = append(what, restartTitle(f))
		}
		fmt.Fprintf(w, "after each run: the instance restarts from %s, each start timed until it answers\n", strings.Join(what, ", then "))
	}
	planned += time.Duration(max(len(cells)*p.Repetitions-1, 0)) * p.Cooldown
	more := ", plus preparation, restarts and hooks"
	if unknown {
		more = ", plus the runs by transaction count" + more
	}
	if planned == 0 && unknown {
		fmt.Fprintf(w, "planned run time: unknown (the runs are by transaction count)%s\n", strings.TrimPrefix(more, ", plus the runs by transaction count"))
	} else {
		fmt.Fprintf(w, "planned run time: %s%s\n", planned.Round(time.Second), more)
	}
	if !p.Managed() && len(cells) > 0 && len(cells[0].Settings) > 0 {
		fmt.Fprintln(w, "settings are checked against the server when the experiment starts")
	}
}
