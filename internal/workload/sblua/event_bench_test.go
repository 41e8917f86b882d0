package sblua_test

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/db"
	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
	"github.com/fathom-lab/fathom/internal/workload/sblua"
)

// BenchmarkScriptEvent is the client's cost of one event() of sysbench's own scripts
// against the real MariaDB, one client, as the runner calls it (Next, Do): the
// interpreter, the sysbench.sql layer, the driver and the system calls (ns/op is
// wall time, which includes the server's; cpu-ns/op is the process's user and system
// time, the client's; allocs/op are the client's alone). "direct" is how the scripts
// run (their rows skipped on the wire, as they read none), "driver" the rows decoded
// by go-sql-driver/mysql, as for a script that reads results. "stepped-nowire" steps
// the event as the runner's multiplexed path does (workload.Stepper) but answers each
// statement at once without sending it: what the interpreter and the stepping cost.
// "-cold" walks 1 MB of memory before each event, as the kernel's network work and
// the other clients do between two events of one client in a run, and reports the
// events' own time (event-ns/op; ns/op includes the walk): in a 32-client run the
// interpreter costs about what it costs here, 2.5 times its hot cost.
func BenchmarkScriptEvent(b *testing.B) {
	files, _ := filepath.Glob(filepath.Join(sblua.SearchDirs[0], "oltp_point_select.lua"))
	if len(files) == 0 {
		if dbtest.Required() {
			b.Fatalf("no sysbench scripts in %s: install sysbench", sblua.SearchDirs[0])
		}
		b.Skipf("no sysbench scripts in %s", sblua.SearchDirs[0])
	}
	tgt, err := db.Open(dbtest.MySQLDatabase(b, "sblua_bench"), target.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer tgt.Close()
	ctx := context.Background()
	prepared := "" // the tables option the sbtest tables were prepared with
	for _, c := range []struct{ name, path string }{
		{"oltp_point_select/direct", "oltp_point_select"}, {"oltp_point_select/driver", "oltp_point_select"},
		{"oltp_read_only/direct", "oltp_read_only"}, {"oltp_read_only/driver", "oltp_read_only"},
		{"oltp_point_select/stepped-nowire", "oltp_point_select"}, {"oltp_read_only/stepped-nowire", "oltp_read_only"},
		{"oltp_point_select/stepped-nowire-32", "oltp_point_select"},
		{"oltp_point_select/stepped-nowire-32-cold", "oltp_point_select"},
		{"oltp_point_select/stepped-nowire-cold", "oltp_point_select"},
	} {
		name := c.path
		b.Run(c.name, func(b *testing.B) {
			sp, err := sblua.Spec(filepath.Join(sblua.SearchDirs[0], name+".lua"))
			if err != nil {
				b.Fatal(err)
			}
			tables := "1"
			if strings.Contains(c.name, "-32") {
				tables = "4" // as the bench runs it: param[tnum] and stmt[tnum] over four tables
			}
			wl, err := sp.New(workload.Params{"tables": tables, "table-size": "1000", "threads": "1"})
			if err != nil {
				b.Fatal(err)
			}
			w := wl.(*sblua.Workload)
			if strings.HasSuffix(c.name, "/driver") {
				sblua.KeepResults(w)
			}
			if err := w.UseTarget(tgt); err != nil {
				b.Fatal(err)
			}
			conn, err := tgt.Connect(ctx)
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			if prepared != tables {
				_ = conn.Exec(ctx, "DROP TABLE IF EXISTS sbtest1, sbtest2, sbtest3, sbtest4")
				if err := w.Prepare(ctx, tgt, nil); err != nil {
					b.Fatalf("prepare: %v", err)
				}
				prepared = tables
			}
			// "-32" steps 32 clients in turn, as the runner's multiplexed
			// path does: each event runs in a Lua state the others have pushed
			// out of the CPU's caches.
			n := 1
			if strings.Contains(c.name, "-32") {
				n = 32
			}
			ks := make([]workload.Worker, n)
			for i := range ks {
				ks[i] = w.NewWorker(i, 42+uint64(i))
				if err := ks[i].Bind(ctx, conn); err != nil {
					b.Fatal(err)
				}
				defer func() { _ = ks[i].(workload.Finisher).Finish(ctx) }()
			}
			k := ks[0]
			cold := strings.HasSuffix(c.name, "-cold")
			var thrash []byte
			var t0 time.Time
			var evNs time.Duration
			if cold {
				thrash = make([]byte, 1<<20)
			}
			stmts := 0
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime()
			st, stepped := k.(workload.Stepper)
			nowire := strings.Contains(c.name, "/stepped-nowire")
			if nowire && (!stepped || !st.Stepped()) {
				b.Fatal("the script's events cannot be stepped")
			}
			for i := range b.N {
				if n > 1 {
					k = ks[i%n]
					st = k.(workload.Stepper)
				}
				if cold {
					for j := 0; j < len(thrash); j += 64 {
						thrash[j]++
					}
					t0 = time.Now()
				}
				k.Next()
				if nowire {
					// The event stepped as on the runner's multiplexed path, each
					// statement answered at once without being sent: the interpreter's
					// and the stepping's cost per event, the wire's left out.
					s := st.Start(ctx)
					for s.Ex != nil {
						s = st.Reply(nil)
					}
					if s.Err != nil {
						b.Fatal(s.Err)
					}
					stmts += s.Stmts
					if cold {
						evNs += time.Since(t0)
					}
					continue
				}
				n, err := k.Do(ctx)
				if err != nil {
					b.Fatal(err)
				}
				stmts += n
			}
			b.StopTimer()
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
			if stmts < b.N {
				b.Fatalf("%d statements in %d events", stmts, b.N)
			}
			b.ReportMetric(float64(stmts)/float64(b.N), "stmts/op")
			if cold {
				b.ReportMetric(float64(evNs)/float64(b.N), "event-ns/op")
			}
		})
	}

}

// cpuTime is the process's user and system CPU time so far, in nanoseconds: the
// client's own cost, which wall time per op (the server's latency) hides.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
