package analyze_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/analyze"
	"github.com/fathom-lab/fathom/internal/analyze/stalltest"
	"github.com/fathom-lab/fathom/internal/store"
)

// statuses is n samples of `collectors` server collectors, `bad` of which time out in
// the intervals listed.
func statuses(n, collectors, bad int, in ...int) []store.SampleStatus {
	var out []store.SampleStatus
	for i := -1; i < n; i++ {
		for c := 0; c < collectors; c++ {
			st := store.SampleStatus{Interval: i, Collector: "mysql_" + string(rune('a'+c)), Source: "mysql", Status: "ok"}
			if stalltest.In(i, in...) && c < bad {
				st.Status, st.Error = "timeout", "no answer within 1s"
			}
			out = append(out, st)
		}
	}
	return out
}

// The README's rule for "server stopped answering": in at least one interval of the
// stall, half or more of the server collectors got no answer. At the boundary: 1 of
// 3 is not enough, 2 of 4 is.
func TestServerStoppedAnsweringNeedsHalfTheCollectors(t *testing.T) {
	const n = 50
	for _, c := range []struct {
		collectors, bad int
		named           bool
	}{
		{3, 1, false}, {4, 1, false}, {4, 2, true}, {3, 2, true}, {2, 1, true}, {3, 3, true},
	} {
		in := analyze.StallInput{Throughput: stalltest.Synth(n, 700, stalltest.DipRange(30, 32, 5)), Unit: "tps", Kind: "mysql",
			Samples: statuses(n, c.collectors, c.bad, 31)}
		s := oneStall(t, in)
		if got := s.Cause == "server_unresponsive"; got != c.named {
			t.Errorf("%d of %d collectors unanswered: named %q (want server_unresponsive: %v)", c.bad, c.collectors, s.Cause, c.named)
		}
		// Below the rule it is not even an "also matching" cause.
		for _, m := range s.Causes {
			if m.Key == "server_unresponsive" && !c.named {
				t.Errorf("%d of %d: listed among the causes", c.bad, c.collectors)
			}
		}
	}
}

// The baseline side of the rule: half or more unanswered in fewer than 1 in 10
// baseline intervals. Four of the 46 baseline intervals (under a tenth) keep the
// cause; five (over a tenth) drop it.
func TestServerStoppedAnsweringBaselineBoundary(t *testing.T) {
	const n = 50
	for _, c := range []struct {
		base  []int
		named bool
	}{
		{[]int{2, 8, 14, 20}, true},
		{[]int{2, 8, 14, 20, 40}, false},
	} {
		in := analyze.StallInput{Throughput: stalltest.Synth(n, 700, stalltest.DipRange(30, 32, 5)), Unit: "tps", Kind: "mysql",
			Samples: statuses(n, 4, 2, append([]int{31}, c.base...)...)}
		if s := oneStall(t, in); (s.Cause == "server_unresponsive") != c.named {
			t.Errorf("unanswered in baseline intervals %v: named %q, want server_unresponsive %v", c.base, s.Cause, c.named)
		}
	}
}

// What the clients did while the sampler waited is said as measured: nothing, or how
// many transactions they still completed (issue 32: "completed nothing" at 1,955 tps).
func TestServerStoppedAnsweringSaysWhatClientsDid(t *testing.T) {
	const n = 50
	in := analyze.StallInput{Throughput: stalltest.Synth(n, 700, stalltest.DipRange(30, 32, 0)), Unit: "tps", Kind: "mysql",
		Samples: statuses(n, 3, 3, 31)}
	if s := oneStall(t, in); !strings.Contains(s.Explanation, "neither completed nor gave up") {
		t.Errorf("no transactions: %s", s.Explanation)
	}
	in.Throughput = stalltest.Synth(n, 700, stalltest.DipRange(30, 32, 200))
	s := oneStall(t, in)
	if s.Cause != "server_unresponsive" || strings.Contains(s.Explanation, "neither completed") || !strings.Contains(s.Explanation, "still completed 200–200 transactions/s") {
		t.Errorf("200 tps while unanswered: %q %s", s.Cause, s.Explanation)
	}
}

// On a saturated client host, unanswered samples are the sampler's own starvation
// unless the server's processes were off the CPU: the dip is named as the client
// host's, not blamed on the server.
func TestSaturatedHostIsNotAServerThatStoppedAnswering(t *testing.T) {
	const n = 50
	busy := []store.MetricSeries{
		stalltest.Series("os.procs_running", "gauge", "tasks", n, func(i int) float64 { return 18 }),
		stalltest.Series("os.cpus", "gauge", "cpus", n, func(i int) float64 { return 2 }),
	}
	in := analyze.StallInput{Throughput: stalltest.Synth(n, 700, stalltest.DipRange(30, 32, 60)), Unit: "tps", Kind: "mysql", Local: true,
		Samples: statuses(n, 3, 3, 31), Metrics: busy}
	s := oneStall(t, in)
	if s.Cause != "client_host" {
		t.Errorf("saturated host, clients still completing 60 tps: named %q: %s", s.Cause, s.Explanation)
	}
	// The clients completed nothing either (a SIGSTOPped server): it stopped answering.
	in.Throughput = stalltest.Synth(n, 700, stalltest.DipRange(30, 32, 0))
	if s := oneStall(t, in); s.Cause != "server_unresponsive" {
		t.Errorf("saturated host, clients completing nothing: named %q", s.Cause)
	}
	in.Throughput = stalltest.Synth(n, 700, stalltest.DipRange(30, 32, 60))
	// The server's processes off the CPU as well: then it did stop.
	in.Metrics = append(busy, stalltest.Series("os.server.cpu_pct", "counter", "%", n, func(i int) float64 {
		if stalltest.In(i, 30, 31) {
			return 0
		}
		return stalltest.Wobble(i, 80)
	}))
	if s := oneStall(t, in); s.Cause != "server_unresponsive" {
		t.Errorf("saturated host, server off the CPU: named %q", s.Cause)
	}
}

// A young checkpoint age with full-page images up names a PostgreSQL checkpoint only
// when the checkpoint began during the run: one that began before it (the shutdown
// checkpoint of a restart seconds before the run) is not this run's cause.
func TestCheckpointBeforeTheRunIsNoCause(t *testing.T) {
	const n = 40
	for _, c := range []struct {
		dip   int
		began float64 // on the run's clock
		named bool
	}{
		{20, 18, true},
		{2, -3, false},
		{2, 1, true},
	} {
		dip := c.dip
		in := analyze.StallInput{Throughput: stalltest.Synth(n, 1000, map[int]float64{dip: 150, dip + 1: 200}), Unit: "tps", Kind: "postgres",
			Metrics: []store.MetricSeries{
				stalltest.Series("pg.checkpoint_age_seconds", "gauge", "s", n, func(i int) float64 { return float64(i+1) - c.began }),
				stalltest.Series("pg.wal_fpi", "counter", "pages", n, func(i int) float64 {
					if i == dip || i == dip+1 {
						return 9000
					}
					return stalltest.Wobble(i, 100)
				}),
			}}
		s := oneStall(t, in)
		if got := s.Cause == "checkpoint"; got != c.named {
			t.Errorf("checkpoint began at %vs, stall at %d: named %q (%s)", c.began, dip, s.Cause, s.Explanation)
		}
	}
}

// A stall's extent is the dip's: from where throughput left the baseline's usual range
// to where it came back, not only the intervals below the threshold (issue 32: a
// checkpoint's six-second dip reported as one second, understating what was lost).
func TestStallExtentFollowsTheDip(t *testing.T) {
	const n = 60
	dip := map[int]float64{20: 700, 21: 550, 22: 200, 23: 450, 24: 650, 25: 780}
	in := analyze.StallInput{Throughput: stalltest.Synth(n, 1000, dip), Unit: "tps", Kind: "postgres"}
	s := oneStall(t, in)
	if s.FirstInterval != 20 || s.LastInterval != 25 {
		t.Errorf("extent %d–%d, want the dip's 20–25", s.FirstInterval, s.LastInterval)
	}
	lost := 0.0
	for i := 20; i <= 25; i++ {
		lost += stalltest.Wobble(i, 1000) - dip[i]
	}
	// Lost is against the healthy median (about 1000), so within a few percent of the
	// sum of the shortfalls.
	if s.Lost < 0.9*lost || s.Lost > 1.1*lost {
		t.Errorf("lost %v, the dip's shortfall is about %v", s.Lost, lost)
	}
	// Ordinary wobble around the baseline (±5%) is not part of any dip.
	in.Throughput = stalltest.Synth(n, 1000, map[int]float64{22: 200})
	if s := oneStall(t, in); s.FirstInterval != 22 || s.LastInterval != 22 {
		t.Errorf("a one-interval dip amid wobble: %d–%d", s.FirstInterval, s.LastInterval)
	}
}

// Two dips one partly recovered interval apart are one stall when they are one event,
// and two when their own evidence names different causes (issue 32: a lock stall that
// "started" 3 s early because an unrelated dip before it was merged in).
func TestUnrelatedDipsAreNotMerged(t *testing.T) {
	const n = 60
	tp := stalltest.Synth(n, 1000, map[int]float64{20: 150, 21: 600, 22: 100, 23: 120})
	lock := stalltest.Series("pg.waiting.lock", "gauge", "sessions", n, func(i int) float64 {
		if i == 22 || i == 23 {
			return 8
		}
		return 0
	})
	fpi := stalltest.Series("pg.wal_fpi", "counter", "pages", n, func(i int) float64 {
		if i == 20 {
			return 9000
		}
		return stalltest.Wobble(i, 100)
	})
	age := stalltest.Series("pg.checkpoint_age_seconds", "gauge", "s", n, func(i int) float64 { return float64(i+1) - 19 })
	in := analyze.StallInput{Throughput: tp, Unit: "tps", Kind: "postgres", Clients: 8, Metrics: []store.MetricSeries{lock, fpi, age}}
	s := find(in, analyze.DefaultStallParams())
	if len(s) != 2 || s[0].Cause != "checkpoint" || s[1].Cause != "lock_waits" || s[1].FirstInterval != 22 {
		t.Fatalf("want a checkpoint stall then a lock stall from 22: %v", spansCauses(s))
	}
	// The same two dips with only the lock evidence are one event, joined as before.
	in.Metrics = []store.MetricSeries{stalltest.Series("pg.waiting.lock", "gauge", "sessions", n, func(i int) float64 {
		if i >= 20 && i <= 23 {
			return 8
		}
		return 0
	})}
	s = find(in, analyze.DefaultStallParams())
	if len(s) != 1 || s[0].FirstInterval != 20 || s[0].LastInterval != 23 || s[0].Cause != "lock_waits" {
		t.Errorf("one lock event: %v", spansCauses(s))
	}
}

func spansCauses(ss []store.Stall) []string {
	var out []string
	for _, s := range ss {
		out = append(out, fmt.Sprintf("%d–%d %s", s.FirstInterval, s.LastInterval, s.Cause))
	}
	return out
}

// A SIGSTOPped server on a saturated host whose sampler often misses a sample: the
// samples of the stall's intervals are missing (the sampler still waiting), not timed
// out. Clients that stopped say the server stopped answering; the host's load does not
// explain clients that completed nothing, so the dip is not put down to it. Clients
// that went on, slowly, with the same missing samples: the host's load is the answer.
func TestStoppedClientsAndMissingSamples(t *testing.T) {
	const n = 50
	busy := []store.MetricSeries{
		stalltest.Series("os.procs_running", "gauge", "tasks", n, func(i int) float64 { return 10 }),
		stalltest.Series("os.cpus", "gauge", "cpus", n, func(i int) float64 { return 2 }),
	}
	var samples []store.SampleStatus
	for _, s := range stalltest.Statuses(n, "mysql") {
		if s.Source != "os" && (stalltest.In(s.Interval, 30, 31, 32) || s.Interval%4 == 1) {
			continue // no sample: during the stall, and one interval in four all along
		}
		samples = append(samples, s)
	}
	in := analyze.StallInput{Throughput: stalltest.Synth(n, 700, stalltest.DipRange(30, 32, 0)), Unit: "tps", Kind: "mysql", Local: true,
		Samples: samples, Metrics: busy}
	s := oneStall(t, in)
	if s.Cause != "server_unresponsive" || !strings.Contains(s.Explanation, "could not sample at all") || !strings.Contains(s.Explanation, "completed next to nothing in 3 interval(s)") {
		t.Errorf("stopped clients, missing samples, saturated host: named %q: %s", s.Cause, s.Explanation)
	}
	for _, c := range s.Causes {
		if c.Key == "client_host" {
			t.Errorf("clients that completed nothing put down to the host's load too: %+v", c)
		}
	}
	in.Throughput = stalltest.Synth(n, 700, stalltest.DipRange(30, 32, 200))
	if s := oneStall(t, in); s.Cause != "client_host" {
		t.Errorf("clients going on at 200 tps, missing samples, saturated host: named %q: %s", s.Cause, s.Explanation)
	}
}
