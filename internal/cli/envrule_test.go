package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// Only the front end reads the environment or changes process-wide runtime settings:
// every library takes what it needs as a parameter (DESIGN.md). This test fails when a
// non-test file outside internal/cli and cmd/ calls one of these.
var processWide = map[string]bool{
	"os.Getenv": true, "os.LookupEnv": true, "os.Environ": true, "os.ExpandEnv": true,
	"os.Setenv": true, "os.Unsetenv": true, "os.Clearenv": true,
	"debug.SetGCPercent": true, "debug.SetMemoryLimit": true, "runtime.GOMAXPROCS": true,
}

// processWideAllowed are the packages allowed to: procset is the instrument cli owns and
// hands to the runner (cli decides; procset applies and records), dbtest is test support
// that only tests import, and internal/lua is gopher-lua kept in the tree (its README),
// whose os.getenv/os.setenv and package.path defaults a script reaches, as when it was
// a module dependency.
var processWideAllowed = []string{"internal/procset/", "internal/dbtest/", "internal/lua/"}

func TestLibrariesLeaveProcessAlone(t *testing.T) {
	root := filepath.Join("..", "..")
	n := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if path != root && strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules" ||
				rel == "internal/cli" || rel == "cmd" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		for _, a := range processWideAllowed {
			if strings.HasPrefix(rel, a) {
				return nil
			}
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		n++
		ast.Inspect(f, func(node ast.Node) bool {
			call, ok := node.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pkg, ok := sel.X.(*ast.Ident)
			if !ok || !processWide[pkg.Name+"."+sel.Sel.Name] {
				return true
			}
			if pkg.Name+"."+sel.Sel.Name == "runtime.GOMAXPROCS" && len(call.Args) == 1 {
				if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Value == "0" {
					return true // reading it changes nothing
				}
			}
			t.Errorf("%s calls %s.%s: only cli (env.go) reads the environment or changes runtime settings; take it as a parameter", rel, pkg.Name, sel.Sel.Name)
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Fatalf("only %d files read: is the walk rooted at the module?", n)
	}
}
