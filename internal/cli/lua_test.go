package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/dbtest"
)

const sysbenchDir = "/usr/share/sysbench"

func needSysbenchScripts(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(sysbenchDir, "oltp_common.lua")); err != nil {
		if dbtest.Required() {
			t.Fatalf("sysbench's scripts are not in %s: install sysbench", sysbenchDir)
		}
		t.Skip("sysbench's scripts are not installed")
	}
}

// TestLuaScriptRoundTrip: a script sysbench ships, with its own options spelt as
// sysbench takes them (--point-selects=3, --range_selects=off), prepares, runs as
// fathom's runner's transactions (one per event(), its statements counted exactly),
// runs its own command and cleans up, on MariaDB and PostgreSQL.
func TestLuaScriptRoundTrip(t *testing.T) {
	needSysbenchScripts(t)
	script := filepath.Join(sysbenchDir, "oltp_read_only.lua")
	for _, srv := range []struct {
		name string
		dsn  func(t *testing.T) string
	}{
		{"mysql", func(t *testing.T) string { return dbtest.MySQLDatabase(t, "clilua") }},
		{"postgres", func(t *testing.T) string { return dbtest.PostgresDatabase(t, "clilua") }},
	} {
		t.Run(srv.name, func(t *testing.T) {
			env := storeEnv(t)
			tgt := "--target=" + srv.dsn(t)
			fathom(t, env, nil, "cleanup", "-w", script, "--tables", "2", tgt)
			// prepare's sysbench table flags are the script's options here.
			r := fathom(t, env, nil, "prepare", "-w", script, "--tables", "2", "--table-size=100", "--threads=2", "--create-secondary=off", tgt)
			if r.code != 0 || !strings.Contains(r.stdout, "Creating table 'sbtest2'...") || !strings.Contains(r.stdout, "Inserting 100 records into 'sbtest1'") ||
				strings.Contains(r.stdout, "Creating a secondary index") {
				t.Fatalf("prepare: %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			r = fathom(t, env, nil, "run", "-w", script, "--tables", "2", "--table-size=100", "--threads", "2", "--events", "40",
				"--point-selects=3", "--range_selects=off", "--json", "-q", tgt)
			if r.code != 0 {
				t.Fatalf("run: %d %s", r.code, r.stderr)
			}
			s := summary(t, r)
			// BEGIN, three point selects, COMMIT.
			if s.Workload != "oltp_read_only.lua" || s.Clients != 2 || s.Transactions != 40 || s.Statements != 200 || s.Errors != 0 {
				t.Errorf("workload %q, %d clients, %d transactions, %d statements, %d errors: want oltp_read_only.lua, 2, 40, 200, 0",
					s.Workload, s.Clients, s.Transactions, s.Statements, s.Errors)
			}
			if srv.name == "mysql" {
				r = fathom(t, env, nil, "run", "-w", script, "--tables", "2", "prewarm", tgt)
				if r.code != 0 || !strings.Contains(r.stdout, "Prewarming table sbtest2") {
					t.Errorf("prewarm: %d\n%s\n%s", r.code, r.stdout, r.stderr)
				}
			} else {
				oneLine(t, fathom(t, env, nil, "run", "-w", script, "--tables", "2", "prewarm", tgt), ExitFailure, "prewarm is currently MySQL only")
			}
			oneLine(t, fathom(t, env, nil, "run", "-w", script, "nosuch", tgt), ExitUsage, `has no command "nosuch"`)
			r = fathom(t, env, nil, "cleanup", "-w", script, "--tables", "2", tgt)
			if r.code != 0 || !strings.Contains(r.stdout, "Dropping table 'sbtest2'...") {
				t.Errorf("cleanup: %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			oneLine(t, fathom(t, env, nil, "run", "-w", script, "--tables", "2", "--events", "2", tgt), ExitFailure, "")
		})
	}
}

// TestLuaScriptMistakes: a script's mistakes and options it does not declare are
// one line with the file and line, exit 2, before anything connects.
func TestLuaScriptMistakes(t *testing.T) {
	needSysbenchScripts(t)
	env := storeEnv(t)
	dir := t.TempDir()
	syntax := filepath.Join(dir, "syntax.lua")
	if err := os.WriteFile(syntax, []byte("function event()\n  local = 1\nend\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	top := filepath.Join(dir, "top.lua")
	if err := os.WriteFile(top, []byte("local x = nil\nprint(x.y)\nfunction event() end\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tgt := "--target=mysql://nobody@127.0.0.1:1/none" // never reached
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "-w", syntax, "--some-option=1", tgt}, "syntax.lua line:2"},
		{[]string{"prepare", "-w", top, tgt}, "top.lua:2: attempt to index a non-table object(nil) with key 'y'"},
		{[]string{"run", "-w", filepath.Join(sysbenchDir, "oltp_read_only.lua"), "--point-selects=many", tgt}, "--point-selects=many: not a number"},
		{[]string{"run", "-w", filepath.Join(sysbenchDir, "oltp_read_only.lua"), "--skip-trx=maybe", tgt}, "--skip-trx=maybe: use on or off"},
		{[]string{"run", "-w", filepath.Join(sysbenchDir, "oltp_read_only.lua"), "--mysql-host=db1", tgt}, "--mysql-host is not a fathom run flag: the server goes in --target"},
		{[]string{"run", "-w", filepath.Join(sysbenchDir, "oltp_read_only.lua"), "--target=sqlite:" + filepath.Join(dir, "x.db")}, "sysbench scripts run on MySQL/MariaDB and PostgreSQL targets"},
		{[]string{"run", "-w", filepath.Join(sysbenchDir, "oltp_read_only.lua"), "a", "b", tgt}, "one command at a time"},
		{[]string{"run", "-w", filepath.Join(sysbenchDir, "oltp_read_only.lua"), "--db-driver=pgsql", tgt}, "--db-driver is not a fathom run flag: the database kind is the --target URL's scheme"},
	} {
		oneLine(t, fathom(t, env, nil, c.args...), ExitUsage, c.want)
	}
}
