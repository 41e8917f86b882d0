package sqlite

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/target"
)

const benchRows = 10000

// BenchmarkPointSelect runs sysbench's oltp_point_select statement, SELECT c FROM
// sbtestN WHERE id=?, on one connection. Besides ns/op and allocs/op it reports
// cpu-ns/op, the process's user+system CPU time per statement (for SQLite, which runs
// in the process, that is the whole cost of the statement).
func BenchmarkPointSelect(b *testing.B) {
	for _, mode := range modes {
		b.Run(mode.name, func(b *testing.B) {
			tg := testTarget(b, mode.cfg, "")
			c := connect(b, tg)
			benchTable(b, c)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			st, err := c.Prepare(ctx, "SELECT c FROM sbtest1 WHERE id=?")
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			args := []target.Value{target.Int64(1)}
			var res target.Result
			b.ReportAllocs()
			cpu0 := cpuTime()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				args[0].Int = int64(i*7919%benchRows + 1)
				if err := st.Run(ctx, args, &res); err != nil {
					b.Fatal(err)
				}
				if res.Rows != 1 {
					b.Fatalf("rows = %d", res.Rows)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// benchTable creates and loads sbtest1 with benchRows rows.
func benchTable(b *testing.B, c *Conn) {
	b.Helper()
	ctx := context.Background()
	mustExec(b, c, "CREATE TABLE sbtest1 (id INTEGER PRIMARY KEY, k INTEGER NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '')")
	n, err := c.Load(ctx, "sbtest1", []string{"id", "k", "c", "pad"}, sbRows(benchRows))
	if err != nil || n != benchRows {
		b.Fatalf("load: %d rows, %v", n, err)
	}
}

// sbRows generates n sbtest rows.
func sbRows(n int) func(row []target.Value) bool {
	i := 0
	cval := []byte(strings.Repeat("83868641912-28773972837-60736120486-", 4)[:119])
	pad := []byte(strings.Repeat("67847967377-", 5)[:59])
	return func(row []target.Value) bool {
		if i == n {
			return false
		}
		i++
		row[0], row[1], row[2], row[3] = target.Int64(int64(i)), target.Int64(int64(i*31%n)), target.Text(cval), target.Text(pad)
		return true
	}
}

// BenchmarkPointSelectClients is BenchmarkPointSelect with 4 connections, each run by
// its own goroutine, as the runner does with -c 4.
func BenchmarkPointSelectClients(b *testing.B) {
	const clients = 4
	tg := testTarget(b, target.Config{}, "")
	benchTable(b, connect(b, tg))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stmts := make([]target.Stmt, clients)
	for i := range stmts {
		st, err := connect(b, tg).Prepare(ctx, "SELECT c FROM sbtest1 WHERE id=?")
		if err != nil {
			b.Fatal(err)
		}
		stmts[i] = st
	}
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range clients {
		wg.Go(func() {
			args := []target.Value{target.Int64(1)}
			var res target.Result
			for i := w; next.Add(1) <= int64(b.N); i++ {
				args[0].Int = int64(i*7919%benchRows + 1)
				if err := stmts[w].Run(ctx, args, &res); err != nil || res.Rows != 1 {
					b.Errorf("run: %v, %d rows", err, res.Rows)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
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
		if n, err := c.Load(ctx, "sbtest1", []string{"id", "k", "c", "pad"}, sbRows(rows)); err != nil || n != rows {
			b.Fatalf("load: %d rows, %v", n, err)
		}
		elapsed += time.Since(start)
	}
	b.ReportMetric(float64(rows)*float64(b.N)/elapsed.Seconds(), "rows/s")
}
