package experiment

import (
	"time"

	"github.com/fathom-lab/fathom/internal/agent"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/plan"
	"github.com/fathom-lab/fathom/internal/run"
)

// Listener hears an experiment's progress as typed events, in order, one at a time
// (never concurrently): the experiment's own, each run's live events (Live*), the
// warnings and the agents' events. A front end turns them into text (the CLI) or
// pages; the engine never formats text for a person. Event is called from the
// goroutines that run the experiment and its runs: it must not block for long.
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
	Left                    TimeLeft
}

// TimeLeft is the estimate of an experiment's time left: about Left, at least Left
// (AtLeast: some runs go by transaction count and none has been timed yet), or
// unknown (Unknown: every run left goes by transaction count, none timed yet).
type TimeLeft struct {
	Left             time.Duration // rounded to the second
	AtLeast, Unknown bool
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
	// Output is a shell hook's output, trimmed (all of it is stored); nil for others.
	Output []string
}

// RunFinished: a measurement ended with its summary. Instance is 0 for a run on one
// server, else the instance's number from 1; Aggregate marks the combined run of
// several instances.
type RunFinished struct {
	Instance  int
	Aggregate int // number of instances aggregated; 0: not an aggregate
	Summary   *measure.Summary
	// Judge is the client group or transaction type the plan judges by ("" every
	// transaction): what a live line should headline (Summary.Judged).
	Judge string
}

// RunDone: a run's slot is finished: complete, failed (Reason) or interrupted.
type RunDone struct {
	Seq            int
	Status, Reason string
}

// done: the experiment ended.
type done struct{ Outcome *Outcome }

// NothingToResume: Resume was asked for an experiment that is complete.
type NothingToResume struct {
	ID   int64
	Name string
}

// Warning: something the user should know that did not stop the experiment (a
// record that could not be written, settings not restored, a run's own warning).
type Warning struct{ Text string }

// GoesOn: run Seq of Runs (cell Cell, repetition Repetition) failed by its
// transactions' errors, and the experiment goes on whatever on_error says.
type GoesOn struct {
	Seq, Runs  int
	Cell       string
	Repetition int
}

// SlotNotRecorded: the start of run Seq could not be recorded in the store (Store,
// its path): the run is not made and counts as failed.
type SlotNotRecorded struct {
	Seq   int
	Store string
	Err   error
}

// The live events of a run, as run.Listener hears them. Instance is 0 for a run on
// one server, else the instance's number from 1 (the runs of several instances go on
// at the same time).
type (
	// LiveStarted: the run is recorded and starts.
	LiveStarted struct {
		Instance int
		Run      *run.Started
	}
	// LiveInterval: an interval of the run ended.
	LiveInterval struct {
		Instance int
		Interval *measure.Interval
	}
	// LiveError: the run met a distinct error for the first time.
	LiveError struct {
		Instance int
		Error    measure.SeenError
	}
	// LiveFinished: the run's clients stopped.
	LiveFinished struct{ Instance int }
)

// AgentEvent: what the agents of a cell's run made by agents did.
type AgentEvent struct{ Event agent.Event }

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
func (done) event()            {}
func (NothingToResume) event() {}
func (Warning) event()         {}
func (GoesOn) event()          {}
func (SlotNotRecorded) event() {}
func (LiveStarted) event()     {}
func (LiveInterval) event()    {}
func (LiveError) event()       {}
func (LiveFinished) event()    {}
func (AgentEvent) event()      {}

// live is a run's run.Listener (and run.ErrorListener): it hands the run's events to
// the experiment's Listener as Live* events.
type live struct {
	x        *experimentRun
	instance int
}

func (l live) Started(s *run.Started) { l.x.emit(LiveStarted{Instance: l.instance, Run: s}) }
func (l live) Interval(iv *measure.Interval) {
	l.x.emit(LiveInterval{Instance: l.instance, Interval: iv})
}
func (l live) Error(e measure.SeenError) { l.x.emit(LiveError{Instance: l.instance, Error: e}) }
func (l live) Finished()                 { l.x.emit(LiveFinished{Instance: l.instance}) }
func (l live) Warning(msg string)        { l.x.emit(Warning{Text: msg}) }

// agents hands a run's agent events to the experiment's Listener.
type agents struct{ x *experimentRun }

func (a agents) Event(e agent.Event) { a.x.emit(AgentEvent{Event: e}) }

// nobody is the Listener of an experiment that was given none.
type nobody struct{}

func (nobody) Event(Event) {}
