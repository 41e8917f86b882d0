package cli

import (
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/instance"
)

// fathom instance by hand: start with a setting, list, dsn, use it, stop --keep,
// start again by name, stop (removed).
func TestInstanceCommands(t *testing.T) {
	needServer(t, instance.Postgres)
	env, dir := expEnv(t)
	r := fathom(t, env, nil, "instance", "start", "--kind", "postgres", "--name", "byhand", "--set", "work_mem=8MB")
	if r.code != 0 || !strings.Contains(r.stdout, "instance byhand started") || !strings.Contains(r.stdout, "setting: work_mem = 8MB") {
		t.Fatalf("start: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	defer fathom(t, env, nil, "instance", "stop", "--all")
	r = fathom(t, env, nil, "instance", "list")
	if r.code != 0 || !strings.Contains(r.stdout, "byhand") || !strings.Contains(r.stdout, "running") {
		t.Errorf("list:\n%s%s", r.stdout, r.stderr)
	}
	r = fathom(t, env, nil, "instance", "dsn", "byhand")
	dsn := strings.TrimSpace(r.stdout)
	if r.code != 0 || !strings.HasPrefix(dsn, "postgres://postgres@127.0.0.1:") || strings.Contains(dsn, ":5432/") {
		t.Fatalf("dsn: %q %s", dsn, r.stderr)
	}
	if got := query(t, dsn, "SHOW work_mem"); got != "8MB" {
		t.Errorf("work_mem = %s", got)
	}
	if r := fathom(t, env, nil, "instance", "stop", "--keep", "byhand"); r.code != 0 || !strings.Contains(r.stdout, "stopped (kept") {
		t.Errorf("stop --keep: %s%s", r.stdout, r.stderr)
	}
	if r := fathom(t, env, nil, "instance", "list"); !strings.Contains(r.stdout, "stopped") {
		t.Errorf("list after stop:\n%s", r.stdout)
	}
	if r := fathom(t, env, nil, "instance", "start", "--name", "byhand"); r.code != 0 || !strings.Contains(r.stdout, "started") {
		t.Errorf("start again: %s%s", r.stdout, r.stderr)
	}
	if r := fathom(t, env, nil, "instance", "stop", "byhand"); r.code != 0 || !strings.Contains(r.stdout, "stopped and removed") {
		t.Errorf("stop: %s%s", r.stdout, r.stderr)
	}
	if list, _ := instance.List(dir); len(list) != 0 {
		t.Errorf("left: %v", list)
	}
	oneLine(t, fathom(t, env, nil, "instance", "stop", "nosuch"), exitUsage, "no instance named")
	oneLine(t, fathom(t, env, nil, "instance", "start", "--kind", "oracle"), exitUsage, "mariadb, postgres or redis")
	oneLine(t, fathom(t, env, nil, "instance", "stop"), exitUsage, "--all")
	r = fathom(t, env, nil, "instance", "start", "--kind", "postgres", "--name", "broken", "--set", "shared_buffers=lots")
	if r.code != exitFailure || !strings.Contains(r.stderr, "invalid value for parameter \"shared_buffers\"") {
		t.Errorf("bad setting: exit %d\n%s", r.code, r.stderr)
	}
	if list, _ := instance.List(dir); len(list) != 0 {
		t.Errorf("a failed start left %v", list)
	}
}
