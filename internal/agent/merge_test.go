package agent

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/store"
)

// agentInterval is one agent's interval of n transactions with log-normal-ish
// latencies from 50us to about 50ms, as stored.
func agentInterval(r *rand.Rand, n int) []byte {
	iv := measure.NewInterval(0, []string{"tpcb"})
	for i := 0; i < n; i++ {
		v := int64(50_000 * (1 + r.ExpFloat64()*r.ExpFloat64()*20))
		_ = iv.Types[0].Latency.RecordValue(v)
	}
	iv.Types[0].OK = int64(n)
	return store.EncodeAgentTypes(iv)
}

// The coordinator's CPU per interval for three agents: decode each agent's stored
// interval and merge the three (the store round trips are not included).
func BenchmarkMergeThreeAgents(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	rows := [][]byte{agentInterval(r, 12000), agentInterval(r, 12000), agentInterval(r, 12000)}
	b.ReportAllocs()
	for b.Loop() {
		m := measure.NewInterval(0, []string{"tpcb"})
		for _, row := range rows {
			iv := measure.NewInterval(0, []string{"tpcb"})
			if err := store.DecodeAgentTypes(row, iv); err != nil {
				b.Fatal(err)
			}
			m.Add(iv)
		}
	}
}

// Merging is exact: the merged interval's quantiles are those of one histogram that
// recorded every value.
func TestMergeExact(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	all := measure.NewInterval(0, []string{"tpcb"})
	m := measure.NewInterval(0, []string{"tpcb"})
	for a := 0; a < 3; a++ {
		iv := measure.NewInterval(0, []string{"tpcb"})
		for i := 0; i < 5000*(a+1); i++ {
			v := int64(50_000 * (1 + r.ExpFloat64()*r.ExpFloat64()*20))
			_ = iv.Types[0].Latency.RecordValue(v)
			_ = all.Types[0].Latency.RecordValue(v)
		}
		back := measure.NewInterval(0, []string{"tpcb"})
		if err := store.DecodeAgentTypes(store.EncodeAgentTypes(iv), back); err != nil {
			t.Fatal(err)
		}
		m.Add(back)
	}
	for _, q := range []float64{50, 90, 99, 99.9, 100} {
		if got, want := m.Types[0].Latency.ValueAtQuantile(q), all.Types[0].Latency.ValueAtQuantile(q); got != want {
			t.Errorf("p%v: merged %d, one histogram %d", q, got, want)
		}
	}
}

// spans makes an agent's queue of intervals from their end times (ms), each starting
// where the one before ended.
func spans(ends ...int) []*measure.Interval {
	var out []*measure.Interval
	prev := time.Duration(0)
	for i, e := range ends {
		iv := measure.NewInterval(i, []string{"tpcb"})
		iv.Start, iv.End = prev, time.Duration(e)*time.Millisecond
		prev = iv.End
		out = append(out, iv)
	}
	return out
}

// Agents' intervals are merged by time: when one agent's late cut skipped a boundary,
// the others' two intervals of its long one are merged with it, and after that the
// numbers line up again; a running agent that has not stored its share yet is waited
// for; an agent that stores nothing more drops out.
func TestAlignByTime(t *testing.T) {
	const iv = 100 * time.Millisecond
	queues := map[int][]*measure.Interval{
		0: spans(101, 200, 300, 401),
		1: spans(100, 300, 400), // skipped the boundary at 200ms
		2: spans(99, 201, 299, 400),
	}
	live := map[int]bool{0: true, 1: true, 2: true}
	var got []string
	for {
		take, ok := align(queues, live, iv)
		if !ok {
			break
		}
		var end time.Duration
		for _, a := range sortedAgents(take) {
			end = max(end, queues[a][take[a]-1].End)
			queues[a] = queues[a][take[a]:]
		}
		got = append(got, fmt.Sprintf("%v→%v", take, end))
	}
	want := []string{"map[0:1 1:1 2:1]→101ms", "map[0:2 1:1 2:2]→300ms", "map[0:1 1:1 2:1]→401ms"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("merged groups %v, want %v", got, want)
	}

	// Agent 1 has stored only up to 200ms of a span the others stored to 300ms: wait.
	queues = map[int][]*measure.Interval{0: spans(100, 200, 300)[1:], 1: spans(100, 200)[1:]}
	queues[0] = []*measure.Interval{{Start: 100 * time.Millisecond, End: 300 * time.Millisecond}}
	if take, ok := align(queues, map[int]bool{0: true, 1: true}, iv); ok {
		t.Fatalf("merged %v before agent 1 stored the rest of the span", take)
	}
	// ... unless agent 1 stores nothing more: then it drops out of what it lacks.
	take, ok := align(queues, map[int]bool{0: true, 1: false}, iv)
	if !ok || take[0] != 1 || take[1] != 1 {
		t.Fatalf("with agent 1 ended: %v, %v", take, ok)
	}
	// A running agent that has stored nothing yet is waited for.
	if _, ok := align(map[int][]*measure.Interval{0: spans(100)}, map[int]bool{0: true, 1: true}, iv); ok {
		t.Fatal("merged without a running agent's interval")
	}
}
