package targettest

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/fathom-lab/fathom/internal/target"
)

// benchRows is the size of the benchmarks' sbtest-shaped table.
const benchRows = 10000

// BenchTable creates a table with create (CREATE TABLE … with %s for its name, in the
// shape of sysbench's sbtestN: id, k, c, pad) and loads BenchRows rows with c's fast
// path; the table is dropped when the benchmark ends. It returns the table's name;
// name, if not empty, is used instead of a unique one.
func BenchTable(b *testing.B, c target.Conn, create, name string) string {
	b.Helper()
	ctx := context.Background()
	if name == "" {
		name = UniqueName("bench")
	}
	if err := c.Exec(ctx, strings.Replace(create, "%s", name, 1)); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Exec(context.Background(), "DROP TABLE IF EXISTS "+name) })
	n, err := c.Load(ctx, name, []string{"id", "k", "c", "pad"}, SBRows(benchRows))
	if err != nil || n != benchRows {
		b.Fatalf("load: %d rows, %v", n, err)
	}
	return name
}

// SBRows generates n rows of sysbench's sbtest shape (id, k, c, pad) for Conn.Load.
func SBRows(n int) func(row []target.Value) bool {
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

// PointSelect runs sysbench's oltp_point_select statement, SELECT c FROM table WHERE
// id=?, on c, in each of Modes (connect opens a connection with a mode's Config and
// returns it with the benchmark table). Besides ns/op and allocs/op it reports
// cpu-ns/op, the process's user+system CPU time per statement, to compare with
// sysbench's client CPU per transaction on the same server.
func PointSelect(b *testing.B, connect func(b *testing.B, cfg target.Config) (target.Conn, string)) {
	for _, mode := range Modes {
		b.Run(mode.Name, func(b *testing.B) {
			c, table := connect(b, mode.Cfg)
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
			cpu0 := CPUTime()
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
			b.ReportMetric(float64(CPUTime()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// PointSelectClients is PointSelect with clients connections (from connect, on
// table), each run by its own goroutine, as the runner does with -c clients.
func PointSelectClients(b *testing.B, clients int, table string, connect func() target.Conn) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stmts := make([]target.Stmt, clients)
	for i := range stmts {
		st, err := connect().Prepare(ctx, "SELECT c FROM "+table+" WHERE id=?")
		if err != nil {
			b.Fatal(err)
		}
		stmts[i] = st
	}
	b.ReportAllocs()
	cpu0 := CPUTime()
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
	b.ReportMetric(float64(CPUTime()-cpu0)/float64(b.N), "cpu-ns/op")
}
