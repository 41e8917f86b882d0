package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `fathom completion SHELL` writes each shell's script, and the completions behind it
// offer what fathom knows: workloads for -w, the store's runs for show, plan files for
// experiment; completing never creates a store.
func TestCompletion(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		r := fathom(t, nil, nil, "completion", sh)
		if r.code != 0 || !strings.Contains(r.stdout, "fathom") || !strings.Contains(r.stdout, "__complete") {
			t.Errorf("completion %s: exit %d, %d bytes\n%s", sh, r.code, len(r.stdout), r.stderr)
		}
	}
	env := storeEnv(t)
	missing := filepath.Join(t.TempDir(), "none.db")
	r := fathom(t, map[string]string{"FATHOM_STORE": missing}, nil, "__complete", "show", "")
	if !strings.Contains(r.stdout, "last\t") {
		t.Errorf("show, no store: %q", r.stdout)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("completing created the store %s", missing)
	}
	if r := fathom(t, nil, nil, "__complete", "run", "-w", "oltp_p"); !strings.Contains(r.stdout, "oltp_point_select\n") || strings.Contains(r.stdout, "tpcb") {
		t.Errorf("run -w oltp_p: %q", r.stdout)
	}
	if r := fathom(t, nil, nil, "__complete", "experiment", ""); !strings.Contains(r.stdout, "yaml\nyml\n") {
		t.Errorf("experiment: %q", r.stdout)
	}
	target := "sqlite:" + filepath.Join(t.TempDir(), "t.db")
	if r := fathom(t, env, nil, "prepare", "--target", target, "-w", "oltp_point_select", "--table-size", "100"); r.code != 0 {
		t.Fatalf("prepare: %s", r.stderr)
	}
	if r := fathom(t, env, nil, "run", "--target", target, "-w", "oltp_point_select", "-t", "5", "-q", "--no-collect"); r.code != 0 {
		t.Fatalf("run: %s", r.stderr)
	}
	r = fathom(t, env, nil, "__complete", "show", "")
	if !strings.Contains(r.stdout, "\n1\toltp_point_select complete ") {
		t.Errorf("show: the run is not offered: %q", r.stdout)
	}
	if r := fathom(t, env, nil, "__complete", "show", "--store", missing, ""); strings.Contains(r.stdout, "\n1\t") {
		t.Errorf("show --store %s offers another store's run: %q", missing, r.stdout)
	}
}
