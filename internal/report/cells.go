package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/fathom-lab/fathom/internal/analyze"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/store"
)

// cellRow is one line of an experiment's cell table.
type cellRow struct {
	Cell     int           `json:"cell"`
	Key      string        `json:"key"`
	Coords   []store.Coord `json:"coords"`
	Runs     int           `json:"runs"` // completed repetitions
	Planned  int           `json:"planned"`
	Failed   int           `json:"failed"` // failed, or aborted by a threshold
	TPS      float64       `json:"tps_median"`
	TPSMin   float64       `json:"tps_min"`
	TPSMax   float64       `json:"tps_max"`
	P95      float64       `json:"p95_ms_median"`
	P99      float64       `json:"p99_ms_median"`
	Errors   int64         `json:"errors"`
	RunIDs   []int64       `json:"run_ids"`
	Settings []string      `json:"-"`
	// Open loop (runs at a rate): medians of late starts and dropped transactions in
	// percent of those scheduled, and of the service time's p99.
	OpenLoop bool    `json:"open_loop,omitempty"`
	LatePct  float64 `json:"late_pct_median,omitempty"`
	DropPct  float64 `json:"dropped_pct_median,omitempty"`
	SvcP99   float64 `json:"service_p99_ms_median,omitempty"`
	// Judge is the transaction type or group the figures count ("" all).
	Judge string `json:"judge,omitempty"`
}

// experimentRows are the cells of an experiment with their figures, and its slots.
func experimentRows(ctx context.Context, st store.Store, exp *store.Experiment) ([]*cellRow, []store.ExperimentSlot, error) {
	cells, err := st.ExperimentCells(ctx, exp.ID)
	if err != nil {
		return nil, nil, err
	}
	slots, err := st.ExperimentSlots(ctx, exp.ID)
	if err != nil {
		return nil, nil, err
	}
	rows := make([]*cellRow, len(cells))
	for i, c := range cells {
		rows[i] = &cellRow{Cell: c.Cell, Key: c.Key, Coords: c.Coords}
	}
	type vals struct{ tps, p95, p99, late, drop, svc []float64 }
	v := make([]vals, len(cells))
	var runs []*store.Run
	var runCell []int
	for _, sl := range slots {
		if sl.Cell >= len(rows) {
			continue
		}
		r := rows[sl.Cell]
		r.Planned++
		if sl.Status == "failed" || sl.Status == "aborted" {
			r.Failed++
		}
		if sl.Status != "complete" || sl.RunID == 0 {
			continue
		}
		run, err := st.Run(ctx, sl.RunID)
		if err != nil {
			return nil, nil, err
		}
		var s measure.Summary
		if len(run.Summary) == 0 || json.Unmarshal(run.Summary, &s) != nil {
			continue
		}
		r.Runs++
		r.RunIDs = append(r.RunIDs, sl.RunID)
		r.Errors += s.Errors
		r.OpenLoop = r.OpenLoop || run.Rate > 0
		runs, runCell = append(runs, run), append(runCell, sl.Cell)
	}
	// The figures come from the stored intervals, as the report computes them, so
	// that a judge by a client group has exact percentiles.
	data, err := LoadRuns(ctx, st, runs, 16)
	if err != nil {
		return nil, nil, err
	}
	if err := SetJudge(data, exp.Judge); err != nil {
		return nil, nil, err
	}
	for i, d := range data {
		c := runCell[i]
		rows[c].Judge = exp.Judge
		v[c].tps = append(v[c].tps, metricOf(d, metricTPS))
		v[c].p95 = append(v[c].p95, metricOf(d, metricP95))
		v[c].p99 = append(v[c].p99, metricOf(d, metricP99))
		if d.Run.Rate > 0 {
			v[c].late = append(v[c].late, metricOf(d, metricLate))
			v[c].drop = append(v[c].drop, metricOf(d, metricDropped))
			v[c].svc = append(v[c].svc, metricOf(d, metricSvcP99))
		}
	}
	for i, r := range rows {
		if len(v[i].tps) == 0 {
			continue
		}
		r.TPS, r.P95, r.P99 = analyze.Median(v[i].tps), analyze.Median(v[i].p95), analyze.Median(v[i].p99)
		r.TPSMin, r.TPSMax = v[i].tps[0], v[i].tps[0]
		for _, t := range v[i].tps {
			r.TPSMin, r.TPSMax = min(r.TPSMin, t), max(r.TPSMax, t)
		}
		if r.OpenLoop {
			r.LatePct, r.DropPct, r.SvcP99 = analyze.Median(v[i].late), analyze.Median(v[i].drop), analyze.Median(v[i].svc)
		}
	}
	baselineOrder(exp.Axes, rows)
	return rows, slots, nil
}

// baselineOrder puts the cell rows in the order the report's charts draw the cells:
// on each axis the baseline (the plan's, else the first value listed) first, then the
// values as the plan lists them; the first row is the baselines' cell.
func baselineOrder(axes []store.ExperimentAxis, rows []*cellRow) {
	rank := map[string]map[string]int{}
	for _, a := range axes {
		m := map[string]int{}
		for i, v := range a.Values {
			m[v] = i + 1
		}
		if _, ok := m[a.Baseline]; ok {
			m[a.Baseline] = 0
		}
		rank[a.Name] = m
	}
	sort.SliceStable(rows, func(i, j int) bool {
		for k := range rows[i].Coords {
			if k >= len(rows[j].Coords) {
				break
			}
			a, b := rank[rows[i].Coords[k].Axis][rows[i].Coords[k].Value], rank[rows[j].Coords[k].Axis][rows[j].Coords[k].Value]
			if a != b {
				return a < b
			}
		}
		return rows[i].Cell < rows[j].Cell
	})
}

// writeExperimentTable prints the cell table: axis values, repetitions done, median
// TPS (with the range over repetitions), median p95 and p99, errors.
func writeExperimentTable(ctx context.Context, w io.Writer, st store.Store, exp *store.Experiment) error {
	rows, _, err := experimentRows(ctx, st, exp)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	var head []string
	for _, a := range exp.Axes {
		head = append(head, strings.ToUpper(a.Name))
	}
	if len(head) == 0 {
		head = []string{"CELL"}
	}
	open := false
	for _, r := range rows {
		open = open || r.OpenLoop
	}
	// Every cell ends with a tab, so that the last column is aligned and separated like
	// the others (a bare last cell sat against the one before: "01 failed").
	head = append(head, "RUNS", "TPS (MEDIAN)", "TPS RANGE", "P95 MS", "P99 MS", "ERRORS", "FAILED RUNS")
	if open {
		head = append(head, "LATE %", "DROPPED %", "SERVICE P99 MS")
	}
	if exp.Judge != "" {
		fmt.Fprintf(w, "judged by %s: throughput and latency count only its transactions\n", exp.Judge)
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, r := range rows {
		var cols []string
		for _, c := range r.Coords {
			cols = append(cols, c.Value)
		}
		if len(cols) == 0 {
			cols = []string{r.Key}
		}
		runs := fmt.Sprintf("%d/%d", r.Runs, r.Planned)
		tps, rng, p95, p99 := "-", "-", "-", "-"
		if r.Runs > 0 && !math.IsNaN(r.TPS) {
			tps = fmt.Sprintf("%.1f", r.TPS)
			rng = fmt.Sprintf("%.1f–%.1f", r.TPSMin, r.TPSMax)
			if !math.IsNaN(r.P95) && !math.IsNaN(r.P99) {
				p95, p99 = measure.FormatMS(r.P95), measure.FormatMS(r.P99)
			}
		}
		cols = append(cols, runs, tps, rng, p95, p99, fmt.Sprint(r.Errors), fmt.Sprint(r.Failed))
		if open {
			if r.OpenLoop && r.Runs > 0 && !math.IsNaN(r.LatePct) {
				cols = append(cols, fmt.Sprintf("%.2f", r.LatePct), fmt.Sprintf("%.2f", r.DropPct), measure.FormatMS(r.SvcP99))
			} else {
				cols = append(cols, "-", "-", "-")
			}
		}
		fmt.Fprintln(tw, strings.Join(cols, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	restarts, err := ExperimentRestarts(ctx, st, exp)
	if err != nil {
		return err
	}
	return writeRestartTable(w, exp, restarts)
}

// ExperimentJSON is what fathom show --json prints for an experiment.
func ExperimentJSON(ctx context.Context, st store.Store, exp *store.Experiment) (any, error) {
	rows, slots, err := experimentRows(ctx, st, exp)
	if err != nil {
		return nil, err
	}
	hooks, err := st.ExperimentHooks(ctx, exp.ID)
	if err != nil {
		return nil, err
	}
	restarts, err := ExperimentRestarts(ctx, st, exp)
	if err != nil {
		return nil, err
	}
	warnings, err := experimentWarnings(ctx, st, exp, slots)
	if err != nil {
		return nil, err
	}
	return struct {
		Experiment *store.Experiment      `json:"experiment"`
		Cells      []*cellRow             `json:"cells"`
		Restarts   []restartRow           `json:"restarts,omitempty"`
		Slots      []store.ExperimentSlot `json:"slots"`
		Hooks      []store.ExperimentHook `json:"hooks"`
		Warnings   []string               `json:"warnings"`
	}{exp, rows, restarts, slots, hooks, warnings}, nil
}

// experimentWarnings are the warnings its runs stored (a saturated client host, an
// interval the machine could not keep, an unfinished prepare …), each once per run
// with the run it came from: "run 12 (clients=8, repetition 2): …".
func experimentWarnings(ctx context.Context, st store.Store, exp *store.Experiment, slots []store.ExperimentSlot) ([]string, error) {
	cells, err := st.ExperimentCells(ctx, exp.ID)
	if err != nil {
		return nil, err
	}
	out := []string{}
	for _, sl := range slots {
		if sl.RunID == 0 {
			continue
		}
		r, err := st.Run(ctx, sl.RunID)
		if err != nil {
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			return nil, err
		}
		key := ""
		if sl.Cell < len(cells) {
			key = cells[sl.Cell].Key + ", "
		}
		ws := slices.Clone(r.Warnings) // about its conditions, from its start
		var sum measure.Summary
		if len(r.Summary) > 0 && json.Unmarshal(r.Summary, &sum) == nil {
			ws = append(ws, sum.Warnings...) // about its numbers, from its end
		}
		for _, w := range ws {
			out = append(out, fmt.Sprintf("run %d (%srepetition %d): %s", r.ID, key, sl.Repetition, w))
		}
	}
	return out, nil
}

// WriteExperiment prints an experiment as fathom show does: its record, the cell
// table, the runs that did not complete. status is its status as the caller sees it
// (a running one whose process is gone is interrupted).
func WriteExperiment(ctx context.Context, w io.Writer, st store.Store, exp *store.Experiment, status string) error {
	fmt.Fprintf(w, "experiment %d %q: %s\n", exp.ID, exp.Name, status)
	if exp.Description != "" {
		fmt.Fprintf(w, "  %s\n", exp.Description)
	}
	fmt.Fprintf(w, "  plan %s, %d repetitions, %s order, on %s\n", exp.PlanPath, exp.Repetitions, exp.Order, exp.Target)
	end := "running"
	if !exp.EndedAt.IsZero() {
		end = exp.EndedAt.Local().Format(time.DateTime)
	}
	fmt.Fprintf(w, "  started %s, ended %s; %d of %d runs complete, %d failed\n", exp.CreatedAt.Local().Format(time.DateTime), end, exp.Complete, exp.Slots, exp.Failed)
	if exp.Reason != "" {
		fmt.Fprintf(w, "  %s\n", exp.Reason)
	}
	fmt.Fprintln(w)
	if err := writeExperimentTable(ctx, w, st, exp); err != nil {
		return err
	}
	_, slots, err := experimentRows(ctx, st, exp)
	if err != nil {
		return err
	}
	cells, _ := st.ExperimentCells(ctx, exp.ID)
	var bad []string
	for _, sl := range slots {
		if sl.Status != "failed" && sl.Status != "interrupted" && sl.Status != "running" && sl.Status != "aborted" {
			continue
		}
		key := ""
		if sl.Cell < len(cells) {
			key = cells[sl.Cell].Key
		}
		reason := strings.SplitN(sl.Reason, "\n", 2)[0]
		bad = append(bad, fmt.Sprintf("  run %d (%s, repetition %d): %s: %s", sl.Seq+1, key, sl.Repetition, sl.Status, reason))
	}
	if len(bad) > 0 {
		fmt.Fprintf(w, "\nruns that did not complete (full reasons: --json):\n%s\n", strings.Join(bad, "\n"))
	}
	if ws, err := experimentWarnings(ctx, st, exp, slots); err != nil {
		return err
	} else if len(ws) > 0 {
		fmt.Fprintf(w, "\nwarnings:\n  %s\n", strings.Join(ws, "\n  "))
	}
	fmt.Fprintf(w, "\nruns: `fathom runs --label experiment=%s`; charts: `fathom report exp:%d`\n", exp.Name, exp.ID)
	return nil
}

// ExperimentStatus tells a running experiment whose process is gone apart: the store
// reads it as interrupted with the reason store.ProcessGone, as it does runs.
func ExperimentStatus(e *store.Experiment) string {
	if e.Gone {
		return e.Status + " (" + e.Reason + ")"
	}
	return e.Status
}

// WriteExperiments prints the list of fathom experiments.
func WriteExperiments(w io.Writer, exps []store.Experiment) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tCREATED\tSTATUS\tRUNS\tFAILED\tTARGET")
	for _, e := range exps {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d/%d\t%d\t%s\n", e.ID, e.Name, e.CreatedAt.Local().Format(time.DateTime),
			ExperimentStatus(&e), e.Complete, e.Slots, e.Failed, e.Target)
	}
	return tw.Flush()
}

// WriteExperimentEnd prints what fathom experiment prints when an execution ends: the
// counts, the cell table, where to look next.
func WriteExperimentEnd(ctx context.Context, w io.Writer, st store.Store, id int64, status string, elapsed time.Duration) error {
	exp, err := st.Experiment(ctx, id)
	if err != nil {
		return nil // nothing to add to the error the execution returned
	}
	fmt.Fprintf(w, "\nexperiment %d %q %s: %d of %d runs complete, %d failed, in %s\n", exp.ID, exp.Name, status,
		exp.Complete, exp.Slots, exp.Failed, elapsed.Round(time.Second))
	err = writeExperimentTable(ctx, w, st, exp)
	fmt.Fprintf(w, "\nmore: `fathom experiments %d`, `fathom report exp:%d`\n", exp.ID, exp.ID)
	return err
}
