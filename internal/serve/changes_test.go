package serve

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/report"
	"github.com/fathom-lab/fathom/internal/store"
)

// hook is a webhook receiver that keeps what it was sent.
type hook struct {
	mu     sync.Mutex
	bodies []string
}

func (h *hook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	h.bodies = append(h.bodies, string(b))
	h.mu.Unlock()
}

func (h *hook) sent() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.bodies...)
}

// addRun stores the i-th run of seriesStore's series with tps and a commit_delay
// setting, as a run that completed; it returns its id.
func addRun(t *testing.T, st store.Store, i int, tps float64, delay string) int64 {
	t.Helper()
	ctx := context.Background()
	r := &store.Run{ToolVersion: "test", Workload: "tpcb", Options: map[string]string{"scale": "10"}, TargetKind: "postgres",
		Target: "postgres://bench@db1/bench", ServerVersion: "16.4", Settings: map[string]string{"synchronous_commit": "off", "commit_delay": delay},
		Host: store.Host{Hostname: "bench1", CPUs: 8}, Clients: 4, Duration: 10 * time.Second, Interval: time.Second,
		TxnTypes: []string{"tpcb"}, StartedAt: epoch.Add(time.Duration(i) * time.Hour)}
	id, err := st.CreateRun(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	tps += float64(i%5-2) * 5
	js, _ := json.Marshal(measure.Summary{TypeSummary: measure.TypeSummary{Transactions: int64(tps * 10), TPS: tps,
		Latency: measure.Latency{P50: 2, P95: 3, P99: 4}}})
	if err := st.FinishRun(ctx, id, "complete", "", r.StartedAt.Add(r.Duration), js); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestChangesWebhook: serve looks for changes as runs arrive and posts each change a
// new run makes visible, once: not the change the series already had when serve
// started, not again when more runs arrive, not again after a restart (the state
// file remembers), and in Slack's shape when asked, linked to the history page.
func TestChangesWebhook(t *testing.T) {
	st := openStore(t)
	ids := seriesStore(t, st, 20, 11) // a change at run 11 (1000 → 1500 tx/s): already there
	s, hs := newTestServer(t, st, "")
	sid := report.KeyOf(mustRun(t, st, ids[0]), nil).ID()
	recv := &hook{}
	hooks := httptest.NewServer(recv)
	defer hooks.Close()
	state := filepath.Join(t.TempDir(), "state", "webhook.json")
	if err := os.MkdirAll(filepath.Dir(state), 0o700); err != nil {
		t.Fatal(err)
	}
	var warnMu sync.Mutex
	var warns []string
	watch := func(format string) (stop func()) {
		ctx, cancel := context.WithCancel(context.Background())
		// Made here, as serve makes it before it listens: the runs stored from now
		// on are the ones that arrive.
		x, err := s.newWatcher(ctx, watch{Webhook: hooks.URL + "/secret-path", Format: format, Link: hs.URL, State: state,
			Every: 50 * time.Millisecond, Warn: func(m string) { warnMu.Lock(); warns = append(warns, m); warnMu.Unlock() }})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			x.run(ctx)
		}()
		return func() {
			cancel()
			<-done
		}
	}
	// handled waits until the watcher has built the series' history with n points.
	handled := func(n int) {
		t.Helper()
		dbtest.WaitFor(t, 60*time.Second, 20*time.Millisecond, "the watcher to look at the new runs", func() bool {
			e, ok := s.hist.get(sid)
			return ok && len(e.h.Points) == n
		})
	}
	stop := watch("json")
	// Runs 21–26 drop to 800 tx/s with commit_delay 20.
	var step int64
	for i := 21; i <= 26; i++ {
		id := addRun(t, st, i, 800, "20")
		if i == 21 {
			step = id
		}
		handled(i)
	}
	got := recv.sent()
	if len(got) != 1 {
		t.Fatalf("%d posts, want 1: %q (warnings %q)", len(got), got, warns)
	}
	var v struct {
		Event      string  `json:"event"`
		Series     string  `json:"series"`
		Regressed  bool    `json:"regressed"`
		NewestRuns []int64 `json:"newest_runs"`
		Changes    []struct {
			Metric  string   `json:"metric"`
			RunID   int64    `json:"run_id"`
			Worse   bool     `json:"worse"`
			Changed []string `json:"changed"`
		} `json:"changes"`
		Link string `json:"link"`
	}
	if err := json.Unmarshal([]byte(got[0]), &v); err != nil {
		t.Fatal(err)
	}
	if v.Event != "fathom.changes" || v.Series != sid || !v.Regressed || len(v.Changes) != 1 || v.Changes[0].Metric != "tps" ||
		v.Changes[0].RunID != step || !v.Changes[0].Worse || v.Link != hs.URL+"/history/"+sid ||
		!strings.Contains(strings.Join(v.Changes[0].Changed, ";"), "setting commit_delay: (none) → 20") {
		t.Errorf("posted %s", got[0])
	}
	// The link opens the series' page, which is current.
	resp, err := http.Get(v.Link)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %v %v", v.Link, resp, err)
	}
	resp.Body.Close()
	for i := 27; i <= 28; i++ {
		addRun(t, st, i, 800, "20")
		handled(i)
	}
	if n := len(recv.sent()); n != 1 {
		t.Errorf("%d posts after two more runs, want still 1", n)
	}
	stop()
	fi, err := os.Stat(state)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("state file: %v %v", fi, err)
	}
	// Restarted, in Slack's shape: the change sent is not sent again; a new one is.
	stop = watch("slack")
	defer stop()
	addRun(t, st, 29, 800, "20")
	handled(29)
	for i := 30; i <= 34; i++ {
		addRun(t, st, i, 1200, "0")
		handled(i)
	}
	got = recv.sent()
	if len(got) != 2 {
		t.Fatalf("%d posts after the restart, want 2: %q (warnings %q)", len(got), got, warns)
	}
	var slack map[string]string
	if err := json.Unmarshal([]byte(got[1]), &slack); err != nil || !strings.Contains(slack["text"], "<"+hs.URL+"/history/"+sid+"|"+sid+">") ||
		!strings.Contains(slack["text"], "tps") || strings.Contains(slack["text"], "secret-path") {
		t.Errorf("slack post %q (%v)", got[1], err)
	}
	if len(warns) > 0 {
		t.Errorf("warnings: %q", warns)
	}
}

func mustRun(t *testing.T, st store.Store, id int64) *store.Run {
	t.Helper()
	r, err := st.Run(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestSameChange: a known change is recognised at its run or re-estimated up to
// report.NearbyRuns runs away in the series, for its metric only.
func TestSameChange(t *testing.T) {
	h := &report.History{}
	for i := 0; i < 12; i++ {
		h.Points = append(h.Points, report.HistoryPoint{RunID: int64(100 + 3*i)}) // ids with gaps: other series' runs between
	}
	known := map[string]string{"tps@115": "sent"} // index 5
	for _, c := range []struct {
		metric string
		index  int
		want   bool
	}{
		{"tps", 5, true}, {"tps", 4, true}, {"tps", 7, true}, {"tps", 3, true},
		{"tps", 8, false}, {"tps", 2, false}, {"p99", 5, false},
	} {
		ch := report.HistoryChange{Metric: c.metric, RunID: h.Points[c.index].RunID}
		ch.Index = c.index
		if _, got := sameChange(h, known, ch); got != c.want {
			t.Errorf("%s at index %d: known %v, want %v", c.metric, c.index, got, c.want)
		}
	}
}

// TestWatcherWarmsHistories: serve builds the latest series' histories as it starts,
// so that their pages are ready before anyone asks.
func TestWatcherWarmsHistories(t *testing.T) {
	st := openStore(t)
	ids := seriesStore(t, st, 30, 15)
	s, hs := newTestServer(t, st, "")
	sid := report.KeyOf(mustRun(t, st, ids[0]), nil).ID()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = s.watchChanges(ctx, watch{Every: time.Hour}) }()
	defer func() { cancel(); <-done }()
	dbtest.WaitFor(t, 60*time.Second, 20*time.Millisecond, "the series' history to be built", func() bool {
		e, ok := s.hist.get(sid)
		return ok && len(e.h.Points) == 30
	})
	// The page is the one kept: served without building it again.
	e, _ := s.hist.get(sid)
	resp, err := http.Get(hs.URL + "/history/" + sid)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET: %v %v", resp, err)
	}
	resp.Body.Close()
	if again, _ := s.hist.get(sid); again.built != e.built {
		t.Errorf("the page built its history again (at %v; kept %v)", again.built, e.built)
	}
}
