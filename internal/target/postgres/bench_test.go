package postgres

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/fathom-lab/fathom/internal/target"
)

const benchRows = 10000

// BenchmarkPointSelect runs sysbench's oltp_point_select statement, SELECT c FROM
// sbtestN WHERE id=?, on one connection. Besides ns/op and allocs/op it reports
// cpu-ns/op, the process's user+system CPU time per statement, to compare with
// sysbench's client CPU per transaction on the same server.
func BenchmarkPointSelect(b *testing.B) {
	for _, mode := range []struct {
		name string
		cfg  target.Config
	}{{"prepared", target.Config{}}, {"simple", target.Config{Unprepared: true}}} {
		b.Run(mode.name, func(b *testing.B) {
			tg, c := testConn(b, mode.cfg)
			_ = tg
			table := benchTable(b, c)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			st, err := c.Prepare(ctx, "SELECT c FROM "+table+" WHERE id=?")
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

// benchTable creates and loads an sbtest-shaped table once per benchmark run.
func benchTable(b *testing.B, c *Conn) string {
	b.Helper()
	ctx := context.Background()
	table := uniqueName("bench")
	if err := c.Exec(ctx, "CREATE TABLE "+table+" (id integer NOT NULL PRIMARY KEY, k integer NOT NULL DEFAULT 0, c char(120) NOT NULL DEFAULT '', pad char(60) NOT NULL DEFAULT '')"); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Exec(context.Background(), "DROP TABLE IF EXISTS "+table) })
	i := 0
	cval := []byte(strings.Repeat("83868641912-28773972837-60736120486-", 4)[:119])
	pad := []byte(strings.Repeat("67847967377-", 5)[:59])
	n, err := c.Load(ctx, table, []string{"id", "k", "c", "pad"}, func(row []target.Value) bool {
		if i == benchRows {
			return false
		}
		i++
		row[0], row[1], row[2], row[3] = target.Int64(int64(i)), target.Int64(int64(i*31%benchRows)), target.Text(cval), target.Text(pad)
		return true
	})
	if err != nil || n != benchRows {
		b.Fatalf("load: %d rows, %v", n, err)
	}
	return table
}

// BenchmarkPointSelectClients is BenchmarkPointSelect with 16 connections, each run by
// its own goroutine, as the runner does with -c 16.
func BenchmarkPointSelectClients(b *testing.B) {
	const clients = 16
	tg, c := testConn(b, target.Config{})
	table := benchTable(b, c)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stmts := make([]target.Stmt, clients)
	for i := range stmts {
		cc := connect(b, tg)
		st, err := cc.Prepare(ctx, "SELECT c FROM "+table+" WHERE id=?")
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
