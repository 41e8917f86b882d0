package report

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/fathom-lab/fathom/internal/analyze"
	"github.com/fathom-lab/fathom/internal/store"
)

// restartRow is one cell's measured restarts from one file (a plan's measure_restart):
// medians over the cell's completed repetitions.
type restartRow struct {
	Cell      int           `json:"cell"`
	Key       string        `json:"key"`
	Coords    []store.Coord `json:"coords"`
	Format    string        `json:"format"` // rdb, aof, aof-plain
	N         int           `json:"restarts"`
	Seconds   float64       `json:"seconds_median"`
	Min       float64       `json:"seconds_min"`
	Max       float64       `json:"seconds_max"`
	FileBytes float64       `json:"file_bytes_median"`
	Keys      float64       `json:"keys_median"`
	Memory    float64       `json:"used_memory_median"`
	// PerGB is the median of each restart's seconds per GB (10^9 bytes) of the data set
	// in memory (used_memory after the restart).
	PerGB float64 `json:"seconds_per_gb_median"`
}

// ExperimentRestarts gathers the measured restarts of an experiment's completed slots
// (their latest attempt), by cell and format in the order measured.
func ExperimentRestarts(ctx context.Context, st store.Store, exp *store.Experiment) ([]restartRow, error) {
	hooks, err := st.ExperimentHooks(ctx, exp.ID)
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(hooks, func(h store.ExperimentHook) bool { return h.Phase == "restart" }) {
		return nil, nil
	}
	slots, err := st.ExperimentSlots(ctx, exp.ID)
	if err != nil {
		return nil, err
	}
	cells, err := st.ExperimentCells(ctx, exp.ID)
	if err != nil {
		return nil, err
	}
	bySeq := map[int]store.ExperimentSlot{}
	for _, s := range slots {
		bySeq[s.Seq] = s
	}
	type key struct {
		cell   int
		format string
	}
	var order []key
	facts := map[key][]store.RestartFacts{}
	for _, h := range hooks {
		sl, ok := bySeq[h.Seq]
		if h.Phase != "restart" || !h.OK || !ok || sl.Status != "complete" || h.Attempt != sl.Attempts {
			continue
		}
		var f store.RestartFacts
		if json.Unmarshal([]byte(h.Output), &f) != nil {
			continue
		}
		k := key{sl.Cell, h.Kind}
		if _, seen := facts[k]; !seen {
			order = append(order, k)
		}
		facts[k] = append(facts[k], f)
	}
	slices.SortStableFunc(order, func(a, b key) int { return a.cell - b.cell })
	var out []restartRow
	for _, k := range order {
		fs := facts[k]
		r := restartRow{Cell: k.cell, Format: k.format, N: len(fs)}
		if k.cell < len(cells) {
			r.Key, r.Coords = cells[k.cell].Key, cells[k.cell].Coords
		}
		var secs, files, keys, mem, perGB []float64
		for _, f := range fs {
			secs = append(secs, f.Seconds)
			files = append(files, float64(f.FileBytes))
			keys = append(keys, float64(f.Keys))
			mem = append(mem, float64(f.Memory))
			if f.Memory > 0 {
				perGB = append(perGB, f.Seconds/(float64(f.Memory)/1e9))
			}
		}
		r.Seconds, r.Min, r.Max = analyze.Median(secs), slices.Min(secs), slices.Max(secs)
		r.FileBytes, r.Keys, r.Memory = analyze.Median(files), analyze.Median(keys), analyze.Median(mem)
		if len(perGB) > 0 {
			r.PerGB = analyze.Median(perGB)
		}
		out = append(out, r)
	}
	return out, nil
}

// restartTitles name the restart formats for people.
var restartTitles = map[string]string{"rdb": "RDB", "aof": "AOF (RDB preamble)", "aof-plain": "AOF (commands only)"}

// writeRestartTable prints the measured restarts under the cell table.
func writeRestartTable(w io.Writer, exp *store.Experiment, rows []restartRow) error {
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nmeasured restarts after each run (start of redis-server until it answered PING; medians over repetitions):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	var axes []string
	for _, a := range exp.Axes {
		axes = append(axes, a.Name)
	}
	head := restartHead(axes)
	for i := range head {
		head[i] = strings.ToUpper(head[i])
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(restartCols(r), "\t")+"\t")
	}
	return tw.Flush()
}

// restartRow is a row's columns for people: the cell's values, then the figures.
func restartCols(r restartRow) []string {
	var cols []string
	for _, c := range r.Coords {
		cols = append(cols, c.Value)
	}
	if len(cols) == 0 {
		cols = []string{r.Key}
	}
	title := restartTitles[r.Format]
	if title == "" {
		title = r.Format
	}
	perGB := "-"
	if r.PerGB > 0 {
		perGB = fmt.Sprintf("%.1f", r.PerGB)
	}
	return append(cols, title, fmt.Sprint(r.N), fmt.Sprintf("%.3f", r.Seconds), fmt.Sprintf("%.3f–%.3f", r.Min, r.Max),
		fmt.Sprintf("%.1f", r.FileBytes/1e6), fmt.Sprintf("%.0f", r.Keys), fmt.Sprintf("%.1f", r.Memory/1e6), perGB)
}

// restartHead is the header of the restart table, after the axes' names.
func restartHead(axes []string) []string {
	if len(axes) == 0 {
		axes = []string{"cell"}
	}
	return append(axes, "from", "n", "seconds", "range", "file MB", "keys", "memory MB", "s per GB in memory")
}

// restartTable is the HTML report's restart table (nil without restarts).
func restartTable(rows []restartRow) *htmlTable {
	if len(rows) == 0 {
		return nil
	}
	var axes []string
	for _, c := range rows[0].Coords {
		axes = append(axes, c.Axis)
	}
	t := &htmlTable{Head: restartHead(axes)}
	for i := range t.Head {
		t.Numeric = append(t.Numeric, i >= len(axes)+1)
	}
	for _, r := range rows {
		t.Rows = append(t.Rows, restartCols(r))
	}
	return t
}

// writeRestartsCSV writes one row per cell and restart format.
func writeRestartsCSV(w io.Writer, rows []restartRow) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"cell", "key", "format", "restarts", "seconds_median", "seconds_min", "seconds_max", "file_bytes_median",
		"keys_median", "used_memory_median", "seconds_per_gb_median"})
	for _, r := range rows {
		_ = cw.Write([]string{fmt.Sprint(r.Cell), r.Key, r.Format, fmt.Sprint(r.N), fmtFloat(r.Seconds), fmtFloat(r.Min), fmtFloat(r.Max),
			fmtFloat(r.FileBytes), fmtFloat(r.Keys), fmtFloat(r.Memory), fmtFloat(r.PerGB)})
	}
	cw.Flush()
	return cw.Error()
}
