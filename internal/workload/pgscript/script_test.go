package pgscript

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/workload"
)

const fullScript = `-- every meta-command
\set aid random(1, 100000 * :scale)
\set big \
   :aid > 50000
\if :big
SELECT abalance, 'it''s :aid' AS q, '{}'::jsonb FROM pgbench_accounts
  WHERE aid = :aid \gset acc_
\elif :aid > 10
SELECT 1 AS one \; SELECT 2 AS two \aset
\else
/* a comment; with a semicolon */ SELECT $$ ; :x $$;
\endif
\sleep 10 us
\sleep :aid ms
\setshell n echo 5
\shell true :aid
\startpipeline
SELECT 1;
\syncpipeline
SELECT (2);
\endpipeline
BEGIN;
END;
`

func TestParseEveryCommand(t *testing.T) {
	vars := newVarTable()
	cmds, err := parseScript("full.sql", fullScript, vars)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []cmdKind
	for _, c := range cmds {
		kinds = append(kinds, c.kind)
	}
	want := []cmdKind{cSet, cSet, cIf, cSQL, cElif, cSQL, cElse, cSQL, cEndif, cSleep, cSleep, cSetShell, cShell, cStartPipeline, cSQL, cSyncPipeline, cSQL, cEndPipeline, cSQL, cSQL}
	if len(kinds) != len(want) {
		t.Fatalf("kinds %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("command %d is %d, want %d (all: %v)", i, kinds[i], want[i], kinds)
		}
	}
	lines := []int{2, 3, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}
	for i, c := range cmds {
		if c.line != lines[i] {
			t.Errorf("command %d (%s) on line %d, want %d", i, c.text, c.line, lines[i])
		}
	}
	sel := cmds[3]
	if !sel.gset || sel.prefix != "acc_" || len(sel.parts) != 1 {
		t.Fatalf("gset command: %+v", sel)
	}
	p := sel.parts[0]
	if !strings.Contains(p.bound, "WHERE aid = ?") || !strings.Contains(p.bound, "'it''s ?'") || !strings.Contains(p.bound, "'{}'::jsonb") || len(p.params) != 2 {
		// :aid inside the quotes is a variable too, as in pgbench.
		t.Errorf("bound text %q params %v", p.bound, p.params)
	}
	if c := cmds[5]; !c.aset || len(c.parts) != 2 {
		t.Errorf("aset command: %+v", c)
	}
	if c := cmds[7]; len(c.parts) != 1 || !strings.Contains(c.parts[0].text, "$$ ; :x $$") || len(c.parts[0].params) != 1 {
		// :x inside dollar quotes is substituted, as pgbench does outside '…'.
		t.Errorf("dollar-quoted command: %+v", c.parts)
	}
	if c := cmds[9]; c.sleepN != 10 || c.sleepUnit != 1e3 {
		t.Errorf("sleep: %+v", c)
	}
	if c := cmds[10]; c.sleepSlot != vars.lookup("aid") || c.sleepUnit != 1e6 {
		t.Errorf("sleep var: %+v", c)
	}
	if cmds[18].parts[0].txn != txBegin || cmds[19].parts[0].txn != txCommit {
		t.Error("BEGIN/END not recognised")
	}
	// Jumps: \if → \elif → \else; all branches end at \endif.
	if cmds[2].jump != 4 || cmds[4].jump != 6 || cmds[2].end != 8 || cmds[4].end != 8 || cmds[6].end != 8 {
		t.Errorf("jumps: if %d/%d elif %d/%d else %d", cmds[2].jump, cmds[2].end, cmds[4].jump, cmds[4].end, cmds[6].end)
	}
}

var badScripts = []struct{ src, want string }{
	{"\\set x 1 +\n", "s.sql:1: \\set x: expression ends where a value was expected"},
	{"SELECT 1;\n\\sett x 1\n", "s.sql:2: invalid command \\sett"},
	{"\\set x\n", "s.sql:1: \\set needs a variable name and an expression"},
	{"\n\\gset\n", "s.sql:2: \\gset must follow an SQL command"},
	{"\\set a 1\n\\gset\n", "s.sql:2: \\gset must follow an SQL command"},
	{"SELECT 1 \\gset a b\n", "s.sql:1: \\gset takes at most one argument"},
	{"\\if 1\nSELECT 1;\n", "s.sql:1: \\if without a matching \\endif"},
	{"\\endif\n", "s.sql:1: \\endif without a matching \\if"},
	{"\\else\n", "s.sql:1: \\else without a matching \\if"},
	{"\\if 1\n\\else\n\\elif 2\n\\endif\n", "s.sql:3: \\elif after \\else"},
	{"\\if 1\n\\else\n\\else\n\\endif\n", "s.sql:3: \\else after \\else"},
	{"\\sleep\n", "s.sql:1: \\sleep needs a duration"},
	{"\\sleep 1 h\n", "s.sql:1: \\sleep: unknown time unit"},
	{"\\sleep x\n", "s.sql:1: \\sleep: invalid sleep time \"x\""},
	{"\\sleep 1.5 s\n", "s.sql:1: \\sleep: invalid sleep time \"1.5\""},
	{"\\sleep 2ms ms\n", "s.sql:1: \\sleep: invalid sleep time \"2ms\""},
	{"\\sleep 2x\n", "s.sql:1: \\sleep: unknown time unit \"x\""},
	{"\\sleep 2 ms x\n", "s.sql:1: \\sleep: too many arguments"},
	{"\\setshell x\n", "s.sql:1: \\setshell needs a variable name and a command"},
	{"\\shell\n", "s.sql:1: \\shell needs a command"},
	{"\\startpipeline\nSELECT 1;\n", "s.sql:1: \\startpipeline without \\endpipeline"},
	{"\\startpipeline\n\\startpipeline\n", "s.sql:2: \\startpipeline inside a pipeline"},
	{"\\endpipeline\n", "s.sql:1: \\endpipeline without \\startpipeline"},
	{"\\startpipeline\nSELECT 1 AS x \\gset\n\\endpipeline\n", "s.sql:2: \\gset cannot be used inside a pipeline (started on line 1)"},
	{"\\startpipeline\nSELECT 1 \\; SELECT 2 \\aset\n\\endpipeline\n", "s.sql:2: \\aset cannot be used inside a pipeline"},
	{"SELECT 'abc\n;\n", "s.sql:1: unterminated quoted string"},
	{"SELECT 1;\nSELECT $x$ abc\n", "s.sql:2: unterminated dollar-quoted string $x$"},
	{"/* a /* b */\n", "s.sql:1: unterminated /* comment"},
	{"\\\n", "s.sql:1: a lone backslash"},
	{"\\else x\n", "s.sql:1: \\else takes no arguments"},
	{"\\set x foo(1)\n", "s.sql:1: \\set x: unknown function \"foo\""},
}

func TestParseErrorsNameFileAndLine(t *testing.T) {
	for _, c := range badScripts {
		_, err := parseScript("s.sql", c.src, newVarTable())
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %s…", c.src, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error has several lines: %q", c.src, err)
		}
	}
}

func TestOpenOptions(t *testing.T) {
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{}, "no script to run"},
		{Options{Builtins: []string{"tpcb"}}, ""},
		{Options{Builtins: []string{"s"}}, "-b s is ambiguous"},
		{Options{Builtins: []string{"nope"}}, "-b nope: no such built-in script"},
		{Options{Builtins: []string{"select-only@x"}}, "-b select-only@x: the weight after @"},
		{Options{Builtins: []string{"select-only@0"}}, "the scripts' weights add up to 0"},
		{Options{Files: []string{"/nonexistent/x.sql"}}, "-f /nonexistent/x.sql: cannot read the script: no such file or directory"},
		{Options{Builtins: []string{"tpcb"}, Mode: "fast"}, "-M fast: use simple, extended or prepared"},
		{Options{Builtins: []string{"tpcb"}, Defines: []string{"x"}}, "-D \"x\": use -D name=value"},
		{Options{Builtins: []string{"tpcb"}, Scale: "0"}, "--scale \"0\""},
	} {
		_, err := Open(c.o)
		if (err == nil) != (c.want == "") || (err != nil && !strings.HasPrefix(err.Error(), c.want)) {
			t.Errorf("Open(%+v) = %v, want %q", c.o, err, c.want)
		}
	}
	w, err := Open(Options{Builtins: []string{"tpcb-like@3", "select-only", "tpcb@1"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(w.TxnTypes(), ","); got != "tpcb-like,select-only,tpcb-like#2" {
		t.Errorf("TxnTypes %s", got)
	}
	if w.Name() != "pgbench:tpcb-like+select-only+tpcb-like#2" || w.total != 5 {
		t.Errorf("name %s total %d", w.Name(), w.total)
	}
}

// FuzzParse: no script text makes the parser panic, and a script that parses has
// consistent jumps.
func FuzzParse(f *testing.F) {
	f.Add(fullScript)
	for _, b := range badScripts {
		f.Add(b.src)
	}
	for _, b := range builtins {
		f.Add(b.src)
	}
	for _, c := range exprCases {
		f.Add("\\set v " + c.expr + "\n")
	}
	f.Fuzz(func(t *testing.T, src string) {
		cmds, err := parseScript("f.sql", src, newVarTable())
		if err != nil {
			if strings.Contains(err.Error(), "\n") && !strings.Contains(src, "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		for i, c := range cmds {
			switch c.kind {
			case cIf, cElif:
				if c.jump <= i || c.jump >= len(cmds) || c.end < c.jump {
					t.Fatalf("command %d: jump %d end %d of %d", i, c.jump, c.end, len(cmds))
				}
			case cElse:
				if c.end <= i || c.end >= len(cmds) || cmds[c.end].kind != cEndif {
					t.Fatalf("command %d: else ends at %d", i, c.end)
				}
			}
		}
	})
}

// TestWorkerMetaDoesNotAllocate: a transaction of meta-commands (expressions,
// branches, a zero sleep, -r's timers) allocates nothing once warm.
func TestWorkerMetaDoesNotAllocate(t *testing.T) {
	p := filepath.Join(t.TempDir(), "meta.sql")
	src := "\\set a random_gaussian(1, 1000, 3)\n\\set b hash(:a) % 10\n\\if :b > 5\n\\set c :a * 2\n\\elif :b > 2\n\\set c permute(:a, 1000)\n\\else\n\\set c greatest(:a, 5.5)\n\\endif\n\\sleep 0 us\n"
	if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := Open(Options{Files: []string{p, p + "@2"}, PerStatement: true})
	if err != nil {
		t.Fatal(err)
	}
	k := w.NewWorker(0, 1)
	rec := measure.NewRecorder(2)
	flush := k.(workload.CommandRecorder).FlushCommands
	ctx := context.Background()
	for range 1000 {
		k.Next()
		if _, err := k.Do(ctx); err != nil {
			t.Fatal(err)
		}
		flush(rec)
	}
	if n := testing.AllocsPerRun(1000, func() {
		k.Next()
		if _, err := k.Do(ctx); err != nil {
			t.Fatal(err)
		}
		flush(rec)
	}); n != 0 {
		t.Errorf("a transaction allocates %v times, want 0", n)
	}
	// Every transaction ran the first command of one of the two scripts, and the last
	// (\sleep) of one, whichever branch it took.
	iv := measure.NewInterval(0, w.TxnTypes())
	iv.AddRecorder(rec)
	got := measure.CommandLatencies(w.Commands(), iv.Commands)
	if len(got) != 20 || got[0].Count+got[10].Count != 2001 || got[9].Count+got[19].Count != 2001 {
		t.Errorf("per-command latencies: %d commands, first counts %d + %d, last %d + %d", len(got), got[0].Count, got[10].Count, got[9].Count, got[19].Count)
	}
}
