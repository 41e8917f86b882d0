package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func scriptFile(t *testing.T, name, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPgbenchScriptMistakes: every mistake is one line and exit 2, before connecting.
func TestPgbenchScriptMistakes(t *testing.T) {
	env := storeEnv(t)
	bad := scriptFile(t, "bad.sql", "SELECT 1;\n\\sett x 1\n")
	tgt := "--target=postgres://nobody@127.0.0.1:1/none" // never reached
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "-f", bad, tgt}, "bad.sql:2: invalid command \\sett"},
		{[]string{"run", "-f", bad + "@x", tgt}, "the weight after @ must be a whole number"},
		{[]string{"run", "-f", "/nonexistent.sql", tgt}, "-f /nonexistent.sql: cannot read the script"},
		{[]string{"run", "-b", "tpcb-like", "--workload", "tpcb", tgt}, "--workload and pgbench scripts (-f, -b, -S, -N) do not mix"},
		{[]string{"run", "--allow-shell", tgt}, "-D, -r and --allow-shell are for pgbench scripts"},
		{[]string{"run", "-w", "tpcb", "-D", "x=1", tgt}, "-D, -r and --allow-shell are for pgbench scripts"},
		{[]string{"run", "-f", scriptFile(t, "oltp.lua", "function event() end\n"), tgt}, "oltp.lua: -f takes pgbench scripts; a sysbench Lua script goes in -w"},
		{[]string{"run", "-w", "my_oltp.lua", tgt}, "sysbench script my_oltp.lua: no such file"},
		{[]string{"run", "-S", "-D", "1 x", tgt}, `-D "1 x": use -D name=value`},
		{[]string{"run", "-b", "nope", tgt}, "-b nope: no such built-in script (built-ins: tpcb-like, simple-update, select-only)"},
		{[]string{"run", "-S", "-M", "fast", tgt}, "-M fast: use simple, extended or prepared"},
		{[]string{"run", "-f", scriptFile(t, "sh.sql", "\\shell rm -rf /tmp/x\n"), tgt}, "allow them with --allow-shell"},
	} {
		oneLine(t, fathom(t, env, nil, c.args...), exitUsage, c.want)
	}
}

// TestPgbenchScriptsRun: built-in and custom scripts mixed by weight on SQLite, each
// reported as its own transaction type, with -r's per-command latencies; a mistake
// found while running fails the run with the script's line.
func TestPgbenchScriptsRun(t *testing.T) {
	env := storeEnv(t)
	tgt := "--target=sqlite:" + filepath.Join(t.TempDir(), "t.db")
	if r := fathom(t, env, nil, "prepare", "--workload", "tpcb", "--scale", "1", tgt); r.code != 0 {
		t.Fatalf("prepare: %d %s", r.code, r.stderr)
	}
	custom := scriptFile(t, "custom.sql", "\\set x random(1, 10) * :mult\nSELECT :x AS v \\gset\n\\if :v > 20 OR :v < 2\n\\set fail 1 / 0\n\\endif\n")
	r := fathom(t, env, nil, "run", "-f", custom+"@3", "-S", "-D", "mult=2", "-r", "-c", "2", "-t", "100", "--json", "-q", tgt)
	if r.code != 0 {
		t.Fatalf("run: %d %s", r.code, r.stderr)
	}
	s := summary(t, r)
	c, so := s.ByTxn["custom.sql"], s.ByTxn["select-only"]
	if c.Transactions+so.Transactions != 200 || c.Transactions < 100 || so.Transactions < 20 {
		t.Errorf("custom %d, select-only %d transactions: want 200 in about 3:1", c.Transactions, so.Transactions)
	}
	if s.Workload != "pgbench:select-only+custom.sql" || s.Errors != 0 {
		t.Errorf("workload %q, errors %d", s.Workload, s.Errors)
	}
	if len(s.PerCommand) != 7 || s.PerCommand[2].Text != "\\set x random(1, 10) * :mult" || s.PerCommand[2].Count != c.Transactions {
		t.Errorf("per-command latencies: %+v", s.PerCommand)
	}
	r = fathom(t, env, nil, "run", "-f", scriptFile(t, "undef.sql", "SELECT 1;\n\\set x :nope + 1\n"), "-t", "5", "-q", tgt)
	if r.code != exitErrors || !strings.Contains(r.stderr, "client 0 script undef.sql line 2 (\\set x :nope + 1): undefined variable \"nope\"") ||
		!strings.Contains(r.stderr, "clients aborted: 1 of 1") {
		t.Errorf("undefined variable: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestPerCommandExcludesWarmup: -r's latencies cover the measured intervals only (each
// command of select-only ran once per measured transaction, none of the warm-up's),
// say so, and are kept with the run for show and export.
func TestPerCommandExcludesWarmup(t *testing.T) {
	env := storeEnv(t)
	tgt := "--target=sqlite:" + filepath.Join(t.TempDir(), "t.db")
	if r := fathom(t, env, nil, "prepare", "--workload", "tpcb", "--scale", "1", tgt); r.code != 0 {
		t.Fatalf("prepare: %d %s", r.code, r.stderr)
	}
	r := fathom(t, env, nil, "run", "-S", "-r", "-c", "2", "-T", "1s", "--warmup", "500ms", "--json", "-q", tgt)
	if r.code != 0 {
		t.Fatalf("run: %d %s", r.code, r.stderr)
	}
	s := summary(t, r)
	if s.Transactions == 0 || len(s.PerCommand) != 2 {
		t.Fatalf("%d transactions, %d commands timed: want some and 2", s.Transactions, len(s.PerCommand))
	}
	for _, c := range s.PerCommand {
		if c.Count != s.Transactions || c.Latency.Mean <= 0 {
			t.Errorf("line %d %q: count %d mean %v, want %d measured runs", c.Line, c.Text, c.Count, c.Latency.Mean, s.Transactions)
		}
	}
	if !strings.Contains(s.PerCommandWindow, "warm-up of 500ms excluded") {
		t.Errorf("window %q does not say the warm-up is excluded", s.PerCommandWindow)
	}
	// The warm-up did run transactions, so equal counts above mean they were left out.
	ex := fathom(t, env, nil, "export", "last", "-f", "json")
	var rows struct {
		Intervals []struct {
			Warmup bool  `json:"warmup"`
			OK     int64 `json:"ok"`
		} `json:"intervals"`
	}
	if err := json.Unmarshal([]byte(ex.stdout), &rows); err != nil {
		t.Fatalf("export: %v %s", err, ex.stderr)
	}
	var warm int64
	for _, iv := range rows.Intervals {
		if iv.Warmup {
			warm += iv.OK
		}
	}
	if warm == 0 {
		t.Fatalf("the warm-up ran no transaction; the test shows nothing")
	}
	show := fathom(t, env, nil, "show", "last")
	if !strings.Contains(show.stdout, "per-command latencies cover the ") || !strings.Contains(show.stdout, "SELECT abalance FROM pgbench_accounts") {
		t.Errorf("show does not list the per-command latencies:\n%s", show.stdout)
	}
	csv := fathom(t, env, nil, "export", "last", "--per-command")
	if lines := strings.Split(strings.TrimSpace(csv.stdout), "\n"); csv.code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "transaction,line,command,count,mean_ms") {
		t.Errorf("export --per-command: exit %d\n%s", csv.code, csv.stdout)
	}
	fathom(t, env, nil, "run", "-S", "-t", "5", "-q", tgt)
	oneLine(t, fathom(t, env, nil, "export", "last", "--per-command"), exitUsage, "has no per-command latencies")
}
