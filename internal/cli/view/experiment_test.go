package view

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/agent"
	"github.com/fathom-lab/fathom/internal/experiment"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/run"
	"github.com/fathom-lab/fathom/internal/runner"
)

// An experiment's events print as the CLI's lines: progress and results on W, the
// runs' live lines (prefixed for several instances) on W, warnings, the experiment
// going on and the agents' lines on Err.
func TestExperimentLines(t *testing.T) {
	var out, errb bytes.Buffer
	l := &ExperimentLines{W: &out, Err: &errb}
	cfg := runner.Config{Clients: 2, Duration: 10 * time.Second, Seed: 7}
	iv := measure.NewInterval(0, []string{"t"})
	iv.End = time.Second
	sum := &measure.Summary{RunID: 3, Status: "complete"}
	sum.TPS = 12.5
	for _, e := range []experiment.Event{
		experiment.Started{ID: 1, Name: "events", Cells: 2, Repetitions: 2, Runs: 4, ToRun: 4, Order: "sequential", Where: "sqlite:t.db", Store: "r.db"},
		experiment.RunStarted{Seq: 1, Runs: 4, Cell: "clients=1", Repetition: 1, Repetitions: 2, Left: experiment.TimeLeft{Left: 3 * time.Minute}},
		experiment.RunStarted{Seq: 2, Runs: 4, Done: 2, Cell: "clients=2", Repetition: 1, Repetitions: 2, Left: experiment.TimeLeft{Left: 90 * time.Second, AtLeast: true}},
		experiment.RunStarted{Seq: 3, Runs: 4, Done: 4, Cell: "clients=2", Repetition: 2, Repetitions: 2, Left: experiment.TimeLeft{Unknown: true}},
		experiment.LiveStarted{Run: &run.Started{RunID: 3, Workload: "w", Target: "sqlite:t.db", Config: cfg}},
		experiment.LiveInterval{Interval: iv},
		experiment.LiveStarted{Instance: 2, Run: &run.Started{RunID: 4, Workload: "w", Target: "sqlite:u.db", Config: cfg}},
		experiment.LiveInterval{Instance: 2, Interval: iv},
		experiment.LiveFinished{},
		experiment.HookRan{Phase: "before_run", Index: 1, Kind: "shell", What: "echo", Elapsed: 2 * time.Millisecond, Output: []string{"1", "2", "3", "4", "5", "6"}},
		experiment.HookRan{Phase: "after_run", Index: 2, Kind: "sql", What: "CHECKPOINT", Elapsed: time.Millisecond},
		experiment.Warning{Text: "careful"},
		experiment.RunFinished{Summary: sum},
		experiment.RunDone{Seq: 1, Status: "failed", Reason: "one\ntwo"},
		experiment.GoesOn{Seq: 1, Runs: 4, Cell: "clients=1", Repetition: 1},
		experiment.SlotNotRecorded{Seq: 2, Store: "r.db", Err: errors.New("disk full")},
		experiment.AgentEvent{Event: agent.Warning{Text: "clock"}},
		experiment.NothingToResume{ID: 1, Name: "events"},
	} {
		l.Event(e)
	}
	for _, want := range []string{
		"experiment 1 \"events\": 2 cells × 2 repetitions = 4 runs (sequential), 4 to run, on sqlite:t.db\n" +
			"results in r.db; if interrupted, continue with `fathom experiment --resume 1`\n",
		"\n[                    ] run 1/4 · clients=1 · repetition 1/2 · ~3m0s left\n",
		"\n[==========          ] run 2/4 · clients=2 · repetition 1/2 · more than 1m30s left\n",
		"\n[====================] run 3/4 · clients=2 · repetition 2/2 · time left unknown (runs by transaction count)\n",
		"run 3: w on sqlite:t.db, 2 clients, closed loop, 10s, seed 7\n[ 1s ] thds: 2 tps: 0.00",
		"[2] run 4: w on sqlite:u.db, 2 clients, closed loop, 10s, seed 7\n[2] [ 1s ] thds: 2 ",
		"  → run 3 complete: 12.5 tps, p95 - ms, p99 - ms, 0 errors\n",
		"  ✗ failed: one\n    two\n",
		"  before_run hook 1 (shell echo): ok in 2ms\n    | … (6 lines in all, stored)\n    | 2\n    | 3\n    | 4\n    | 5\n    | 6\n  after_run hook 2 (sql CHECKPOINT): ok in 1ms\n",
		"experiment 1 \"events\" is complete: nothing to resume (see `fathom experiments 1`)\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("stdout has no %q:\n%s", want, out.String())
		}
	}
	wantErr := "fathom: warning: careful\n" +
		"fathom: run 1 of 4 (clients=1, repetition 1) failed by its transactions' errors; the experiment goes on (on_error applies to runs that could not go their course)\n" +
		"fathom: recording run 2 in r.db: disk full\n" +
		"fathom: warning: clock\n"
	if errb.String() != wantErr {
		t.Errorf("stderr:\n%s\nwant:\n%s", errb.String(), wantErr)
	}

	// Quiet leaves out the live lines, not the progress.
	out.Reset()
	q := &ExperimentLines{W: &out, Err: &errb, Bar: &errb, Quiet: true}
	q.Event(experiment.LiveStarted{Run: &run.Started{RunID: 3, Config: cfg}})
	q.Event(experiment.LiveInterval{Interval: iv})
	q.Event(experiment.RunFinished{Summary: sum})
	if got := out.String(); got != "  → run 3 complete: 12.5 tps, p95 - ms, p99 - ms, 0 errors\n" {
		t.Errorf("quiet printed %q", got)
	}
}

// The agents' events print as the lines `fathom agent` and a coordinator printed.
func TestAgentText(t *testing.T) {
	for _, c := range []struct {
		e    agent.Event
		want string
	}{
		{agent.Waiting{Job: "j", Agents: 3, Wait: time.Minute, Store: "postgres://u@h/f"},
			"waiting up to 1m0s for 3 agents to join \"j\": `fathom agent --store postgres://u@h/f --run j --index I` (I = 0 to 2), or agents without --run"},
		{agent.Joined{Index: 1, Host: "h1", Version: "v", Clients: 4, Rate: 0, Offset: 1500 * time.Microsecond, Uncertainty: 250 * time.Microsecond, Applied: -time.Millisecond},
			"agent 1 joined from h1 (fathom v): 4 clients (closed loop); clock +1.500ms ±0.250ms from the store's (-1.000ms applied)"},
		{agent.JoinedJob{Job: "j", Index: 0, Agents: 2, Share: agent.Share{Clients: 3, Rate: 50, Seed: 9}, Offset: time.Millisecond, RTT: 2 * time.Millisecond, Applied: 0},
			"joined job \"j\" as agent 0 of 2: 3 clients at 50 tx/s, seed 9; store clock +1.000ms ±1.000ms from ours (round trip 2.000ms), +0.000ms applied"},
		{agent.Closed{Recovered: &agent.Recovered{Job: "j", RunID: 5, Reason: "gone"}}, "closed \"j\" (run 5, now interrupted): gone; the name is free"},
		{agent.Closed{Recovered: &agent.Recovered{Job: "j", Reason: "gone"}}, "closed \"j\": gone, before its run was recorded; the name is free"},
		{agent.AgentEnded{Outcome: &agent.Outcome{Result: runner.Result{Status: "failed", Reason: "lost"}, Intervals: 4, Transactions: 100}},
			"failed: 4 intervals, 100 transactions: lost"},
		{agent.WaitingForWork{}, "waiting for work"},
		{agent.JobFailed{Err: errors.New("boom")}, "boom"},
	} {
		if got := agentText(c.e); got != c.want {
			t.Errorf("%T: %q, want %q", c.e, got, c.want)
		}
	}
}

// A run of a plan that judges by a client group headlines that group's figures, and a
// run of a grouped workload judged by every transaction says so (issue 32: the live
// line said 27,517 tps against the table's 2,591 for the writers).
func TestRunFinishedLineIsJudged(t *testing.T) {
	types := []string{"writers/insert", "readers/lookup"}
	iv := measure.NewInterval(0, types)
	iv.End = time.Second
	rec := measure.NewRecorder(2)
	for i := 0; i < 10; i++ {
		rec.Success(0, int64(300*time.Millisecond), 0)
	}
	for i := 0; i < 90; i++ {
		rec.Success(1, int64(300*time.Microsecond), 0)
	}
	iv.AddRecorder(rec)
	sum := measure.Summarize(types, []*measure.Interval{iv})
	sum.RunID, sum.Status = 5, "complete"
	if w := sum.ByGroup["writers"]; w.Transactions != 10 || w.Latency.P50 < 299 {
		t.Fatalf("writers group %+v", w)
	}
	for _, c := range []struct{ judge, want string }{
		{"writers", "  → run 5 complete: 10.0 tps, p95 300.2 ms, p99 300.2 ms, 0 errors (judged: writers only; every transaction 100.0 tps)\n"},
		{"readers/lookup", "  → run 5 complete: 90.0 tps, p95 0.300 ms, p99 0.300 ms, 0 errors (judged: readers/lookup only; every transaction 100.0 tps)\n"},
		{"", "  → run 5 complete: 100.0 tps, p95 300.2 ms, p99 300.2 ms, 0 errors (every transaction of every client group)\n"},
	} {
		var out bytes.Buffer
		(&ExperimentLines{W: &out, Err: &out}).Event(experiment.RunFinished{Summary: &sum, Judge: c.judge})
		if out.String() != c.want {
			t.Errorf("judge %q:\n got %q\nwant %q", c.judge, out.String(), c.want)
		}
	}
}
