package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/report"
)

func getJSON(t *testing.T, url string, v any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if v != nil && resp.StatusCode == 200 {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v: %s", url, err, b)
		}
	}
	return resp.StatusCode
}

func TestRunsAPI(t *testing.T) {
	st := openStore(t)
	for i := 0; i < 30; i++ {
		f := fixture{intervals: 3, tps: float64(100 + i), labels: map[string]string{"variant": []string{"a", "b"}[i%2]}}
		if i%3 == 0 {
			f.workload, f.kind = "oltp_read_write", "mysql"
		}
		writeRun(t, st, i, f)
	}
	_, hs := newTestServer(t, st, "")
	var p runsPage
	getJSON(t, hs.URL+"/api/runs?limit=10", &p)
	if p.Total != 30 || p.All != 30 || len(p.Rows) != 10 || p.Rows[0].ID != 30 {
		t.Fatalf("total %d all %d rows %d first %d", p.Total, p.All, len(p.Rows), p.Rows[0].ID)
	}
	if strings.Join(p.Facets.Kinds, ",") != "mysql,postgres" || strings.Join(p.Facets.Labels, ",") != "variant" {
		t.Errorf("facets %+v", p.Facets)
	}
	getJSON(t, hs.URL+"/api/runs?kind=mysql&label=variant=a&sort=tps&order=asc", &p)
	if p.Total != 5 {
		t.Fatalf("mysql variant=a: %d runs, want 5", p.Total)
	}
	for i, r := range p.Rows {
		if r.Kind != "mysql" || r.Labels["variant"] != "a" || r.TPS == nil || r.P99 == nil || *r.P99 <= 0 {
			t.Fatalf("row %+v", r)
		}
		if i > 0 && *r.TPS < *p.Rows[i-1].TPS {
			t.Errorf("not sorted by tps ascending: %v after %v", *r.TPS, *p.Rows[i-1].TPS)
		}
	}
	getJSON(t, hs.URL+"/api/runs?since=2026-03-01&until=2026-03-01&offset=25", &p)
	if p.Total != 30 || len(p.Rows) != 5 {
		t.Errorf("date filter and offset: total %d, rows %d", p.Total, len(p.Rows))
	}
	getJSON(t, hs.URL+"/api/runs?since=2026-03-02", &p)
	if p.Total != 0 || p.Rows == nil {
		t.Errorf("since the next day: %d runs (rows nil: %v)", p.Total, p.Rows == nil)
	}
	for _, q := range []string{"sort=bogus", "label=novalue", "since=yesterday", "limit=0", "offset=-1"} {
		if code := getJSON(t, hs.URL+"/api/runs?"+q, nil); code != 400 {
			t.Errorf("%s: status %d, want 400", q, code)
		}
	}
}

func TestRunPageAPI(t *testing.T) {
	st := openStore(t)
	id := writeRun(t, st, 0, fixture{intervals: 60, dip: [2]int{30, 35}, metrics: 12})
	seen := []measure.SeenError{{Class: "other", Code: "42601", Message: `syntax error at or near "SELEC"`, Txn: "bad.sql",
		Where: "bad.sql line 1: SELEC 1", Client: 3, AtNs: 2_000_000, Count: 41, Aborted: true}}
	if err := st.SaveRunErrors(context.Background(), id, seen); err != nil {
		t.Fatal(err)
	}
	_, hs := newTestServer(t, st, "")
	var p runPage
	if code := getJSON(t, hs.URL+"/api/runs/1", &p); code != 200 {
		t.Fatalf("status %d", code)
	}
	if len(p.Errors) != 1 || p.Errors[0] != seen[0] {
		t.Errorf("errors %+v, want %+v", p.Errors, seen)
	}
	if p.Run.ID != id || p.Intervals != 60 || len(p.Figures.Time) != 3 || p.Figures.Distribution == nil || len(p.Stalls) != 1 || !p.Sampled {
		t.Fatalf("run %d, %d intervals, %d time charts, distribution %v, %d stalls, sampled %v",
			p.Run.ID, p.Intervals, len(p.Figures.Time), p.Figures.Distribution != nil, len(p.Stalls), p.Sampled)
	}
	tps := p.Figures.Time[0]
	if tps.Title != "Throughput over time" || len(tps.Series) != 1 || len(tps.Series[0].Y) != 60 || len(tps.Bands) != 1 || tps.Bands[0].Kind != "stall" {
		t.Errorf("throughput chart %q: %d series, bands %+v", tps.Title, len(tps.Series), tps.Bands)
	}
	if len(p.Figures.Metrics) == 0 {
		t.Error("no metric charts")
	}
	for _, bad := range []string{"/api/runs/99", "/api/runs/x", "/api/experiments/5"} {
		if code := getJSON(t, hs.URL+bad, nil); code != 404 && code != 400 {
			t.Errorf("%s: status %d", bad, code)
		}
	}
}

func send(t *testing.T, method, url, token, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestWritesNeedToken(t *testing.T) {
	st := openStore(t)
	writeRun(t, st, 0, fixture{intervals: 3})
	writeRun(t, st, 1, fixture{intervals: 3})
	_, ro := newTestServer(t, st, "")
	if code, body := send(t, "POST", ro.URL+"/api/runs/1/labels", "x", `{"set":{"a":"b"}}`); code != 403 || !strings.Contains(body, "read-only") {
		t.Errorf("read-only server: %d %s", code, body)
	}
	_, hs := newTestServer(t, st, "s3cret")
	if code, body := send(t, "POST", hs.URL+"/api/runs/1/labels", "wrong", `{"set":{"a":"b"}}`); code != 401 || strings.Contains(body, "s3cret") {
		t.Errorf("wrong token: %d %s", code, body)
	}
	if code, body := send(t, "POST", hs.URL+"/api/runs/1/labels", "s3cret", `{"set":{"note":"checkpoint tuning, see ticket 12"}}`); code != 200 || !strings.Contains(body, "ticket 12") {
		t.Errorf("set note: %d %s", code, body)
	}
	if code, body := send(t, "POST", hs.URL+"/api/runs/1/labels", "s3cret", `{"remove":["note"], "bogus": 1}`); code != 400 {
		t.Errorf("unknown field: %d %s", code, body)
	}
	if code, _ := send(t, "POST", hs.URL+"/api/runs/1/labels", "s3cret", `{"remove":["note"]}`); code != 200 {
		t.Errorf("remove note: %d", code)
	}
	r, _ := st.Run(context.Background(), 1)
	if len(r.Labels) != 0 {
		t.Errorf("labels after removal: %v", r.Labels)
	}
	if code, _ := send(t, "DELETE", hs.URL+"/api/runs/2", "s3cret", ""); code != 200 {
		t.Errorf("delete: %d", code)
	}
	if code, _ := send(t, "DELETE", hs.URL+"/api/runs/2", "s3cret", ""); code != 404 {
		t.Errorf("delete again: %d, want 404", code)
	}
	if code := getJSON(t, hs.URL+"/api/runs/2", nil); code != 404 {
		t.Errorf("deleted run reads %d", code)
	}
}

// TestLive follows a run in progress: each new interval reaches the stream, and the
// stream ends when the run finishes.
func TestLive(t *testing.T) {
	st := openStore(t)
	f := fixture{intervals: 3, running: true}
	id := writeRun(t, st, 0, f)
	_, hs := newTestServer(t, st, "")
	resp, err := http.Get(hs.URL + "/api/runs/1/live")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := make(chan [2]string)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<24)
		var ev string
		for sc.Scan() {
			line := sc.Text()
			if e, ok := strings.CutPrefix(line, "event: "); ok {
				ev = e
			} else if d, ok := strings.CutPrefix(line, "data: "); ok {
				events <- [2]string{ev, d}
			}
		}
	}()
	next := func() (string, runPage) {
		select {
		case e, ok := <-events:
			if !ok {
				t.Fatal("stream closed")
			}
			var p runPage
			if e[0] == "run" {
				if err := json.Unmarshal([]byte(e[1]), &p); err != nil {
					t.Fatal(err)
				}
			}
			return e[0], p
		case <-time.After(30 * time.Second):
			t.Fatal("no event in 30s")
		}
		return "", runPage{}
	}
	ev, p := next()
	if ev != "run" || p.Intervals != 3 || !p.Live {
		t.Fatalf("first event %s: %d intervals, live %v", ev, p.Intervals, p.Live)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for k := 3; k < 6; k++ {
		addInterval(t, st, id, k, &f, rng)
		for {
			ev, p = next()
			if ev != "run" || p.Intervals >= k+1 {
				break
			}
		}
		if ev != "run" || p.Intervals != k+1 {
			t.Fatalf("after interval %d: %s with %d intervals", k, ev, p.Intervals)
		}
	}
	if err := st.FinishRun(context.Background(), id, "complete", "", epoch.Add(6*time.Second), nil); err != nil {
		t.Fatal(err)
	}
	ev, p = next()
	if ev != "run" || p.Live || p.Run.Status != "complete" {
		t.Fatalf("after finishing: %s, live %v, status %s", ev, p.Live, p.Run.Status)
	}
	if ev, _ = next(); ev != "end" {
		t.Fatalf("then %s, want end", ev)
	}
}

func TestExperimentAndCompare(t *testing.T) {
	st := openStore(t)
	id := writeExperiment(t, st, 0, 3)
	_, hs := newTestServer(t, st, "")
	var x struct {
		Cells []struct {
			Key    string  `json:"key"`
			TPS    float64 `json:"tps_median"`
			RunIDs []int64 `json:"run_ids"`
		} `json:"cells"`
	}
	if code := getJSON(t, hs.URL+"/api/experiments/1", &x); code != 200 || len(x.Cells) != 4 || id != 1 {
		t.Fatalf("status %d, %d cells", code, len(x.Cells))
	}
	resp, err := http.Get(hs.URL + "/experiments/1/report/index.html")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), "<svg") || !strings.Contains(string(b), "Experiment sweep") {
		t.Errorf("report: %d, %d bytes", resp.StatusCode, len(b))
	}
	for _, f := range []string{"runs.csv", "cells.csv", "run-1-intervals.csv"} {
		if code := getJSON(t, hs.URL+"/experiments/1/report/"+f, nil); code != 200 {
			t.Errorf("%s linked from the report: %d", f, code)
		}
	}
	if code := getJSON(t, hs.URL+"/experiments/1/report/nope.csv", nil); code != 404 {
		t.Errorf("unknown report file: %d", code)
	}
	// The charts as models: box plot, bars, two scaling curves; two overlays; one
	// small chart per clients value, each series styled.
	var f report.ExperimentFigures
	if code := getJSON(t, hs.URL+"/api/experiments/1/figures", &f); code != 200 {
		t.Fatalf("figures: %d", code)
	}
	var kinds []string
	for _, c := range f.Summary {
		kinds = append(kinds, c.Kind)
	}
	// Five boxes: one per cell, the last over every run.
	if strings.Join(kinds, ",") != "box,bars,line,line" || len(f.Summary[0].Boxes) != 5 || f.Summary[0].Boxes[4].Label != "all runs" || len(f.Time) != 2 || f.Small.Kind != "multiples" || len(f.Small.Panels) != 4 {
		t.Errorf("figures: %v, %d boxes, %d overlays, small %s of %d", kinds, len(f.Summary[0].Boxes), len(f.Time), f.Small.Kind, len(f.Small.Panels))
	}
	if f.Summary[2].Series[0].Colour == "" {
		t.Error("a scaling curve's series has no colour")
	}
	if code := getJSON(t, hs.URL+"/api/experiments/7/figures", nil); code != 404 {
		t.Errorf("figures of a missing experiment: %d, want 404", code)
	}
	var c comparePage
	if code := getJSON(t, hs.URL+"/api/compare?a=exp:sweep:clients=1&b=exp:sweep:clients=8", &c); code != 200 {
		t.Fatalf("compare: %d", code)
	}
	if !strings.Contains(c.Text, "throughput") || len(c.Charts) != 2 || len(c.Charts[0].Series) != 6 {
		t.Errorf("compare: %q, %d charts", c.Text, len(c.Charts))
	}
	for _, q := range []string{"a=1", "a=1&b=1", "a=1&b=label:nope=x"} {
		if code := getJSON(t, hs.URL+"/api/compare?"+q, nil); code != 400 {
			t.Errorf("compare %s: %d, want 400", q, code)
		}
	}
}

func TestListenChecks(t *testing.T) {
	for _, c := range []struct {
		addr          string
		tls, insecure bool
		ok            bool
	}{
		{"127.0.0.1:8080", false, false, true},
		{"localhost:8080", false, false, true},
		{"[::1]:8080", false, false, true},
		{"0.0.0.0:8080", false, false, false},
		{":8080", false, false, false},
		{"10.1.2.3:8080", true, false, true},
		{"10.1.2.3:8080", false, true, true},
		{"8080", false, false, false},
	} {
		if err := checkListen(c.addr, c.tls, c.insecure); (err == nil) != c.ok {
			t.Errorf("%s tls=%v insecure=%v: %v", c.addr, c.tls, c.insecure, err)
		}
	}
	dir := t.TempDir()
	open := filepath.Join(dir, "open")
	os.WriteFile(open, []byte("tok\n"), 0o644)
	closed := filepath.Join(dir, "closed")
	os.WriteFile(closed, []byte("  tok  \nsecond line\n"), 0o600)
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, []byte("\n"), 0o600)
	l := Listen{TokenFile: closed}
	if tok, err := l.readToken(); err != nil || tok != "tok" {
		t.Errorf("token %q, %v", tok, err)
	}
	for _, f := range []string{empty, filepath.Join(dir, "missing")} {
		l := Listen{TokenFile: f}
		if _, err := l.readToken(); err == nil {
			t.Errorf("%s: no error", f)
		}
	}
	if l := (Listen{TokenFile: open}); os.Getenv("GOOS") != "windows" {
		if _, err := l.readToken(); err == nil || !strings.Contains(err.Error(), "chmod 600") {
			t.Errorf("readable by others: %v", err)
		}
	}
	if err := (&Listen{Addr: "127.0.0.1:1", TLSCert: "c.pem"}).check(); err == nil {
		t.Error("a certificate without a key passed")
	}
}

// Options.Extra mounts handlers beside the UI (the /metrics exposition).
func TestExtraHandlers(t *testing.T) {
	st := openStore(t)
	s, err := New(Options{Store: st, Extra: map[string]http.Handler{
		"GET /metrics": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "fathom_up 1\n") }),
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1/metrics", nil))
	if rec.Code != 200 || rec.Body.String() != "fathom_up 1\n" {
		t.Errorf("/metrics: %d %q", rec.Code, rec.Body.String())
	}
	rec = httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "http://localhost/", nil))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "uPlot.iife.min.js") || rec.Header().Get("Content-Security-Policy") == "" {
		t.Errorf("index: %d, CSP %q", rec.Code, rec.Header().Get("Content-Security-Policy"))
	}
}

// GET /api/runs/{id}/window: the intervals of a window at the resolution asked for;
// bad windows get one line and 400.
func TestWindowAPI(t *testing.T) {
	st := openStore(t)
	id := writeRun(t, st, 0, fixture{intervals: 100, wobble: true})
	_, hs := newTestServer(t, st, "")
	base := fmt.Sprintf("%s/api/runs/%d/window", hs.URL, id)
	var w windowPage
	if code := getJSON(t, base+"?from=10&to=40&points=10", &w); code != 200 {
		t.Fatalf("window: %d", code)
	}
	// Intervals 10..39 overlap [10, 40]: 30 of them, 3 per point for 10 points.
	if w.Intervals != 30 || w.Group != 3 || len(w.Time) != 3 || len(w.Time[0].Series[0].X) != 10 {
		t.Fatalf("window: %d intervals, group %d, %d charts", w.Intervals, w.Group, len(w.Time))
	}
	if r := w.Time[0].XRange; r == nil || r.Min != 10 || r.Max != 40 || w.Time[0].ID != fmt.Sprintf("run-%d-tps", id) {
		t.Errorf("window chart %s range %+v", w.Time[0].ID, r)
	}
	if x := w.Time[0].Series[0].X[0]; x != 11.5 {
		t.Errorf("first point at %v s, want 11.5 (intervals 10–12)", x)
	}
	if code := getJSON(t, base+"?from=10&to=40", &w); code != 200 || w.Group != 1 || len(w.Time[0].Series[0].X) != 30 {
		t.Errorf("default resolution: %d, group %d", code, w.Group)
	}
	for _, q := range []string{"", "?from=40&to=10", "?from=a&to=10", "?from=1&to=2&points=1", "?from=1&to=2&points=99999"} {
		code, body := send(t, "GET", base+q, "", "")
		if code != 400 || strings.Count(strings.TrimSpace(body), "\n") != 0 || !strings.Contains(body, "window:") {
			t.Errorf("%q: %d %s", q, code, body)
		}
	}
	if code := getJSON(t, hs.URL+"/api/runs/99/window?from=1&to=2", nil); code != 404 {
		t.Errorf("missing run: %d", code)
	}
}

// TestRunsListNotStale: the first load after a quiet while shows the store as it is
// now. The list read earlier is made older than the cache keeps a list (as after a
// minute without requests); a run added since, and a run that ended since, show on
// that very load, not on the one after it.
func TestRunsListNotStale(t *testing.T) {
	st := openStore(t)
	writeRun(t, st, 0, fixture{intervals: 2})
	running := writeRun(t, st, 1, fixture{intervals: 2, running: true})
	s, hs := newTestServer(t, st, "")
	var p runsPage
	getJSON(t, hs.URL+"/api/runs", &p)
	if p.All != 2 {
		t.Fatalf("first load: %d runs, want 2", p.All)
	}
	first := p.AsOf
	// A quiet while: the list read above is now older than the cache keeps one.
	s.list.mu.Lock()
	s.list.cur.at = s.list.cur.at.Add(-time.Minute)
	s.list.mu.Unlock()
	added := writeRun(t, st, 2, fixture{intervals: 2})
	if err := st.FinishRun(context.Background(), running, "complete", "", epoch.Add(time.Hour), nil); err != nil {
		t.Fatal(err)
	}
	getJSON(t, hs.URL+"/api/runs", &p)
	if p.All != 3 || p.Rows[0].ID != added {
		t.Fatalf("the load after a quiet while: %d runs (first %d), want 3 with run %d first", p.All, p.Rows[0].ID, added)
	}
	for _, r := range p.Rows {
		if r.ID == running && r.Status != "complete" {
			t.Errorf("run %d shows %q, want complete (it ended before this load)", running, r.Status)
		}
	}
	if !p.AsOf.After(first) {
		t.Errorf("as_of %v, not after the first load's %v", p.AsOf, first)
	}
}
