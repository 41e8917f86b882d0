// Package report renders stored runs for people: summaries, tables and exports.
package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/store"
)

// WriteSummary prints a run's summary as text.
func WriteSummary(w io.Writer, run *store.Run, s *measure.Summary) {
	mode := "closed loop"
	if run.Rate > 0 {
		mode = fmt.Sprintf("open loop at %g tx/s", run.Rate)
	}
	fmt.Fprintf(w, "\nrun %d %s: %s on %s (%s), %d clients, %s, %.1fs measured",
		s.RunID, s.Status, run.Workload, run.Target, run.ServerVersion, run.Clients, mode, s.Seconds)
	if run.Warmup > 0 {
		fmt.Fprintf(w, " after %s warm-up (excluded)", run.Warmup)
	}
	fmt.Fprintln(w)
	if s.Reason != "" {
		fmt.Fprintf(w, "reason: %s\n", s.Reason)
	}
	fmt.Fprintf(w, "transactions: %d (%.2f per second)  statements: %d (%.2f per second)\n", s.Transactions, s.TPS, s.Statements, s.QPS)
	fmt.Fprintf(w, "errors: %d  failed transactions: %d  retries: %d  reconnects: %d", s.Errors, s.Failed, s.Retries, s.Reconnects)
	if run.Rate > 0 {
		fmt.Fprintf(w, "  late: %d  dropped: %d", s.Late, s.Dropped)
	}
	fmt.Fprintln(w)
	if len(s.ErrorsBy) > 0 {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(s.ErrorsBy)) {
			parts = append(parts, fmt.Sprintf("%s %d", k, s.ErrorsBy[k]))
		}
		fmt.Fprintf(w, "errors by class: %s\n", strings.Join(parts, ", "))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	what := "latency (ms)"
	if run.Rate > 0 {
		what = "response time (ms, from intended start)"
	}
	fmt.Fprintf(tw, "%s\ttps\tp50\tp90\tp95\tp99\tp99.9\tmax\tmean\t\n", what)
	row := func(name string, t measure.TypeSummary, l measure.Latency) {
		fmt.Fprintf(tw, "%s\t%.2f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", name, t.TPS, ms(l.P50), ms(l.P90), ms(l.P95), ms(l.P99), ms(l.P999), ms(l.Max), ms(l.Mean))
	}
	names := slices.Sorted(maps.Keys(s.ByTxn))
	row("all", s.TypeSummary, s.Latency)
	// Types that never ran (a mix's zero weights) are named once below, not given a
	// row of dashes.
	var idle []string
	if len(names) > 1 {
		for _, n := range names {
			t := s.ByTxn[n]
			if t.Transactions == 0 && t.Failed == 0 && t.Errors == 0 && t.Dropped == 0 {
				idle = append(idle, n)
				continue
			}
			row(n, t, t.Latency)
		}
	}
	if s.Service != nil {
		fmt.Fprintf(tw, "service time (ms, from actual start)\t\t\t\t\t\t\t\t\t\n")
		row("all", s.TypeSummary, *s.Service)
	}
	tw.Flush()
	if len(idle) > 0 {
		fmt.Fprintf(w, "not run: %s\n", strings.Join(idle, ", "))
	}
}

func ms(v float64) string {
	switch {
	case v == 0:
		return "-"
	case v < 10:
		return fmt.Sprintf("%.3f", v)
	case v < 1000:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.0f", v)
}
