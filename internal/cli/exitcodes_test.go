package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// One exit code per kind of outcome: a run that is not there is a usage mistake (2),
// whether named by id or as `last` in a store that has none, for every command that
// takes a run; a misspelt workload gets "did you mean"; prepare -q says one line.
func TestExitCodesAndNames(t *testing.T) {
	env := storeEnv(t)
	for _, args := range [][]string{
		{"show", "99"}, {"show", "last"}, {"report", "last"}, {"export", "last"}, {"stalls", "last"},
		{"compare", "last", "1"},
	} {
		r := fathom(t, env, nil, args...)
		want := "no runs in"
		if args[1] == "99" {
			want = "not found"
		}
		oneLine(t, r, exitUsage, want)
	}
	target := "sqlite:" + filepath.Join(t.TempDir(), "t.db")
	for w, near := range map[string]string{"tpcbb": "tpcb", "oltp_point_selct": "oltp_point_select", "redis_kv": "redis-kv"} {
		oneLine(t, fathom(t, env, nil, "run", "-w", w, "--target", target), exitUsage, "did you mean "+near+"?")
	}
	if r := fathom(t, env, nil, "run", "-w", "oltp", "--target", target); strings.Contains(r.stderr, "did you mean") {
		t.Errorf("-w oltp is near several workloads, yet one was suggested: %q", r.stderr)
	}
	r := fathom(t, env, nil, "prepare", "-q", "-w", "oltp_point_select", "--table-size", "100", "--target", target)
	if r.code != 0 || r.stderr != "" || !strings.HasPrefix(r.stdout, "prepared oltp_point_select in ") || strings.Count(r.stdout, "\n") != 1 {
		t.Errorf("prepare -q: exit %d\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
	}
}

// `run --json` says what the screen says after the summary: stalls ([] when none was
// found, null with the reason when they were not looked for).
func TestRunJSONStalls(t *testing.T) {
	env := storeEnv(t)
	target := "sqlite:" + filepath.Join(t.TempDir(), "t.db")
	if r := fathom(t, env, nil, "prepare", "-q", "-w", "oltp_point_select", "--table-size", "100", "--target", target); r.code != 0 {
		t.Fatalf("prepare: %s", r.stderr)
	}
	decode := func(r result) map[string]any {
		t.Helper()
		var m map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &m); err != nil {
			t.Fatalf("stdout is not JSON: %v\n%s", err, r.stdout)
		}
		return m
	}
	m := decode(fathom(t, env, nil, "run", "-w", "oltp_point_select", "--target", target, "-T", "2", "-P", "0.25", "--json"))
	if s, ok := m["stalls"].([]any); !ok || m["stalls_not_analysed"] != nil {
		t.Errorf("8 intervals, sampled: stalls %v (%T), not analysed %v", m["stalls"], m["stalls"], m["stalls_not_analysed"])
	} else {
		t.Logf("%d stalls", len(s))
	}
	m = decode(fathom(t, env, nil, "run", "-w", "oltp_point_select", "--target", target, "-T", "2", "-P", "0.5", "--json"))
	if m["stalls"] != nil || !strings.Contains(fmt.Sprint(m["stalls_not_analysed"]), "too few measured intervals") {
		t.Errorf("4 intervals: stalls %v, not analysed %v", m["stalls"], m["stalls_not_analysed"])
	}
	m = decode(fathom(t, env, nil, "run", "-w", "oltp_point_select", "--target", target, "-T", "1", "--no-collect", "--json"))
	if m["stalls"] != nil || !strings.Contains(fmt.Sprint(m["stalls_not_analysed"]), "sampling was off") {
		t.Errorf("--no-collect: stalls %v, not analysed %v", m["stalls"], m["stalls_not_analysed"])
	}
}
