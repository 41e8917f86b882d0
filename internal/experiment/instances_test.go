package experiment

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/instance/instancetest"
	"github.com/fathom-lab/fathom/internal/plan"
	"github.com/fathom-lab/fathom/internal/store"
)

// instanceAxisRun starts the plan text (written in a fresh directory) with instances
// under dir, and returns the experiment, its runs by value of axis "server", and the
// events.
func instanceAxisRun(t *testing.T, text, dir string) (*store.Experiment, map[string][]*store.Run, *recorder) {
	t.Helper()
	pdir := t.TempDir()
	path := filepath.Join(pdir, "plan.yaml")
	p, err := plan.Read(path, pdir, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if p.InstanceAxis != "server" || !p.Managed() {
		t.Fatalf("instance axis %q, managed %v", p.InstanceAxis, p.Managed())
	}
	st := openStore(t)
	ctx := context.Background()
	rec := &recorder{}
	out, err := Start(ctx, st, p, path, Options{Listener: rec, InstanceDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != "complete" {
		t.Fatalf("experiment %s", out.Status)
	}
	exp, err := st.Experiment(ctx, out.Experiment.ID)
	if err != nil {
		t.Fatal(err)
	}
	eruns, err := st.ExperimentRuns(ctx, exp.ID)
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string][]*store.Run{}
	for _, er := range eruns {
		r, err := st.Run(ctx, er.RunID)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range er.Coords {
			if c.Axis == "server" {
				runs[c.Value] = append(runs[c.Value], r)
			}
		}
	}
	return exp, runs, rec
}

// notes are the texts of the Note events.
func (r *recorder) notes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		if n, ok := e.(Note); ok {
			out = append(out, n.Text)
		}
	}
	return out
}

func countPrefix(list []string, prefix string) int {
	n := 0
	for _, s := range list {
		if strings.HasPrefix(strings.TrimSpace(s), prefix) {
			n++
		}
	}
	return n
}

// TestInstanceAxis runs one plan on a throwaway PostgreSQL and a throwaway MariaDB,
// named as the values of an axis, with a setting of each server's own on its value:
// each instance is created once and reused by its cells, each run is stored against
// its own kind and version with its value's setting in effect, the instance of the
// other value is stopped while a cell runs, and both are removed at the end.
func TestInstanceAxis(t *testing.T) {
	instancetest.NeedKind(t, instance.Postgres)
	instancetest.NeedKind(t, instance.MariaDB)
	dir := instancetest.Dir(t)
	pgBin := ""
	if b := dbtest.PGBin(true); b != "" {
		pgBin = ", bin: '" + b + "'"
	}
	text := fmt.Sprintf(`experiment: two-engines
workload: oltp_point_select
options: {tables: 1, table_size: 200}
transactions: 40
report_interval: 100ms
seed: 3
matrix:
  server:
    pg: {instance: {kind: postgres%s}, settings: {synchronous_commit: "off"}}
    maria: {instance: {kind: mariadb}, settings: {innodb_flush_log_at_trx_commit: 2}}
  clients: [1, 2]
`, pgBin)
	exp, runs, rec := instanceAxisRun(t, text, dir)
	if !strings.HasPrefix(exp.Target, "2 throwaway instances (axis server): pg postgres ") || !strings.Contains(exp.Target, ", maria mariadb ") {
		t.Errorf("experiment target %q", exp.Target)
	}
	want := map[string]struct{ kind, setting, value string }{
		"pg":    {"postgres", "synchronous_commit", "off"},
		"maria": {"mysql", "innodb_flush_log_at_trx_commit", "2"},
	}
	for value, w := range want {
		if len(runs[value]) != 2 {
			t.Errorf("server=%s: %d runs, want 2", value, len(runs[value]))
		}
		for _, r := range runs[value] {
			if r.TargetKind != w.kind || r.Status != "complete" || r.ServerVersion == "" || r.Labels["server"] != value {
				t.Errorf("run %d of server=%s: kind %s, status %s, version %q, label %q", r.ID, value, r.TargetKind, r.Status, r.ServerVersion, r.Labels["server"])
			}
			if r.Settings[w.setting] != w.value {
				t.Errorf("run %d of server=%s: %s = %q in its settings, want %q", r.ID, value, w.setting, r.Settings[w.setting], w.value)
			}
		}
	}
	notes := rec.notes()
	if n := countPrefix(notes, "created instance two-engines-"); n != 2 {
		t.Errorf("%d instances created, want 2 (one per value, reused by its cells):\n%s", n, strings.Join(notes, "\n"))
	}
	if n := countPrefix(notes, "stopped instance two-engines-"); n < 1 {
		t.Errorf("the other value's instance was never stopped:\n%s", strings.Join(notes, "\n"))
	}
	if n := countPrefix(notes, "removed instance two-engines-"); n != 2 {
		t.Errorf("%d instances removed, want 2:\n%s", n, strings.Join(notes, "\n"))
	}
	// Nothing is left in the instance directory.
	left, _ := filepath.Glob(filepath.Join(dir, "*", "instance.json"))
	if len(left) > 0 {
		t.Errorf("instances left: %v", left)
	}
}

// TestInstanceAxisVersions runs one plan on two PostgreSQL major versions: the
// installed one and the build in FATHOM_TEST_PG_BIN (scripts/test-servers.sh
// --pg-matrix, or /var/cache/fathom/postgres/N/bin). Each run records its own
// version.
func TestInstanceAxisVersions(t *testing.T) {
	bin := os.Getenv("FATHOM_TEST_PG_BIN")
	if bin == "" {
		t.Skip("FATHOM_TEST_PG_BIN is not set: two PostgreSQL versions need the version matrix's build (scripts/test-servers.sh --pg-matrix)")
	}
	instancetest.NeedKind(t, instance.Postgres)
	installed, err := instance.Version(instance.Postgres, "")
	if err != nil {
		t.Skipf("no installed PostgreSQL beside %s: %v", bin, err)
	}
	_, other, err := instance.FindIn(instance.Postgres, bin, "")
	if err != nil {
		t.Fatal(err)
	}
	major := func(v string) string { return strings.SplitN(v, ".", 2)[0] }
	if major(installed) == major(other) {
		t.Skipf("the installed PostgreSQL and %s are both %s", bin, major(installed))
	}
	dir := instancetest.Dir(t)
	text := fmt.Sprintf(`experiment: two-versions
workload: tpcb
options: {scale: 1}
transactions: 30
report_interval: 100ms
repetitions: 2
matrix:
  server:
    old: {instance: {kind: postgres, version: %s}}
    new: {instance: {kind: postgres, bin: '%s'}}
`, major(installed), bin)
	exp, runs, rec := instanceAxisRun(t, text, dir)
	if !strings.Contains(exp.Target, "old postgres "+installed) || !strings.Contains(exp.Target, "new postgres "+other) {
		t.Errorf("experiment target %q, want old %s and new %s", exp.Target, installed, other)
	}
	for value, v := range map[string]string{"old": installed, "new": other} {
		if len(runs[value]) != 2 {
			t.Errorf("server=%s: %d runs, want 2", value, len(runs[value]))
		}
		for _, r := range runs[value] {
			if r.TargetKind != "postgres" || !strings.Contains(r.ServerVersion, "PostgreSQL "+v) || r.Status != "complete" {
				t.Errorf("run %d of server=%s: %s %s (%s), want postgres %s", r.ID, value, r.TargetKind, r.ServerVersion, r.Status, v)
			}
		}
	}
	if n := countPrefix(rec.notes(), "created instance two-versions-"); n != 2 {
		t.Errorf("%d instances created, want 2", n)
	}
}

// TestInstanceAxisPlanProblems: the mistakes an axis of instances can hold, each
// refused with its fix.
func TestInstanceAxisPlanProblems(t *testing.T) {
	instancetest.NeedKind(t, instance.Postgres) // the last cases read the installed server's programs
	for _, c := range []struct{ text, want string }{
		{"matrix:\n  server:\n    a: {instance: {kind: postgres}}\n    b: {clients: 2}\n", "give every value an instance"},
		{"matrix:\n  server:\n    a: {instance: {kind: postgres}}\n    b: {target: 'postgres://x@h/db'}\n", "not some of each"},
		{"target: postgres://x@h/db\nmatrix:\n  server:\n    a: {instance: {kind: postgres}}\n", "leave out the plan's target and instance"},
		{"instance: {kind: postgres}\nmatrix:\n  server:\n    a: {instance: {kind: postgres}}\n", "leave out the plan's target and instance"},
		{"restart_command: 'true'\nmatrix:\n  server:\n    a: {instance: {kind: postgres}}\n", "restart_command is for an external target"},
		{"matrix:\n  server:\n    a: {instance: {kind: postgres}}\n  other:\n    b: {instance: {kind: mariadb}}\n", "on one axis"},
		{"matrix:\n  server:\n    a: {instance: {kind: postgres}, instances: 2}\n", "several instances per cell need the plan's instance"},
		{"matrix:\n  server:\n    a: {instance: {kind: postgres, count: 2}}\n", "unknown key \"count\""},
		{"matrix:\n  server:\n    a: {instance: {version: 16}}\n", "missing kind"},
		{"matrix:\n  server:\n    a: {instance: {kind: postgres, version: 3}}\n", "matrix server a instance: PostgreSQL 3 is not installed"},
		{"matrix:\n  server:\n    a: {instance: {kind: postgres, bin: /nonexistent}}\n", "/nonexistent has no"},
		{"matrix:\n  server:\n    a: {instance: {kind: postgres}, settings: {no_such_setting_x: 1}}\n", "has no such setting"},
	} {
		_, err := plan.Read("p.yaml", t.TempDir(), []byte("experiment: x\nworkload: tpcb\n"+c.text))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.text, err, c.want)
		}
	}
}
