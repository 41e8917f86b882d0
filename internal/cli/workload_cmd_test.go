package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const specTestdata = "../workload/spec/testdata/"

func TestWorkloadCheck(t *testing.T) {
	r := fathom(t, nil, nil, "workload", "check", specTestdata+"example.yaml")
	if r.code != exitOK || !strings.Contains(r.stdout, "example.yaml: ok: workload shop, 3 tables, 2 transactions") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Every problem of every file, each with its line; exit 2 (a usage mistake, as
	// experiment --check).
	r = fathom(t, nil, nil, "workload", "check", specTestdata+"bad/undefined.yaml", specTestdata+"bad/unknown_keys.yaml", specTestdata+"example.yaml")
	if r.code != exitUsage {
		t.Errorf("exit %d, want 2", r.code)
	}
	for _, want := range []string{
		"bad/undefined.yaml:8: table t rows: parameter rowz is used but not defined",
		"bad/undefined.yaml:23: group g runs transaction three, which is not defined",
		`bad/unknown_keys.yaml:10: unknown key "wieght" in a transaction`,
		"example.yaml: ok",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("no %q in\n%s", want, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, "problems in 2 of 3 files") {
		t.Errorf("stderr %q", r.stderr)
	}
	oneLine(t, fathom(t, nil, nil, "workload", "check"), exitUsage, "needs a workload file")
	r = fathom(t, nil, nil, "workload", "check", filepath.Join(t.TempDir(), "missing.yaml"))
	if r.code != exitUsage || !strings.Contains(r.stderr, "no such file") {
		t.Errorf("missing file: exit %d %s", r.code, r.stderr)
	}
}

func TestWorkloadShow(t *testing.T) {
	r := fathom(t, nil, nil, "workload", "show", "fanout", "--set", "writers=36", "--dialect", "mysql")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"writers = 36", "group writers: 36 clients", "SELECT LAST_INSERT_ID()", "ENGINE=InnoDB", "with probability 0.95:"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("no %q in\n%s", want, r.stdout)
		}
	}
	r = fathom(t, nil, nil, "workload", "show", specTestdata+"example.yaml")
	if r.code != exitOK || !strings.Contains(r.stdout, "RETURNING id") {
		t.Errorf("file: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = fathom(t, nil, nil, "workload", "show", "ycsb", "--source")
	data, _ := os.ReadFile("../workload/files/ycsb.yaml")
	if r.code != exitOK || r.stdout != string(data) {
		t.Errorf("--source: exit %d", r.code)
	}
	r = fathom(t, nil, nil, "workload", "show", "tpcb")
	if r.code != exitOK || !strings.Contains(r.stdout, "transaction types: tpcb-like") {
		t.Errorf("tpcb: exit %d\n%s", r.code, r.stdout)
	}
	oneLine(t, fathom(t, nil, nil, "workload", "show", "fanout", "--dialect", "oracle"), exitUsage, `--dialect "oracle"`)
	oneLine(t, fathom(t, nil, nil, "workload", "show", "fanout", "--set", "writers=0"), exitUsage, "clients: 0 is out of range")
	oneLine(t, fathom(t, nil, nil, "workload", "show", "nope"), exitUsage, `unknown workload "nope"`)
	oneLine(t, fathom(t, nil, nil, "workload", "show", "tpcb", "--source"), exitUsage, "not a shipped workload file")
}
