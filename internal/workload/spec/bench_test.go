package spec_test

import (
	"context"
	"testing"

	"github.com/fathom-lab/fathom/internal/workload"
)

// BenchmarkNext measures drawing a transaction: a fanout write (about 200 statements
// with their values) and a ycsb read.
func BenchmarkNext(b *testing.B) {
	for _, c := range []struct {
		name, wl string
		p        workload.Params
	}{
		{"fanout-write", "fanout", nil},
		{"ycsb-a", "ycsb", nil},
	} {
		b.Run(c.name, func(b *testing.B) {
			w := newWorkload(b, c.wl, c.p)
			k := w.NewWorker(0, 1)
			b.ReportAllocs()
			for b.Loop() {
				k.Next()
			}
		})
	}
}

// BenchmarkDo measures whole transactions on each target: ycsb mix c (one primary-key
// read) and seqrand's random select. allocs/op includes the target's driver.
func BenchmarkDo(b *testing.B) {
	for _, tg := range testTargets {
		b.Run(tg.name, func(b *testing.B) {
			ctx := context.Background()
			tgt := openTarget(b, tg.dsn(b))
			w := newWorkload(b, "ycsb", workload.Params{"records": "1000", "mix": "c"})
			if err := w.Prepare(ctx, tgt, nil); err != nil {
				b.Fatal(err)
			}
			conn, err := tgt.Connect(ctx)
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			defer w.Cleanup(ctx, conn)
			if err := w.Setup(ctx, conn); err != nil {
				b.Fatal(err)
			}
			k := w.NewWorker(0, 1)
			if err := k.Bind(ctx, conn); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				k.Next()
				if _, err := k.Do(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
