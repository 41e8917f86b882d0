package pgscript

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/db"
	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
)

var testTargets = []struct {
	name string
	dsn  func(t *testing.T) string
}{
	{"sqlite", func(t *testing.T) string { return dbtest.SQLiteDSN(t) }},
	{"postgres", func(t *testing.T) string { return dbtest.PostgresDatabase(t, "pgscript") }},
	{"mysql", func(t *testing.T) string { return dbtest.MySQLDatabase(t, "pgscript") }},
}

// portable uses every portable meta-command: \set, \if/\elif/\else, \gset, \aset
// (one row of two columns), \sleep, \setshell and \shell, and pgbench's BEGIN … END.
const portable = `\set k random(1, 50)
\set d random(-5, 5)
\setshell one echo 1
\shell true
BEGIN;
UPDATE ps_kv SET v = v + :d WHERE k = :k;
SELECT v AS val, k AS kk FROM ps_kv WHERE k = :k \gset r_
SELECT 1 AS a, 2 AS b \aset
\if :r_kk <> :k
  \set fail 1 / 0
\elif :a + :b + :one = 4
  \set branch 2
\else
  \set fail 1 / 0
\endif
\sleep 0 ms
INSERT INTO ps_log (k, d, v, c, branch) VALUES (:k, :d, :r_val, :client_id, :branch);
END;
`

func writeScript(t *testing.T, name, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func openConn(t *testing.T, ctx context.Context, dsn string, unprepared bool) (target.Target, target.Conn) {
	t.Helper()
	tgt, err := db.Open(dsn, target.Config{Unprepared: unprepared})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := tgt.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(); tgt.Close() })
	return tgt, conn
}

func query1(t *testing.T, ctx context.Context, conn target.Conn, sql string) int64 {
	t.Helper()
	rows, err := conn.Query(ctx, sql)
	if err != nil || len(rows) != 1 {
		t.Fatalf("%s: %v %v", sql, rows, err)
	}
	n, err := strconv.ParseInt(strings.TrimSuffix(rows[0][0], ".0"), 10, 64)
	if err != nil {
		t.Fatalf("%s: %q", sql, rows[0][0])
	}
	return n
}

// TestPortableScript runs the portable script on every target in every query mode
// with two clients and checks what the database holds: every transaction logged
// once, the balance moved by exactly the logged deltas, \gset's value read back.
func TestPortableScript(t *testing.T) {
	for _, tg := range testTargets {
		t.Run(tg.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			dsn := tg.dsn(t)
			file := writeScript(t, "portable.sql", portable)
			for _, mode := range []string{"prepared", "extended", "simple"} {
				t.Run(mode, func(t *testing.T) {
					_, setup := openConn(t, ctx, dsn, false)
					for _, s := range []string{
						"DROP TABLE IF EXISTS ps_kv", "DROP TABLE IF EXISTS ps_log",
						"CREATE TABLE ps_kv (k int PRIMARY KEY, v int NOT NULL)",
						"CREATE TABLE ps_log (k int, d int, v int, c int, branch int)",
					} {
						if err := setup.Exec(ctx, s); err != nil {
							t.Fatalf("%s: %v", s, err)
						}
					}
					for k := 1; k <= 50; k++ {
						if err := setup.Exec(ctx, "INSERT INTO ps_kv VALUES ("+strconv.Itoa(k)+", 1000)"); err != nil {
							t.Fatal(err)
						}
					}
					w, err := Open(Options{Files: []string{file}, Mode: mode, AllowShell: true})
					if err != nil {
						t.Fatal(err)
					}
					if err := w.Setup(ctx, setup); err != nil {
						t.Fatal(err)
					}
					const perClient = 40
					errs := make(chan error, 2)
					for id := range 2 {
						_, conn := openConn(t, ctx, dsn, mode != "prepared")
						k := w.NewWorker(id, 99)
						if err := k.Bind(ctx, conn); err != nil {
							t.Fatal(err)
						}
						go func() {
							for range perClient {
								if typ := k.Next(); typ != 0 {
									errs <- errors.New("one script, yet type " + strconv.Itoa(typ))
									return
								}
								for try := 0; ; try++ {
									n, err := k.Do(ctx)
									if err == nil {
										if n != 6 {
											errs <- errors.New("statements " + strconv.Itoa(n) + ", want 6")
											return
										}
										break
									}
									_ = conn.Rollback(ctx)
									// SQLite and MySQL may refuse one of two writers (busy, deadlock).
									if c := target.ClassOf(err); !c.Retryable() && c != target.ClassTimeout || try > 50 {
										errs <- err
										return
									}
								}
							}
							errs <- nil
						}()
					}
					for range 2 {
						if err := <-errs; err != nil {
							t.Fatal(err)
						}
					}
					if n := query1(t, ctx, setup, "SELECT count(*) FROM ps_log WHERE branch = 2 AND c IN (0, 1)"); n != 2*perClient {
						t.Errorf("%d transactions logged, want %d", n, 2*perClient)
					}
					moved := query1(t, ctx, setup, "SELECT sum(v) - 50000 FROM ps_kv")
					logged := query1(t, ctx, setup, "SELECT coalesce(sum(d), 0) FROM ps_log")
					if moved != logged {
						t.Errorf("balances moved by %d, the log says %d", moved, logged)
					}
					// The last logged value of each key is its balance now (\gset read it).
					if n := query1(t, ctx, setup, "SELECT count(*) FROM ps_log l WHERE v < 900 OR v > 1100"); n != 0 {
						t.Errorf("%d logged values are not balances", n)
					}
				})
			}
		})
	}
}

// TestRunErrorsAbort: a script mistake found while running is an AbortError naming
// the script and line; \gset of no row is one.
func TestRunErrorsAbort(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dsn := dbtest.SQLiteDSN(t)
	for _, c := range []struct{ src, want string }{
		{"\\set x 1\nSELECT 1 FROM nowhere;\n", `client 0 script bad.sql line 2 (SELECT 1 FROM nowhere): SQL logic error: no such table: nowhere`},
		{"\\set x 1\nSELECT 1 AS a WHERE 1 = 0 \\gset\n", `line 2 (SELECT 1 AS a WHERE 1 = 0): \gset expects one row, the query returned 0`},
		{"\\set x 5 / 0\n", "line 1 (\\set x 5 / 0): division by zero"},
		{"\\set x 5\n\\sleep :x us\n\\set y true\n\\sleep :y us\n", `line 4 (\sleep :y us): invalid sleep time "true"`},
		{"BEGIN;\nSELECT 1;\n", "line 2 (SELECT 1): end of script reached with a transaction still open"},
		{"\\set 1a 5\n", `line 1 (\set 1a 5): invalid variable name "1a"`},
		{"SELECT 1 AS \"a b\" \\gset\n", `is not a variable name`},
		{"\\set x greatest(1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17)\n", "too many function arguments, maximum is 16"},
	} {
		_, conn := openConn(t, ctx, dsn, false)
		w, err := Open(Options{Files: []string{writeScript(t, "bad.sql", c.src)}})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Setup(ctx, conn); err != nil {
			t.Fatal(err)
		}
		k := w.NewWorker(0, 1)
		_ = k.Bind(ctx, conn)
		k.Next()
		_, err = k.Do(ctx)
		var ab *workload.AbortError
		var se *workload.ScriptError
		if !errors.As(err, &ab) || !errors.As(err, &se) || se.Script != "bad.sql" || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want an abort saying %q", c.src, err, c.want)
		}
	}
}

// TestPipelineRefused: \startpipeline is refused on other targets and in -M simple
// before anything runs.
func TestPipelineRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	file := writeScript(t, "pipe.sql", "\\startpipeline\nSELECT 1;\n\\endpipeline\n")
	w, err := Open(Options{Files: []string{file}})
	if err != nil {
		t.Fatal(err)
	}
	_, lite := openConn(t, ctx, dbtest.SQLiteDSN(t), false)
	if err := w.Setup(ctx, lite); err == nil || !strings.Contains(err.Error(), "runs on PostgreSQL only") {
		t.Errorf("pipeline on SQLite: %v", err)
	}
	if _, err := Open(Options{Files: []string{file}, Mode: "simple"}); err == nil || !strings.Contains(err.Error(), "needs -M extended or -M prepared") {
		t.Errorf("pipeline in simple mode: %v", err)
	}
	if _, err := Open(Options{Files: []string{writeScript(t, "sh.sql", "\\shell true\n")}}); err == nil || !strings.Contains(err.Error(), "--allow-shell") {
		t.Errorf("shell without --allow-shell: %v", err)
	}
}
