// Package report renders stored runs for people: summaries, tables and exports.
package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

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
	for _, m := range s.Warnings {
		fmt.Fprintf(w, "warning: %s\n", m)
	}
	fmt.Fprintf(w, "transactions: %d (%.2f per second)  statements: %d (%.2f per second)\n", s.Transactions, s.TPS, s.Statements, s.QPS)
	if s.TPM > 0 {
		fmt.Fprintf(w, "NOPM: %.0f (committed new-orders per minute)  TPM: %.0f (transactions completed per minute, client count)\n", s.NOPM, s.TPM)
		if s.ServerTPM > 0 {
			fmt.Fprintf(w, "server TPM: %.0f (%s, every session's, as HammerDB reads it)\n", s.ServerTPM, s.ServerTPMSource)
		}
	}
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
	writeErrors(w, run, s)
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
	writeStatements(w, s.PerCommand, s.PerCommandWindow)
}

// writeStatements lists each script command's latency (pgbench's -r), by script.
func writeStatements(w io.Writer, st []measure.StatementLatency, window string) {
	if len(st) == 0 {
		return
	}
	if window != "" {
		fmt.Fprintf(w, "\nper-command latencies cover %s\n", window)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	txn := ""
	for _, c := range st {
		if c.Txn != txn {
			txn = c.Txn
			fmt.Fprintf(tw, "\nper-command latency (ms) of %s:\n  line\tcount\tmean\tp50\tp99\tmax\tcommand\n", txn)
		}
		fmt.Fprintf(tw, "  %d\t%d\t%s\t%s\t%s\t%s\t%s\n", c.Line, c.Count, ms(c.Latency.Mean), ms(c.Latency.P50), ms(c.Latency.P99), ms(c.Latency.Max), c.Text)
	}
	tw.Flush()
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

// writeErrors lists the run's first distinct errors with their counts, the clients
// that aborted and the error rate against its maximum.
func writeErrors(w io.Writer, run *store.Run, s *measure.Summary) {
	if s.ClientsAborted > 0 {
		fmt.Fprintf(w, "clients aborted: %d of %d%s\n", s.ClientsAborted, run.Clients, othersWentOn(s.ClientsAborted, run.Clients))
	}
	if s.MaxErrorRate != nil {
		fmt.Fprintf(w, "error rate: %s%% of transactions failed (maximum %s%%)\n", fmtPct(s.ErrorRate), fmtPct(*s.MaxErrorRate))
	}
	writeThresholds(w, s)
	if len(s.FirstErrors) == 0 {
		return
	}
	fmt.Fprintf(w, "first errors (distinct by class, code and message; times counted in the measured intervals):\n")
	for i, e := range s.FirstErrors {
		fmt.Fprintf(w, "  %d. %s\n     %s\n", i+1, errorHeadline(e), errorSeenAt(e))
	}
	if s.ErrorsUnlisted > 0 {
		fmt.Fprintf(w, "  and %d more errors, none of these\n", s.ErrorsUnlisted)
	}
}

// errorHeadline is a distinct error's class, code and message in one line.
func errorHeadline(e measure.SeenError) string {
	h := e.Class
	if e.Code != "" {
		h += " " + e.Code
	}
	return h + ": " + e.Message
}

// errorSeenAt says how often, where, by whom and when a distinct error was met.
func errorSeenAt(e measure.SeenError) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s", e.Count, plural(e.Count, "time", "times"))
	if e.Warmup > 0 {
		fmt.Fprintf(&b, " (and %d in the warm-up)", e.Warmup)
	}
	fmt.Fprintf(&b, "; first by client %d at %s", e.Client, fmtAt(e.AtNs))
	switch {
	case e.Where != "":
		fmt.Fprintf(&b, " in %s", e.Where)
	case e.Txn != "":
		fmt.Fprintf(&b, " in %s", e.Txn)
	}
	if e.Aborted {
		b.WriteString("; it aborted its client")
	}
	return b.String()
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// fmtAt is a time from the run's start, to the millisecond.
func fmtAt(ns int64) string {
	return strconv.FormatFloat(float64(time.Duration(ns).Round(time.Millisecond))/1e9, 'f', -1, 64) + "s"
}

// fmtPct formats a percent without trailing zeros.
func fmtPct(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// errorHead is the header of a table of a run's first errors (ErrorRows).
var errorHead = []string{"#", "class", "code", "message", "times", "first met"}

// errorRows are a run's first distinct errors as table rows (errorHead), with a last
// row for the errors none of them is.
func errorRows(s *measure.Summary) [][]string {
	var rows [][]string
	for i, e := range s.FirstErrors {
		times := strconv.FormatInt(e.Count, 10)
		if e.Warmup > 0 {
			times += fmt.Sprintf(" (+%d in warm-up)", e.Warmup)
		}
		first := fmt.Sprintf("client %d at %s", e.Client, fmtAt(e.AtNs))
		switch {
		case e.Where != "":
			first += " in " + e.Where
		case e.Txn != "":
			first += " in " + e.Txn
		}
		if e.Aborted {
			first += "; it aborted its client"
		}
		code := e.Code
		if code == "" {
			code = "–"
		}
		rows = append(rows, []string{strconv.Itoa(i + 1), e.Class, code, e.Message, times, first})
	}
	if s.ErrorsUnlisted > 0 {
		rows = append(rows, []string{"", "", "", "other errors, none of these", strconv.FormatInt(s.ErrorsUnlisted, 10), ""})
	}
	return rows
}

// errorFacts are a run's aborted clients and error-rate limit as report facts.
func errorFacts(d *RunData) [][2]string {
	var f [][2]string
	s := &d.Summary
	if s.ClientsAborted > 0 {
		f = append(f, [2]string{"clients aborted", fmt.Sprintf("%d of %d%s", s.ClientsAborted, d.Run.Clients, othersWentOn(s.ClientsAborted, d.Run.Clients))})
	}
	if s.MaxErrorRate != nil {
		f = append(f, [2]string{"error rate", fmt.Sprintf("%s%% of transactions failed (maximum %s%%)", fmtPct(s.ErrorRate), fmtPct(*s.MaxErrorRate))})
	}
	return f
}

// writeErrorsMarkdown lists each run's first distinct errors for summary.md.
func (r *Report) writeErrorsMarkdown(w io.Writer) {
	head := false
	for _, d := range r.Runs {
		rows := errorRows(&d.Summary)
		facts := errorFacts(d)
		if len(rows) == 0 && len(facts) == 0 {
			continue
		}
		if !head {
			head = true
			fmt.Fprintf(w, "\n## Errors\n\nEach run's first distinct errors (by class, code and message), in the order the run first met them; times are counted in the measured intervals.\n")
		}
		fmt.Fprintf(w, "\n### Run %d\n\n", d.Run.ID)
		for _, kv := range facts {
			fmt.Fprintf(w, "- %s: %s\n", kv[0], mdEsc(kv[1]))
		}
		if len(facts) > 0 && len(rows) > 0 {
			fmt.Fprintln(w)
		}
		if len(rows) > 0 {
			fmt.Fprintf(w, "| # | class | code | message | times | first met |\n|---:|---|---|---|---:|---|\n")
			for _, row := range rows {
				for i := range row {
					row[i] = mdEsc(row[i])
				}
				fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
			}
		}
	}
}

// othersWentOn says what the clients that did not abort did: " (the others went on)"
// unless every client aborted.
func othersWentOn(aborted, clients int) string {
	if aborted < clients {
		return " (the others went on)"
	}
	return " (every client)"
}
