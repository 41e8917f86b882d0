package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/fathom-lab/fathom/internal/errkind"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/target"
)

// intervalTxnRow is one transaction type (or "all") in one interval.
type intervalTxnRow struct {
	Interval   int              `json:"interval"`
	StartS     float64          `json:"start_s"`
	EndS       float64          `json:"end_s"`
	Warmup     bool             `json:"warmup"`
	Type       string           `json:"type"`
	TPS        float64          `json:"tps"`
	QPS        float64          `json:"qps"`
	OK         int64            `json:"ok"`
	Failed     int64            `json:"failed"`
	Errors     int64            `json:"errors"`
	ErrorsBy   map[string]int64 `json:"errors_by_class,omitempty"`
	Retries    int64            `json:"retries"`
	Reconnects int64            `json:"reconnects"`
	Late       int64            `json:"late"`
	Dropped    int64            `json:"dropped"`
	Latency    measure.Latency  `json:"latency_ms"`
	Service    *measure.Latency `json:"service_ms,omitempty"`
}

// intervalRows flattens a run's intervals: per interval one "all" row, then one per
// transaction type when there are several.
func intervalRows(run *store.Run, ivs []*measure.Interval) []intervalTxnRow {
	var rows []intervalTxnRow
	for _, iv := range ivs {
		secs := iv.Seconds()
		mk := func(t *measure.TypeInterval, name string, reconnects int64) intervalTxnRow {
			r := intervalTxnRow{
				Interval: iv.Index, StartS: iv.Start.Seconds(), EndS: iv.End.Seconds(), Warmup: iv.Warmup, Type: name,
				OK: t.OK, Failed: t.Failed, Errors: t.ErrorTotal(), Retries: t.Retries, Reconnects: reconnects,
				Late: t.Late, Dropped: t.Dropped, Latency: measure.LatencyOf(t.Latency),
			}
			if secs > 0 {
				r.TPS = round2(float64(t.OK) / secs)
				r.QPS = round2(float64(t.Statements) / secs)
			}
			for i, v := range t.Errors {
				if v > 0 && target.Class(i) != target.ClassCanceled {
					if r.ErrorsBy == nil {
						r.ErrorsBy = map[string]int64{}
					}
					r.ErrorsBy[target.Class(i).String()] = v
				}
			}
			if hasCounts(t.Service) {
				l := measure.LatencyOf(t.Service)
				r.Service = &l
			}
			return r
		}
		all := iv.Total()
		rows = append(rows, mk(&all, "all", iv.Reconnects))
		if len(iv.Types) > 1 {
			for i := range iv.Types {
				rows = append(rows, mk(&iv.Types[i], iv.Types[i].Name, 0))
			}
		}
	}
	return rows
}

func hasCounts(h *hdr.Histogram) bool { return h != nil && h.TotalCount() > 0 }

func round2(v float64) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'f', 2, 64), 64)
	return f
}

var csvHeader = []string{"interval", "start_s", "end_s", "warmup", "type", "tps", "qps", "ok", "failed", "errors", "retries",
	"reconnects", "late", "dropped", "p50_ms", "p90_ms", "p95_ms", "p99_ms", "p999_ms", "max_ms", "mean_ms",
	"service_p50_ms", "service_p99_ms"}

// writeIntervalsCSV writes rows as CSV with a header.
func writeIntervalsCSV(w io.Writer, rows []intervalTxnRow) error {
	cw := csv.NewWriter(w)
	_ = cw.Write(csvHeader)
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	for _, r := range rows {
		sp50, sp99 := "", ""
		if r.Service != nil {
			sp50, sp99 = f(r.Service.P50), f(r.Service.P99)
		}
		_ = cw.Write([]string{strconv.Itoa(r.Interval), f(r.StartS), f(r.EndS), strconv.FormatBool(r.Warmup), r.Type,
			f(r.TPS), f(r.QPS), i(r.OK), i(r.Failed), i(r.Errors), i(r.Retries), i(r.Reconnects), i(r.Late), i(r.Dropped),
			f(r.Latency.P50), f(r.Latency.P90), f(r.Latency.P95), f(r.Latency.P99), f(r.Latency.P999), f(r.Latency.Max),
			f(r.Latency.Mean), sp50, sp99})
	}
	cw.Flush()
	return cw.Error()
}

// writeIntervalsJSON writes the run's identity and its rows as one JSON document.
func writeIntervalsJSON(w io.Writer, run *store.Run, rows []intervalTxnRow) error {
	if rows == nil {
		rows = []intervalTxnRow{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		RunID     int64            `json:"run_id"`
		Workload  string           `json:"workload"`
		Status    string           `json:"status"`
		IntervalS float64          `json:"interval_s"`
		Intervals []intervalTxnRow `json:"intervals"`
	}{run.ID, run.Workload, run.Status, run.Interval.Seconds(), rows})
}

// writeCommands writes a run's per-command latencies (-r) as CSV (one row a command,
// in milliseconds, the window they cover on every row) or JSON; a run without them
// is the user's mistake.
func writeCommands(w io.Writer, run *store.Run, sum *measure.Summary, format string) error {
	if len(sum.PerCommand) == 0 {
		return errkind.Usagef("run %d has no per-command latencies: they are kept for runs of pgbench scripts with -r", run.ID)
	}
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			RunID      int64                      `json:"run_id"`
			Window     string                     `json:"per_command_window"`
			PerCommand []measure.StatementLatency `json:"per_command"`
		}{run.ID, sum.PerCommandWindow, sum.PerCommand})
	}
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"transaction", "line", "command", "count", "mean_ms", "p50_ms", "p95_ms", "p99_ms", "max_ms", "window"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, c := range sum.PerCommand {
		l := c.Latency
		_ = cw.Write([]string{c.Txn, strconv.Itoa(c.Line), c.Text, strconv.FormatInt(c.Count, 10),
			f(l.Mean), f(l.P50), f(l.P95), f(l.P99), f(l.Max), sum.PerCommandWindow})
	}
	cw.Flush()
	return cw.Error()
}

// writeProvenance prints where a run's numbers come from.
func writeProvenance(w io.Writer, run *store.Run) {
	fmt.Fprintf(w, "run %d (%s)\n", run.ID, run.UUID)
	fmt.Fprintf(w, "  status:   %s", run.Status)
	if run.Reason != "" {
		fmt.Fprintf(w, " (%s)", run.Reason)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  started:  %s", run.StartedAt.Local().Format(time.RFC3339))
	if !run.EndedAt.IsZero() {
		fmt.Fprintf(w, ", ended %s", run.EndedAt.Local().Format(time.RFC3339))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  command:  %s\n", run.Command)
	fmt.Fprintf(w, "  tool:     fathom %s\n", run.ToolVersion)
	fmt.Fprintf(w, "  workload: %s", run.Workload)
	for _, k := range slices.Sorted(maps.Keys(run.Options)) {
		fmt.Fprintf(w, " %s=%s", k, run.Options[k])
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  seed:     %d\n", run.Seed)
	fmt.Fprintf(w, "  target:   %s (%s %s)\n", run.Target, run.TargetKind, run.ServerVersion)
	if len(run.Settings) > 0 {
		fmt.Fprint(w, "  settings:")
		for _, k := range slices.Sorted(maps.Keys(run.Settings)) {
			fmt.Fprintf(w, " %s=%s", k, run.Settings[k])
		}
		fmt.Fprintln(w)
	}
	h := run.Host
	fmt.Fprintf(w, "  host:     %s, %s, %d CPUs %s, %s, kernel %s, %s%s\n", h.Hostname, h.OS, h.CPUs, h.CPUModel,
		memoryText(h.MemoryBytes), orUnknownText(h.Kernel), h.GoVersion, pathsText(h))
	if len(run.Labels) > 0 {
		fmt.Fprint(w, "  labels:  ")
		for _, k := range slices.Sorted(maps.Keys(run.Labels)) {
			fmt.Fprintf(w, " %s=%s", k, run.Labels[k])
		}
		fmt.Fprintln(w)
	}
}
