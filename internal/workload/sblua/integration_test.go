package sblua_test

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/db"
	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
	"github.com/fathom-lab/fathom/internal/workload/sblua"
)

// servers are the test servers, each with a database of its own for this package.
var servers = []struct {
	name string
	dsn  func(t *testing.T) string
}{
	{"mysql", func(t *testing.T) string { return dbtest.MySQLDatabase(t, "sblua") }},
	{"postgres", func(t *testing.T) string { return dbtest.PostgresDatabase(t, "sblua") }},
}

// bundled lists the scripts sysbench installs (oltp_common is their library).
func bundled(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(sblua.SearchDirs[0], "*.lua"))
	var out []string
	for _, f := range files {
		if filepath.Base(f) != "oltp_common.lua" {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		if dbtest.Required() {
			t.Fatalf("no sysbench scripts in %s: install sysbench", sblua.SearchDirs[0])
		}
		t.Skipf("no sysbench scripts in %s", sblua.SearchDirs[0])
	}
	return out
}

func open(t *testing.T, dsn string) target.Target {
	t.Helper()
	tgt, err := db.Open(dsn, target.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tgt.Close() })
	return tgt
}

func count(t *testing.T, ctx context.Context, conn target.Conn, table string) int64 {
	t.Helper()
	rows, err := conn.Query(ctx, "SELECT COUNT(*) FROM "+table)
	if err != nil {
		t.Fatalf("counting %s: %v", table, err)
	}
	n, _ := strconv.ParseInt(rows[0][0], 10, 64)
	return n
}

func tableExists(ctx context.Context, conn target.Conn, table string) bool {
	_, err := conn.Query(ctx, "SELECT 1 FROM "+table+" WHERE 1=0")
	return err == nil
}

// TestBundledScripts prepares, runs and cleans up every script sysbench ships, on
// MariaDB and PostgreSQL, through the workload interface the runner uses: the
// tables have the rows asked for, every event sends statements, and cleanup drops
// the tables.
func TestBundledScripts(t *testing.T) {
	scripts := bundled(t)
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			tgt := open(t, srv.dsn(t))
			ctx := context.Background()
			conn, err := tgt.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			for _, path := range scripts {
				name := strings.TrimSuffix(filepath.Base(path), ".lua")
				t.Run(name, func(t *testing.T) {
					const size, threads, events = 300, 2, 15
					tables := 2
					if strings.HasPrefix(name, "select_random") {
						tables = 1 // these refuse --tables > 1
					}
					sp, err := sblua.Spec(path)
					if err != nil {
						t.Fatal(err)
					}
					wl, err := sp.New(workload.Params{"tables": strconv.Itoa(tables), "table-size": strconv.Itoa(size), "threads": strconv.Itoa(threads)})
					if err != nil {
						t.Fatal(err)
					}
					w := wl.(*sblua.Workload)
					var out strings.Builder
					w.SetOutput(&out)
					if err := w.UseTarget(tgt); err != nil {
						t.Fatal(err)
					}
					// A previous run's tables (the scripts' CREATE TABLE fails on them).
					for i := 1; i <= threads; i++ {
						_ = conn.Exec(ctx, "DROP TABLE IF EXISTS sbtest"+strconv.Itoa(i))
					}
					if err := w.Prepare(ctx, tgt, nil); err != nil {
						t.Fatalf("prepare: %v", err)
					}
					if !strings.Contains(out.String(), "Creating table 'sbtest1'") {
						t.Errorf("prepare printed %q", out.String())
					}
					bulk := name == "bulk_insert"
					for i := 1; i <= tables && !bulk; i++ {
						if n := count(t, ctx, conn, "sbtest"+strconv.Itoa(i)); n != size {
							t.Errorf("sbtest%d has %d rows after prepare, want %d", i, n, size)
						}
					}
					if err := w.Setup(ctx, conn); err != nil {
						t.Fatalf("setup: %v", err)
					}
					var stmts int
					for id := 0; id < threads; id++ {
						c, err := tgt.Connect(ctx)
						if err != nil {
							t.Fatal(err)
						}
						k := w.NewWorker(id, 42)
						if err := k.Bind(ctx, c); err != nil {
							c.Close()
							t.Fatalf("client %d: thread_init: %v", id, err)
						}
						for range events {
							k.Next()
							n, err := k.Do(ctx)
							stmts += n
							if err != nil && !target.ClassOf(err).Retryable() && target.ClassOf(err) != target.ClassConstraint {
								t.Fatalf("client %d: event: %v", id, err)
							}
							_ = c.Rollback(ctx)
						}
						if err := k.(workload.Finisher).Finish(ctx); err != nil {
							t.Errorf("client %d: thread_done: %v", id, err)
						}
						c.Close()
					}
					if bulk {
						// Each thread's events are its rows, sent by thread_done at the latest.
						for i := 1; i <= threads; i++ {
							if n := count(t, ctx, conn, "sbtest"+strconv.Itoa(i)); n != events {
								t.Errorf("bulk_insert: sbtest%d has %d rows, want %d", i, n, events)
							}
						}
					} else if stmts < threads*events {
						t.Errorf("%d statements in %d events", stmts, threads*events)
					}
					if err := w.Cleanup(ctx, conn); err != nil {
						t.Fatalf("cleanup: %v", err)
					}
					for i := 1; i <= tables; i++ {
						if tableExists(ctx, conn, "sbtest"+strconv.Itoa(i)) {
							t.Errorf("sbtest%d is still there after cleanup", i)
						}
					}
				})
			}
		})
	}
}

// TestReconnect: after the runner replaces a client's lost connection (Bind again),
// the statements the script prepared in thread_init are prepared on the new one and
// the next event runs on it; the server's session is killed for real.
func TestReconnect(t *testing.T) {
	bundled(t) // skips or fails without sysbench's scripts
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			tgt := open(t, srv.dsn(t))
			ctx := context.Background()
			admin, err := tgt.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer admin.Close()
			sp, err := sblua.Spec(filepath.Join(sblua.SearchDirs[0], "oltp_point_select.lua"))
			if err != nil {
				t.Fatal(err)
			}
			wl, err := sp.New(workload.Params{"tables": "1", "table_size": "50"})
			if err != nil {
				t.Fatal(err)
			}
			w := wl.(*sblua.Workload)
			if err := w.UseTarget(tgt); err != nil {
				t.Fatal(err)
			}
			_ = admin.Exec(ctx, "DROP TABLE IF EXISTS sbtest1")
			if err := w.Prepare(ctx, tgt, nil); err != nil {
				t.Fatal(err)
			}
			defer w.Cleanup(ctx, admin)
			c1, err := tgt.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			k := w.NewWorker(0, 3)
			if err := k.Bind(ctx, c1); err != nil {
				t.Fatal(err)
			}
			if n, err := k.Do(ctx); err != nil || n != 1 {
				t.Fatalf("first event: %d statements, %v", n, err)
			}
			kill := "KILL ?"
			if srv.name == "postgres" {
				kill = "SELECT pg_terminate_backend(?)"
			}
			if _, err := admin.Query(ctx, kill, target.Int64(c1.ID())); err != nil {
				t.Fatalf("killing the client's session: %v", err)
			}
			_, err = k.Do(ctx)
			if err == nil {
				t.Fatal("an event on a killed session succeeded")
			}
			if c := target.ClassOf(err); c != target.ClassConnection && c1.Alive() {
				t.Fatalf("error on a killed session: %v (class %v, connection alive)", err, c)
			}
			c1.Close()
			c2, err := tgt.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer c2.Close()
			if err := k.Bind(ctx, c2); err != nil {
				t.Fatalf("rebinding: %v", err)
			}
			for range 5 {
				if n, err := k.Do(ctx); err != nil || n != 1 {
					t.Fatalf("event after the reconnect: %d statements, %v", n, err)
				}
			}
			if err := k.(workload.Finisher).Finish(ctx); err != nil {
				t.Errorf("thread_done: %v", err)
			}
		})
	}
}
