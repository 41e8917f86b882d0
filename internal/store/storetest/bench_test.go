package storetest_test

import (
	"context"
	"testing"

	"github.com/fathom-lab/fathom/internal/store/storetest"
)

// BenchmarkAddInterval: one interval of two transaction types (a run's write per
// report interval), on each store.
func BenchmarkAddInterval(b *testing.B) {
	for _, f := range factories {
		b.Run(f.name, func(b *testing.B) {
			ctx := context.Background()
			s := f.open(b, f.fresh(b))
			defer s.Close()
			id, err := s.CreateRun(ctx, storetest.Run())
			if err != nil {
				b.Fatal(err)
			}
			iv := storetest.Interval(0, 1000)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				iv.Index = i
				if err := s.AddInterval(ctx, id, iv); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
