package plan_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/fathom-lab/fathom/internal/plan"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	// The database kinds, whose rules plans follow (internal/db registers them with
	// plan), and the instance drivers, so that plans are checked against the servers'
	// catalogs.
	_ "github.com/fathom-lab/fathom/internal/db"
	_ "github.com/fathom-lab/fathom/internal/db/mysql/instance"
	_ "github.com/fathom-lab/fathom/internal/db/postgres/instance"
	_ "github.com/fathom-lab/fathom/internal/db/redis/instance"
	"github.com/fathom-lab/fathom/internal/instance"
)

const goodPlan = `experiment: durability
description: flush and sync on or off
instance: {kind: mariadb}
workload: oltp_read_write
options: {tables: 2, table_size: 1000}
settings:
  innodb_buffer_pool_size: 64M
clients: 2
duration: 2s
warmup: 1s
repetitions: 3
cooldown: 1s
seed: 42
labels: {purpose: test}
matrix:
  clients: [1, 4]
  durability:
    relaxed: {settings: {innodb_flush_log_at_trx_commit: 0, sync_binlog: 0}}
    durable: {settings: {innodb_flush_log_at_trx_commit: 1, sync-binlog: 1}, transactions: 100}
hooks:
  before_run:
    - sql: [ANALYZE TABLE sbtest1, "SELECT count(*) FROM sbtest1"]
    - shell: sync
      timeout: 30s
`

func decodeString(t *testing.T, text string) (*plan.Plan, error) {
	t.Helper()
	return plan.Decode("plan.yaml", "/plans", []byte(text))
}

func TestDecodeGoodPlan(t *testing.T) {
	p, err := decodeString(t, goodPlan)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "durability" || !p.Managed() || p.Instance.Kind != instance.MariaDB || p.Kind() != "mysql" {
		t.Errorf("plan: %+v", p)
	}
	if p.Repetitions != 3 || p.Order != plan.OrderInterleaved || p.Cooldown != time.Second || !p.HasSeed || p.Seed != 42 {
		t.Errorf("repetitions %d order %s cooldown %s seed %d", p.Repetitions, p.Order, p.Cooldown, p.Seed)
	}
	if len(p.Axes) != 2 || p.Axes[0].Named || !p.Axes[1].Named || len(p.Axes[1].Values) != 2 {
		t.Fatalf("axes: %+v", p.Axes)
	}
	if len(p.Hooks.BeforeRun) != 2 || len(p.Hooks.BeforeRun[0].SQL) != 2 || p.Hooks.BeforeRun[1].Timeout != 30*time.Second {
		t.Errorf("hooks: %+v", p.Hooks.BeforeRun)
	}
	cells := p.Cells()
	if len(cells) != 4 {
		t.Fatalf("%d cells", len(cells))
	}
	want := []string{"clients=1 durability=relaxed", "clients=1 durability=durable", "clients=4 durability=relaxed", "clients=4 durability=durable"}
	for i, c := range cells {
		if c.Key() != want[i] {
			t.Errorf("cell %d is %q, want %q", i, c.Key(), want[i])
		}
	}
	relaxed, durable := cells[2], cells[3]
	if relaxed.Clients != 4 || relaxed.Duration != 2*time.Second || relaxed.Transactions != 0 || relaxed.Warmup != time.Second {
		t.Errorf("relaxed: %+v", relaxed)
	}
	// transactions on an axis replaces the plan's duration.
	if durable.Transactions != 100 || durable.Duration != 0 || durable.Planned() != 0 {
		t.Errorf("durable: duration %s transactions %d", durable.Duration, durable.Transactions)
	}
	if v, _ := durable.Setting("sync_binlog"); v != "1" {
		t.Errorf("sync-binlog is spelled sync_binlog: %+v", durable.Settings)
	}
	if v, _ := durable.Setting("innodb_buffer_pool_size"); v != "64M" {
		t.Errorf("base setting lost: %+v", durable.Settings)
	}
	if got := durable.OptionMap(); got["tables"] != "2" || got["table_size"] != "1000" {
		t.Errorf("options: %v", got)
	}
}

// Every mistake in a file is reported at once, each with its line.
func TestDecodeReportsEveryProblem(t *testing.T) {
	bad := `experiment: 9lives
target: postgres://x@localhost/db
instance:
  kind: oracle
clients: zero
duraton: 10s
repetitions: 0
order: shuffled
matrix:
  clients: [1, 2, 2]
  settings.synchronous_commit: [on, off]
  durability:
    relaxed: {settings: {fsync: off}, bogus: 1}
  rate: {a: 1}
  nonsense: [1, 2]
hooks:
  before_run:
    - sql: VACUUM
      shell: echo
    - {}
  after_all: []
`
	_, err := decodeString(t, bad)
	var pe *plan.Error
	if !errors.As(err, &pe) {
		t.Fatalf("want *plan.Error, got %v", err)
	}
	want := []struct {
		line int
		text string
	}{
		{1, "experiment \"9lives\""},
		{1, "missing workload"},
		{4, "unknown instance kind \"oracle\""},
		{4, "either target"},
		{5, "clients must be a whole number"},
		{6, "did you mean duration?"},
		{7, "repetitions must be"},
		{8, "order must be interleaved, random or sequential"},
		{10, "\"2\" is listed twice"},
		{13, "unknown key \"bogus\""},
		{14, "give its values as a list"},
		{15, "unknown parameter \"nonsense\""},
		{18, "give sql or shell, not both"},
		{20, "give sql (statements to run) or shell"},
		{21, "unknown key \"after_all\" in hooks"},
	}
	for _, w := range want {
		found := false
		for _, p := range pe.Problems {
			if p.Line == w.line && strings.Contains(p.Msg, w.text) {
				found = true
			}
		}
		if !found {
			t.Errorf("no problem at line %d saying %q", w.line, w.text)
		}
	}
	if len(pe.Problems) != len(want) {
		t.Errorf("%d problems, want %d:\n%v", len(pe.Problems), len(want), err)
	}
	// Each problem is one line of the message, "file:line: problem".
	for _, l := range strings.Split(err.Error(), "\n") {
		if !strings.HasPrefix(l, "plan.yaml:") {
			t.Errorf("line %q does not start with the file name", l)
		}
	}
}

func TestDecodeCombinations(t *testing.T) {
	cases := []struct {
		name, text, want string
	}{
		{"empty", ``, "the file is empty"},
		{"yaml", "experiment: [", "YAML:"},
		{"two docs", "experiment: a\ntarget: sqlite:x\nworkload: tpcb\n---\nfoo: 1\n", "one YAML document"},
		{"nothing to run on", "experiment: a\nworkload: tpcb\n", "missing target or instance"},
		{"duration and transactions", "experiment: a\ntarget: sqlite:x\nworkload: tpcb\nduration: 1s\ntransactions: 5\n", "not both"},
		{"instances external", "experiment: a\ntarget: postgres://h/db\nworkload: tpcb\nmatrix: {instances: [1, 2]}\n", "instances is for managed instances"},
		{"restart each external", "experiment: a\ntarget: postgres://h/db\nworkload: tpcb\nrestart: each\n", "needs restart_command"},
		{"restart command managed", "experiment: a\ninstance: {kind: postgres}\nworkload: tpcb\nrestart_command: x\n", "fathom restarts its own"},
		{"sqlite settings", "experiment: a\ntarget: sqlite:x\nworkload: tpcb\nsettings: {synchronous: off}\n", "SQLite has no server settings"},
		{"two axes one key", "experiment: a\ninstance: {kind: postgres}\nworkload: tpcb\nmatrix:\n  clients: [1]\n  v: {a: {clients: 2}}\n", "both set clients"},
		{"empty matrix", "experiment: a\ntarget: sqlite:x\nworkload: tpcb\nmatrix: {}\n", "matrix is empty"},
		{"bad target", "experiment: a\ntarget: oracle://x\nworkload: tpcb\n", "not a DSN"},
		{"query mode", "experiment: a\ntarget: sqlite:x\nworkload: tpcb\nquery_mode: fast\n", "prepared or simple"},
		{"hook timeout", "experiment: a\ntarget: sqlite:x\nworkload: tpcb\nhooks: {before_run: [{shell: x, timeout: soon}]}\n", "not a duration"},
		{"bundle empty", "experiment: a\ninstance: {kind: postgres}\nworkload: tpcb\nmatrix: {v: {a: {}}}\n", "sets nothing"},
		{"collect", "experiment: a\ntarget: sqlite:x\nworkload: tpcb\ncollect: sometimes\n", "collect (true, false, or a list"},
		{"collect empty", "experiment: a\ntarget: sqlite:x\nworkload: tpcb\ncollect: []\n", "list collectors"},
		{"port and range", "experiment: a\ninstance: {kind: postgres, port: 40000, port_range: 40000-40010}\nworkload: tpcb\n", "give port or port_range, not both"},
		{"default port", "experiment: a\ninstance: {kind: postgres, port: 5432}\nworkload: tpcb\n", "instance port: port 5432 is a default database port"},
		{"port word", "experiment: a\ninstance: {kind: postgres, port: next}\nworkload: tpcb\n", `"next" is not a port number`},
		{"port range", "experiment: a\ninstance: {kind: postgres, port_range: 40010-40000}\nworkload: tpcb\n", "instance port_range: port range \"40010-40000\": want FIRST-LAST"},
		{"setting multiline", "experiment: a\ninstance: {kind: postgres}\nworkload: tpcb\nsettings: {work_mem: \"1MB\\nport=5432\"}\n", "one line"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeString(t, tc.text)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("want a problem saying %q, got %v", tc.want, err)
			}
		})
	}
}

// TestInstancePorts: a plan's instance port or port_range reaches the plan; one port
// cannot serve a cell of several instances.
func TestInstancePorts(t *testing.T) {
	dir := t.TempDir()
	read := func(text string) (*plan.Plan, error) {
		return plan.Read(filepath.Join(dir, "p.yaml"), dir, []byte("experiment: a\n"+text))
	}
	p, err := read("instance: {kind: postgres, port_range: 41000-41099}\nworkload: tpcb\nmatrix: {instances: [1, 2]}\n")
	if err != nil {
		t.Fatal(err)
	}
	if p.Instance.Ports == nil || p.Instance.Ports.String() != "41000-41099" {
		t.Errorf("port_range decoded as %v", p.Instance.Ports)
	}
	_, err = read("instance: {kind: postgres, port: 41000}\nworkload: tpcb\nmatrix: {instances: [1, 2]}\n")
	if err == nil || !strings.Contains(err.Error(), ":2: instance port: cell instances=2 runs 2 instances, which cannot share port 41000: give port_range (e.g. 41000-41001)") {
		t.Errorf("one port for two instances: %v", err)
	}
}

func TestCollect(t *testing.T) {
	p, err := decodeString(t, "experiment: a\ntarget: sqlite:x\nworkload: tpcb\ncollect: false\n")
	if err != nil || !p.CollectOff {
		t.Errorf("collect: false: %+v %v", p, err)
	}
	p, err = decodeString(t, "experiment: a\ntarget: sqlite:x\nworkload: tpcb\ncollect: [os, sqlite]\n")
	if err != nil || p.CollectOff || len(p.CollectOnly) != 2 || p.CollectLine != 4 {
		t.Errorf("collect list: %+v %v", p, err)
	}
}

func TestPlanWithoutMatrixHasOneCell(t *testing.T) {
	p, err := decodeString(t, "experiment: a\ntarget: sqlite:x\nworkload: tpcb\nclients: 3\ntransactions: 50\n")
	if err != nil {
		t.Fatal(err)
	}
	cells := p.Cells()
	if len(cells) != 1 || cells[0].Key() != "all" || cells[0].Clients != 3 || cells[0].Transactions != 50 || cells[0].Duration != 0 {
		t.Fatalf("cells: %+v", cells)
	}
	if p.Kind() != "sqlite" {
		t.Errorf("kind %s", p.Kind())
	}
}

func TestSchedule(t *testing.T) {
	inter := plan.Schedule(3, 2, plan.OrderInterleaved, 1)
	if fmt.Sprint(inter) != "[{0 0 1} {1 1 1} {2 2 1} {3 0 2} {4 1 2} {5 2 2}]" {
		t.Errorf("interleaved: %v", inter)
	}
	seq := plan.Schedule(3, 2, plan.OrderSequential, 1)
	if fmt.Sprint(seq) != "[{0 0 1} {1 0 2} {2 1 1} {3 1 2} {4 2 1} {5 2 2}]" {
		t.Errorf("sequential: %v", seq)
	}
	r1, r2 := plan.Schedule(5, 4, plan.OrderRandom, 7), plan.Schedule(5, 4, plan.OrderRandom, 7)
	if fmt.Sprint(r1) != fmt.Sprint(r2) {
		t.Error("random order is not reproducible from its seed")
	}
	// Every round runs every cell once.
	for r := 0; r < 4; r++ {
		seen := map[int]bool{}
		for _, s := range r1[r*5 : r*5+5] {
			if s.Repetition != r+1 || seen[s.Cell] {
				t.Fatalf("round %d: %v", r+1, r1[r*5:r*5+5])
			}
			seen[s.Cell] = true
		}
	}
	if fmt.Sprint(plan.Schedule(5, 4, plan.OrderRandom, 8)) == fmt.Sprint(r1) {
		t.Error("random order ignores its seed")
	}
	// Two calls with the same arguments must agree (a pure function of them).
	if first, again := plan.RunSeed(1, "a", 1), plan.RunSeed(1, "a", 1); first == plan.RunSeed(1, "a", 2) || first != again {
		t.Error("RunSeed")
	}
}

func TestSameValue(t *testing.T) {
	cases := []struct {
		kind, req, eff, unit, vartype string
		same                          bool
	}{
		{"postgres", "128MB", "16384", "8kB", "integer", true},
		{"postgres", "16384", "16384", "8kB", "integer", true},
		{"postgres", "64MB", "16384", "8kB", "integer", false},
		{"postgres", "4MB", "4096", "kB", "integer", true},
		{"postgres", "1GB", "1048576", "kB", "integer", true},
		{"postgres", "200ms", "200", "ms", "integer", true},
		{"postgres", "1s", "1000", "ms", "integer", true},
		{"postgres", "1min", "60", "s", "integer", true},
		{"postgres", "-1", "-1", "ms", "integer", true},
		{"postgres", "off", "off", "", "enum", true},
		{"postgres", "OFF", "off", "", "enum", true},
		{"postgres", "local", "off", "", "enum", false},
		{"postgres", "true", "on", "", "bool", true},
		{"postgres", "0", "off", "", "bool", true},
		{"postgres", "0.5", "0.5", "", "real", true},
		{"mysql", "64M", "67108864", "", "", true},
		{"mysql", "1G", "1073741824", "", "", true},
		{"mysql", "100M", "134217728", "", "", false},
		{"mysql", "0", "0", "", "", true},
		{"mysql", "ON", "1", "", "", true},
		{"mysql", "O_DIRECT", "O_DIRECT", "", "", true},
		{"mysql", "o_direct", "O_DIRECT", "", "", true},
		{"mysql", "fsync", "O_DIRECT", "", "", false},
	}
	for _, c := range cases {
		got := plan.SameMySQLValue(c.req, c.eff)
		if c.kind == "postgres" {
			got = plan.SamePostgresValue(c.req, c.eff, c.unit, c.vartype)
		}
		if got != c.same {
			t.Errorf("SameValue(%s, %q, %q, %q, %q) = %v", c.kind, c.req, c.eff, c.unit, c.vartype, got)
		}
	}
}

// Check looks up workloads (relative files from the plan's directory) and, for
// instances, the installed server's settings.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	text := `experiment: a
instance: {kind: postgres}
workload: nosuch.yaml
options: {scale: 1}
settings:
  shared_bufers: 64MB
  port: 5555
  fsync: maybe
  block_size: 16384
matrix:
  settings.synchronous_commit: [on, off]
`
	if err := os.WriteFile(filepath.Join(dir, "p.yaml"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := plan.ReadFile(filepath.Join(dir, "p.yaml"))
	if err == nil {
		t.Fatal("no problems found")
	}
	msg := err.Error()
	for _, want := range []string{":3: workload", "nosuch.yaml"} {
		if !strings.Contains(msg, want) {
			t.Errorf("missing %q in:\n%s", want, msg)
		}
	}
	if _, verr := instance.Version(instance.Postgres, ""); verr == nil {
		for _, want := range []string{":6: setting shared_bufers: PostgreSQL", "did you mean shared_buffers?", ":7: setting port: fathom sets an instance's port itself", "instance: {port: N}",
			":8: setting fsync: \"maybe\" is not on or off", ":9: setting block_size"} {
			if !strings.Contains(msg, want) {
				t.Errorf("missing %q in:\n%s", want, msg)
			}
		}
	}
	// A workload option the workload does not have.
	if err := os.WriteFile(filepath.Join(dir, "q.yaml"), []byte("experiment: a\ntarget: sqlite:x\nworkload: tpcb\noptions: {scael: 1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := plan.ReadFile(filepath.Join(dir, "q.yaml")); err == nil || !strings.Contains(err.Error(), "has no option scael") {
		t.Errorf("unknown option: %v", err)
	}
	if _, err := plan.ReadFile(filepath.Join(dir, "missing.yaml")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: %v", err)
	}
}

func TestRunShell(t *testing.T) {
	ctx := context.Background()
	r := plan.RunShell(ctx, "echo out; echo err >&2; echo $FATHOM_X; exit 3", t.TempDir(), []string{"FATHOM_X=seen"}, time.Minute)
	if r.OK || r.ExitCode != 3 || !strings.Contains(r.Output, "out\nerr\nseen") || r.Error != "exit status 3" {
		t.Errorf("result: %+v", r)
	}
	r = plan.RunShell(ctx, "true", "", nil, time.Minute)
	if !r.OK || r.ExitCode != 0 {
		t.Errorf("true: %+v", r)
	}
	// A hook past its timeout is killed with what it started.
	start := time.Now()
	r = plan.RunShell(ctx, "sleep 30 & sleep 30", "", nil, 200*time.Millisecond)
	if r.OK || !strings.Contains(r.Error, "timeout") || time.Since(start) > 10*time.Second {
		t.Errorf("timeout: %+v after %s", r, time.Since(start))
	}
	r.Phase, r.Index = plan.BeforeRun, 2
	if f := r.Failure(); !strings.Contains(f, "before_run hook 2 (shell) failed") {
		t.Errorf("failure: %s", f)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(goodPlan)
	f.Add("experiment: a\ntarget: sqlite:x\nworkload: tpcb\nmatrix: {v: {a: {settings: {x: 1}}}}\n")
	f.Add("experiment: a\ninstance: {kind: postgres, count: 2}\nworkload: tpcb\nhooks: {before_run: [{sql: [a, b]}]}\n")
	f.Add("&a [*a, *a]")
	f.Fuzz(func(t *testing.T, text string) {
		p, err := plan.Decode("f.yaml", "/", []byte(text))
		if err != nil {
			var pe *plan.Error
			if !errors.As(err, &pe) || len(pe.Problems) == 0 {
				t.Fatalf("error is not a list of problems: %v", err)
			}
			return
		}
		if len(p.Axes) <= 4 {
			for _, c := range p.Cells() {
				_ = c.Key()
			}
		}
	})
}

func TestPlanBaselineJudgeAndWarnings(t *testing.T) {
	p, err := plan.Read("p.yaml", t.TempDir(), []byte(`experiment: sizes
target: postgres://bench@db1/bench
workload: fanout
judge: writers
matrix:
  settings.cache_size: [64MB, 16MB, 1GB]
  durability:
    relaxed: {options: {fanout: 10}}
    durable: {options: {fanout: 20}}
baseline: {durability: durable, cache_size: 1GB}
`))
	if err != nil {
		t.Fatal(err)
	}
	if p.Judge != "writers" || p.Baseline["durability"] != "durable" || p.Baseline["cache_size"] != "1GB" {
		t.Errorf("judge %q baseline %v", p.Judge, p.Baseline)
	}
	ws := strings.Join(p.Warnings(), "\n")
	if !strings.Contains(ws, "repetitions: 1 with order: interleaved") {
		t.Errorf("no warning for one repetition interleaved:\n%s", ws)
	}
	_, err = plan.Read("p.yaml", t.TempDir(), []byte(`experiment: sizes
target: sqlite:/tmp/x.db
workload: tpcb
matrix:
  clients: [1, 2]
baseline: {clients: 3, layout: x}
judge: ""
`))
	_, jerr := plan.Read("p.yaml", t.TempDir(), []byte(`experiment: j
target: sqlite:/tmp/x.db
workload: tpcb
judge: writers
`))
	if jerr == nil || !strings.Contains(jerr.Error(), "p.yaml:4: judge writers: workload tpcb has no such transaction type or client group (it has: tpcb-like)") {
		t.Errorf("judge on a workload without it: %v", jerr)
	}
	for _, want := range []string{`baseline clients: "3" is not one of its values (1, 2)`, "baseline layout: the matrix has no such axis", "judge: name a transaction type"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want %q in %v", want, err)
		}
	}
	// A shutdown-time setting on an external server without a restart command.
	p, err = plan.Read("p.yaml", t.TempDir(), []byte(`experiment: dump
target: mysql://root@127.0.0.1/x
workload: oltp_point_select
repetitions: 2
matrix:
  settings.innodb_buffer_pool_dump_at_shutdown: ["OFF", "ON"]
`))
	if err != nil {
		t.Fatal(err)
	}
	if ws := strings.Join(p.Warnings(), "\n"); !strings.Contains(ws, "acts at shutdown") || !strings.Contains(ws, "add restart_command") || strings.Contains(ws, "repetitions: 1") {
		t.Errorf("warnings:\n%s", ws)
	}
}

func TestOSSettings(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "vm"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, "vm", "dirty_background_ratio")
	if err := os.WriteFile(file, []byte("10\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := plan.CheckOSSetting(root, "vm.dirty_background_ratio"); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "vm", "not_a_file"), 0o755); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{
		"vm.nonesuch":   "this system has no",
		"vm.not_a_file": "fathom may not change",
		"VM;rm":         "is not a sysctl name",
	} {
		err := plan.CheckOSSetting(root, key)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line with %q", key, err, want)
		}
	}
	o := plan.NewOSSettings(root)
	got, err := o.Apply([]plan.KV{{Name: "vm.dirty_background_ratio", Value: "1"}})
	if err != nil || got["os.vm.dirty_background_ratio"] != "1" {
		t.Fatalf("apply: %v %v", got, err)
	}
	if b, _ := os.ReadFile(file); strings.TrimSpace(string(b)) != "1" {
		t.Errorf("file holds %q", b)
	}
	// A cell without the setting runs with the system's own value.
	if got, err = o.Apply(nil); err != nil || got["os.vm.dirty_background_ratio"] != "10" {
		t.Errorf("cell without it: %v %v", got, err)
	}
	_, _ = o.Apply([]plan.KV{{Name: "vm.dirty_background_ratio", Value: "1"}})
	if err := o.Restore(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(file); strings.TrimSpace(string(b)) != "10" {
		t.Errorf("restored %q, want 10", b)
	}
	if ch := o.Changed(); len(ch) != 1 || ch[0] != "os.vm.dirty_background_ratio=10" {
		t.Errorf("changed %v", ch)
	}
	// The plan check refuses a setting fathom may not change, in one line with its line.
	_, err = plan.Read("p.yaml", t.TempDir(), []byte(`experiment: os
target: sqlite:/tmp/x.db
workload: tpcb
matrix:
  settings.os.vm.nonesuch: [1, 2]
`))
	if err == nil || !strings.Contains(err.Error(), "p.yaml:5: os.vm.nonesuch: this system has no /proc/sys/vm/nonesuch") {
		t.Errorf("plan with an unknown sysctl: %v", err)
	}
}
