package collect_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/collect"
	"github.com/fathom-lab/fathom/internal/db"
	"github.com/fathom-lab/fathom/internal/sample"
)

// vocabulary is the declarations of the host's and every registered kind's collectors.
func vocabulary(t testing.TB) *collect.Vocabulary {
	t.Helper()
	v, err := db.Vocabulary()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Every name constant in the vocabulary's files (the host's here, each kind's in its
// directory; exported or not: scripts/unusedexports unexports the ones no other package
// uses) is declared by some collector.
func TestNameConstantsDeclared(t *testing.T) {
	vocab := vocabulary(t)
	var decls []ast.Decl
	for _, file := range []string{"metrics.go", "../db/postgres/metrics.go", "../db/mysql/metrics.go", "../db/redis/metrics.go"} {
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		decls = append(decls, f.Decls...)
	}
	n := 0
	for _, decl := range decls {
		g, ok := decl.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, id := range vs.Names {
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok {
					continue
				}
				v, _ := strconv.Unquote(lit.Value)
				n++
				if !vocab.Declared(v) {
					t.Errorf("%s = %q: no collector declares it", id.Name, v)
				}
				name := strings.ToUpper(id.Name[:1]) + id.Name[1:] // prefixPgSessions: PrefixPgSessions
				if strings.HasPrefix(name, "Prefix") && !strings.HasSuffix(v, ".") {
					t.Errorf("%s = %q: a prefix ends in '.'", id.Name, v)
				}
				if strings.HasPrefix(name, "Family") {
					if !vocab.IsFamily(v) {
						t.Errorf("%s = %q is not a declared family", id.Name, v)
					}
				}
			}
		}
	}
	if n < 50 {
		t.Fatalf("found only %d name constants in the metrics.go files: is the parse right?", n)
	}
}

func TestLookup(t *testing.T) {
	vocab := vocabulary(t)
	for _, c := range []struct {
		name string
		kind sample.Kind
		unit string
		ok   bool
	}{
		{"pg.xact_commit", sample.Counter, "transactions", true},
		{"pg.lock_waits", sample.Gauge, "locks", true},
		{"pg.lock_waits.relation", sample.Gauge, "locks", true},
		{"pg.wait_event.lwlock.walwrite", sample.Gauge, "sessions", true},
		{"mysql.Questions", sample.Counter, "statements", true},
		{"mysql.Threads_running", sample.Gauge, "threads", true},
		{"mysql.Innodb_buffer_pool_pages_dirty", sample.Gauge, "pages", true},
		{"mysql.Innodb_buffer_pool_pages_flushed", sample.Counter, "pages", true},
		{"mysql.Innodb_os_log_written", sample.Counter, "bytes", true},
		{"mysql.Innodb_row_lock_time", sample.Counter, "ms", true},
		{"mysql.Uptime", sample.Gauge, "seconds", true},
		{"mysql.Some_future_status", sample.Counter, "", true},
		{"mysql.wsrep_ready", sample.Gauge, "", true}, // MariaDB names some in lower case
		{"mysql.threads.state.waiting_for_table_metadata_lock", sample.Gauge, "threads", true},
		{"os.disk.await_ms", sample.Gauge, "ms", true},
		// Typos and names no collector emits.
		{"pg.xact_commits", 0, "", false},
		{"mysql.innodb.histroy_list_length", 0, "", false},
		{"mysql.", 0, "", false},
		{"pg.lock_waits.", 0, "", false},
		{"os.disk.await", 0, "", false},
	} {
		d, ok := vocab.Lookup(c.name)
		if ok != c.ok || ok && (d.Kind != c.kind || d.Unit != c.unit || d.Name != c.name) {
			t.Errorf("Lookup(%q) = %+v, %v; want %s %q, %v", c.name, d, ok, c.kind, c.unit, c.ok)
		}
	}
	for _, ref := range []string{"pg.sessions.*", "pg.waiting.*", "os.disk.*", "mysql.threads.state.", "os.fathom.", "mysql.Com_show_"} {
		if !vocab.Declared(ref) {
			t.Errorf("Declared(%q) = false", ref)
		}
	}
	for _, ref := range []string{"pg.session.*", "os.disks.*", "mongodb.*"} {
		if vocab.Declared(ref) {
			t.Errorf("Declared(%q) = true", ref)
		}
	}
}

// metricLiteral says whether a string literal looks like a metric name or prefix.
func metricLiteral(s string) bool {
	for _, p := range []string{"pg.", "mysql.", "redis.", "os."} {
		if strings.HasPrefix(s, p) && len(s) > len(p) && !strings.ContainsAny(s, " /%:") {
			return true
		}
	}
	return false
}

// notMetrics are literals shaped like metric names that are something else.
var notMetrics = map[string]bool{"os.txt": true}

// TestReferencesDeclared walks the consumers' source (stall rules, report charts,
// watch, check, snapshot, the store's series queries) and fails for every string
// literal shaped like a metric name that no collector declares: a renamed metric
// fails here instead of silently emptying a chart. Names written through the
// constants are checked by the compiler and TestNameConstantsDeclared.
func TestReferencesDeclared(t *testing.T) {
	vocab := vocabulary(t)
	dirs := []string{".", "../analyze", "../report", "../cli", "../check", "../store", "../run",
		"../db/postgres", "../db/mysql", "../db/sqlite", "../db/redis"}
	seen := 0
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Fatalf("no Go files in %s", dir)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, src, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				v, err := strconv.Unquote(lit.Value)
				if err != nil || !metricLiteral(v) || notMetrics[v] {
					return true
				}
				seen++
				if !vocab.Declared(v) {
					t.Errorf("%s: %q is not a declared metric (collect/metrics.go, db/KIND/metrics.go)", fset.Position(lit.Pos()), v)
				}
				return true
			})
		}
	}
	t.Logf("%d metric-name literals checked", seen)
}
