package analyze_test

import (
	"github.com/fathom-lab/fathom/internal/analyze"
	"github.com/fathom-lab/fathom/internal/analyze/stalltest"
	"github.com/fathom-lab/fathom/internal/db"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/store"
)

func checkpointRun() analyze.StallInput {
	const n = 60
	tp := stalltest.Synth(n, 1000, map[int]float64{20: 180, 21: 150, 22: 300, 45: 250})
	thr := func(i int) float64 { return tp[i].Value }
	return analyze.StallInput{
		Throughput: tp, Unit: "tps", Kind: "postgres", Local: true,
		Settings: map[string]string{"max_wal_size": "32MB", "checkpoint_timeout": "30s"},
		Metrics: []store.MetricSeries{
			stalltest.Series("pg.checkpoints_req", "counter", "checkpoints", n, func(i int) float64 {
				if stalltest.In(i, 19, 44) {
					return 1
				}
				return 0
			}),
			stalltest.Series("pg.buffers_checkpoint", "counter", "buffers", n, func(i int) float64 {
				if stalltest.In(i, 20, 21, 22, 45) {
					return 6000
				}
				return stalltest.Wobble(i, 40)
			}),
			stalltest.Series("pg.wal_fpi", "counter", "pages", n, func(i int) float64 {
				if stalltest.In(i, 20, 21, 45) {
					return 9000
				}
				return stalltest.Wobble(i, 100)
			}),
			// Commits follow throughput: the stall itself, not its cause.
			stalltest.Series("pg.xact_commit", "counter", "transactions", n, thr),
			stalltest.Series("pg.tup_updated", "counter", "rows", n, func(i int) float64 { return 3 * thr(i) }),
			stalltest.Series("os.cpu.idle_pct", "counter", "%", n, func(i int) float64 { return 100 - thr(i)/20 }),
			stalltest.Series("pg.sessions.active", "gauge", "sessions", n, func(i int) float64 { return 8 }),
		},
	}
}

func TestStallsAttributedToCheckpoints(t *testing.T) {
	stalls := find(checkpointRun(), analyze.DefaultStallParams())
	if len(stalls) != 2 {
		t.Fatalf("%d stalls, want 2: %+v", len(stalls), stalls)
	}
	first := stalls[0]
	if first.FirstInterval != 20 || first.LastInterval != 22 || first.Start != 20*time.Second || first.End != 23*time.Second {
		t.Errorf("first stall spans %d–%d (%s–%s), want 20–22", first.FirstInterval, first.LastInterval, first.Start, first.End)
	}
	if stalls[1].FirstInterval != 45 || stalls[1].LastInterval != 45 {
		t.Errorf("second stall spans %d–%d, want 45", stalls[1].FirstInterval, stalls[1].LastInterval)
	}
	for _, s := range stalls {
		if s.Cause != "checkpoint" || !strings.Contains(s.Title, "requested") {
			t.Errorf("stall %d: cause %q title %q, want a requested checkpoint (causes %+v)", s.Number, s.Cause, s.Title, s.Causes)
		}
		if s.Baseline < 950 || s.Baseline > 1050 || s.Depth < 0.6 || s.Lost <= 0 || s.Throughput != "tps" {
			t.Errorf("stall %d: baseline %v depth %v lost %v", s.Number, s.Baseline, s.Depth, s.Lost)
		}
		ev := map[string]store.StallEvidence{}
		for _, e := range s.Evidence {
			ev[e.Metric] = e
		}
		if e, ok := ev["pg.buffers_checkpoint"]; !ok || e.Score < 3 || e.During < 1000 {
			t.Errorf("stall %d: buffers_checkpoint evidence %+v", s.Number, e)
		}
		for _, consequence := range []string{"pg.xact_commit", "pg.tup_updated", "os.cpu.idle_pct", "pg.sessions.active"} {
			if _, ok := ev[consequence]; ok {
				t.Errorf("stall %d: %s is evidence, but it only follows throughput (or never moved)", s.Number, consequence)
			}
		}
		var names []string
		for _, x := range s.Settings {
			names = append(names, x.Name+"="+x.Value)
		}
		if got := strings.Join(names, " "); !strings.Contains(got, "max_wal_size=32MB") || !strings.Contains(got, "checkpoint_timeout=30s") {
			t.Errorf("stall %d settings: %s", s.Number, got)
		}
		if !strings.Contains(s.Explanation, "max_wal_size") {
			t.Errorf("stall %d explanation: %s", s.Number, s.Explanation)
		}
	}
}

func TestNoStalls(t *testing.T) {
	in := checkpointRun()
	in.Throughput = stalltest.Synth(60, 1000, nil)
	if s := find(in, analyze.DefaultStallParams()); len(s) != 0 {
		t.Errorf("flat throughput: %d stalls", len(s))
	}
	if s := find(analyze.StallInput{Throughput: stalltest.Synth(2, 100, map[int]float64{1: 0})}, analyze.DefaultStallParams()); len(s) != 0 {
		t.Errorf("two intervals: %d stalls", len(s))
	}
	// An idle server's few commits per second: dips to 1 or 0 are chance, not stalls;
	// from a few hundred per second, a drop to a third is not.
	if s := find(analyze.StallInput{Throughput: stalltest.Synth(40, 4, map[int]float64{10: 0, 20: 1})}, analyze.DefaultStallParams()); len(s) != 0 {
		t.Errorf("idle server: %d stalls", len(s))
	}
	if s := find(analyze.StallInput{Throughput: stalltest.Synth(40, 300, map[int]float64{10: 100})}, analyze.DefaultStallParams()); len(s) != 1 {
		t.Errorf("300 → 100: %d stalls", len(s))
	}
}

func TestStallParams(t *testing.T) {
	in := checkpointRun()
	// A stricter threshold: 250 and 300 tps are above 0.2 × 1000; 150 and 180 are not.
	// The threshold finds the dip at 20–21; its extent runs on through 22 (300 tps,
	// far below the baseline's usual range), and 45 (250) is not found at all.
	s := find(in, analyze.StallParams{Threshold: 0.2, Window: 31})
	if len(s) != 1 || s[0].FirstInterval != 20 || s[0].LastInterval != 22 {
		t.Errorf("threshold 0.2: %+v", s)
	}
	// Merge joins dips one interval apart when it only partly recovered in between…
	in.Throughput = stalltest.Synth(40, 1000, map[int]float64{10: 100, 11: 600, 12: 100})
	if s := find(in, analyze.StallParams{Merge: 1}); len(s) != 1 || s[0].FirstInterval != 10 || s[0].LastInterval != 12 {
		t.Errorf("merge 1: %+v", s)
	}
	// … not across a full recovery.
	in.Throughput = stalltest.Synth(40, 1000, map[int]float64{10: 100, 12: 100})
	if s := find(in, analyze.StallParams{Merge: 1}); len(s) != 2 {
		t.Errorf("merge 1 across a recovery: %d stalls", len(s))
	}
	if s := find(in, analyze.StallParams{Merge: 0}); len(s) != 2 {
		t.Errorf("merge 0: %d stalls", len(s))
	}
	// Merge 0 is the explicit value: withDefaults keeps it.
	if s := find(in, analyze.StallParams{MinIntervals: 2, Merge: 0}); len(s) != 0 {
		t.Errorf("min 2 intervals: %d stalls", len(s))
	}
	for _, bad := range []analyze.StallParams{{Threshold: 1.5, Window: 31, MinIntervals: 1}, {Threshold: 0.5, Window: 1, MinIntervals: 1}, {Threshold: 0.5, Window: 31}} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

// Warm-up intervals and the short last interval are never stalls.
func TestStallsIgnoreWarmupAndPartial(t *testing.T) {
	tp := stalltest.Synth(30, 1000, map[int]float64{2: 10, 29: 5})
	for i := 0; i < 5; i++ {
		tp[i].Warmup = true
	}
	tp[29].End = tp[29].Start + 100*time.Millisecond
	if s := find(analyze.StallInput{Throughput: tp, Unit: "tps"}, analyze.DefaultStallParams()); len(s) != 0 {
		t.Errorf("%+v", s)
	}
}

func TestOtherPatterns(t *testing.T) {
	const n = 50
	dips := map[int]float64{30: 100, 31: 120}
	during := func(v, base float64) func(int) float64 {
		return func(i int) float64 {
			if stalltest.In(i, 30, 31) {
				return v
			}
			return stalltest.Wobble(i, base)
		}
	}
	cases := []struct {
		name, kind string
		local      bool
		metrics    []store.MetricSeries
		reconnects bool
		want       string
	}{
		{"innodb checkpoint", "mysql", true, []store.MetricSeries{
			stalltest.Series("mysql.innodb.checkpoint_age_capacity_pct", "gauge", "%", n, during(92, 40)),
			stalltest.Series("mysql.Innodb_buffer_pool_pages_flushed", "counter", "pages", n, during(20000, 300)),
		}, false, "innodb_checkpoint"},
		{"binlog rotation", "mysql", true, []store.MetricSeries{
			stalltest.Series("mysql.binlog.file_seq", "counter", "files", n, func(i int) float64 {
				if i == 30 {
					return 1
				}
				return 0
			}),
		}, false, "binlog_rotation"},
		{"os writeback", "postgres", true, []store.MetricSeries{
			stalltest.Series("os.mem.writeback_bytes", "gauge", "bytes", n, during(300<<20, 1<<18)),
			stalltest.Series("os.disk.write_bytes", "counter", "bytes", n, during(500<<20, 10<<20)),
			stalltest.Series("os.disk.await_ms", "gauge", "ms", n, during(80, 0.5)),
		}, false, "os_writeback"},
		{"lock waits", "postgres", true, []store.MetricSeries{
			stalltest.Series("pg.lock_waits", "gauge", "locks", n, during(12, 0)),
			stalltest.Series("pg.waiting.lock", "gauge", "sessions", n, during(8, 0)),
		}, false, "lock_waits"},
		{"autovacuum", "postgres", true, []store.MetricSeries{
			stalltest.Series("pg.autovacuum_workers", "gauge", "workers", n, during(2, 0)),
		}, false, "autovacuum"},
		{"restart", "postgres", true, nil, true, "restart"},
		{"unknown", "postgres", true, []store.MetricSeries{
			stalltest.Series("pg.sessions.active", "gauge", "sessions", n, during(4, 4)),
		}, false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tp := stalltest.Synth(n, 500, dips)
			if tc.reconnects {
				tp[30].Reconnects = 4
			}
			s := find(analyze.StallInput{Throughput: tp, Unit: "tps", Kind: tc.kind, Local: tc.local, Metrics: tc.metrics, Settings: map[string]string{}}, analyze.DefaultStallParams())
			if len(s) != 1 {
				t.Fatalf("%d stalls", len(s))
			}
			if s[0].Cause != tc.want {
				t.Errorf("cause %q (%s), want %q; causes %+v evidence %+v", s[0].Cause, s[0].Title, tc.want, s[0].Causes, s[0].Evidence)
			}
			if s[0].Explanation == "" {
				t.Error("no explanation")
			}
		})
	}
	// OS writeback on a remote server describes the wrong host: not attributed.
	tp := stalltest.Synth(n, 500, dips)
	s := find(analyze.StallInput{Throughput: tp, Kind: "postgres", Local: false, Metrics: cases[2].metrics}, analyze.DefaultStallParams())
	if len(s) != 1 || s[0].Cause == "os_writeback" {
		t.Errorf("remote server: %+v", s)
	}
}

// A watch session has no client intervals: the server's commit rate stands in.
func TestServerThroughput(t *testing.T) {
	ser := stalltest.Series("pg.xact_commit", "counter", "transactions", 5, func(i int) float64 { return float64(100 * (i + 1)) })
	ser.Points[0].HasRate = false
	// The kinds' rates in the order the registry lists them: a PostgreSQL session
	// has no other kind's counter, so the commit rate is the one found.
	var rates []string
	for _, k := range db.Names() {
		rates = append(rates, db.StallOf(k).Vocabulary.ServerRates...)
	}
	if len(rates) < 3 {
		t.Fatalf("server rates %q: the kinds name too few", rates)
	}
	pts, unit := analyze.ServerThroughput([]store.MetricSeries{ser}, rates)
	if unit != "pg.xact_commit" || len(pts) != 4 || pts[0].Value != 200 || pts[0].Start != time.Second || pts[0].End != 2*time.Second {
		t.Errorf("%s %+v", unit, pts)
	}
	if pts, unit := analyze.ServerThroughput([]store.MetricSeries{ser}, db.StallOf("mysql").Vocabulary.ServerRates); pts != nil || unit != "" {
		t.Errorf("a MySQL session's rates found %q", unit)
	}
	if pts, unit := analyze.ServerThroughput(nil, rates); pts != nil || unit != "" {
		t.Errorf("no series: %v %q", pts, unit)
	}
}

func TestRollingMedian(t *testing.T) {
	got := analyze.StallRollingMedian([]float64{1, 9, 2, 8, 3}, 3)
	want := []float64{2, 2, 8, 3, 3}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

// Stalls of any length: an outage longer than the window, one that ends the run, one
// longer than half the run; and a long stall does not drag the baseline into phantom
// stalls after it.
func TestLongStalls(t *testing.T) {
	cases := []struct {
		name   string
		n      int
		dips   map[int]float64
		window int
		want   [][2]int
	}{
		{"outage longer than the window", 80, stalltest.DipRange(30, 64, 0), 31, [][2]int{{30, 64}}},
		{"outage at the end of the run", 60, stalltest.DipRange(37, 59, 0), 31, [][2]int{{37, 59}}},
		{"outage at the end, wide window", 60, stalltest.DipRange(37, 59, 0), 81, [][2]int{{37, 59}}},
		{"outage of two thirds of the run", 60, stalltest.DipRange(15, 54, 0), 31, [][2]int{{15, 54}}},
		{"outage of 85% of the run", 60, stalltest.DipRange(5, 55, 0), 31, [][2]int{{5, 55}}},
		{"a 10 s ALTER at 1/6 of the rate", 60, stalltest.DipRange(20, 29, 118), 31, [][2]int{{20, 29}}},
		{"short window, long stall", 60, stalltest.DipRange(20, 33, 50), 7, [][2]int{{20, 33}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := analyze.StallInput{Throughput: stalltest.Synth(tc.n, 700, tc.dips), Unit: "tps"}
			s := find(in, analyze.StallParams{Window: tc.window})
			if got := stalltest.SpanList(s); !slices.Equal(got, tc.want) {
				t.Fatalf("stalls %v, want %v", got, tc.want)
			}
			if s[0].Baseline < 650 || s[0].Baseline > 750 {
				t.Errorf("baseline %v, want about 700", s[0].Baseline)
			}
		})
	}
	// A run that starts slowly (a cold cache) and then runs at its level has no stall.
	tp := stalltest.Synth(60, 1000, stalltest.DipRange(0, 20, 300))
	if s := find(analyze.StallInput{Throughput: tp}, analyze.DefaultStallParams()); len(s) != 0 {
		t.Errorf("slow start: stalls %v", stalltest.SpanList(s))
	}
}

// A day of one-second intervals with a few stalls and a slow drift: detection must stay
// fast (the baseline's iteration settles in a few rounds).
func BenchmarkFindStallsDay(b *testing.B) {
	const n = 86400
	dips := map[int]float64{}
	for _, at := range []int{1000, 20000, 50000, 80000} {
		for i := at; i < at+30; i++ {
			dips[i] = 10
		}
	}
	tp := stalltest.Synth(n, 1000, dips)
	for i := range tp {
		tp[i].Value *= 1 - 0.6*float64(i)/n // throughput drifts down to 40% over the day
	}
	in := analyze.StallInput{Throughput: tp, Unit: "tps"}
	b.ResetTimer()
	for b.Loop() {
		if s := find(in, analyze.DefaultStallParams()); len(s) != 4 {
			b.Fatalf("%d stalls: %v", len(s), stalltest.SpanList(s))
		}
	}
}
