package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/store"
)

// A persistence plan on a throwaway Redis: during_run hooks fire at their offset into
// each run (a Redis command only in the cells when: names, a shell command in all)
// and are stored on the run's clock; measure_restart restarts the instance from each
// file after every run and stores the seconds with the keys it loaded (all of them);
// the cell's appendonly is back in effect afterwards; fathom experiments and the
// report list the restarts.
func TestRedisDuringHooksAndRestarts(t *testing.T) {
	needServer(t, instance.Redis)
	env, _ := expEnv(t)
	marks := filepath.Join(t.TempDir(), "marks")
	plan := writePlan(t, `experiment: rrestart
instance: {kind: redis}
workload: redis-kv
options: {keys: 3000, value_size: 100, read: 50}
clients: 2
duration: 3s
warmup: 1s
report_interval: 500ms
measure_restart: [rdb, aof, aof-plain]
matrix:
  persistence:
    aof: {settings: {appendonly: "yes", save: ""}}
    rdb: {settings: {appendonly: "no", save: ""}}
hooks:
  during_run:
    - {at: 1500ms, redis: BGREWRITEAOF, when: {persistence: aof}}
    - {at: 1500ms, redis: BGSAVE, when: {persistence: rdb}}
    - {at: 2s, shell: 'echo "$FATHOM_CELL" >> `+marks+`'}
  after_run:
    - {redis: CONFIG GET appendonly}
`)
	r := fathom(t, env, nil, "experiment", "-q", plan)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"during_run hook 1 (redis BGREWRITEAOF) at 1.5", "during_run hook 2 (redis BGSAVE) at 1.5", "during_run hook 3 (shell echo",
		"restarted from RDB: answering after", "restarted from AOF (commands only): answering after", "3001 keys"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	b, _ := os.ReadFile(marks)
	if string(b) != "persistence=aof\npersistence=rdb\n" {
		t.Errorf("shell during_run hook ran: %q", b)
	}
	st := openTestStore(t, env)
	ctx := context.Background()
	exp, err := st.ExperimentByName(ctx, "rrestart")
	if err != nil {
		t.Fatal(err)
	}
	hooks, err := st.ExperimentHooks(ctx, exp.ID)
	if err != nil {
		t.Fatal(err)
	}
	eruns, _ := st.ExperimentRuns(ctx, exp.ID)
	if len(eruns) != 2 {
		t.Fatalf("runs: %+v", eruns)
	}
	var during, restarts, after []store.ExperimentHook
	for _, h := range hooks {
		switch h.Phase {
		case "during_run":
			during = append(during, h)
		case "restart":
			restarts = append(restarts, h)
		case "after_run":
			after = append(after, h)
		}
	}
	if len(during) != 4 || len(restarts) != 6 || len(after) != 2 {
		t.Fatalf("hooks: %d during_run, %d restarts, %d after_run: %+v", len(during), len(restarts), len(after), hooks)
	}
	for _, h := range during {
		want := 1500 * time.Millisecond
		if h.Kind == "shell" {
			want = 2 * time.Second
		}
		// Fired no earlier than asked, on the run's clock, while the run went on.
		run, _ := st.Run(ctx, eruns[h.Seq].RunID)
		if !h.OK || h.At == nil || *h.At < want || h.Started.Before(run.StartedAt.Add(want)) || h.Started.After(run.EndedAt) {
			t.Errorf("during_run hook: %+v (run %s to %s)", h, run.StartedAt, run.EndedAt)
		}
		if (h.Seq == 0) != (h.Command == "BGREWRITEAOF") && h.Kind == "redis" {
			t.Errorf("hook %q ran in slot %d", h.Command, h.Seq)
		}
	}
	formats := []string{"rdb", "aof", "aof-plain"}
	for i, h := range restarts {
		var f store.RestartFacts
		if err := json.Unmarshal([]byte(h.Output), &f); err != nil {
			t.Fatalf("restart output %q: %v", h.Output, err)
		}
		if !h.OK || h.Kind != formats[i%3] || f.Format != h.Kind || f.Keys != 3001 || f.Seconds <= 0 || f.FileBytes < 3000*50 || f.Memory <= 0 ||
			h.Elapsed != time.Duration(f.Seconds*float64(time.Second)) || h.At != nil {
			t.Errorf("restart %d: %+v %+v", i, h, f)
		}
	}
	// The cell's own appendonly is in effect after the restarts.
	if !strings.Contains(after[0].Output, "appendonly | yes") || !strings.Contains(after[1].Output, "appendonly | no") {
		t.Errorf("appendonly after the restarts: %q, %q", after[0].Output, after[1].Output)
	}
	r = fathom(t, env, nil, "experiments", "rrestart")
	if r.code != 0 || !strings.Contains(r.stdout, "measured restarts after each run") || !strings.Contains(r.stdout, "AOF (commands only)") {
		t.Errorf("experiments: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	out := filepath.Join(t.TempDir(), "rep")
	r = fathom(t, env, nil, "report", "exp:rrestart", "-o", out)
	if r.code != 0 {
		t.Fatalf("report: exit %d\n%s", r.code, r.stderr)
	}
	html, _ := os.ReadFile(filepath.Join(out, "index.html"))
	csv, _ := os.ReadFile(filepath.Join(out, "restarts.csv"))
	if !strings.Contains(string(html), "Measured restarts") || !strings.Contains(string(html), "redis 1: BGREWRITEAOF") ||
		strings.Count(string(csv), "\n") != 7 {
		t.Errorf("report: restarts table or marks missing; restarts.csv:\n%s", csv)
	}
}
