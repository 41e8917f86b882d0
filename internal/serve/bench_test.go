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
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/store"
)

// storeOf10kRuns writes 10,000 finished runs (one interval each, labels, a summary)
// in one go per run, as `fathom run` leaves them.
func storeOf10kRuns(b *testing.B) store.Store {
	st := openStore(b)
	ctx := context.Background()
	f := fixture{intervals: 1}
	f.defaults()
	rng := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < 10000; i++ {
		f.labels = map[string]string{"variant": fmt.Sprint(i % 4), "host": fmt.Sprint("db", i%7)}
		id := createRun(b, st, i, &f)
		addInterval(b, st, id, 0, &f, rng)
		ivs, _ := st.Intervals(ctx, id)
		sum, _ := json.Marshal(measure.Summarize([]string{"tpcb"}, ivs))
		if err := st.FinishRun(ctx, id, "complete", "", epoch.Add(time.Duration(i)*time.Minute+time.Second), sum); err != nil {
			b.Fatal(err)
		}
	}
	return st
}

// cpuPerOp reports the process's CPU time per op (server and client together): on a
// busy machine the wall time per op says more about the other processes.
func cpuPerOp(b *testing.B) func() {
	c0 := processCPU()
	return func() {
		if c := processCPU(); c > 0 {
			b.ReportMetric((c-c0)*1000/float64(b.N), "cpu-ms/op")
		}
	}
}

func fetch(b *testing.B, url string) int {
	resp, err := http.Get(url)
	if err != nil {
		b.Fatal(err)
	}
	n, _ := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		b.Fatalf("%s: %d", url, resp.StatusCode)
	}
	return int(n)
}

// BenchmarkRunsPage10k: the runs page's request with 10,000 runs in the store (the
// page then draws the 100 rows it gets).
func BenchmarkRunsPage10k(b *testing.B) {
	st := storeOf10kRuns(b)
	b.Run("cold", func(b *testing.B) { // a new server: the store's list read first
		defer cpuPerOp(b)()
		for b.Loop() {
			s, err := New(Options{Store: st})
			if err != nil {
				b.Fatal(err)
			}
			req := httptest.NewRequest("GET", "/api/runs", nil)
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, req)
			s.Close()
			if rec.Code != 200 {
				b.Fatal(rec.Code)
			}
		}
	})
	_, hs := newTestServer(b, st, "")
	for _, q := range []string{"", "?sort=tps&label=variant=2&kind=postgres&offset=1000"} {
		b.Run("warm"+q, func(b *testing.B) {
			size := 0
			defer cpuPerOp(b)()
			for b.Loop() {
				size = fetch(b, hs.URL+"/api/runs"+q)
			}
			b.ReportMetric(float64(size), "bytes/page")
		})
	}
}

// BenchmarkRunsPageBrowser10k: the runs page opened in Chromium with 10,000 runs in
// the store, from navigation until its 100 rows are drawn.
func BenchmarkRunsPageBrowser10k(b *testing.B) {
	st := storeOf10kRuns(b)
	_, hs := newTestServer(b, st, "")
	tb := newTab(b)              // after the store: the tab's time limit counts from here
	fetch(b, hs.URL+"/api/runs") // the store's list read once, as a running server has
	n := 0
	for b.Loop() {
		n++
		tb.open(fmt.Sprintf("%s/?n=%d#/runs", hs.URL, n))
		if rows := tb.num(`document.querySelectorAll("#runs tbody tr").length`); rows != 100 {
			b.Fatalf("%v rows", rows)
		}
	}
}

// BenchmarkRunPage3600x40: one run page with 3,600 intervals and 40 metrics sampled
// every interval.
func BenchmarkRunPage3600x40(b *testing.B) {
	st := openStore(b)
	writeRun(b, st, 0, fixture{intervals: 3600, dip: [2]int{1800, 1830}, metrics: 40})
	_, hs := newTestServer(b, st, "")
	size := 0
	defer cpuPerOp(b)()
	for b.Loop() {
		size = fetch(b, hs.URL+"/api/runs/1")
	}
	b.ReportMetric(float64(size), "bytes/page")
}

// BenchmarkLive50Viewers: 50 pages follow a running run (600 intervals so far, 12
// metrics); each op adds an interval and waits until all 50 have its new state.
func BenchmarkLive50Viewers(b *testing.B) {
	st := openStore(b)
	f := fixture{intervals: 600, metrics: 12, running: true}
	id := writeRun(b, st, 0, f)
	srv, hs := newTestServer(b, st, "")
	srv.o.Poll = 100 * time.Millisecond
	const viewers = 50
	var mu sync.Mutex
	seen := make([]int, viewers)
	cond := sync.NewCond(&mu)
	for v := 0; v < viewers; v++ {
		resp, err := http.Get(hs.URL + "/api/runs/1/live")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { resp.Body.Close() })
		go func(v int) {
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(nil, 1<<26)
			for sc.Scan() {
				d, ok := strings.CutPrefix(sc.Text(), "data: ")
				if !ok {
					continue
				}
				var p struct {
					Intervals int `json:"intervals"`
				}
				if json.Unmarshal([]byte(d), &p) == nil {
					mu.Lock()
					seen[v] = p.Intervals
					cond.Broadcast()
					mu.Unlock()
				}
			}
		}(v)
	}
	waitAll := func(n int) {
		mu.Lock()
		defer mu.Unlock()
		for {
			all := true
			for _, s := range seen {
				all = all && s >= n
			}
			if all {
				return
			}
			cond.Wait()
		}
	}
	waitAll(600)
	rng := rand.New(rand.NewPCG(5, 5))
	k := 600
	defer cpuPerOp(b)()
	for b.Loop() {
		addInterval(b, st, id, k, &f, rng)
		k++
		waitAll(k)
	}
}
