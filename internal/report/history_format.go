package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// The history kinds' renderers join the formats here, so that the format files stay
// as they are: text, markdown-free JSON and CSV for a series and a list of series;
// text, JSON and JUnit for a regression check.
func init() {
	textFormat.Render[KindHistory] = method((*History).writeText)
	textFormat.Render[KindSeriesList] = method((*seriesList).writeText)
	textFormat.Render[KindRegressions] = method((*Regressions).writeText)
	jsonFormat.Render[KindHistory] = plain(func(w io.Writer, h *History) error { return writeJSON(w, h) })
	jsonFormat.Render[KindSeriesList] = plain(func(w io.Writer, l *seriesList) error { return writeJSON(w, l) })
	jsonFormat.Render[KindRegressions] = plain(func(w io.Writer, r *Regressions) error { return writeJSON(w, r) })
	csvFormat.Render[KindHistory] = method((*History).writeCSV)
	csvFormat.Render[KindSeriesList] = method((*seriesList).writeCSV)
	junitFormat.Render[KindRegressions] = method((*Regressions).writeJUnit)
}

// MarshalJSON writes a change with null for what has no value (an interval too few
// runs allow, a relative change from 0).
func (c HistoryChange) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Metric    string      `json:"metric"`
		Unit      string      `json:"unit"`
		RunID     int64       `json:"run_id"`
		PrevRunID int64       `json:"prev_run_id"`
		Index     int         `json:"index"`
		PValue    float64     `json:"p_value"`
		Before    jsonSummary `json:"before"`
		After     jsonSummary `json:"after"`
		Relative  jsonFloat   `json:"relative"`
		Worse     bool        `json:"worse"`
		Changed   []string    `json:"changed"`
		Nearby    []string    `json:"nearby"`
	}{c.Metric, c.Unit, c.RunID, c.PrevRunID, c.Index, c.PValue, toJSONSummary(c.Before), toJSONSummary(c.After),
		jsonFloat(c.Relative), c.Worse, c.Changed, nonNil(c.Nearby)})
}

const historyTime = "2006-01-02 15:04:05"

// detectionLine says how changes were looked for.
func (h *History) detectionLine() string {
	o := h.Options
	alpha, mag, perms, minSize := o.Alpha, o.MinMagnitude, o.Permutations, o.MinSize
	if alpha <= 0 {
		alpha = 0.01
	}
	if mag == 0 {
		mag = 0.05
	}
	if perms <= 0 {
		perms = 199
	}
	if minSize < 2 {
		minSize = 3
	}
	magText := fmt.Sprintf("%g%%", mag*100)
	if mag < 0 {
		magText = "none"
	}
	return fmt.Sprintf("changes looked for in %s by E-Divisive Means: false-positive level %g per test, %d permutations, minimum change %s, at least %d runs a side",
		strings.Join(h.Metrics, ", "), alpha, perms, magText, minSize)
}

// writeText writes the series as a table, one run a line, with its changes marked
// (▲ better, ▼ worse) and explained below.
func (h *History) writeText(w io.Writer) error {
	fmt.Fprintf(w, "Series %s: %s\n", h.ID, h.Title)
	if len(h.Points) == 0 {
		fmt.Fprintf(w, "no complete runs (%d not complete)\n", h.NotComplete)
		return nil
	}
	first, last := h.Points[0], h.Points[len(h.Points)-1]
	fmt.Fprintf(w, "%d complete runs, %s – %s UTC", len(h.Points), first.StartedAt.UTC().Format(historyTime), last.StartedAt.UTC().Format(historyTime))
	if h.NotComplete > 0 {
		fmt.Fprintf(w, " (%d more not complete: left out)", h.NotComplete)
	}
	fmt.Fprintf(w, "\n%s\n\n", h.detectionLine())
	marks := map[int64][]string{}
	for _, c := range h.Changes {
		m := "▲ " + c.Metric
		if c.Worse {
			m = "▼ " + c.Metric
		}
		marks[c.RunID] = append(marks[c.RunID], m)
	}
	var table bytes.Buffer
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := "run\tstarted (UTC)\t"
	for _, m := range historyMetrics {
		header += m.Name + " " + m.Unit + "\t"
	}
	fmt.Fprintln(tw, header+" \t")
	for _, p := range h.Points {
		line := strconv.FormatInt(p.RunID, 10) + "\t" + p.StartedAt.UTC().Format(historyTime) + "\t"
		for _, m := range historyMetrics {
			line += fmtValue(p.Values[m.Name]) + "\t"
		}
		mark := ""
		if ms := marks[p.RunID]; len(ms) > 0 {
			mark = " change: " + strings.Join(ms, ", ")
		}
		fmt.Fprintln(tw, line+mark+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, line := range strings.SplitAfter(table.String(), "\n") {
		if line != "" {
			fmt.Fprintln(w, strings.TrimRight(line, " \n"))
		}
	}
	if len(h.Changes) == 0 {
		_, err := fmt.Fprintf(w, "\nNo changes found.\n")
		return err
	}
	fmt.Fprintf(w, "\nChanges (median before → after, %g%% intervals):\n", 100*confidenceOf(h))
	for _, c := range h.Changes {
		fmt.Fprintf(w, "  at run %d (after run %d): %s\n", c.RunID, c.PrevRunID, changeLine(c))
		fmt.Fprintf(w, "    %s\n", explainLine(c))
	}
	return nil
}

func confidenceOf(h *History) float64 {
	for _, c := range h.Changes {
		if c.Before.Confidence > 0 {
			return c.Before.Confidence
		}
	}
	return 0.95
}

// writeCSV writes one row per run: its id, start, the figures, and the changes that
// start at it.
func (h *History) writeCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	header := []string{"series", "run_id", "started_at"}
	for _, m := range historyMetrics {
		header = append(header, m.Name)
	}
	if err := cw.Write(append(header, "changes")); err != nil {
		return err
	}
	marks := map[int64][]string{}
	for _, c := range h.Changes {
		marks[c.RunID] = append(marks[c.RunID], fmt.Sprintf("%s %s", c.Metric, fmtRelative(c.Relative)))
	}
	for _, p := range h.Points {
		row := []string{h.ID, strconv.FormatInt(p.RunID, 10), p.StartedAt.UTC().Format(time.RFC3339Nano)}
		for _, m := range historyMetrics {
			row = append(row, strconv.FormatFloat(p.Values[m.Name], 'f', -1, 64))
		}
		if err := cw.Write(append(row, strings.Join(marks[p.RunID], "; "))); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// writeText lists the series, the most recently run first.
func (l *seriesList) writeText(w io.Writer) error {
	if len(l.Series) == 0 {
		_, err := fmt.Fprintf(w, "no runs in %s\n", l.Store)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SERIES\tRUNS\tFIRST\tLAST\tLAST STARTED (UTC)\tWHAT")
	for _, s := range l.Series {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\n", s.ID, s.Runs, s.FirstRun, s.LastRun, s.LastStart.UTC().Format(historyTime), s.Title)
	}
	return tw.Flush()
}

// writeCSV writes one row per series.
func (l *seriesList) writeCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"series", "runs", "first_run", "last_run", "last_started_at", "title"})
	for _, s := range l.Series {
		_ = cw.Write([]string{s.ID, strconv.Itoa(s.Runs), strconv.FormatInt(s.FirstRun, 10), strconv.FormatInt(s.LastRun, 10),
			s.LastStart.UTC().Format(time.RFC3339Nano), s.Title})
	}
	cw.Flush()
	return cw.Error()
}

// writeText is the answer for a CI log: REGRESSED or OK, each regression with its
// figures and what changed, and what the check cannot see.
func (r *Regressions) writeText(w io.Writer) error {
	h := r.History
	verdict := "OK: no regression"
	if r.Regressed() {
		verdict = fmt.Sprintf("REGRESSED: %d change(s) for the worse", len(r.Found))
	}
	fmt.Fprintf(w, "%s in the newest %d run(s) %s of series %s (%s)\n", verdict, len(r.NewestRuns), runIDList(r.NewestRuns), h.ID, h.Title)
	fmt.Fprintf(w, "%d complete runs; %s\n", len(h.Points), h.detectionLine())
	for _, c := range r.Found {
		fmt.Fprintf(w, "  ▼ at run %d (after run %d): %s\n    %s\n", c.RunID, c.PrevRunID, changeLine(c), explainLine(c))
	}
	for _, c := range r.Better {
		fmt.Fprintf(w, "  ▲ at run %d (after run %d): %s\n    %s\n", c.RunID, c.PrevRunID, changeLine(c), explainLine(c))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	return nil
}

func runIDList(ids []int64) string {
	if len(ids) == 0 {
		return "(none)"
	}
	var s []string
	for _, id := range ids {
		s = append(s, strconv.FormatInt(id, 10))
	}
	return "(" + strings.Join(s, ", ") + ")"
}

// writeJUnit is one suite for the series, one test case per metric watched: it fails
// when that metric changed for the worse in the newest runs.
func (r *Regressions) writeJUnit(w io.Writer) error {
	h := r.History
	su := junitSuite{Name: "fathom history " + h.ID + ": " + h.Title, Time: junitTime(0),
		Properties: []junitProperty{{"series", h.ID}, {"runs", strconv.Itoa(len(h.Points))}, {"newest_runs", runIDList(r.NewestRuns)}}}
	for _, m := range h.Metrics {
		c := junitCase{Name: m + " did not regress", Classname: "fathom.series." + h.ID}
		var bad []string
		for _, f := range r.Found {
			if f.Metric == m {
				bad = append(bad, fmt.Sprintf("at run %d (after run %d): %s; %s", f.RunID, f.PrevRunID, changeLine(f), explainLine(f)))
			}
		}
		if len(bad) > 0 {
			c.Failure = &junitResult{Message: m + " regressed: " + bad[0], Type: "regression", Text: strings.Join(bad, "\n")}
		}
		su.Cases = append(su.Cases, c)
	}
	return writeJUnit(w, []junitSuite{su})
}
