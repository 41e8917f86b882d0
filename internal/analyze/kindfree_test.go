package analyze_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/db"
)

// Stall analysis names no database kind's metric: what it reads of a kind (its
// throughput counters, lock waits, static figures) comes in as the kind's Vocabulary,
// from the kind's bundle. A string literal in this package's code (tests aside) that
// starts with a registered kind's metric prefix ("pg.", "mysql." …) fails here, and so
// does one in a comment that quotes a metric name.
func TestNamesNoKind(t *testing.T) {
	prefixes := []string{"pg.", "mysql.", "redis.", "sqlite."}
	for _, k := range db.Names() {
		prefixes = append(prefixes, k+".")
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	sub, _ := filepath.Glob("stalltest/*.go")
	files = append(files, sub...)
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fs := token.NewFileSet()
		file, err := parser.ParseFile(fs, f, src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		ast.Inspect(file, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			for _, p := range prefixes {
				if strings.Contains(s, p) && (strings.HasPrefix(s, p) || strings.Contains(s, `"`+p) || strings.Contains(s, " "+p)) {
					t.Errorf("%s: %q names a kind's metric (%s…): take it from the kind's Vocabulary", fs.Position(lit.Pos()), s, p)
				}
			}
			return true
		})
		for _, cg := range file.Comments {
			for _, c := range cg.List {
				for _, p := range prefixes {
					if strings.Contains(c.Text, `"`+p) {
						t.Errorf("%s: comment quotes a kind's metric (%s…): %s", fs.Position(c.Pos()), p, c.Text)
					}
				}
			}
		}
	}
	if checked < 10 {
		t.Fatalf("checked %d files: run from the package's directory", checked)
	}
}
