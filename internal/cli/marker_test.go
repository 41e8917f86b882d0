package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/db"
	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/stores"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
)

// A prepare killed part-way leaves its marker: the next run says so on screen and
// stores the warning with the run; preparing again removes it (issue 15).
func TestKilledPrepareIsReported(t *testing.T) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			// SQLite commits its load in batches: the kill lands inside sbtest1. PostgreSQL
			// loads a table in one COPY: the kill lands while sbtest2 loads, after sbtest1
			// is complete (and Setup, which reads sbtest1, cannot tell).
			dsn := "sqlite:" + filepath.Join(t.TempDir(), "t.db")
			wl := []string{"--workload", "oltp_point_select", "--table-size", "3000000"}
			sizes := "--tables 1 --table-size 3000000" // the line to prepare again repeats them
			if kind == "postgres" {
				dsn = dbtest.PostgresDatabase(t, "killed_prepare")
				wl = []string{"--workload", "oltp_point_select", "--tables", "2", "--table-size", "400000"}
				sizes = "--tables 2 --table-size 400000"
			}
			env := storeEnv(t)
			wl = append(wl, "--target", dsn)
			// Nothing left from an earlier test run for the poll below to see.
			if r := fathom(t, env, nil, append([]string{"cleanup"}, wl...)...); r.code != 0 {
				t.Fatalf("cleanup: %s", r.stderr)
			}
			child := startFathom(t, env, append([]string{"prepare"}, wl...)...)

			// Poll until the child has committed some rows of sbtest1, then kill it.
			tgt, err := db.Open(dsn, target.Config{ConnectTimeout: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer tgt.Close()
			ctx := context.Background()
			deadline := time.Now().Add(2 * time.Minute)
			for {
				if n := count(ctx, tgt, "sbtest1"); n > 0 && count(ctx, tgt, workload.MarkerTable) > 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the child prepare loaded no rows in 2 minutes")
				}
				time.Sleep(20 * time.Millisecond)
			}
			if err := child.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = child.Wait()
			if n := count(ctx, tgt, workload.MarkerTable); n <= 0 {
				t.Fatalf("after the kill the marker has %d rows: the prepare finished before the kill", n)
			}

			// The run goes ahead (the rows there are usable) and warns, on screen and
			// in the store.
			run := []string{"run", "-w", "oltp_point_select", "--target", dsn, "-T", "1", "-q", "--json"}
			r := fathom(t, env, nil, run...)
			if r.code != 0 {
				t.Fatalf("run: exit %d: %s", r.code, r.stderr)
			}
			const want = "a prepare of oltp_point_select started at "
			if !strings.Contains(r.stderr, "fathom: warning: "+want) || !strings.Contains(r.stderr, " may be incomplete") ||
				!strings.Contains(r.stderr, "fathom prepare --workload oltp_point_select "+sizes+" --target") {
				t.Errorf("no warning on screen: %q", r.stderr)
			}
			st, err := stores.Open(env["FATHOM_STORE"])
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			stored, err := st.Run(ctx, 1)
			if err != nil || len(stored.Warnings) != 1 || !strings.HasPrefix(stored.Warnings[0], want) {
				t.Errorf("stored warnings %q (%v)", stored.Warnings, err)
			}
			if r := fathom(t, env, nil, "show", "1"); !strings.Contains(r.stdout, "warning:  "+want) {
				t.Errorf("show does not give the warning:\n%s", r.stdout)
			}
			var js struct {
				Run store.Run `json:"run"`
			}
			if r := fathom(t, env, nil, "show", "1", "--json"); json.Unmarshal([]byte(r.stdout), &js) != nil || len(js.Run.Warnings) != 1 {
				t.Errorf("show --json has no warning:\n%s", r.stdout)
			}

			// Prepare again (small) and the marker is gone.
			small := []string{"prepare", "--target", dsn, "--workload", "oltp_point_select", "--table-size", "100"}
			if r := fathom(t, env, nil, small...); r.code != 0 {
				t.Fatalf("prepare again: %s", r.stderr)
			}
			if n := count(ctx, tgt, workload.MarkerTable); n != -1 {
				t.Errorf("the marker table is still there (%d rows)", n)
			}
			r = fathom(t, env, nil, run...)
			if r.code != 0 || strings.Contains(r.stderr, " may be incomplete") || strings.Contains(r.stderr, "prepare") {
				t.Errorf("after a finished prepare: exit %d, %q", r.code, r.stderr)
			}
			// A killed prepare, then cleanup: the tables and their marker go.
			child = startFathom(t, env, append([]string{"prepare"}, wl...)...)
			waitFor(t, "the second prepare's marker", func() bool { return count(ctx, tgt, workload.MarkerTable) > 0 })
			_ = child.Process.Signal(syscall.SIGKILL)
			_ = child.Wait()
			if r := fathom(t, env, nil, append([]string{"cleanup"}, wl...)...); r.code != 0 {
				t.Errorf("cleanup: %s", r.stderr)
			}
			if n := count(ctx, tgt, workload.MarkerTable); n != -1 {
				t.Errorf("after cleanup the marker table is there (%d rows)", n)
			}
		})
	}
}

// count is the number of rows in table, or -1 when it cannot be read (no such table).
func count(ctx context.Context, tgt target.Target, table string) int64 {
	conn, err := tgt.Connect(ctx)
	if err != nil {
		return -1
	}
	defer conn.Close()
	rows, err := conn.Query(ctx, "SELECT count(*) FROM "+table)
	if err != nil || len(rows) != 1 || len(rows[0]) != 1 {
		return -1
	}
	var n int64
	if err := json.Unmarshal([]byte(rows[0][0]), &n); err != nil {
		return -1
	}
	return n
}
