package sqlite

import (
	"context"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/target/targettest"
)

const sbCreate = "CREATE TABLE %s (id INTEGER PRIMARY KEY, k INTEGER NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '')"

// BenchmarkPointSelect runs sysbench's oltp_point_select statement on one connection
// and reports cpu-ns/op beside ns/op (see targettest.PointSelect); for SQLite, which
// runs in the process, that is the whole cost of the statement.
func BenchmarkPointSelect(b *testing.B) {
	targettest.PointSelect(b, func(b *testing.B, cfg target.Config) (target.Conn, string) {
		c := connect(b, testTarget(b, cfg, ""))
		return c, targettest.BenchTable(b, c, sbCreate, "sbtest1")
	})
}

// BenchmarkPointSelectClients is BenchmarkPointSelect with 4 connections, each run by
// its own goroutine, as the runner does with -c 4.
func BenchmarkPointSelectClients(b *testing.B) {
	tg := testTarget(b, target.Config{}, "")
	table := targettest.BenchTable(b, connect(b, tg), sbCreate, "sbtest1")
	targettest.PointSelectClients(b, 4, table, func() target.Conn { return connect(b, tg) })
}

// BenchmarkLoad loads 100,000 sbtest rows per iteration and reports rows/s.
func BenchmarkLoad(b *testing.B) {
	const rows = 100_000
	tg := testTarget(b, target.Config{}, "")
	c := connect(b, tg)
	ctx := context.Background()
	b.ReportAllocs()
	var elapsed time.Duration
	for b.Loop() {
		b.StopTimer()
		mustExec(b, c, "DROP TABLE IF EXISTS sbtest1")
		mustExec(b, c, "CREATE TABLE sbtest1 (id INTEGER PRIMARY KEY, k INTEGER NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '')")
		b.StartTimer()
		start := time.Now()
		if n, err := c.Load(ctx, "sbtest1", []string{"id", "k", "c", "pad"}, targettest.SBRows(rows)); err != nil || n != rows {
			b.Fatalf("load: %d rows, %v", n, err)
		}
		elapsed += time.Since(start)
	}
	b.ReportMetric(float64(rows)*float64(b.N)/elapsed.Seconds(), "rows/s")
}
