package analyze_test

import (
	"github.com/fathom-lab/fathom/internal/analyze"
	"github.com/fathom-lab/fathom/internal/analyze/stalltest"
	"github.com/fathom-lab/fathom/internal/db"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/store"
)

func TestServerStoppedAnswering(t *testing.T) {
	const n = 50
	tp := stalltest.Synth(n, 700, stalltest.DipRange(30, 32, 0))
	during := func(v, base float64) func(int) float64 {
		return func(i int) float64 {
			if stalltest.In(i, 30, 31, 32) {
				return v
			}
			return stalltest.Wobble(i, base)
		}
	}
	in := analyze.StallInput{Throughput: tp, Unit: "tps", Kind: "mysql", Local: true, Version: "10.11.6-MariaDB",
		Samples: stalltest.Statuses(n, "mysql", 31, 32),
		Metrics: []store.MetricSeries{
			stalltest.Series("os.server.cpu_pct", "counter", "%", n, during(0, 80)),
			// What the sampler happened to read after the pause: a little row-lock time.
			stalltest.Series("mysql.Innodb_row_lock_time", "counter", "ms", n, during(13.9, 0.5)),
			stalltest.Series("mysql.Com_show_status", "counter", "statements", n, during(0.9, 2)),
		}}
	s := oneStall(t, in)
	if s.Cause != "server_unresponsive" || !strings.Contains(s.Explanation, "no answer within 1s") || !strings.Contains(s.Explanation, "CPU") {
		t.Fatalf("cause %q: %s\n%+v", s.Cause, s.Explanation, s.Causes)
	}
	for _, c := range s.Causes {
		if c.Key == "lock_waits" || c.Key == "os_writeback" {
			t.Errorf("also matching %s", c.Key)
		}
	}
	for _, e := range s.Evidence {
		if e.Metric == "mysql.Com_show_status" || e.Metric == "mysql.Innodb_row_lock_time" {
			t.Errorf("evidence %+v", e)
		}
	}
	// A sampler that times out all the time says nothing about this stall.
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	in.Samples = stalltest.Statuses(n, "mysql", all...)
	if s := oneStall(t, in); s.Cause == "server_unresponsive" {
		t.Errorf("always timing out: named %q", s.Cause)
	}
}

func TestLockWaitsNeedMaterialEvidence(t *testing.T) {
	const n = 50
	tp := stalltest.Synth(n, 700, stalltest.DipRange(30, 33, 20))
	during := func(v, base float64) func(int) float64 {
		return func(i int) float64 {
			if stalltest.In(i, 30, 31, 32, 33) {
				return v
			}
			return base
		}
	}
	cases := []struct {
		name     string
		version  string
		metrics  []store.MetricSeries
		want     string
		settings string
		not      string
	}{
		{"LOCK TABLES: metadata lock waits", "10.11.6-MariaDB", []store.MetricSeries{
			stalltest.Series("mysql.threads.waiting_for_lock", "gauge", "threads", n, during(4, 0)),
			stalltest.Series("mysql.threads.state.waiting_for_table_metadata_lock", "gauge", "threads", n, during(4, 0)),
		}, "lock_waits", "lock_wait_timeout", "innodb_lock_wait_timeout"},
		{"row lock waits", "8.0.36", []store.MetricSeries{
			stalltest.Series("mysql.Innodb_row_lock_current_waits", "gauge", "", n, during(3, 0)),
			stalltest.Series("mysql.Innodb_row_lock_time", "counter", "ms", n, during(2500, 2)),
		}, "lock_waits", "innodb_lock_wait_timeout", "lock_wait_timeout"},
		{"half a blocked session is not material", "10.11.6-MariaDB", []store.MetricSeries{
			stalltest.Series("mysql.threads.waiting_for_lock", "gauge", "threads", n, during(0.5, 0)),
			stalltest.Series("mysql.Innodb_row_lock_time", "counter", "ms", n, during(13.9, 1)),
		}, "", "", ""},
		{"PostgreSQL table lock", "16.2", []store.MetricSeries{
			stalltest.Series("pg.lock_waits.relation", "gauge", "locks", n, during(4, 0)),
			stalltest.Series("pg.waiting.lock", "gauge", "sessions", n, during(4, 0)),
		}, "lock_waits", "lock_timeout", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			kind := "mysql"
			if strings.HasPrefix(tc.metrics[0].Name, "pg.") {
				kind = "postgres"
			}
			s := oneStall(t, analyze.StallInput{Throughput: tp, Unit: "tps", Kind: kind, Version: tc.version, Clients: 4, Metrics: tc.metrics, Settings: map[string]string{}})
			if s.Cause != tc.want {
				t.Fatalf("cause %q (%s), want %q\n%s", s.Cause, s.Title, tc.want, s.Explanation)
			}
			got := " " + stalltest.SettingNames(s) + " "
			if tc.settings != "" && !strings.Contains(got, " "+tc.settings+" ") {
				t.Errorf("settings %q lack %s", got, tc.settings)
			}
			if tc.not != "" && strings.Contains(got, " "+tc.not+" ") {
				t.Errorf("settings %q name %s", got, tc.not)
			}
			if tc.want == "" && !strings.HasPrefix(s.Explanation, "No known cause") {
				t.Errorf("explanation %q", s.Explanation)
			}
		})
	}
}

// Near-constant metrics and fathom's own queries are never evidence; when nothing
// matches, only material evidence is shown.
func TestEvidenceIsMeaningful(t *testing.T) {
	const n = 50
	tp := stalltest.Synth(n, 700, stalltest.DipRange(30, 31, 100))
	during := func(v, base float64) func(int) float64 {
		return func(i int) float64 {
			if stalltest.In(i, 30, 31) {
				return v
			}
			return base
		}
	}
	s := oneStall(t, analyze.StallInput{Throughput: tp, Unit: "tps", Kind: "mysql", Metrics: []store.MetricSeries{
		stalltest.Series("mysql.Com_show_status", "counter", "statements", n, during(0.98, 1)),
		stalltest.Series("mysql.Innodb_background_log_sync", "counter", "", n, during(1.03, 1)),
		stalltest.Series("os.cpu.steal_pct", "counter", "%", n, during(0.3, 0)),
		stalltest.Series("mysql.Memory_used", "gauge", "bytes", n, during(3.795e8, 3.792e8)),
		stalltest.Series("os.disk.read_bytes", "counter", "bytes", n, during(60<<20, 1<<20)),
	}})
	if s.Cause != "" || !strings.HasPrefix(s.Explanation, "No known cause") {
		t.Fatalf("cause %q: %s", s.Cause, s.Explanation)
	}
	if len(s.Evidence) != 1 || s.Evidence[0].Metric != "os.disk.read_bytes" {
		t.Errorf("evidence %+v, want only os.disk.read_bytes", s.Evidence)
	}
}

func TestMariaDBCheckpointAdvice(t *testing.T) {
	const n = 50
	tp := stalltest.Synth(n, 700, stalltest.DipRange(30, 31, 100))
	during := func(v, base float64) func(int) float64 {
		return func(i int) float64 {
			if stalltest.In(i, 30, 31) {
				return v
			}
			return stalltest.Wobble(i, base)
		}
	}
	ms := []store.MetricSeries{
		stalltest.Series("mysql.innodb.checkpoint_age_capacity_pct", "gauge", "%", n, during(88, 30)),
		stalltest.Series("mysql.Innodb_buffer_pool_pages_flushed", "counter", "pages", n, during(20000, 300)),
	}
	s := oneStall(t, analyze.StallInput{Throughput: tp, Unit: "tps", Kind: "mysql", Version: "10.11.6-MariaDB", Metrics: ms,
		Settings: map[string]string{"innodb_log_file_size": "100663296"}})
	if s.Cause != "innodb_checkpoint" || strings.Contains(stalltest.SettingNames(s), "innodb_redo_log_capacity") ||
		!strings.Contains(s.Explanation, "innodb_log_file_size=100663296") || strings.Contains(s.Explanation, "innodb_redo_log_capacity") {
		t.Errorf("MariaDB: %s\n%s", stalltest.SettingNames(s), s.Explanation)
	}
	s = oneStall(t, analyze.StallInput{Throughput: tp, Unit: "tps", Kind: "mysql", Version: "8.0.36", Metrics: ms, Settings: map[string]string{}})
	if !strings.HasPrefix(stalltest.SettingNames(s), "innodb_redo_log_capacity") {
		t.Errorf("MySQL 8.0.36: %s", stalltest.SettingNames(s))
	}
}

func TestSaturatedClientHost(t *testing.T) {
	const n = 50
	tp := stalltest.Synth(n, 700, stalltest.DipRange(30, 31, 100))
	in := analyze.StallInput{Throughput: tp, Unit: "tps", Kind: "postgres", Metrics: []store.MetricSeries{
		stalltest.Series("os.procs_running", "gauge", "tasks", n, func(i int) float64 { return 18 }),
		stalltest.Series("os.cpus", "gauge", "cpus", n, func(i int) float64 { return 2 }),
	}}
	s := oneStall(t, in)
	if s.Cause != "client_host" || !strings.Contains(s.Explanation, "18 runnable tasks on 2 CPUs") {
		t.Errorf("cause %q: %s", s.Cause, s.Explanation)
	}
	h, ok := analyze.HostLoadOf(in.Metrics, func(int) bool { return true })
	if !ok || !h.Saturated || !strings.Contains(h.Warning(), "may be fathom's own") {
		t.Errorf("%+v %v", h, ok)
	}
	h, _ = analyze.HostLoadOf([]store.MetricSeries{in.Metrics[1], stalltest.Series("os.procs_running", "gauge", "tasks", n, func(i int) float64 { return 3 })}, func(int) bool { return true })
	if h.Saturated || h.Warning() != "" {
		t.Errorf("3 tasks on 2 CPUs: %+v", h)
	}
}

// find is FindStalls with the rules and vocabulary of in's kind, as the engine hands
// them in.
func find(in analyze.StallInput, p analyze.StallParams) []store.Stall {
	k := db.StallOf(in.Kind)
	in.Rules, in.Vocabulary = k.Rules, k.Vocabulary
	return analyze.FindStalls(in, p)
}

// oneStall is stalltest.OneStall with the rules and vocabulary of in's kind.
func oneStall(t *testing.T, in analyze.StallInput) store.Stall {
	t.Helper()
	k := db.StallOf(in.Kind)
	in.Rules, in.Vocabulary = k.Rules, k.Vocabulary
	return stalltest.OneStall(t, in)
}
