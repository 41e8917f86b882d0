package promexp

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/store/sqlite"
	"github.com/fathom-lab/fathom/internal/target/targettest"
)

// benchStore is a store with 50 runs in progress of three transaction types and
// intervals stored intervals each.
func benchStore(b *testing.B, intervals int) (*sqlite.Store, []int64, []string) {
	st, _ := openStore(b)
	types := []string{"new_order", "payment", "order_status"}
	var ids []int64
	for i := range 50 {
		r := createRun(b, st, map[string]string{"env": "bench", "host": fmt.Sprint("db", i%5)}, types...)
		ids = append(ids, r.ID)
		for k := range intervals {
			if err := st.AddInterval(context.Background(), r.ID, interval(types, k, k == 0, 1000, int64(1+k%7))); err != nil {
				b.Fatal(err)
			}
		}
	}
	return st, ids, types
}

// reportCPU reports the process's CPU time since start per iteration: on a busy
// machine the wall time per scrape says more about the other processes.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64((targettest.CPUTime()-start).Microseconds())/1e3/float64(b.N), "cpu-ms/scrape")
}

func scrapeBytes(b *testing.B, h http.Handler) int {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		b.Fatalf("HTTP %d", rec.Code)
	}
	return rec.Body.Len()
}

// BenchmarkScrape50Runs is the cost of one scrape with 50 runs in progress: when
// nothing arrived since the last scrape (steady), when every run stored one new
// interval (new-interval: what a 1s-interval run gives a 1s scrape), and the first
// scrape of a handler, which reads 300 intervals of each run (cold).
func BenchmarkScrape50Runs(b *testing.B) {
	st, ids, types := benchStore(b, 300)
	b.Run("steady", func(b *testing.B) {
		h := NewHandler(st, Options{})
		n := scrapeBytes(b, h)
		b.ReportAllocs()
		cpu := targettest.CPUTime()
		for b.Loop() {
			scrapeBytes(b, h)
		}
		reportCPU(b, cpu)
		b.ReportMetric(float64(n), "bytes/scrape")
	})
	b.Run("new-interval", func(b *testing.B) {
		h := NewHandler(st, Options{})
		scrapeBytes(b, h)
		next := 300
		b.ReportAllocs()
		var cpu time.Duration
		for b.Loop() {
			b.StopTimer()
			for _, id := range ids {
				if err := st.AddInterval(context.Background(), id, interval(types, next, false, 1000, 3)); err != nil {
					b.Fatal(err)
				}
			}
			next++
			b.StartTimer()
			c := targettest.CPUTime()
			scrapeBytes(b, h)
			cpu += targettest.CPUTime() - c
		}
		b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(b.N), "cpu-ms/scrape")
	})
	b.Run("cold", func(b *testing.B) {
		b.ReportAllocs()
		cpu := targettest.CPUTime()
		for b.Loop() {
			scrapeBytes(b, NewHandler(st, Options{}))
		}
		reportCPU(b, cpu)
	})
}
