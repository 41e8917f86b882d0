package view

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/fathom-lab/fathom/internal/experiment"
	"github.com/fathom-lab/fathom/internal/measure"
)

// ExperimentLines is an experiment.Listener that prints an experiment's events as
// text: progress, each run's live lines (RunLines; several instances' prefixed with
// "[N] ") and the results on W; warnings, the runs' first errors and the agents'
// lines on Err; a run on one server's progress bar on Bar (a terminal; nil: none).
// Quiet leaves out the live interval lines and the bar. Events come one at a time.
type ExperimentLines struct {
	W, Err, Bar io.Writer
	Quiet       bool
	runs        map[int]*RunLines // by instance (0: a run on one server)
}

// Event prints e.
func (l *ExperimentLines) Event(e experiment.Event) {
	w := l.W
	switch e := e.(type) {
	case experiment.LiveStarted:
		l.liveStarted(e)
	case experiment.LiveInterval:
		if rl := l.runs[e.Instance]; rl != nil {
			rl.Interval(e.Interval)
		}
	case experiment.LiveError:
		if rl := l.runs[e.Instance]; rl != nil {
			rl.Error(e.Error)
		} else {
			fmt.Fprintf(l.Err, "fathom: error: %s\n", errorText(e.Error, false))
		}
	case experiment.LiveFinished:
		if rl := l.runs[e.Instance]; rl != nil {
			rl.Finished()
		}
	case experiment.Warning:
		fmt.Fprintf(l.Err, "fathom: warning: %s\n", e.Text)
	case experiment.GoesOn:
		fmt.Fprintf(l.Err, "fathom: run %d of %d (%s, repetition %d) failed by its transactions' errors; the experiment goes on (on_error applies to runs that could not go their course)\n",
			e.Seq, e.Runs, e.Cell, e.Repetition)
	case experiment.SlotNotRecorded:
		fmt.Fprintf(l.Err, "fathom: recording run %d in %s: %v\n", e.Seq, e.Store, e.Err)
	case experiment.AgentEvent:
		(&AgentLines{W: l.Err, Prefix: "fathom: "}).Event(e.Event)
	case experiment.NothingToResume:
		fmt.Fprintf(w, "experiment %d %q is complete: nothing to resume (see `fathom experiments %d`)\n", e.ID, e.Name, e.ID)
	case experiment.Started:
		writeStarted(w, e)
	case experiment.RunStarted:
		const width = 20
		filled := width * e.Done / max(e.Runs, 1)
		bar := "[" + strings.Repeat("=", filled) + strings.Repeat(" ", width-filled) + "]"
		fmt.Fprintf(w, "\n%s run %d/%d · %s · repetition %d/%d%s\n", bar, e.Seq, e.Runs, e.Cell, e.Repetition, e.Repetitions, timeLeft(e.Left))
	case experiment.Note:
		fmt.Fprintf(w, "%s\n", e.Text)
	case experiment.OSApplied:
		fmt.Fprintf(w, "  OS: %s\n", strings.Join(e.Settings, ", "))
	case experiment.SettingsApplied:
		writeSettingsApplied(w, e)
	case experiment.Prepared:
		writePrepared(w, e)
	case experiment.HookRan:
		writeHookRan(w, e)
	case experiment.Restarted:
		fmt.Fprintf(w, "  %s restarted from %s: answering after %.3f s (%.1f MB file, %d keys, %.1f MB in memory)\n",
			e.Server, e.Format, e.Seconds, float64(e.FileBytes)/1e6, e.Keys, float64(e.Memory)/1e6)
	case experiment.RunFinished:
		writeRunFinished(w, e)
	case experiment.RunDone:
		if e.Status == "failed" {
			fmt.Fprintf(w, "  ✗ failed: %s\n", indent(e.Reason, "    "))
		}
	}
}

// liveStarted makes the lines of a run that starts on instance e.Instance (0: the
// only server) and prints its first.
func (l *ExperimentLines) liveStarted(e experiment.LiveStarted) {
	w := l.W
	rl := &RunLines{W: w, Warn: l.Err}
	if e.Instance > 0 {
		rl.W = &prefixWriter{w: w, prefix: fmt.Sprintf("[%d] ", e.Instance)}
	} else {
		rl.Bar = l.Bar
	}
	if l.Quiet {
		rl.W, rl.Bar = io.Discard, nil
	}
	if l.runs == nil {
		l.runs = map[int]*RunLines{}
	}
	l.runs[e.Instance] = rl
	rl.Started(e.Run)
}

// writeStarted prints an experiment's (or its resumption's) plan.
func writeStarted(w io.Writer, e experiment.Started) {
	verb := "experiment"
	if e.Resumed {
		verb = "resuming experiment"
	}
	fmt.Fprintf(w, "%s %d %q: %d cells × %d repetitions = %d runs (%s), %d to run, on %s\n",
		verb, e.ID, e.Name, e.Cells, e.Repetitions, e.Runs, e.Order, e.ToRun, e.Where)
	for _, m := range e.Warnings {
		fmt.Fprintf(w, "warning: %s\n", m)
	}
	fmt.Fprintf(w, "results in %s; if interrupted, continue with `fathom experiment --resume %d`\n", e.Store, e.ID)
}

// writeSettingsApplied prints a server's settings change and the values in effect
// (nothing when nothing changed and no value was read back).
func writeSettingsApplied(w io.Writer, e experiment.SettingsApplied) {
	line := "  " + e.Server + ": " + e.Change
	if len(e.Effective) > 0 {
		var parts []string
		for _, ef := range e.Effective {
			parts = append(parts, ef.Name+"="+ef.Value)
		}
		line += "; in effect: " + strings.Join(parts, ", ")
	}
	if e.Changed || len(e.Effective) > 0 {
		fmt.Fprintf(w, "%s\n", line)
	}
}

// writePrepared prints that a workload's tables were prepared, or were there.
func writePrepared(w io.Writer, e experiment.Prepared) {
	if e.Already {
		fmt.Fprintf(w, "  %s: the tables of %s are there (prepare: auto)\n", e.Server, e.Workload)
	} else {
		fmt.Fprintf(w, "  %s: prepared %s in %s\n", e.Server, e.Workload, e.Took.Round(time.Millisecond))
	}
}

// writeHookRan prints a hook that ran, and the end of its output.
func writeHookRan(w io.Writer, e experiment.HookRan) {
	on := ""
	if e.On != "" {
		on = " on " + e.On
	}
	if e.At != nil {
		on += fmt.Sprintf(" at %.3f s", e.At.Seconds())
	}
	fmt.Fprintf(w, "  %s hook %d (%s %s)%s: ok in %s\n%s", e.Phase, e.Index, e.Kind, e.What, on, e.Elapsed.Round(time.Millisecond), hookOutput(e.Output))
}

// writeRunFinished prints a run's (or several instances' aggregate) result line.
func writeRunFinished(w io.Writer, e experiment.RunFinished) {
	s := e.Summary
	if e.Aggregate > 0 {
		fmt.Fprintf(w, "  → aggregate of %d instances, run %d %s: %s\n", e.Aggregate, s.RunID, s.Status, resultLine(s, e.Judge))
	} else {
		fmt.Fprintf(w, "  → %srun %d %s: %s\n", partLabel(e.Instance > 0, e.Instance-1), s.RunID, s.Status, resultLine(s, e.Judge))
	}
}

// hookOutput is the end of a shell hook's output for the screen, indented: its last
// 5 lines, after how many it had in all (all of them are stored).
func hookOutput(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	if len(lines) > 5 {
		lines = append([]string{fmt.Sprintf("… (%d lines in all, stored)", len(lines))}, lines[len(lines)-5:]...)
	}
	return "    | " + strings.Join(lines, "\n    | ") + "\n"
}

// timeLeft is an experiment's time left after its progress bar.
func timeLeft(t experiment.TimeLeft) string {
	switch {
	case t.Unknown:
		return " · time left unknown (runs by transaction count)"
	case t.AtLeast:
		return fmt.Sprintf(" · more than %s left", t.Left)
	}
	return fmt.Sprintf(" · ~%s left", t.Left)
}

func partLabel(multi bool, i int) string {
	if !multi {
		return ""
	}
	return fmt.Sprintf("instance %d, ", i+1)
}

// resultLine is a finished run's figures: what the plan judges by, or every
// transaction, saying which when the workload has client groups (where every
// transaction is the default, and rarely what the study is about).
func resultLine(s *measure.Summary, judge string) string {
	t, ok := s.Judged(judge)
	what := ""
	switch {
	case judge != "" && ok:
		what = " (judged: " + judge + " only; every transaction " + fmt.Sprintf("%.1f tps", s.TPS) + ")"
	case judge != "":
		t, what = s.TypeSummary, " (every transaction: the run has no "+judge+")"
	case len(s.ByGroup) > 1:
		what = " (every transaction of every client group)"
	}
	line := fmt.Sprintf("%.1f tps, p95 %s ms, p99 %s ms, %d errors%s", t.TPS, measure.FormatMS(t.Latency.P95), measure.FormatMS(t.Latency.P99), t.Errors, what)
	if s.Reason != "" {
		line += " (" + s.Reason + ")"
	}
	return line
}

func indent(s, pad string) string { return strings.ReplaceAll(s, "\n", "\n"+pad) }

// prefixWriter writes whole lines with a prefix.
type prefixWriter struct {
	w      io.Writer
	prefix string
	buf    []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.buf = append(p.buf, b...)
	for {
		i := strings.IndexByte(string(p.buf), '\n')
		if i < 0 {
			break
		}
		_, err := fmt.Fprintf(p.w, "%s%s\n", p.prefix, p.buf[:i])
		p.buf = p.buf[i+1:]
		if err != nil {
			return len(b), err
		}
	}
	return len(b), nil
}
