package promexp

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/run"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/sqlite"
	"github.com/fathom-lab/fathom/internal/target"
)

// family is one parsed metric family's samples by their labels ("k=v,…" sorted).
type family map[string]float64

// scrape serves one scrape of h and parses it as Prometheus does.
func scrape(t testing.TB, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("scrape: HTTP %d: %s", rec.Code, rec.Body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("scrape is not the Prometheus text format: %v", err)
	}
	return fams
}

// samples returns name's samples whose labels include match, keyed by the labels
// that are not in match.
func samples(fams map[string]*dto.MetricFamily, name string, match map[string]string) family {
	out := family{}
	f := fams[name]
	if f == nil {
		return out
	}
next:
	for _, m := range f.Metric {
		var key []string
		for _, l := range m.Label {
			if v, ok := match[l.GetName()]; ok {
				if v != l.GetValue() {
					continue next
				}
				continue
			}
			key = append(key, l.GetName()+"="+l.GetValue())
		}
		var v float64
		switch {
		case m.Counter != nil:
			v = m.Counter.GetValue()
		case m.Gauge != nil:
			v = m.Gauge.GetValue()
		default:
			v = m.Untyped.GetValue()
		}
		out[strings.Join(key, ",")] = v
	}
	return out
}

func openStore(t testing.TB) (*sqlite.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fathom.db")
	st, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, path
}

func createRun(t testing.TB, st store.Store, labels map[string]string, types ...string) *store.Run {
	t.Helper()
	r := &store.Run{Workload: "tpcb", TargetKind: "postgres", Target: "postgres://h/db", Labels: labels, Clients: 4,
		Interval: time.Second, TxnTypes: types, StartedAt: time.Unix(1_700_000_000, 0), Host: store.Host{Hostname: "h"}}
	id, err := st.CreateRun(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	r.ID = id
	return r
}

// interval builds interval idx (one second long) where type i has latencies
// base*(i+1)*k µs for k = 1..n and one serialization error per type.
func interval(types []string, idx int, warm bool, n int, base int64) *measure.Interval {
	iv := measure.NewInterval(idx, types)
	iv.Start, iv.End, iv.Warmup = time.Duration(idx)*time.Second, time.Duration(idx+1)*time.Second, warm
	for i := range iv.Types {
		t := &iv.Types[i]
		for k := 1; k <= n; k++ {
			_ = t.Latency.RecordValue(base * int64(i+1) * int64(k) * 1000)
		}
		t.OK, t.Statements = int64(n), int64(3*n)
		t.Errors[target.ClassSerialization] = 1
		t.Retries = 1
	}
	iv.Reconnects = 1
	return iv
}

func secs(ns int64) float64 { return float64(ns) / 1e9 }

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// TestStoreHandler: a run in progress appears with the numbers of its stored intervals,
// labelled with its UUID, workload, target kind and labels; finished and gone runs do not.
func TestStoreHandler(t *testing.T) {
	ctx := context.Background()
	st, path := openStore(t)
	types := []string{"pay", "read"}
	r := createRun(t, st, map[string]string{"env": "lab", "team name": "db ops"}, types...)
	h := NewHandler(st, Options{})

	fams := scrape(t, h)
	run := map[string]string{"run_id": r.UUID, "workload": "tpcb", "target_kind": "postgres", "label_env": "lab", "label_team_name": "db ops"}
	if got := samples(fams, "fathom_run_info", run); len(got) != 1 || got[""] != 1 {
		t.Fatalf("fathom_run_info of the new run = %v, want one sample of 1", got)
	}
	if got := samples(fams, "fathom_run_tps", nil); len(got) != 0 {
		t.Fatalf("tps before any interval: %v, want none", got)
	}

	ivs := []*measure.Interval{interval(types, 0, true, 100, 50), interval(types, 1, false, 200, 10), interval(types, 2, false, 300, 20)}
	for i, iv := range ivs {
		if err := st.AddInterval(ctx, r.ID, iv); err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			scrape(t, h) // the next scrape reads only interval 2
		}
	}
	fams = scrape(t, h)
	totals := measure.NewTotals(types)
	for _, iv := range ivs {
		totals.Add(iv)
	}
	sum := totals.Summary()
	last := ivs[2]
	for i, name := range types {
		txn := map[string]string{"run_id": r.UUID, "txn": name}
		check := func(metric string, want float64, labels ...string) {
			t.Helper()
			m := map[string]string{"run_id": r.UUID, "txn": name}
			for j := 0; j+1 < len(labels); j += 2 {
				m[labels[j]] = labels[j+1]
			}
			got := samples(fams, metric, m)
			if len(got) != 1 {
				t.Fatalf("%s%v: %d samples %v, want 1", metric, m, len(got), got)
			}
			for _, v := range got {
				if !near(v, want) {
					t.Errorf("%s%v = %v, want %v", metric, m, v, want)
				}
			}
		}
		check("fathom_run_transactions_total", 600) // warm-up included
		check("fathom_run_statements_total", 1800)
		check("fathom_run_retries_total", 3)
		check("fathom_run_errors_total", 3, "class", "serialization")
		check("fathom_run_errors_total", 0, "class", "deadlock")
		check("fathom_run_tps", float64(last.Types[i].OK)/last.Seconds())
		lastLat := last.Types[i].Latency
		check("fathom_run_latency_seconds", secs(lastLat.ValueAtQuantile(99)), "window", "interval", "quantile", "0.99")
		check("fathom_run_latency_max_seconds", secs(lastLat.Max()), "window", "interval")
		runLat := measure.NewHistogram() // measured intervals only
		runLat.Merge(ivs[1].Types[i].Latency)
		runLat.Merge(ivs[2].Types[i].Latency)
		check("fathom_run_latency_seconds", secs(runLat.ValueAtQuantile(50)), "window", "run", "quantile", "0.5")
		check("fathom_run_latency_seconds", secs(runLat.ValueAtQuantile(99.9)), "window", "run", "quantile", "0.999")
		if ms := sum.ByTxn[name].Latency.P99; math.Abs(ms-1e3*secs(runLat.ValueAtQuantile(99))) > 0.0005 {
			t.Errorf("%s: the summary's p99 %v ms is not the exposed one", name, ms)
		}
		checkHistogram(t, fams, txn, ivs, i, 600)
		if got := samples(fams, "fathom_run_late_total", txn); len(got) != 0 {
			t.Errorf("closed loop run has late counts: %v", got)
		}
		if got := samples(fams, "fathom_run_errors_total", txn); len(got) != int(target.NumClasses)-1 {
			t.Errorf("errors by class: %d series, want every class but canceled: %v", len(got), got)
		}
	}
	allLat := measure.NewHistogram()
	for _, iv := range ivs[1:] {
		for i := range iv.Types {
			allLat.Merge(iv.Types[i].Latency)
		}
	}
	all := samples(fams, "fathom_run_latency_seconds", map[string]string{"txn": "all", "window": "run", "quantile": "0.9"})
	if want := secs(allLat.ValueAtQuantile(90)); len(all) != 1 || !near(all[sortedLabels(run)], want) {
		t.Errorf("all types' run p90 = %v, want %v", all, want)
	}
	if got := samples(fams, "fathom_run_elapsed_seconds", map[string]string{"run_id": r.UUID}); got[sortedLabels(run, "run_id")] != 3 {
		t.Errorf("elapsed = %v, want 3", got)
	}
	// docs/prometheus.md's count: 16 + 44 per transaction type for a closed-loop run (a
	// histogram is a series per bucket, +Inf, _sum and _count).
	series := 0
	for _, f := range fams {
		for _, m := range f.Metric {
			for _, l := range m.Label {
				if l.GetName() == "run_id" && l.GetValue() == r.UUID {
					series++
					if m.Histogram != nil {
						series += len(m.Histogram.Bucket) + 1 // the buckets (+Inf among them), _sum and _count: one is counted above
					}
				}
			}
		}
	}
	if want := 16 + 44*len(types); series != want {
		t.Errorf("the run has %d series, docs/prometheus.md says %d", series, want)
	}
	if got := samples(fams, "fathom_runs_in_progress", nil); got[""] != 1 {
		t.Errorf("runs in progress = %v, want 1", got)
	}
	if got := samples(fams, "fathom_store_up", nil); got[""] != 1 {
		t.Errorf("store up = %v, want 1", got)
	}

	// A second run whose process is gone is not exposed; finishing the first ends it.
	gone := createRun(t, st, nil, types...)
	markGone(t, path, gone.ID)
	if got := samples(scrape(t, h), "fathom_run_info", nil); len(got) != 1 {
		t.Fatalf("with a run whose process is gone: %d runs exposed (%v), want 1", len(got), got)
	}
	if err := st.FinishRun(ctx, r.ID, "complete", "", time.Now(), nil); err != nil {
		t.Fatal(err)
	}
	fams = scrape(t, h)
	if got := samples(fams, "fathom_run_info", nil); len(got) != 0 {
		t.Fatalf("after the run finished: %v, want no run", got)
	}
	if got := samples(fams, "fathom_runs_in_progress", nil); got[""] != 0 {
		t.Errorf("runs in progress = %v, want 0", got)
	}
}

// sortedLabels is the samples key of labels m minus those named in drop.
func sortedLabels(m map[string]string, drop ...string) string {
	var key []string
	for k, v := range m {
		if !slices.Contains(drop, k) {
			key = append(key, k+"="+v)
		}
	}
	slices.Sort(key)
	return strings.Join(key, ",")
}

// markGone makes run id's writer a process that has exited.
func markGone(t *testing.T, path string, id int64) {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("no process to borrow a dead pid from: %v", err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE runs SET pid = ? WHERE id = ?`, cmd.Process.Pid, id); err != nil {
		t.Fatal(err)
	}
}

// readerOnly hides the store's optional abilities.
type readerOnly struct{ Reader }

// TestStoreHandlerWithoutIntervalsAfter: a store that can only read every interval
// gives the same page.
func TestStoreHandlerWithoutIntervalsAfter(t *testing.T) {
	ctx := context.Background()
	st, _ := openStore(t)
	types := []string{"x"}
	r := createRun(t, st, nil, types...)
	fast, slow := NewHandler(st, Options{}), NewHandler(readerOnly{st}, Options{})
	for i := range 4 {
		if err := st.AddInterval(ctx, r.ID, interval(types, i, i == 0, 50+i, int64(5+i))); err != nil {
			t.Fatal(err)
		}
		a, b := scrape(t, fast), scrape(t, slow)
		for _, name := range []string{"fathom_run_transactions_total", "fathom_run_latency_seconds", "fathom_run_tps"} {
			if x, y := fmt.Sprint(samples(a, name, nil)), fmt.Sprint(samples(b, name, nil)); x != y {
				t.Fatalf("interval %d, %s: %s with IntervalsAfter, %s without", i, name, x, y)
			}
		}
	}
}

// errReader fails every read.
type errReader struct{ Reader }

func (errReader) Runs(context.Context, store.RunFilter) ([]store.Run, error) {
	return nil, fmt.Errorf("database is locked")
}

func TestStoreDown(t *testing.T) {
	var warned []string
	h := NewHandler(errReader{}, Options{Warn: func(m string) { warned = append(warned, m) }})
	fams := scrape(t, h)
	if got := samples(fams, "fathom_store_up", nil); got[""] != 0 || len(got) != 1 {
		t.Errorf("fathom_store_up = %v, want 0", got)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "database is locked") {
		t.Errorf("warnings %q, want one naming the error", warned)
	}
}

func TestRunLabels(t *testing.T) {
	got := runLabels(map[string]string{"a-b": "1", "a_b": "2", "é": "x", "ok": "bad\xffutf8"})
	want := []labelPair{{"label_a_b", "1"}, {"label_ok", "bad\uFFFDutf8"}, {"label__", "x"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("runLabels = %v, want %v", got, want)
	}
}

// nopListener is the next listener of a test's Exposer.
type nopListener struct{}

func (nopListener) Started(*run.Started)       {}
func (nopListener) Interval(*measure.Interval) {}
func (nopListener) Finished()                  {}
func (nopListener) Warning(string)             {}

// TestExposerAgreesWithStore: a run's events through an Exposer give the same page as
// its stored intervals through the store handler, while scrapes run concurrently (go
// test -race), and the run leaves the page when it finishes.
func TestExposerAgreesWithStore(t *testing.T) {
	ctx := context.Background()
	st, _ := openStore(t)
	types := []string{"a", "b", "c"}
	r := createRun(t, st, map[string]string{"cell": "1"}, types...)
	r.Rate = 500 // open loop: late and dropped counts too
	e, err := listen("127.0.0.1:0", nopListener{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	url := "http://" + e.addr() + "/metrics"
	stop := make(chan struct{})
	scraped := make(chan int)
	go func() { // scrapes while intervals arrive
		n := 0
		for {
			select {
			case <-stop:
				scraped <- n
				return
			default:
			}
			if resp, err := http.Get(url); err == nil {
				resp.Body.Close()
				n++
			}
		}
	}()
	e.Started(&run.Started{RunID: r.ID, Run: r})
	h := NewHandler(st, Options{})
	for i := range 5 {
		iv := interval(types, i, i < 2, 100+10*i, int64(2+i))
		iv.Types[1].Late, iv.Types[2].Dropped = int64(i), 1
		if err := st.AddInterval(ctx, r.ID, iv); err != nil {
			t.Fatal(err)
		}
		e.Interval(iv)
	}
	close(stop)
	t.Logf("%d concurrent scrapes", <-scraped)
	viaEvents := scrapeHTTP(t, url)
	viaStore := scrape(t, h)
	for _, name := range declared {
		if name == "fathom_store_up" || name == "fathom_run_late_total" || name == "fathom_run_dropped_total" {
			continue
		}
		if a, b := fmt.Sprint(samples(viaEvents, name, nil)), fmt.Sprint(samples(viaStore, name, nil)); a != b {
			t.Errorf("%s: from the events %s, from the store %s", name, a, b)
		}
	}
	// The store keeps the run's rate, not the test's: open-loop counts via the events.
	if got := samples(viaEvents, "fathom_run_late_total", map[string]string{"txn": "b"}); len(got) != 1 || got[sortedLabels(map[string]string{"run_id": r.UUID, "workload": "tpcb", "target_kind": "postgres", "label_cell": "1"})] != 10 {
		t.Errorf("late of b = %v, want 10", got)
	}
	e.Finished()
	if got := samples(scrapeHTTP(t, url), "fathom_run_info", nil); len(got) != 0 {
		t.Errorf("after Finished: %v, want no run", got)
	}
}

func scrapeHTTP(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// checkHistogram: the type's fathom_run_response_seconds counts every interval's
// successful transactions (warm-up included, want of them), and each bucket holds the
// values whose HDR bucket ends at or below its bound, as the library's own
// distribution of the merged intervals says.
func checkHistogram(t *testing.T, fams map[string]*dto.MetricFamily, match map[string]string, ivs []*measure.Interval, typ int, want uint64) {
	t.Helper()
	var h *dto.Histogram
	for _, m := range fams["fathom_run_response_seconds"].GetMetric() {
		n := 0
		for _, l := range m.Label {
			if v, ok := match[l.GetName()]; ok && v == l.GetValue() {
				n++
			}
		}
		if n == len(match) {
			h = m.Histogram
		}
	}
	if h == nil {
		t.Fatalf("no fathom_run_response_seconds%v", match)
	}
	merged := measure.NewHistogram()
	for _, iv := range ivs {
		merged.Merge(iv.Types[typ].Latency)
	}
	if h.GetSampleCount() != want || uint64(merged.TotalCount()) != want {
		t.Errorf("%v: histogram count %d, merged intervals %d, want %d", match, h.GetSampleCount(), merged.TotalCount(), want)
	}
	if m := merged.Mean() * float64(want) / 1e9; math.Abs(h.GetSampleSum()-m) > 1e-9*m {
		t.Errorf("%v: histogram sum %v s, merged intervals' mean × count %v s", match, h.GetSampleSum(), m)
	}
	if len(h.Bucket) != len(histBounds)+1 || !math.IsInf(h.Bucket[len(histBounds)].GetUpperBound(), 1) || h.Bucket[len(histBounds)].GetCumulativeCount() != want {
		t.Fatalf("%d buckets, want %d and +Inf holding every value: %v", len(h.Bucket), len(histBounds), h.Bucket)
	}
	for _, b := range h.Bucket[:len(histBounds)] {
		var at uint64
		for _, bar := range merged.Distribution() {
			if float64(bar.To) <= b.GetUpperBound()*1e9+0.5 {
				at += uint64(bar.Count)
			}
		}
		if b.GetCumulativeCount() != at {
			t.Errorf("%v: bucket le=%v has %d, the merged intervals %d", match, b.GetUpperBound(), b.GetCumulativeCount(), at)
		}
	}
}
