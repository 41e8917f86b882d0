package pgscript

import (
	"context"
	"errors"
	"io"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
)

// turns counts round trips through a proxy: the times a client sent something after
// the server had answered (or first).
type turns struct {
	mu   sync.Mutex
	n    int
	last map[int]bool // per connection: the last bytes went to the server
}

// pump is the proxy's dbtest.ProxyOptions.Pump.
func (tr *turns) pump(id int, up bool, dst io.Writer, src io.Reader) {
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			tr.mu.Lock()
			if up && !tr.last[id] {
				tr.n++
			}
			tr.last[id] = up
			tr.mu.Unlock()
			if _, err := dst.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (tr *turns) count() int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.n
}

// TestPipelineOneRoundTrip: a pipeline of ten statements costs one round trip (counted
// by a proxy between fathom and PostgreSQL), where the same statements without the
// pipeline cost ten; in -M prepared the statements are prepared before the first
// pipeline, in -M extended each is parsed in it.
func TestPipelineOneRoundTrip(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dsn := dbtest.PostgresDatabase(t, "pgscript")
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	proxy := &turns{last: map[int]bool{}}
	u.Host = dbtest.StartProxy(t, u.Host, dbtest.ProxyOptions{Pump: proxy.pump}).Addr()
	body := strings.Repeat("SELECT :a + 1;\n", 5) + "\\syncpipeline\n" + strings.Repeat("SELECT :a * 2, :a;\n", 5)
	piped := writeScript(t, "piped.sql", "\\set a random(1, 1000)\n\\startpipeline\n"+body+"\\endpipeline\n")
	plain := writeScript(t, "plain.sql", "\\set a random(1, 1000)\n"+strings.ReplaceAll(body, "\\syncpipeline\n", ""))
	for _, c := range []struct {
		file, mode string
		want       int
	}{{piped, "prepared", 1}, {piped, "extended", 1}, {plain, "prepared", 10}} {
		w, err := Open(Options{Files: []string{c.file}, Mode: c.mode})
		if err != nil {
			t.Fatal(err)
		}
		_, conn := openConn(t, ctx, u.String(), c.mode == "extended")
		if err := w.Setup(ctx, conn); err != nil {
			t.Fatal(err)
		}
		k := w.NewWorker(0, 1)
		_ = k.Bind(ctx, conn)
		k.Next()
		if _, err := k.Do(ctx); err != nil { // prepares, in -M prepared
			t.Fatal(err)
		}
		const txns = 20
		before := proxy.count()
		for range txns {
			k.Next()
			if n, err := k.Do(ctx); err != nil || n != 10 {
				t.Fatalf("%s -M %s: %d statements, %v", c.file, c.mode, n, err)
			}
		}
		if got := proxy.count() - before; got != c.want*txns {
			t.Errorf("%s -M %s: %d round trips for %d transactions, want %d each", c.file, c.mode, got, txns, c.want)
		}
	}
}

// TestPipelineErrors: a failing statement in a pipeline fails the transaction with its
// own error class and script line; the server skips the statements after it up to the
// next sync point (their implicit transaction is rolled back) and runs the ones after
// that, as pgbench's pipelines do. A serialization failure keeps its class, so that it
// is retried.
func TestPipelineErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, conn := openConn(t, ctx, dbtest.PostgresDatabase(t, "pgscript"), false)
	for _, s := range []string{"DROP TABLE IF EXISTS pl_t", "CREATE TABLE pl_t (k int PRIMARY KEY)"} {
		if err := conn.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	run := func(src string) (int, error) {
		t.Helper()
		w, err := Open(Options{Files: []string{writeScript(t, "e.sql", src)}})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Setup(ctx, conn); err != nil {
			t.Fatal(err)
		}
		k := w.NewWorker(0, 1)
		_ = k.Bind(ctx, conn)
		k.Next()
		return k.Do(ctx)
	}
	n, err := run("\\startpipeline\nINSERT INTO pl_t VALUES (1);\nINSERT INTO pl_t VALUES (1 / 0);\nINSERT INTO pl_t VALUES (2);\nINSERT INTO pl_t VALUES (3);\n\\syncpipeline\nINSERT INTO pl_t VALUES (4);\n\\endpipeline\n")
	if n != 3 || target.ClassOf(err) != target.ClassOther || !strings.Contains(fmtErr(err), "e.sql line 3 (INSERT INTO pl_t VALUES (1 / 0)), in the pipeline of line 1") ||
		!strings.Contains(fmtErr(err), "division by zero") || !strings.Contains(fmtErr(err), "skipped the 2 statements after it") {
		t.Errorf("%d statements ran, error %v (class %v)", n, err, target.ClassOf(err))
	}
	if got := query1(t, ctx, conn, "SELECT coalesce(sum(k), 0) FROM pl_t"); got != 4 {
		t.Errorf("rows after the pipeline sum to %d, want 4 (only the statement after the sync point)", got)
	}
	if !conn.Alive() {
		t.Fatal("the connection did not survive a statement's error")
	}
	_, err = run("\\startpipeline\nSELECT 1;\nDO $$ BEGIN RAISE EXCEPTION 'conflict' USING ERRCODE = '40001'; END $$;\n\\endpipeline\n")
	if target.ClassOf(err) != target.ClassSerialization {
		t.Errorf("serialization failure in a pipeline: %v (class %v)", err, target.ClassOf(err))
	}
	// An undefined variable is sent as NULL (as pgbench sends it); the server's
	// error aborts the client and rolls the pipeline's implicit transaction back.
	_, err = run("\\startpipeline\nINSERT INTO pl_t VALUES (10);\nINSERT INTO pl_t VALUES (:nope);\n\\endpipeline\n")
	var ab *workload.AbortError
	if !errors.As(err, &ab) || !strings.Contains(err.Error(), "violates not-null constraint") {
		t.Errorf("undefined variable in a pipeline: %v", err)
	}
	_, check := openConn(t, ctx, dbtest.PostgresDatabase(t, "pgscript"), false)
	if got := query1(t, ctx, check, "SELECT count(*) FROM pl_t WHERE k = 10"); got != 0 {
		t.Errorf("an abandoned pipeline's statement ran")
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
