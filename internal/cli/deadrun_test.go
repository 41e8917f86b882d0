package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/store/stores"
)

// TestHelperFathomProcess is not a test: it is fathom in a child process, for tests
// that kill it. The parent sets FATHOM_HELPER_ARGS to the arguments as JSON.
func TestHelperFathomProcess(t *testing.T) {
	js := os.Getenv("FATHOM_HELPER_ARGS")
	if js == "" {
		t.Skip("helper process for other tests")
	}
	var args []string
	if err := json.Unmarshal([]byte(js), &args); err != nil {
		os.Exit(99)
	}
	env := osEnv()
	env.Args = args
	os.Exit(Run(context.Background(), env))
}

// startFathom starts fathom with args in a child process (this test binary).
func startFathom(t *testing.T, env map[string]string, args ...string) *exec.Cmd {
	t.Helper()
	js, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperFathomProcess$")
	cmd.Env = append(os.Environ(), "FATHOM_HELPER_ARGS="+string(js))
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
}

// A run whose process was killed (SIGKILL) is shown as interrupted (process gone) by
// every command that lists or reads runs, and its finished intervals stay usable.
func TestKilledRunIsShownAsGone(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"FATHOM_STORE": filepath.Join(dir, "fathom.db")}
	tgt := "sqlite:" + filepath.Join(dir, "t.db")
	wl := []string{"--target", tgt, "--workload", "oltp_point_select", "--table-size", "1000"}
	if r := fathom(t, env, nil, append([]string{"prepare"}, wl...)...); r.code != 0 {
		t.Fatalf("prepare: %s", r.stderr)
	}
	child := startFathom(t, env, append([]string{"run", "-T", "10m", "-P", "100ms", "-q"}, wl...)...)

	// Wait (polling the store) until the child has stored a few intervals.
	st, err := stores.Open(env["FATHOM_STORE"])
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if ivs, err := st.Intervals(ctx, 1); err == nil && len(ivs) >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the child stored no intervals in 2 minutes")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if run, err := st.Run(ctx, 1); err != nil || run.Status != "running" || run.Gone {
		t.Fatalf("while the child lives, run 1 reads %+v, %v", run, err)
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	kept, err := st.Intervals(ctx, 1)
	if err != nil || len(kept) < 3 {
		t.Fatalf("after the kill: %d intervals, %v", len(kept), err)
	}

	// A second run, finished, to compare with.
	if r := fathom(t, env, nil, append([]string{"run", "-T", "1", "-q"}, wl...)...); r.code != 0 {
		t.Fatalf("second run: %s", r.stderr)
	}
	const gone = "interrupted (process gone)"
	has := func(what string, r result, want ...string) {
		t.Helper()
		if r.code != 0 {
			t.Errorf("%s: exit %d: %s", what, r.code, r.stderr)
		}
		for _, w := range want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("%s does not say %q:\n%s", what, w, r.stdout)
			}
		}
	}
	has("runs", fathom(t, env, nil, "runs"), gone)
	has("runs --status interrupted", fathom(t, env, nil, "runs", "--status", "interrupted"), gone)
	has("runs --status running", fathom(t, env, nil, "runs", "--status", "running"), "no runs in", "match --status running")
	if r := fathom(t, env, nil, "runs", "--json"); !strings.Contains(r.stdout, `"process_gone": true`) {
		t.Errorf("runs --json does not mark the run:\n%s", r.stdout)
	}
	has("show", fathom(t, env, nil, "show", "1"), "status:   "+gone, "run 1 interrupted")
	r := fathom(t, env, nil, "export", "1", "--format", "json")
	has("export", r, `"status": "interrupted"`)
	var exp struct{ Intervals []json.RawMessage }
	if err := json.Unmarshal([]byte(r.stdout), &exp); err != nil || len(exp.Intervals) < len(kept) {
		t.Errorf("export has %d intervals (%v), the store %d", len(exp.Intervals), err, len(kept))
	}
	out := filepath.Join(dir, "report")
	has("report", fathom(t, env, nil, "report", "1", "-o", out))
	if b, err := os.ReadFile(filepath.Join(out, "index.html")); err != nil || !strings.Contains(string(b), gone) {
		t.Errorf("the report does not say %q (%v)", gone, err)
	}
	r = fathom(t, env, nil, "compare", "1", "2")
	has("compare", r, "throughput")
	if !strings.Contains(r.stderr, "run 1: "+gone+"; its ") {
		t.Errorf("compare does not say run 1 is %s: %q", gone, r.stderr)
	}
	if run, err := st.Run(ctx, 2); err != nil || run.Status != "complete" || run.Gone {
		t.Errorf("the finished run reads %s (%v)", run.Status, err)
	}
}

// An experiment killed with SIGKILL reads the same way as a killed run: the experiment
// and its run in progress are interrupted (process gone).
func TestKilledExperimentIsShownAsGone(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"FATHOM_STORE": filepath.Join(dir, "fathom.db")}
	db := filepath.Join(dir, "t.db")
	if r := fathom(t, env, nil, "prepare", "--target", "sqlite:"+db, "--workload", "oltp_point_select", "--table-size", "1000"); r.code != 0 {
		t.Fatalf("prepare: %s", r.stderr)
	}
	plan := writePlan(t, "experiment: killed\ntarget: sqlite:"+db+"\nworkload: oltp_point_select\noptions: {table_size: 1000}\n"+
		"duration: 10m\nreport_interval: 100ms\nmatrix:\n  clients: [1, 2]\n")
	child := startFathom(t, env, "experiment", "-q", plan)
	waitFor(t, "the experiment's first stored intervals", func() bool { n, _ := storedIntervals(env["FATHOM_STORE"], 1); return n >= 3 })
	if r := fathom(t, env, nil, "experiments"); !strings.Contains(r.stdout, "running") {
		t.Errorf("while the child lives:\n%s", r.stdout)
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	const gone = "interrupted (process gone)"
	if r := fathom(t, env, nil, "experiments"); !strings.Contains(r.stdout, gone) {
		t.Errorf("experiments:\n%s", r.stdout)
	}
	if r := fathom(t, env, nil, "show", "exp:killed"); !strings.Contains(r.stdout, gone) {
		t.Errorf("show exp:killed:\n%s%s", r.stdout, r.stderr)
	}
	if r := fathom(t, env, nil, "runs"); !strings.Contains(r.stdout, gone) {
		t.Errorf("runs:\n%s", r.stdout)
	}
}
