package plan_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/plan"
)

const redisHead = "experiment: a\ninstance: {kind: redis}\nworkload: redis-kv\n"

// during_run hooks, redis: hooks, when: and measure_restart decode, and each mistake
// is one problem that names the fix.
func TestDuringHooksAndRestarts(t *testing.T) {
	p, err := decodeString(t, redisHead+`duration: 10s
warmup: 2s
measure_restart: [rdb, aof-plain, aof]
matrix:
  persistence:
    aof: {settings: {appendonly: "yes"}}
    rdb: {settings: {appendonly: "no"}}
hooks:
  during_run:
    - {at: 6s, redis: BGREWRITEAOF, when: {persistence: aof}}
    - {at: 6.5, redis: [BGSAVE, INFO persistence], when: {persistence: [rdb]}}
    - {at: 1s, shell: "echo hi"}
  after_run:
    - {redis: CONFIG GET appendonly, when: {persistence: [aof, rdb]}}
`)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(p.MeasureRestart, " "); got != "rdb aof-plain aof" {
		t.Errorf("measure_restart: %q", got)
	}
	d := p.Hooks.DuringRun
	if len(d) != 3 || d[0].At != 6*time.Second || d[1].At != 6500*time.Millisecond || d[0].Kind() != "redis" || d[2].Kind() != "shell" ||
		len(d[1].SQL) != 2 || d[1].SQL[1] != "INFO persistence" {
		t.Fatalf("during_run hooks: %+v", d)
	}
	cells := p.Cells()
	if !d[0].Applies(cells[0]) || d[0].Applies(cells[1]) || d[1].Applies(cells[0]) || !d[1].Applies(cells[1]) || !d[2].Applies(cells[1]) {
		t.Errorf("when: applies wrongly to %s / %s", cells[0].Key(), cells[1].Key())
	}
	if len(p.Hooks.AfterRun) != 1 || !p.Hooks.AfterRun[0].Applies(cells[1]) {
		t.Errorf("after_run: %+v", p.Hooks.AfterRun)
	}

	cases := []struct{ name, text, want string }{
		{"at missing", redisHead + "hooks: {during_run: [{redis: BGSAVE}]}\n", "give at, when into the run it fires"},
		{"at zero", redisHead + "hooks: {during_run: [{at: 0s, redis: BGSAVE}]}\n", "at must be more than 0"},
		{"at elsewhere", redisHead + "hooks: {before_run: [{at: 1s, redis: BGSAVE}]}\n", "at is for during_run hooks"},
		{"redis on sql", "experiment: a\ntarget: sqlite:x\nworkload: tpcb\nhooks: {after_run: [{redis: PING}]}\n", "redis is for Redis plans"},
		{"redis empty", redisHead + "hooks: {after_run: [{redis: \"\"}]}\n", "redis is empty"},
		{"two kinds", redisHead + "hooks: {after_run: [{redis: PING, shell: x}]}\n", "give one of redis, sql or shell, not two"},
		{"nothing", redisHead + "hooks: {after_run: [{name: x}]}\n", "give redis (commands to send) or shell"},
		{"when axis", redisHead + "matrix: {clients: [1, 2]}\nhooks: {after_run: [{shell: x, when: {size: big}}]}\n", "when size: the matrix has no such axis (axes: clients)"},
		{"when value", redisHead + "matrix: {clients: [1, 2]}\nhooks: {after_run: [{shell: x, when: {clients: 3}}]}\n", `"3" is not one of its values (1, 2)`},
		{"when once", redisHead + "hooks: {before_experiment: [{shell: x, when: {clients: 1}}]}\n", "when is for hooks around runs"},
		{"restart external", "experiment: a\ntarget: redis://127.0.0.1/0\nworkload: redis-kv\nmeasure_restart: [rdb]\n", "measure_restart is for throwaway Redis instances"},
		{"restart postgres", "experiment: a\ninstance: {kind: postgres}\nworkload: tpcb\nmeasure_restart: [rdb]\n", "measure_restart is for throwaway Redis instances"},
		{"restart format", redisHead + "measure_restart: [rdb, aof-rdb]\n", `"aof-rdb" is not a file Redis restarts from: use rdb, aof (with the RDB preamble) or aof-plain`},
		{"restart twice", redisHead + "measure_restart: [rdb, rdb]\n", "rdb is listed twice"},
		{"restart empty", redisHead + "measure_restart: []\n", "measure_restart: list what a Redis instance restarts from"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeString(t, tc.text)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("want a problem saying %q, got %v", tc.want, err)
			}
		})
	}

	// A during_run hook later than a cell's runs last is refused by the check.
	dir := t.TempDir()
	text := redisHead + "duration: 3s\nwarmup: 1s\nmatrix: {clients: [1, 2]}\nhooks: {during_run: [{at: 4s, redis: BGSAVE}]}\n"
	if err := os.WriteFile(filepath.Join(dir, "p.yaml"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := plan.ReadFile(filepath.Join(dir, "p.yaml")); err == nil || !strings.Contains(err.Error(), "p.yaml:7: a hook in during_run: at 4s is not within the runs of cell clients=1, which last 4s (warm-up 1s + duration 3s)") {
		t.Errorf("late hook: %v", err)
	}
}
