package experiment

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/plan"
)

// TestTargetAxis runs one plan on PostgreSQL and on MariaDB: an axis of named
// targets, two of them MariaDB with the tables prepared in InnoDB and in Aria from
// the plan's table options. Every run is stored against its own server, the
// experiment names both servers (once each, without a password), MariaDB's data is
// prepared again whenever the engine changes, and its table is the engine of the
// last cell run there (Aria).
func TestTargetAxis(t *testing.T) {
	pg := dbtest.PostgresDatabase(t, "targetaxis")
	my := dbtest.MySQLDatabase(t, "targetaxis")
	dir := t.TempDir()
	text := fmt.Sprintf(`experiment: two-servers
workload: oltp_point_select
options: {tables: 1, table_size: 200}
transactions: 40
report_interval: 100ms
repetitions: 2
seed: 5
matrix:
  server:
    pg: {target: '%s'}
    innodb: {target: '%s', table: {engine: InnoDB}}
    maria: {target: '%s', table: {engine: Aria}}
  clients: [1, 2]
`, pg, my, my)
	path := filepath.Join(dir, "plan.yaml")
	p, err := plan.Read(path, dir, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if p.TargetAxis != "server" || p.Kind() != "" || len(p.Targets()) != 3 {
		t.Fatalf("target axis %q, kind %q, targets %d", p.TargetAxis, p.Kind(), len(p.Targets()))
	}
	st := openStore(t)
	ctx := context.Background()
	rec := &recorder{}
	out, err := Start(ctx, st, p, path, Options{Listener: rec})
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
	if !strings.HasPrefix(exp.Target, "2 targets (axis server): ") || !strings.Contains(exp.Target, "postgres") || !strings.Contains(exp.Target, "mysql") {
		t.Errorf("experiment target %q", exp.Target)
	}
	runs, err := st.ExperimentRuns(ctx, exp.ID)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, er := range runs {
		r, err := st.Run(ctx, er.RunID)
		if err != nil {
			t.Fatal(err)
		}
		server := ""
		for _, c := range er.Coords {
			if c.Axis == "server" {
				server = c.Value
			}
		}
		want := map[string]string{"pg": "postgres", "innodb": "mysql", "maria": "mysql"}[server]
		if r.TargetKind != want || r.Status != "complete" {
			t.Errorf("run %d of server=%s: kind %s, status %s; want %s, complete", r.ID, server, r.TargetKind, r.Status, want)
		}
		kinds[r.TargetKind]++
	}
	if kinds["postgres"] != 4 || kinds["mysql"] != 8 {
		t.Errorf("runs by kind %v, want 4 on PostgreSQL and 8 on MariaDB", kinds)
	}
	// Interleaved, each round runs pg's two cells, innodb's two, then maria's two: on
	// MariaDB the data is prepared anew each time the engine changes, twice a round.
	preps := map[string]int{}
	rec.mu.Lock()
	for _, e := range rec.events {
		if pe, ok := e.(Prepared); ok && !pe.Already {
			preps[strings.SplitN(pe.Server, ":", 2)[0]]++
		}
	}
	rec.mu.Unlock()
	if preps["mysql"] != 4 || preps["postgres"] > 1 {
		t.Errorf("prepares by server %v, want 4 on MariaDB and at most 1 on PostgreSQL", preps)
	}
	// The table on MariaDB is Aria, as the plan's table options said.
	u, err := url.Parse(my)
	if err != nil {
		t.Fatal(err)
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.DBName = u.User.Username(), "tcp", u.Host, strings.TrimPrefix(u.Path, "/")
	cfg.Passwd, _ = u.User.Password()
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sdb := sql.OpenDB(c)
	defer sdb.Close()
	var engine string
	if err := sdb.QueryRow("SELECT engine FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'sbtest1'").Scan(&engine); err != nil {
		t.Fatal(err)
	}
	if engine != "Aria" {
		t.Errorf("sbtest1 on MariaDB is %s, want Aria (table: {engine: Aria})", engine)
	}
}

// TestTargetAxisPlanProblems: the mistakes a target axis can hold, each with its fix.
func TestTargetAxisPlanProblems(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"matrix:\n  server:\n    a: {target: 'postgres://x@h/db'}\n    b: {clients: 2}\n", "give every value a target"},
		{"target: postgres://x@h/db\nmatrix:\n  server:\n    a: {target: 'postgres://x@h/db'}\n", "leave out the plan's target"},
		{"matrix:\n  target: ['postgres://x@h/db', 'mysql://r@h/db']\n", "name the targets"},
		{"matrix:\n  server:\n    a: {target: 'nosuch://h'}\n", "not a DSN fathom knows"},
		{"target: postgres://x@h/db\ntable: {engine: 'x y'}\n", "not an engine name"},
		{"target: postgres://x@h/db\ntable: {colour: red}\n", "unknown option \"colour\""},
		{"clients: 1\n", "missing target or instance"},
	} {
		_, err := plan.Read("p.yaml", t.TempDir(), []byte("experiment: x\nworkload: tpcb\n"+c.text))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.text, err, c.want)
		}
	}
}

// TestWorkloadAxisAlone: an axis of workloads needs no workload at the top of the
// plan; an axis that leaves one value without a workload does.
func TestWorkloadAxisAlone(t *testing.T) {
	p, err := plan.Read("p.yaml", t.TempDir(), []byte("experiment: x\ntarget: sqlite:x.db\nmatrix:\n  workload: [tpcb, oltp_point_select]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cs := p.Cells(); len(cs) != 2 || cs[0].Workload != "tpcb" || cs[1].Workload != "oltp_point_select" {
		t.Errorf("cells %+v", cs)
	}
	_, err = plan.Read("p.yaml", t.TempDir(), []byte("experiment: x\ntarget: sqlite:x.db\nmatrix:\n  mix:\n    a: {workload: tpcb}\n    b: {clients: 2}\n"))
	if err == nil || !strings.Contains(err.Error(), "missing workload") {
		t.Errorf("a value without a workload: %v", err)
	}
}
