package db_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/procfs"

	"github.com/fathom-lab/fathom/internal/analyze"
	"github.com/fathom-lab/fathom/internal/analyze/stalltest"
	"github.com/fathom-lab/fathom/internal/check"
	"github.com/fathom-lab/fathom/internal/cli"
	"github.com/fathom-lab/fathom/internal/cli/view"
	"github.com/fathom-lab/fathom/internal/collect"
	"github.com/fathom-lab/fathom/internal/db"
	"github.com/fathom-lab/fathom/internal/db/sqlite/target"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/plan"
	"github.com/fathom-lab/fathom/internal/run"
	"github.com/fathom-lab/fathom/internal/runner"
	"github.com/fathom-lab/fathom/internal/sample"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/target"
)

// fake is a database kind with only the core of a bundle: a name, a scheme, opening a
// target and a dialect. Its targets are SQLite files under another name. It proves
// that a kind is its bundle plus one registry line: the engine runs it, and what needs
// a capability it lacks refuses it in one line.
type fake struct{}

var fakeDialect = func() *target.Dialect {
	d := *sqlite.SQLDialect
	d.Name, d.Title, d.Like = "fake", "Fake", "sqlite"
	return &d
}()

func (fake) Name() string             { return "fake" }
func (fake) Title() string            { return "Fake" }
func (fake) Schemes() []string        { return []string{"fake:"} }
func (fake) Dialect() *target.Dialect { return fakeDialect }
func (fake) Open(dsn string, cfg target.Config) (target.Target, error) {
	t, err := sqlite.Open("sqlite:"+strings.TrimPrefix(dsn, "fake:"), cfg)
	if err != nil {
		return nil, err
	}
	return fakeTarget{t}, nil
}

type fakeTarget struct{ *sqlite.Target }

func (fakeTarget) Kind() string            { return "fake" }
func (fakeTarget) Dialect() target.Dialect { return *fakeDialect }

type quiet struct{ t *testing.T }

func (quiet) Started(*run.Started)       {}
func (quiet) Interval(*measure.Interval) {}
func (quiet) Finished()                  {}
func (q *quiet) Warning(msg string)      { q.t.Logf("warning: %s", msg) }

func TestFakeKind(t *testing.T) {
	db.Register(t, fake{})
	dsn := "fake:" + filepath.Join(t.TempDir(), "f.db") + "?busy_timeout=5000"

	if db.KindOf(dsn) != "fake" || db.Lookup("fake") == nil {
		t.Fatalf("KindOf(%q) = %q", dsn, db.KindOf(dsn))
	}
	for _, has := range []bool{
		db.CollectOf("fake") != nil,
		db.IsEmbedded("fake"),
		db.SettingsOf("fake") != nil,
		db.ForInstance("postgres") != nil && db.ForInstance("postgres").Name() == "fake",
	} {
		if has {
			t.Errorf("the core-only kind has a capability it does not implement")
		}
	}
	if _, ok := db.Lookup("fake").(db.CheckSource); ok {
		t.Error("the core-only kind has a check source")
	}

	// The engine: prepare and run a small workload as a library call, with sampling
	// (OS collectors only: the kind has no server side for collect).
	tg := run.Target{DSN: dsn, ConnectTimeout: 5 * time.Second}
	params := map[string]string{"tables": "1", "table_size": "100"}
	_, wl, err := run.OpenWorkload("oltp_point_select", params)
	if err != nil {
		t.Fatal(err)
	}
	tgt, err := tg.Open()
	if err != nil {
		t.Fatal(err)
	}
	if tgt.Kind() != "fake" {
		t.Fatalf("opened a %s target", tgt.Kind())
	}
	if err := wl.Prepare(context.Background(), tgt, func(string, int64, int64) {}); err != nil {
		t.Fatal(err)
	}
	tgt.Close()
	res, err := execute(t, filepath.Join(t.TempDir(), "results.db"), run.Options{
		Target: tg, Workload: "oltp_point_select", Params: params,
		Clients: 2, Transactions: 100, Interval: 50 * time.Millisecond, MaxTries: 1,
		ReconnectTimeout: 5 * time.Second, Seed: 1, HasSeed: true, ToolVersion: "test", Command: "fake_test",
	}, &quiet{t})
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary.Status != runner.StatusComplete || res.Summary.Transactions != 200 {
		t.Fatalf("status %q (%s), %d transactions", res.Summary.Status, res.Summary.Reason, res.Summary.Transactions)
	}
	if res.Sampling == nil || res.Run.TargetKind != "fake" {
		t.Errorf("sampling %v, stored kind %q", res.Sampling, res.Run.TargetKind)
	}

	// check and heartbeat need a check source: one line, the documented UNKNOWN code.
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"check", "--target", dsn, "--mode", "connections"}, 3, "not Fake"},
		{[]string{"heartbeat", dsn}, 2, "writes to a PostgreSQL or MySQL/MariaDB primary"},
	} {
		var out, errb bytes.Buffer
		code := cli.Run(context.Background(), &cli.Env{Args: c.args, Stdout: &out, Stderr: &errb,
			Getenv: func(string) string { return "" }, Now: time.Now})
		text := out.String() + errb.String()
		if code != c.code || !strings.Contains(text, c.want) || strings.Count(strings.TrimSpace(text), "\n") > 0 {
			t.Errorf("%v: exit %d, output %q", c.args, code, text)
		}
	}
	if err := db.Missing("fake", "settings"); err.Error() != "kind fake has no settings support" {
		t.Errorf("Missing: %v", err)
	}
}

// rich is a kind with the optional capabilities too, each found by interface: a
// collector and snapshot section (collect), a check source, stall rules, default
// report charts and watch columns. Its targets are SQLite files, embedded like
// SQLite's. TestRichKind shows that each generic consumer uses what it registers.
type rich struct{}

var richDialect = func() *target.Dialect {
	d := *sqlite.SQLDialect
	d.Name, d.Title, d.Like = "rich", "Rich", "sqlite"
	return &d
}()

func (rich) Name() string             { return "rich" }
func (rich) Title() string            { return "Rich" }
func (rich) Schemes() []string        { return []string{"rich:"} }
func (rich) Dialect() *target.Dialect { return richDialect }
func (rich) Embedded() bool           { return true }
func (rich) Open(dsn string, cfg target.Config) (target.Target, error) {
	t, err := sqlite.Open("sqlite:"+strings.TrimPrefix(dsn, "rich:"), cfg)
	if err != nil {
		return nil, err
	}
	return richTarget{t}, nil
}

type richTarget struct{ *sqlite.Target }

func (richTarget) Kind() string            { return "rich" }
func (richTarget) Dialect() target.Dialect { return *richDialect }

func (rich) Collect() collect.Database { return richCollect{} }

func (rich) PlanRules() plan.KindRules {
	return plan.KindRules{NoSettings: "Rich has no server settings", Timings: map[string]plan.Timing{"rich_dump": {AtShutdown: true, What: "dumps"}}}
}

func (rich) CheckDialect() *check.Dialect {
	return &check.Dialect{DefaultPort: "0", Connections: "rich_used / rich_max * 100", Used: "rich_used", Max: "rich_max",
		Fetch: func(_ context.Context, _ target.Conn, s *check.Sample, now func() time.Time) error {
			s.Time = now()
			s.Vars.SetNum("rich_used", 42)
			s.Vars.SetNum("rich_max", 100)
			return nil
		}, Replication: richLag{}}
}

// richLag is the rich kind's replication-lag reader: always 3 s behind.
type richLag struct{}

func (richLag) Lag(_ context.Context, _ *check.Runner, c *check.Check, _ *check.Sample) (check.Result, error) {
	lag := 3.0
	return check.JudgeLag(c, &lag, nil, []string{"rich replica 3s behind"}), nil
}

func (rich) StallRules() []analyze.Rule {
	return []analyze.Rule{{Rank: 50, Match: func(a analyze.Attributor, st *store.Stall, w []int) (analyze.Match, bool) {
		return analyze.Match{Key: "rich_pause", Title: "the rich kind's pause", Explanation: "It paused.", Score: 5}, true
	}}}
}

// StallVocabulary: the rich kind's level counts sessions waiting for locks.
func (rich) StallVocabulary() analyze.Vocabulary {
	return analyze.Vocabulary{AnyLockSessions: []string{"rich.level"}}
}

func (rich) DefaultCharts() []collect.Chart {
	return []collect.Chart{{Title: "Rich level", Metrics: []string{"rich.level"}}}
}

func (rich) WatchColumns() []collect.WatchColumn {
	return []collect.WatchColumn{{Head: "richlvl", Metrics: []string{"rich.level"}}}
}

type richCollect struct{}

func (richCollect) Name() string   { return "rich" }
func (richCollect) Title() string  { return "Rich" }
func (richCollect) Embedded() bool { return true }
func (richCollect) Collectors() []collect.Collector {
	return []collect.Collector{collect.Func{Name: "rich_level", Help: "the rich kind's level",
		Metrics: []collect.Desc{collect.Gauge("rich.level", "things", "the rich kind's level")},
		Collect: func(_ context.Context, s *collect.Scrape) error {
			s.Gauge("rich.level", "things", 7)
			return nil
		}}.Collector()}
}
func (richCollect) Discover(_ context.Context, s *sample.Server, _ target.Conn, _ string, _ procfs.FS, _ bool) {
	s.Flavor, s.Local = "rich", true
}
func (richCollect) Snapshot(sn *collect.Snap) {
	sn.Source("rich", func() error {
		sn.Add("rich.txt", "the rich kind's own source", []byte("rich and well\n"))
		return nil
	})
}

// sloppy is the rich kind with a default chart of a metric its collectors do not
// declare (a misspelling of rich.level).
type sloppy struct{ rich }

func (sloppy) Name() string      { return "sloppy" }
func (sloppy) Schemes() []string { return []string{"sloppy:"} }
func (sloppy) DefaultCharts() []collect.Chart {
	return []collect.Chart{{Title: "Rich level", Metrics: []string{"rich.levle"}}}
}

func TestRichKind(t *testing.T) {
	db.Register(t, rich{})

	// The kind's collector declares its metric, and the vocabulary finds it there; its
	// chart and watch column name declared metrics. A kind whose chart names a metric
	// no collector declares is refused.
	vocab, err := db.Vocabulary()
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := vocab.DeclaredBy("rich_level", "rich.level"); !ok || d.Kind != sample.Gauge || d.Unit != "things" {
		t.Errorf("rich.level: declared %v as %+v", ok, d)
	}
	if err := db.Undeclared("rich"); err != nil {
		t.Error(err)
	}
	db.Register(t, sloppy{})
	if err := db.Undeclared("sloppy"); err == nil || !strings.Contains(err.Error(), `chart "Rich level": rich.levle`) {
		t.Errorf("a chart of an undeclared metric: %v", err)
	}

	dir := t.TempDir()
	dsn := "rich:" + filepath.Join(dir, "r.db") + "?busy_timeout=5000"
	storePath := filepath.Join(dir, "results.db")
	fathom := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := cli.Run(context.Background(), &cli.Env{Args: args, Stdout: &out, Stderr: &errb,
			Getenv: func(string) string { return "" }, Now: time.Now,
			Interrupts: func(ctx context.Context) (context.Context, context.CancelFunc) { return context.WithCancel(ctx) }})
		return code, out.String() + errb.String()
	}

	// The engine samples the kind's collector with the run and stores its readings.
	tg := run.Target{DSN: dsn, ConnectTimeout: 5 * time.Second}
	params := map[string]string{"tables": "1", "table_size": "100"}
	_, wl, err := run.OpenWorkload("oltp_point_select", params)
	if err != nil {
		t.Fatal(err)
	}
	tgt, err := tg.Open()
	if err != nil {
		t.Fatal(err)
	}
	if err := wl.Prepare(context.Background(), tgt, func(string, int64, int64) {}); err != nil {
		t.Fatal(err)
	}
	tgt.Close()
	res, err := execute(t, storePath, run.Options{
		Target: tg, Workload: "oltp_point_select", Params: params,
		Clients: 1, Duration: time.Second, Interval: 100 * time.Millisecond, MaxTries: 1,
		ReconnectTimeout: 5 * time.Second, Seed: 1, HasSeed: true, ToolVersion: "test", Command: "fake_test",
	}, &quiet{t})
	if err != nil {
		t.Fatal(err)
	}
	if res.Sampling == nil || res.Run.TargetKind != "rich" {
		t.Fatalf("sampling %v, stored kind %q", res.Sampling, res.Run.TargetKind)
	}
	id := strconv.FormatInt(res.Run.ID, 10)
	if code, out := fathom("collectors"); code != 0 || !strings.Contains(out, "rich_level") {
		t.Errorf("collectors: exit %d, the kind's collector is not listed:\n%s", code, out)
	}

	// The report draws the kind's default chart of that metric.
	rep := filepath.Join(dir, "report")
	if code, out := fathom("report", id, "--store", storePath, "-o", rep); code != 0 {
		t.Fatalf("report: exit %d: %s", code, out)
	}
	page, err := os.ReadFile(filepath.Join(rep, "index.html"))
	if err != nil || !strings.Contains(string(page), "Rich level") {
		t.Errorf("the report has no chart titled Rich level (%v)", err)
	}

	// check reads the kind's check source: 42 of 100 connections.
	if code, out := fathom("check", "--target", dsn, "--mode", "connections", "-w", "80", "-c", "90"); code != 0 || !strings.Contains(out, "42") {
		t.Errorf("check: exit %d: %s", code, out)
	}

	// Plan files follow the kind's rules: its targets are its, it has no settings.
	if p, err := plan.Read("p.yaml", dir, []byte("experiment: a\ntarget: "+dsn+"\nworkload: tpcb\n")); err != nil || p.Kind() != "rich" {
		t.Errorf("a plan against the rich kind: %v", err)
	}
	if _, err := plan.Read("p.yaml", dir, []byte("experiment: a\ntarget: "+dsn+"\nworkload: tpcb\nsettings: {x: 1}\n")); err == nil || !strings.Contains(err.Error(), "Rich has no server settings") {
		t.Errorf("a plan setting the rich kind's settings: %v", err)
	}
	if tm, ok := plan.SettingTiming("rich", "rich_dump"); !ok || !tm.AtShutdown {
		t.Errorf("the rich kind's setting timing: %+v %v", tm, ok)
	}

	// The replication-lag mode asks the kind's reader: 3 s is over the warning's 2.
	if code, out := fathom("check", "--target", dsn, "--mode", "replication-lag", "-w", "2", "-c", "10"); code != 1 || !strings.Contains(out, "rich replica 3s behind") {
		t.Errorf("check replication-lag: exit %d: %s", code, out)
	}

	// snapshot takes the kind's section.
	snap := filepath.Join(dir, "snap")
	if code, out := fathom("snapshot", "--target", dsn, "-o", snap, "--interval", "1s"); code != 0 {
		t.Fatalf("snapshot: exit %d: %s", code, out)
	}
	if b, err := os.ReadFile(filepath.Join(snap, "rich.txt")); err != nil || string(b) != "rich and well\n" {
		t.Errorf("snapshot: rich.txt %q, %v", b, err)
	}

	// Stall analysis tries the kind's rules with the generic ones, and the generic
	// lock-wait pattern reads the metric the kind's vocabulary names.
	sk := db.StallOf("rich")
	in := analyze.StallInput{Throughput: stalltest.Synth(40, 1000, stalltest.DipRange(20, 22, 100)), Unit: "tps", Kind: "rich",
		Rules: sk.Rules, Vocabulary: sk.Vocabulary, Metrics: []store.MetricSeries{stalltest.Series("rich.level", "gauge", "things", 40, func(i int) float64 {
			if stalltest.In(i, 20, 21, 22) {
				return 6
			}
			return 0
		})}}
	if s := stalltest.OneStall(t, in); s.Cause != "rich_pause" || len(s.Causes) < 2 || s.Causes[1].Key != "lock_waits" || len(s.Causes[1].Metrics) != 1 || s.Causes[1].Metrics[0] != "rich.level" {
		t.Errorf("stall cause %q, causes %+v (%s)", s.Cause, s.Causes, s.Explanation)
	}

	// The live view shows the kind's columns before the host's.
	var out bytes.Buffer
	w := view.NewWatchLines("rich", &out, &out, false)
	w.Sample(&sample.Sample{Readings: []sample.Reading{{Name: "rich.level", Kind: sample.Gauge, Value: 7}}}, time.Second)
	if !strings.Contains(out.String(), "richlvl") || !strings.Contains(out.String(), " 7") {
		t.Errorf("watch lines:\n%s", out.String())
	}
}

// execute runs o with the results store at path, opened as the CLI opens it and
// closed after the run.
func execute(t *testing.T, path string, o run.Options, l run.Listener) (*run.Result, error) {
	t.Helper()
	st, err := run.OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	return run.Execute(context.Background(), st, o, l)
}
