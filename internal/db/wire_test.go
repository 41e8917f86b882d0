package db_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/cli"
	"github.com/fathom-lab/fathom/internal/db"
	pg "github.com/fathom-lab/fathom/internal/db/postgres/target"
	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/plan"
	"github.com/fathom-lab/fathom/internal/run"
	"github.com/fathom-lab/fathom/internal/runner"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload/spec"
)

// wire is a kind on PostgreSQL's wire protocol that is not PostgreSQL, as CockroachDB
// and YugabyteDB are: it claims a scheme of its own, its targets are PostgreSQL's
// target under its name, and its dialect reads PostgreSQL's SQL where a workload file
// gives none of its own. Its bundle is the core only, so none of PostgreSQL's
// abilities (server collectors, check source, settings, plan rules, throwaway
// instances) may reach it: TestWireKind shows that they do not.
type wire struct{}

var wireDialect = func() *target.Dialect {
	d := *pg.SQLDialect
	d.Name, d.Title, d.Like = "pgwire", "PG-wire", "postgres"
	return &d
}()

func (wire) Name() string             { return "pgwire" }
func (wire) Title() string            { return "PG-wire" }
func (wire) Schemes() []string        { return []string{"pgwire://"} }
func (wire) Dialect() *target.Dialect { return wireDialect }
func (wire) Open(dsn string, cfg target.Config) (target.Target, error) {
	t, err := pg.Open("postgres://"+strings.TrimPrefix(dsn, "pgwire://"), cfg)
	if err != nil {
		return nil, err
	}
	return wireTarget{t}, nil
}

type wireTarget struct{ *pg.Target }

func (wireTarget) Kind() string            { return "pgwire" }
func (wireTarget) Dialect() target.Dialect { return *wireDialect }

// wireFile is a workload file that spells its SQL by dialect with no default: the
// kind's dialect reads like postgres, so it runs the postgres statement (the others
// would fail on PostgreSQL), and the file need not name it.
const wireFile = `name: wirecheck
transactions:
  - name: ask
    steps:
      - sql:
          postgres: SELECT current_setting('server_version_num')::int + 0
          mysql: SELECT @@version
          sqlite: SELECT sqlite_version()
`

func TestWireKind(t *testing.T) {
	pgDSN := dbtest.PostgresDSN(t)
	db.Register(t, wire{})
	rest, ok := strings.CutPrefix(pgDSN, "postgres://")
	if !ok {
		t.Skipf("FATHOM_TEST_POSTGRES_DSN is not a postgres:// URL")
	}
	dsn := "pgwire://" + rest

	// The scheme is the kind's: postgres:// stays PostgreSQL's.
	if db.KindOf(dsn) != "pgwire" || db.KindOf(pgDSN) != "postgres" {
		t.Fatalf("KindOf: %q, %q", db.KindOf(dsn), db.KindOf(pgDSN))
	}
	if db.CollectOf("pgwire") != nil || db.SettingsOf("pgwire") != nil || db.CheckOf("pgwire") != nil || db.ChartsOf("pgwire") != nil || db.StallRulesOf("pgwire") != nil {
		t.Error("the core-only kind has one of PostgreSQL's abilities")
	}

	// Its dialect reaches workload files from the registry, reading like postgres.
	if !strings.Contains(strings.Join(spec.Dialects(), " "), "pgwire") || target.DialectNamed("pgwire") != wireDialect {
		t.Fatalf("spec dialects %v", spec.Dialects())
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "wirecheck.yaml")
	if err := os.WriteFile(file, []byte(wireFile), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := spec.CheckFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var desc strings.Builder
	if err := w.Describe(&desc, "pgwire"); err != nil || !strings.Contains(desc.String(), "current_setting") {
		t.Errorf("described for pgwire (%v):\n%s", err, desc.String())
	}

	// A sampled run: the stored kind is pgwire and no PostgreSQL collector ran (the
	// host's do). The postgres statement ran, so the Like fallback chose it.
	res, err := execute(t, filepath.Join(dir, "results.db"), run.Options{
		Target: run.Target{DSN: dsn, ConnectTimeout: 5 * time.Second}, Workload: file,
		Clients: 1, Transactions: 20, Interval: 50 * time.Millisecond, MaxTries: 1,
		ReconnectTimeout: 5 * time.Second, Seed: 1, HasSeed: true, ToolVersion: "test", Command: "wire_test",
	}, &quiet{t})
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary.Status != runner.StatusComplete || res.Summary.Transactions != 20 || res.Run.TargetKind != "pgwire" {
		t.Fatalf("status %q (%s), %d transactions, kind %q", res.Summary.Status, res.Summary.Reason, res.Summary.Transactions, res.Run.TargetKind)
	}
	st, err := run.OpenStore(filepath.Join(dir, "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	crs, err := st.Collectors(context.Background(), res.Run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(crs) == 0 {
		t.Error("no collector ran: the host's should have")
	}
	for _, c := range crs {
		if c.Source == "postgres" || strings.HasPrefix(c.Collector, "pg_") {
			t.Errorf("PostgreSQL's collector %s (source %s) ran on the PG-wire kind", c.Collector, c.Source)
		}
	}

	// check has no source for it: PostgreSQL's is not used. One line, UNKNOWN.
	var out, errb bytes.Buffer
	code := cli.Run(context.Background(), &cli.Env{Args: []string{"check", "--target", dsn, "--mode", "connections"}, Stdout: &out, Stderr: &errb,
		Getenv: func(string) string { return "" }, Now: time.Now})
	if text := out.String() + errb.String(); code != 3 || !strings.Contains(text, "not PG-wire") || strings.Contains(text, pgPassword(pgDSN)) {
		t.Errorf("check: exit %d, %q", code, text)
	}

	// Plan files: its targets are its own, and it has no settings of PostgreSQL's.
	if p, err := plan.Read("p.yaml", dir, []byte("experiment: a\ntarget: "+dsn+"\nworkload: tpcb\n")); err != nil || p.Kind() != "pgwire" {
		t.Errorf("a plan against the PG-wire kind: %v", err)
	}
	if _, ok := plan.SettingTiming("postgres", "pg_prewarm.autoprewarm"); !ok {
		t.Fatal("PostgreSQL's plan rules lost a timing")
	}
	if tm, ok := plan.SettingTiming("pgwire", "pg_prewarm.autoprewarm"); ok {
		t.Errorf("PostgreSQL's setting timing reached the PG-wire kind: %+v", tm)
	}
}

// pgPassword is the DSN's password, or a string no output contains.
func pgPassword(dsn string) string {
	if _, rest, ok := strings.Cut(dsn, "://"); ok {
		if ui, _, ok := strings.Cut(rest, "@"); ok {
			if _, pw, ok := strings.Cut(ui, ":"); ok && pw != "" {
				return pw
			}
		}
	}
	return "\x00no password\x00"
}
