package experiment

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/plan"
)

// Listener hears an experiment's progress as typed events, in order, one at a time
// (never concurrently). A web front end or a remote agent implements it; Lines prints
// them as the CLI's text. Each run's own live interval lines still go to
// Options.Stdout (run.Lines), between these events.
type Listener interface {
	Event(Event)
}

// Event is one of the types below.
type Event interface{ event() }

// Started: the experiment begins (or resumes).
type Started struct {
	Resumed            bool
	ID                 int64
	Name               string
	Cells, Repetitions int
	Runs, ToRun        int
	Order              string
	Where              string   // the servers, as text
	Warnings           []string // about the plan
	Store              string   // the store's path
}

// RunStarted: a run (one cell's repetition) begins. Done runs of Runs are finished.
type RunStarted struct {
	Seq, Runs               int // Seq counts from 1
	Cell                    string
	Repetition, Repetitions int
	Done                    int
	TimeLeft                string // " · ~3m left", or ""
}

// Note: a line about the servers (an instance created, stopped, removed or kept; OS
// settings restored).
type Note struct{ Text string }

// OSApplied: the cell's OS settings, as name=value in effect.
type OSApplied struct{ Settings []string }

// SettingsApplied: a server's settings for the cell, what was done (Change: set,
// reloaded, restarted …, or unchanged) and the values read back.
type SettingsApplied struct {
	Server    string
	Change    string
	Changed   bool // false: Change is "unchanged"
	Effective []plan.Effective
}

// Prepared: a server's tables for the cell's workload are loaded (Already: they
// were there, prepare: auto).
type Prepared struct {
	Server, Workload string
	Already          bool
	Took             time.Duration
}

// Restarted: a measured restart of a Redis instance after a run (measure_restart).
type Restarted struct {
	Server    string
	Format    string // RDB, AOF (RDB preamble), AOF (commands only)
	Seconds   float64
	FileBytes int64
	Keys      int64
	Memory    int64
}

// HookRan: a hook succeeded (a failed hook fails the run: RunDone says why).
type HookRan struct {
	Phase   string
	Index   int
	Kind    string // shell, sql or redis
	What    string
	On      string         // the server, when the run has several
	At      *time.Duration // during_run: when it fired on the run's clock
	Elapsed time.Duration
	Output  string // the tail of a shell hook's output, indented lines
}

// RunFinished: a measurement ended with its summary. Instance is 0 for a run on one
// server, else the instance's number from 1; Aggregate marks the combined run of
// several instances.
type RunFinished struct {
	Instance  int
	Aggregate int // number of instances aggregated; 0: not an aggregate
	Summary   *measure.Summary
}

// RunDone: a run's slot is finished: complete, failed (Reason) or interrupted.
type RunDone struct {
	Seq            int
	Status, Reason string
}

// Done: the experiment ended.
type Done struct{ Outcome *Outcome }

func (Started) event()         {}
func (RunStarted) event()      {}
func (Note) event()            {}
func (Restarted) event()       {}
func (OSApplied) event()       {}
func (SettingsApplied) event() {}
func (Prepared) event()        {}
func (HookRan) event()         {}
func (RunFinished) event()     {}
func (RunDone) event()         {}
func (Done) event()            {}

// Lines is the Listener that prints the events as text lines on W.
type Lines struct{ W io.Writer }

// Event prints e.
func (l *Lines) Event(e Event) {
	w := l.W
	switch e := e.(type) {
	case Started:
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
	case RunStarted:
		const width = 20
		filled := width * e.Done / max(e.Runs, 1)
		bar := "[" + strings.Repeat("=", filled) + strings.Repeat(" ", width-filled) + "]"
		fmt.Fprintf(w, "\n%s run %d/%d · %s · repetition %d/%d%s\n", bar, e.Seq, e.Runs, e.Cell, e.Repetition, e.Repetitions, e.TimeLeft)
	case Note:
		fmt.Fprintf(w, "%s\n", e.Text)
	case OSApplied:
		fmt.Fprintf(w, "  OS: %s\n", strings.Join(e.Settings, ", "))
	case SettingsApplied:
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
	case Prepared:
		if e.Already {
			fmt.Fprintf(w, "  %s: the tables of %s are there (prepare: auto)\n", e.Server, e.Workload)
		} else {
			fmt.Fprintf(w, "  %s: prepared %s in %s\n", e.Server, e.Workload, e.Took.Round(time.Millisecond))
		}
	case HookRan:
		on := ""
		if e.On != "" {
			on = " on " + e.On
		}
		if e.At != nil {
			on += fmt.Sprintf(" at %.3f s", e.At.Seconds())
		}
		fmt.Fprintf(w, "  %s hook %d (%s %s)%s: ok in %s\n%s", e.Phase, e.Index, e.Kind, e.What, on, e.Elapsed.Round(time.Millisecond), e.Output)
	case Restarted:
		fmt.Fprintf(w, "  %s restarted from %s: answering after %.3f s (%.1f MB file, %d keys, %.1f MB in memory)\n",
			e.Server, e.Format, e.Seconds, float64(e.FileBytes)/1e6, e.Keys, float64(e.Memory)/1e6)
	case RunFinished:
		s := e.Summary
		if e.Aggregate > 0 {
			fmt.Fprintf(w, "  → aggregate of %d instances, run %d %s: %s\n", e.Aggregate, s.RunID, s.Status, resultLine(s))
		} else {
			fmt.Fprintf(w, "  → %srun %d %s: %s\n", partLabel(e.Instance > 0, e.Instance-1), s.RunID, s.Status, resultLine(s))
		}
	case RunDone:
		if e.Status == "failed" {
			fmt.Fprintf(w, "  ✗ failed: %s\n", indent(e.Reason, "    "))
		}
	}
}
