package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/fathom-lab/fathom/internal/errkind"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/store"
)

// LoadRun reads a run (an id, or last) and recomputes its summary from the stored intervals.
func LoadRun(ctx context.Context, st store.Store, arg string) (*store.Run, []*measure.Interval, *measure.Summary, error) {
	id, err := parseRunArg(ctx, st, arg)
	if err != nil {
		return nil, nil, nil, err
	}
	run, err := st.Run(ctx, id)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil, nil, errkind.Usagef("%v: see `fathom runs`", err)
		}
		return nil, nil, nil, errkind.WithKind(errkind.Failed, err)
	}
	ivs, err := st.Intervals(ctx, id)
	if err != nil {
		return nil, nil, nil, errkind.WithKind(errkind.Failed, err)
	}
	s := measure.Summarize(run.TxnTypes, ivs)
	s.RunID, s.Status, s.Reason = run.ID, run.Status, run.Reason
	s.Workload, s.Target, s.Clients, s.Rate = run.Workload, run.Target, run.Clients, run.Rate
	// Warnings are known only to the run that stored them (e.g. late intervals), and
	// so are the per-command latencies (-r), totalled over the measured intervals.
	var stored measure.Summary
	if len(run.Summary) > 0 && json.Unmarshal(run.Summary, &stored) == nil {
		s.Warnings = stored.Warnings
		s.PerCommand, s.PerCommandWindow = stored.PerCommand, stored.PerCommandWindow
	}
	if err := storedErrors(ctx, st, run, &s); err != nil {
		return nil, nil, nil, errkind.WithKind(errkind.Failed, err)
	}
	return run, ivs, &s, nil
}

// storedErrors fills s's error fields that only the run knew: its first errors from
// the store (kept as the run met them, so a run that never finished has them too),
// the clients aborted and the error-rate limit from its stored summary.
func storedErrors(ctx context.Context, st store.RunStore, run *store.Run, s *measure.Summary) error {
	var stored measure.Summary
	if len(run.Summary) > 0 && json.Unmarshal(run.Summary, &stored) == nil {
		s.ErrorsUnlisted, s.ClientsAborted, s.MaxErrorRate = stored.ErrorsUnlisted, stored.ClientsAborted, stored.MaxErrorRate
		s.Thresholds = stored.Thresholds // as checked at the run's end
	}
	errs, err := st.RunErrors(ctx, run.ID)
	if err != nil {
		return fmt.Errorf("run %d: %w", run.ID, err)
	}
	s.FirstErrors = errs
	return nil
}

// runStatus is a run's status with the reason when its process is gone.
func runStatus(r *store.Run) string {
	if r.Gone {
		return r.Status + " (" + r.Reason + ")"
	}
	return r.Status
}

// writeRuns prints the runs as fathom runs does, one line each.
func writeRuns(w io.Writer, runs []store.Run) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTARTED\tWORKLOAD\tTARGET\tCLIENTS\tLENGTH\tSTATUS\tTPS\tP95 MS\tLABELS")
	for _, r := range runs {
		var s measure.Summary
		tps, p95 := "-", "-"
		haveSummary := len(r.Summary) > 0 && json.Unmarshal(r.Summary, &s) == nil
		if haveSummary {
			tps = fmt.Sprintf("%.1f", s.TPS)
			p95 = fmt.Sprintf("%.3f", s.Latency.P95)
		}
		length := runLength(&r, haveSummary, s.Seconds)
		var ls []string
		for _, k := range slices.Sorted(maps.Keys(r.Labels)) {
			ls = append(ls, k+"="+r.Labels[k])
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.StartedAt.Local().Format(time.DateTime), r.Workload,
			r.Target, r.Clients, length, runStatus(&r), tps, p95, strings.Join(ls, ","))
	}
	tw.Flush()
}

// runLength is what the LENGTH column shows: the length asked for, or for a run that
// did not complete (interrupted, failed) the time it measured, marked against what was
// asked: "5.9s of 1m0s", so that a run cut short never passes for a full one.
func runLength(r *store.Run, haveSummary bool, measured float64) string {
	asked := r.Duration.String()
	if r.Transactions > 0 {
		asked = fmt.Sprintf("%d tx/client", r.Transactions)
	}
	if r.Status == "complete" || r.Status == "running" {
		return asked
	}
	if !haveSummary {
		return "? of " + asked
	}
	return measuredLength(measured) + " of " + asked
}

// measuredLength is a measured time in seconds as runs shows it: tenths below a
// minute, whole seconds above.
func measuredLength(sec float64) string {
	d := time.Duration(sec * float64(time.Second))
	if d < time.Minute {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// describeFilter says what a runs filter asked for.
func describeFilter(f store.RunFilter) string {
	var parts []string
	if f.Workload != "" {
		parts = append(parts, "--workload "+quoteArg(f.Workload))
	}
	if f.Status != "" {
		parts = append(parts, "--status "+quoteArg(f.Status))
	}
	for _, k := range slices.Sorted(maps.Keys(f.Labels)) {
		parts = append(parts, "--label "+quoteArg(k+"="+f.Labels[k]))
	}
	return strings.Join(parts, " ")
}

// quoteArg quotes s for a POSIX shell when it needs it.
func quoteArg(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`&;|<>()*?[]{}!#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// FillGoneSummaries gives runs whose process is gone, which have no stored summary,
// the summary of their finished intervals.
func FillGoneSummaries(ctx context.Context, st store.Store, runs []store.Run) {
	for i := range runs {
		if runs[i].Gone && len(runs[i].Summary) == 0 {
			if ivs, err := st.Intervals(ctx, runs[i].ID); err == nil && len(ivs) > 0 {
				s := measure.Summarize(runs[i].TxnTypes, ivs)
				runs[i].Summary, _ = json.Marshal(s)
			}
		}
	}
}
