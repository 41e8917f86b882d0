package collect_test

import (
	"context"
	"errors"
	"github.com/fathom-lab/fathom/internal/collect"
	"github.com/fathom-lab/fathom/internal/collect/collecttest"
	"github.com/fathom-lab/fathom/internal/db"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/db/mysql/target"
	"github.com/fathom-lab/fathom/internal/db/postgres/target"
	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/sample"
	"github.com/fathom-lab/fathom/internal/target"
)

func pgTarget(t testing.TB) target.Target {
	t.Helper()
	tg, err := postgres.Open(dbtest.PostgresDatabase(t, "collect"), target.Config{ConnectTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func myTarget(t testing.TB) target.Target {
	t.Helper()
	tg, err := mysql.Open(dbtest.MySQLDatabase(t, "collect"), target.Config{ConnectTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func result(t *testing.T, s *sample.Sample, name string) sample.Result {
	t.Helper()
	for _, r := range s.Results {
		if r.Collector == name {
			return r
		}
	}
	t.Fatalf("no result for collector %s in %+v", name, s.Results)
	return sample.Result{}
}

// work runs n small transactions on a connection of tg.
func work(t *testing.T, tg target.Target, n int) {
	t.Helper()
	ctx := context.Background()
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := 0; i < n; i++ {
		if err := c.Begin(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Query(ctx, "SELECT 1"); err != nil {
			t.Fatal(err)
		}
		if err := c.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

func TestPostgresCollectors(t *testing.T) {
	tg := pgTarget(t)
	ctx := context.Background()
	s := collect.NewSampler(tg, collect.Options{Kind: dbOf(tg)})
	defer s.Close()
	srv := s.Start(ctx)
	if srv.Version.IsZero() || srv.Flavor != "postgresql" {
		t.Fatalf("server not discovered: %+v", srv)
	}
	first := s.Sample(ctx, -1, time.Now())
	before := pgCommits(t, tg)
	work(t, tg, 50)
	// A backend reports its counts at most once a second, and when it exits (after
	// Close returns): wait until the 50 commits show, polled, not slept on.
	for deadline := time.Now().Add(30 * time.Second); pgCommits(t, tg) < before+50; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("pg_stat_database did not show the 50 commits within 30s")
		}
	}
	second := s.Sample(ctx, 0, time.Now())
	collecttest.CheckReadings(t, first)
	collecttest.CheckReadings(t, second)
	collecttest.CheckDeclared(t, dbOf(tg), second)
	for _, r := range second.Results {
		switch {
		case r.Collector == "pg_stat_checkpointer" && srv.Version.Less(sample.Version{Major: 17}):
			// The version-gated collector: skipped with the reason on 15.
			if r.Status != sample.StatusSkipped || !strings.Contains(r.Error, "needs PostgreSQL 17") {
				t.Errorf("pg_stat_checkpointer on %s: %s %q, want skipped", srv.Version, r.Status, r.Error)
			}
		case r.Collector == "os_pressure" && r.Status == sample.StatusFailed && strings.Contains(r.Error, "PSI"):
			// A kernel without pressure stall information.
		case r.Status != sample.StatusOK:
			t.Errorf("collector %s: %s %s", r.Collector, r.Status, r.Error)
		}
	}
	commit, ok := collecttest.Reading(second, "pg.xact_commit")
	if !ok || !commit.HasRate || commit.Rate <= 0 {
		t.Errorf("pg.xact_commit: %+v, want a positive rate after 50 commits", commit)
	}
	if first, _ := collecttest.Reading(first, "pg.xact_commit"); first.HasRate {
		t.Errorf("the first reading of a counter has no rate: %+v", first)
	}
	for _, name := range []string{"pg.checkpoints_timed", "pg.buffers_checkpoint", "pg.wal_bytes", "pg.sessions.active",
		"pg.waiting.lock", "pg.lock_waits", "pg.autovacuum_workers", "pg.blks_hit", "pg.deadlocks", "pg.temp_files",
		"os.mem.dirty_bytes", "os.mem.writeback_bytes", "os.vm.dirty_threshold_bytes", "os.cpu.iowait_pct"} {
		if _, ok := collecttest.Reading(second, name); !ok {
			t.Errorf("no reading %s", name)
		}
	}
	if srv.Version.Major >= 14 {
		if _, ok := collecttest.Reading(second, "pg.wal_fpi"); !ok {
			t.Error("no pg.wal_fpi on 14+")
		}
	}
	if srv.Local {
		for _, name := range []string{"os.disk.writes", "os.disk.await_ms", "os.server.cpu_pct", "os.server.memory_bytes"} {
			if _, ok := collecttest.Reading(second, name); !ok {
				t.Errorf("local server: no reading %s", name)
			}
		}
	}
}

// pgCommits is xact_commit summed over the databases, as the collector reads it.
func pgCommits(t *testing.T, tg target.Target) float64 {
	t.Helper()
	ctx := context.Background()
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rows, err := c.Query(ctx, "SELECT sum(xact_commit) FROM pg_stat_database")
	if err != nil || len(rows) != 1 || len(rows[0]) != 1 {
		t.Fatalf("reading xact_commit: %v %v", rows, err)
	}
	v, err := strconv.ParseFloat(rows[0][0], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestMySQLCollectors(t *testing.T) {
	tg := myTarget(t)
	ctx := context.Background()
	s := collect.NewSampler(tg, collect.Options{Kind: dbOf(tg)})
	defer s.Close()
	srv := s.Start(ctx)
	if srv.Version.IsZero() {
		t.Fatalf("server not discovered: %+v", srv)
	}
	s.Sample(ctx, -1, time.Now())
	work(t, tg, 30)
	second := s.Sample(ctx, 0, time.Now())
	collecttest.CheckReadings(t, second)
	collecttest.CheckDeclared(t, dbOf(tg), second)
	for _, r := range second.Results {
		if r.Status != sample.StatusOK && !(r.Collector == "os_pressure" && strings.Contains(r.Error, "PSI")) {
			t.Errorf("collector %s: %s %s", r.Collector, r.Status, r.Error)
		}
	}
	q, ok := collecttest.Reading(second, "mysql.Questions")
	if !ok || q.Kind != sample.Counter || !q.HasRate || q.Rate <= 0 {
		t.Errorf("mysql.Questions: %+v", q)
	}
	if r, ok := collecttest.Reading(second, "mysql.Threads_running"); !ok || r.Kind != sample.Gauge {
		t.Errorf("mysql.Threads_running: %+v, want a gauge", r)
	}
	if r, ok := collecttest.Reading(second, "mysql.Innodb_buffer_pool_pages_dirty"); !ok || r.Kind != sample.Gauge {
		t.Errorf("Innodb_buffer_pool_pages_dirty: %+v, want a gauge", r)
	}
	if r, ok := collecttest.Reading(second, "mysql.Innodb_buffer_pool_pages_flushed"); !ok || r.Kind != sample.Counter {
		t.Errorf("Innodb_buffer_pool_pages_flushed: %+v, want a counter", r)
	}
	for _, name := range []string{"mysql.innodb.checkpoint_age_bytes", "mysql.innodb.redo_capacity_bytes", "mysql.innodb.history_list_length",
		"mysql.innodb.lsn", "mysql.binlog.enabled", "mysql.threads.active", "mysql.Innodb_log_waits", "mysql.Innodb_os_log_written"} {
		if _, ok := collecttest.Reading(second, name); !ok {
			t.Errorf("no reading %s", name)
		}
	}
	if srv.Flavor == "mariadb" {
		if _, ok := collecttest.Reading(second, "mysql.innodb.checkpoint_age_pct"); !ok {
			t.Error("MariaDB: no checkpoint age against Innodb_checkpoint_max_age")
		}
	}
}

// A collector that outlives its timeout is recorded as timed out; the sampler
// reconnects and the collectors after it still run.
func TestCollectorTimeout(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tg    func(testing.TB) target.Target
		sleep string
	}{
		{"postgres", pgTarget, "SELECT pg_sleep(10)"},
		{"mysql", myTarget, "SELECT SLEEP(10)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg := tc.tg(t)
			slow := collect.Func{Name: "slow", Timeout: 300 * time.Millisecond, Collect: func(ctx context.Context, s *collect.Scrape) error {
				_, err := s.Query(ctx, tc.sleep)
				return err
			}}.Collector()
			after := dbOf(tg).Collectors()[0]
			s := collect.NewSampler(tg, collect.Options{Kind: dbOf(tg), Server: []collect.Collector{slow, after}, NoHost: true})
			defer s.Close()
			ctx := context.Background()
			s.Start(ctx)
			start := time.Now()
			smp := s.Sample(ctx, 0, time.Now())
			// Without the timeout the sample would take the 10s of the sleep; with it,
			// 300ms and a reconnection, well within 8s however busy the machine.
			if took := time.Since(start); took > 8*time.Second {
				t.Errorf("the sample took %s: the timeout did not stop the slow collector", took)
			}
			if r := result(t, smp, "slow"); r.Status != sample.StatusTimeout || !strings.Contains(r.Error, "300ms") {
				t.Errorf("slow collector: %s %q, want timeout", r.Status, r.Error)
			}
			if r := result(t, smp, after.Name()); r.Status != sample.StatusOK {
				t.Errorf("%s after the timeout: %s %s", after.Name(), r.Status, r.Error)
			}
			// And the next sample works too.
			if r := result(t, s.Sample(ctx, 1, time.Now()), after.Name()); r.Status != sample.StatusOK {
				t.Errorf("next sample: %s %s", r.Status, r.Error)
			}
		})
	}
}

// One failing collector is recorded and never stops the others.
func TestFailingCollector(t *testing.T) {
	tg := pgTarget(t)
	bad := collect.Func{Name: "bad", Collect: func(ctx context.Context, s *collect.Scrape) error {
		_, err := s.Query(ctx, "SELECT * FROM no_such_table_here")
		return err
	}}.Collector()
	list := append([]collect.Collector{bad}, db.CollectOf("postgres").Collectors()...)
	s := collect.NewSampler(tg, collect.Options{Kind: dbOf(tg), Server: list, Host: []collect.Collector{collect.Func{Name: "os_bad", Collect: func(context.Context, *collect.Scrape) error {
		return errors.New("cannot read /proc/nothing")
	}}.Collector(), named(t, collect.HostCollectors(), "os_meminfo")}})
	defer s.Close()
	ctx := context.Background()
	s.Start(ctx)
	smp := s.Sample(ctx, 0, time.Now())
	if r := result(t, smp, "bad"); r.Status != sample.StatusFailed || !strings.Contains(r.Error, "no_such_table_here") {
		t.Errorf("bad: %s %q", r.Status, r.Error)
	}
	if r := result(t, smp, "os_bad"); r.Status != sample.StatusFailed {
		t.Errorf("os_bad: %s", r.Status)
	}
	for _, name := range []string{"pg_stat_database", "pg_locks", "os_meminfo"} {
		if r := result(t, smp, name); r.Status != sample.StatusOK {
			t.Errorf("%s next to failing collectors: %s %s", name, r.Status, r.Error)
		}
	}
}

// The minimum version gates a collector: skipped, with the reason, never run.
func TestVersionGate(t *testing.T) {
	tg := pgTarget(t)
	ran := false
	future := collect.Func{Name: "future", Min: sample.Version{Major: 99}, Collect: func(context.Context, *collect.Scrape) error { ran = true; return nil }}.Collector()
	s := collect.NewSampler(tg, collect.Options{Kind: dbOf(tg), Server: []collect.Collector{future}, NoHost: true})
	defer s.Close()
	ctx := context.Background()
	s.Start(ctx)
	r := result(t, s.Sample(ctx, 0, time.Now()), "future")
	if r.Status != sample.StatusSkipped || !strings.Contains(r.Error, "needs PostgreSQL 99.0") || ran {
		t.Errorf("future collector: %s %q ran=%v", r.Status, r.Error, ran)
	}
}

// pg_stat_reset() between samples, on a throwaway PostgreSQL (never on the shared test
// server: `fathom check` sums pg_stat_database over every database, and its tests would
// see the reset): the counters of pg_stat_database are marked reset, without a rate,
// never negative; the sample after has rates again.
func TestResetDetectionPostgres(t *testing.T) {
	tg := throwaway(t, instance.Postgres)
	ctx := context.Background()
	s := collect.NewSampler(tg, collect.Options{Kind: dbOf(tg), Server: []collect.Collector{named(t, db.CollectOf("postgres").Collectors(), "pg_stat_database")}, NoHost: true})
	defer s.Close()
	s.Start(ctx)
	work(t, tg, 20)
	s.Sample(ctx, 0, time.Now())
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	resetAt := func() string { // what the collector's reset rule reads
		rows, err := c.Query(ctx, "SELECT coalesce(max(stats_reset)::text, '') FROM pg_catalog.pg_stat_database")
		if err != nil || len(rows) != 1 {
			t.Fatalf("reading stats_reset: %v %v", rows, err)
		}
		return rows[0][0]
	}
	old := resetAt()
	if _, err := c.Query(ctx, "SELECT pg_stat_reset()"); err != nil {
		t.Fatal(err)
	}
	// Poll for the reset to be visible instead of sleeping a guess of the flush time.
	// A transaction of its own each time: the statistics snapshot of one is cached.
	dbtest.WaitFor(t, 30*time.Second, 50*time.Millisecond, "pg_stat_database.stats_reset to change after pg_stat_reset()", func() bool {
		return resetAt() != old
	})
	smp := s.Sample(ctx, 1, time.Now())
	collecttest.CheckReadings(t, smp)
	if r := result(t, smp, "pg_stat_database"); !r.Reset {
		t.Errorf("pg_stat_database after pg_stat_reset(): reset not detected")
	}
	commit, _ := collecttest.Reading(smp, "pg.xact_commit")
	if !commit.Reset || commit.HasRate {
		t.Errorf("pg.xact_commit after reset: %+v", commit)
	}
	work(t, tg, 5)
	after := s.Sample(ctx, 2, time.Now())
	collecttest.CheckReadings(t, after)
	if c, _ := collecttest.Reading(after, "pg.xact_commit"); c.Reset || !c.HasRate {
		t.Errorf("pg.xact_commit one sample after the reset: %+v", c)
	}
}

// counterSource is a collector with scripted values, for the rate rules.
type counterSource struct {
	values []float64
	epochs []string
	uptime []float64
	i      int
}

func (c *counterSource) collector() collect.Collector {
	return collect.Func{Name: "scripted", Collect: func(ctx context.Context, s *collect.Scrape) error {
		i := c.i
		c.i++
		s.Counter("x.count", "", c.values[i])
		s.Gauge("x.level", "", c.values[i])
		if c.epochs != nil {
			s.Epoch(c.epochs[i])
		}
		if c.uptime != nil {
			s.Uptime(c.uptime[i])
		}
		if i == 0 {
			s.SparseGauge("x.wait.a", "", 3)
		}
		return nil
	}}.Collector()
}

func TestRatesAndResets(t *testing.T) {
	cases := []struct {
		name   string
		src    counterSource
		reset  []bool
		rateOK []bool
	}{
		{"growing", counterSource{values: []float64{10, 20, 40}}, []bool{false, false, false}, []bool{false, true, true}},
		{"decrease is a reset", counterSource{values: []float64{10, 20, 5, 15}}, []bool{false, false, true, false}, []bool{false, true, false, true}},
		{"epoch change", counterSource{values: []float64{10, 20, 30}, epochs: []string{"a", "a", "b"}}, []bool{false, false, true}, []bool{false, true, false}},
		{"uptime went down", counterSource{values: []float64{10, 20, 30}, uptime: []float64{100, 101, 1}}, []bool{false, false, true}, []bool{false, true, false}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := tc.src
			s := collect.NewSampler(nil, collect.Options{Server: []collect.Collector{}, Host: []collect.Collector{src.collector()}})
			at := time.Now()
			for i := range src.values {
				at = at.Add(time.Second)
				smp := s.Sample(context.Background(), i, at)
				collecttest.CheckReadings(t, smp)
				r, ok := collecttest.Reading(smp, "x.count")
				if !ok {
					t.Fatalf("sample %d: no reading: %+v", i, smp.Results)
				}
				if r.Reset != tc.reset[i] || r.HasRate != tc.rateOK[i] {
					t.Errorf("sample %d: reset %v has rate %v, want %v %v", i, r.Reset, r.HasRate, tc.reset[i], tc.rateOK[i])
				}
				if r.HasRate && r.Rate <= 0 {
					t.Errorf("sample %d: rate %v", i, r.Rate)
				}
				if w, ok := collecttest.Reading(smp, "x.wait.a"); !ok || (i > 0 && w.Value != 0) {
					t.Errorf("sample %d: sparse gauge %+v %v, want 3 then 0", i, w, ok)
				}
			}
		})
	}
}

// Rates use the collectors' own times: a counter going up 100 in 2 seconds is 50/s.
func TestRateUsesCollectionTime(t *testing.T) {
	src := counterSource{values: []float64{0, 100}}
	s := collect.NewSampler(nil, collect.Options{Server: []collect.Collector{}, Host: []collect.Collector{src.collector()}})
	// The time between the two collections lies between t2-t1 and t3-t0: bounds that
	// hold however late a busy machine runs the second one (a fixed 300-600/s did not).
	t0 := time.Now()
	s.Sample(context.Background(), 0, time.Now())
	t1 := time.Now()
	time.Sleep(200 * time.Millisecond) // a lower bound only: the bounds below are measured, not assumed
	t2 := time.Now()
	r, _ := collecttest.Reading(s.Sample(context.Background(), 1, time.Now()), "x.count")
	t3 := time.Now()
	lo, hi := 100/t3.Sub(t0).Seconds(), 100/t2.Sub(t1).Seconds()
	if !r.HasRate || r.Rate < lo || r.Rate > hi {
		t.Errorf("rate %v for +100 between collections %s to %s apart, want %.1f to %.1f", r.Rate, t2.Sub(t1), t3.Sub(t0), lo, hi)
	}
}

func TestOSCollectors(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the OS collectors read Linux's /proc")
	}
	s := collect.NewSampler(nil, collect.Options{Server: []collect.Collector{}})
	collect.SetServer(s, collect.Discover(context.Background(), db.CollectOf("sqlite"), nil, "sqlite:"+t.TempDir()+"/x.db"))
	s.Sample(context.Background(), 0, time.Now())
	time.Sleep(100 * time.Millisecond) // some clock ticks between the samples, for the rates; longer on a busy machine is fine
	smp := s.Sample(context.Background(), 1, time.Now())
	collecttest.CheckReadings(t, smp)
	collecttest.CheckDeclared(t, nil, smp)
	for _, r := range smp.Results {
		if r.Status != sample.StatusOK && !(r.Collector == "os_pressure" && strings.Contains(r.Error, "PSI")) {
			t.Errorf("%s: %s %s", r.Collector, r.Status, r.Error)
		}
	}
	for _, n := range []string{"os.mem.dirty_bytes", "os.vm.dirty_background_threshold_bytes", "os.cpu.user_pct", "os.disk.writes", "os.disk.util_pct", "os.fathom.cpu_pct"} {
		if _, ok := collecttest.Reading(smp, n); !ok {
			t.Errorf("no %s", n)
		}
	}
	if u, ok := collecttest.Reading(smp, "os.cpu.user_pct"); ok && (u.Rate < 0 || u.Rate > 100.5) {
		t.Errorf("CPU user %v%%: not a percentage of all CPUs", u.Rate)
	}
}

// An OS collector stuck past its timeout is abandoned, then skipped while it is still
// stuck; it never holds the sample up.
func TestStuckOSCollector(t *testing.T) {
	release := make(chan struct{})
	stuck := collect.Func{Name: "stuck", Timeout: 100 * time.Millisecond, Collect: func(context.Context, *collect.Scrape) error { <-release; return nil }}.Collector()
	s := collect.NewSampler(nil, collect.Options{Server: []collect.Collector{}, Host: []collect.Collector{stuck, named(t, collect.HostCollectors(), "os_meminfo")}})
	start := time.Now()
	smp := s.Sample(context.Background(), 0, time.Now())
	if r := result(t, smp, "stuck"); r.Status != sample.StatusTimeout {
		t.Errorf("stuck: %s", r.Status)
	}
	if r := result(t, s.Sample(context.Background(), 1, time.Now()), "stuck"); r.Status != sample.StatusSkipped {
		t.Errorf("still stuck: %s, want skipped", r.Status)
	}
	if time.Since(start) > 2*time.Second {
		t.Errorf("stuck collector held the samples for %s", time.Since(start))
	}
	close(release)
}

// Trigger never blocks: a request while the loop is busy and one is queued is
// dropped and counted.
func TestLoopNeverBlocks(t *testing.T) {
	gate := make(chan struct{})
	slow := collect.Func{Name: "slow", Timeout: 10 * time.Second, Collect: func(context.Context, *collect.Scrape) error { <-gate; return nil }}.Collector()
	s := collect.NewSampler(nil, collect.Options{Server: []collect.Collector{}, Host: []collect.Collector{slow}})
	var mu sync.Mutex
	var got []int
	l := s.Loop(context.Background(), func(smp *sample.Sample) { mu.Lock(); got = append(got, smp.Index); mu.Unlock() })
	start := time.Now()
	for i := 0; i < 5; i++ {
		l.Trigger(i)
	}
	// A Trigger that blocked would wait for the gate, closed only below: for ever. The
	// bound is far above a busy machine's scheduling delays.
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Trigger blocked for %s", d)
	}
	close(gate)
	l.Stop(5 * time.Second)
	if l.Skipped() == 0 || len(got)+int(l.Skipped()) != 5 {
		t.Errorf("got samples %v and %d skipped, want 5 in all with some skipped", got, l.Skipped())
	}
	if l.Trigger(9) {
		t.Error("Trigger after Stop")
	}
}

func TestSelect(t *testing.T) {
	server, host, err := collect.Select(db.CollectOf("postgres"), []string{"os", "pg_locks"}, []string{"os_process"})
	if err != nil {
		t.Fatal(err)
	}
	if len(server) != 1 || server[0].Name() != "pg_locks" {
		t.Errorf("server collectors %v", server)
	}
	for _, c := range host {
		if c.Name() == "os_process" {
			t.Error("os_process not left out")
		}
	}
	if _, _, err := collect.Select(db.CollectOf("mysql"), []string{"pg_lock"}, nil); err == nil || !strings.Contains(err.Error(), `unknown collector "pg_lock"`) {
		t.Errorf("unknown collector: %v", err)
	}
}

func TestParseVersion(t *testing.T) {
	for in, want := range map[string]sample.Version{
		"10.11.19-MariaDB-0+deb12u1": {Major: 10, Minor: 11, Patch: 19},
		"8.0.36":                     {Major: 8, Minor: 0, Patch: 36},
		"5.7.44-log":                 {Major: 5, Minor: 7, Patch: 44},
		"11":                         {Major: 11},
		"":                           {},
	} {
		if got := collect.ParseVersion(in); got != want {
			t.Errorf("ParseVersion(%q) = %+v, want %+v", in, got, want)
		}
	}
}

// throwaway starts a server of kind in a temporary directory, removed after the test,
// for tests that reset what other tests read on the shared servers.
func throwaway(t *testing.T, kind instance.Kind) target.Target {
	t.Helper()
	if testing.Short() {
		t.Skipf("starts a throwaway %s", kind)
	}
	if _, err := instance.Version(kind, ""); err != nil {
		if dbtest.Required() {
			t.Fatalf("%v (FATHOM_TEST_REQUIRE=1)", err)
		}
		t.Skip(err)
	}
	dir, err := os.MkdirTemp("", "fc-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	t.Cleanup(func() { os.RemoveAll(dir) })
	ctx := context.Background()
	inst, err := instance.Create(ctx, instance.Options{Kind: kind, Name: "reset", Dir: dir, Bin: dbtest.PGBin(kind == instance.Postgres)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Remove(context.Background()) })
	if err := inst.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var tg target.Target
	if kind == instance.Postgres {
		tg, err = postgres.Open(inst.DSN(), target.Config{ConnectTimeout: 5 * time.Second})
	} else {
		tg, err = mysql.Open(inst.DSN(), target.Config{})
	}
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// FLUSH STATUS on a throwaway MariaDB (never on the shared test server, whose
// counters other tests read): Uptime_since_flush_status goes down, every counter of
// mysql_global_status is marked reset without a rate, and rates resume after.
func TestResetDetectionMySQL(t *testing.T) {
	dbtest.SkipMariaDBInPGMatrix(t)
	tg := throwaway(t, instance.MariaDB)
	ctx := context.Background()
	s := collect.NewSampler(tg, collect.Options{Kind: dbOf(tg), Server: []collect.Collector{named(t, db.CollectOf("mysql").Collectors(), "mysql_global_status")}, NoHost: true})
	defer s.Close()
	s.Start(ctx)
	work(t, tg, 20)
	s.Sample(ctx, 0, time.Now())
	// Uptime_since_flush_status counts whole seconds, and a flush shows as it going
	// down: sample until it has reached 3 (none of these samples a reset), so that the
	// sample after the flush sees it lower even if a busy machine delays that sample
	// by two seconds.
	var before *sample.Sample
	var upBefore float64
	i := 0
	dbtest.WaitFor(t, time.Minute, 100*time.Millisecond, "Uptime_since_flush_status to reach 3 s", func() bool {
		i++
		work(t, tg, 5)
		before = s.Sample(ctx, i, time.Now())
		if r := result(t, before, "mysql_global_status"); r.Reset {
			t.Fatalf("reset without FLUSH STATUS (sample %d)", i)
		}
		u, ok := collecttest.Reading(before, "mysql.Uptime_since_flush_status")
		upBefore = u.Value
		return ok && u.Value >= 3
	})
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Exec(ctx, "FLUSH STATUS"); err != nil {
		t.Fatal(err)
	}
	c.Close()
	after := s.Sample(ctx, before.Index+1, time.Now())
	collecttest.CheckReadings(t, after)
	if r := result(t, after, "mysql_global_status"); !r.Reset {
		u, _ := collecttest.Reading(after, "mysql.Uptime_since_flush_status")
		t.Errorf("FLUSH STATUS not detected: Uptime_since_flush_status %v before, %v after (%+v)", upBefore, u.Value, r)
	}
	if q, _ := collecttest.Reading(after, "mysql.Questions"); !q.Reset || q.HasRate {
		t.Errorf("mysql.Questions after FLUSH STATUS: %+v", q)
	}
	// The next sample at a later whole second of Uptime_since_flush_status than the
	// one after the flush, polled on the server instead of sleeping past it.
	upAfter, _ := collecttest.Reading(after, "mysql.Uptime_since_flush_status")
	dbtest.WaitFor(t, 30*time.Second, 100*time.Millisecond, "Uptime_since_flush_status to pass its value after FLUSH STATUS", func() bool {
		return mysqlStatus(t, tg, "Uptime_since_flush_status") > upAfter.Value
	})
	work(t, tg, 5)
	next := s.Sample(ctx, after.Index+1, time.Now())
	collecttest.CheckReadings(t, next)
	if q, _ := collecttest.Reading(next, "mysql.Questions"); q.Reset || !q.HasRate {
		t.Errorf("mysql.Questions a sample later: %+v", q)
	}
}

// mysqlStatus is the value of a SHOW GLOBAL STATUS variable on tg.
func mysqlStatus(t *testing.T, tg target.Target, name string) float64 {
	t.Helper()
	ctx := context.Background()
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rows, err := c.Query(ctx, "SHOW GLOBAL STATUS LIKE '"+name+"'")
	if err != nil || len(rows) != 1 || len(rows[0]) != 2 {
		t.Fatalf("reading %s: %v %v", name, rows, err)
	}
	v, err := strconv.ParseFloat(rows[0][1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// dbOf is the collect side of tg's kind.
func dbOf(tg target.Target) collect.Database { return db.CollectOf(tg.Kind()) }

// named is the collector called name among list.
func named(t testing.TB, list []collect.Collector, name string) collect.Collector {
	t.Helper()
	for _, c := range list {
		if c.Name() == name {
			return c
		}
	}
	t.Fatalf("no collector %s", name)
	return nil
}

func withKind(o collect.SnapshotOptions, tg target.Target) collect.SnapshotOptions {
	o.Kind = dbOf(tg)
	return o
}
