package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/dbtest"
)

// Agents need a store every machine reaches: a SQLite file is refused in one line,
// exit 2, as are an agent without its index and clients that cannot be split.
func TestAgentsBadInput(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f.db")
	pg := "postgres://nobody@127.0.0.1:1/fathom"
	for _, c := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"run on sqlite", nil, []string{"run", "--agents", "3", "--store", file, "--target", "postgres://u@h/db"}, "give --store postgres://"},
		{"agent on sqlite", nil, []string{"agent", "--store", file}, "give --store postgres://"},
		{"no index", nil, []string{"agent", "--store", pg, "--run", "x"}, "JOB_COMPLETION_INDEX"},
		{"bad index", map[string]string{"JOB_COMPLETION_INDEX": "two"}, []string{"agent", "--store", pg, "--run", "x"}, "JOB_COMPLETION_INDEX=\"two\""},
		{"index without run", nil, []string{"agent", "--store", pg, "--index", "1"}, "--index goes with --run"},
		{"name without agents", nil, []string{"run", "--name", "x", "--store", pg}, "add --agents"},
		{"negative agents", nil, []string{"run", "--agents", "-1", "--store", pg}, "--agents -1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			oneLine(t, fathom(t, c.env, nil, c.args...), exitUsage, c.want)
		})
	}
}

// Three agents in this process over loopback make one run whose transactions are
// the sum of theirs; too few clients for the agents is a usage error.
func TestAgentsLoopback(t *testing.T) {
	target := dbtest.PostgresDatabase(t, "agents_cli")
	st := dbtest.PostgresDatabase(t, "agents_cli_store")
	if r := fathom(t, nil, nil, "prepare", "--workload", "tpcb", "--scale", "1", "--target", target); r.code != 0 {
		t.Fatalf("prepare: %s", r.stderr)
	}
	oneLine(t, fathom(t, nil, nil, "run", "--workload", "tpcb", "--agents", "3", "-c", "2", "--store", st, "--target", target), exitUsage, "2 clients cannot be split over 3 agents")
	name := fmt.Sprintf("loop-%d", time.Now().UnixNano())
	var wg sync.WaitGroup
	agents := make([]result, 3)
	for i := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			agents[i] = fathom(t, nil, nil, "agent", "--store", st, "--run", name, "--index", fmt.Sprint(i), "--wait", "2m")
		}()
	}
	r := fathom(t, nil, nil, "run", "--workload", "tpcb", "--agents", "3", "--name", name, "-c", "3", "-T", "2", "-P", "0.5", "--json", "--store", st, "--target", target)
	wg.Wait()
	if r.code != 0 {
		t.Fatalf("run: %d %s", r.code, r.stderr)
	}
	sum := summary(t, r)
	n := agentTransactions(t, agents)
	if sum.Clients != 3 || sum.Transactions == 0 || sum.Transactions != n {
		t.Errorf("summary: %d clients, %d transactions; agents' transactions add up to %d", sum.Clients, sum.Transactions, n)
	}
}

// agentTransactions adds up the transactions of the agents' last lines ("complete: N
// intervals, M transactions"); an agent that failed fails the test.
func agentTransactions(t *testing.T, agents []result) int64 {
	t.Helper()
	var n int64
	for i, a := range agents {
		if a.code != 0 {
			t.Fatalf("agent %d: exit %d\n%s", i, a.code, a.stderr)
		}
		var k int64
		line := a.stderr[strings.LastIndex(a.stderr, "complete: "):]
		if _, err := fmt.Sscanf(line, "complete: %d intervals, %d transactions", new(int), &k); err != nil {
			t.Fatalf("agent %d's last line %q: %v", i, line, err)
		}
		n += k
	}
	return n
}
