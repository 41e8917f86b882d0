package storetest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/storetest"
)

// BenchmarkRuns10k: the whole run list of a store holding 10,000 finished runs with
// labels, a summary and one interval each, on each store: Runs, and RunList (what
// `fathom serve` reads for its runs page).
func BenchmarkRuns10k(b *testing.B) {
	const n = 10000
	for _, f := range factories {
		b.Run(f.name, func(b *testing.B) {
			ctx := context.Background()
			s := f.open(b, f.fresh(b))
			defer s.Close()
			iv := storetest.Interval(0, 100)
			sum := []byte(`{"seconds":10,"tps":1234.5,"errors":2,"latency_ms":{"p50":1.2,"p99":3.4}}`)
			for i := range n {
				r := storetest.Run()
				r.Labels = map[string]string{"variant": fmt.Sprint(i % 4), "host": fmt.Sprint("db", i%7)}
				id, err := s.CreateRun(ctx, r)
				if err != nil {
					b.Fatal(err)
				}
				if err := s.AddInterval(ctx, id, iv); err != nil {
					b.Fatal(err)
				}
				if err := s.FinishRun(ctx, id, "complete", "", r.StartedAt.Add(10*time.Second), sum); err != nil {
					b.Fatal(err)
				}
			}
			list := map[string]func(context.Context, store.RunFilter) ([]store.Run, error){"Runs": s.Runs}
			if l, ok := s.(interface {
				RunList(context.Context, store.RunFilter) ([]store.Run, error)
			}); ok {
				list["RunList"] = l.RunList
			}
			for _, name := range []string{"Runs", "RunList"} {
				if list[name] == nil {
					continue
				}
				b.Run(name, func(b *testing.B) {
					for b.Loop() {
						runs, err := list[name](ctx, store.RunFilter{})
						if err != nil {
							b.Fatal(err)
						}
						if len(runs) != n || len(runs[0].Labels) != 2 {
							b.Fatalf("%d runs, %d labels on the first", len(runs), len(runs[0].Labels))
						}
					}
				})
			}
		})
	}
}
