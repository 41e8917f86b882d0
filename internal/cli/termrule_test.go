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

// The engine emits typed events and results; only the front ends (internal/cli and
// internal/serve, and cmd/) turn them into text for a person (DESIGN.md, "The flow").
// This test fails when a non-test file elsewhere writes to the process's terminal:
// os.Stdout or os.Stderr, fmt.Print*, print/println, the log package's default
// logger, or fmt.Fprint* to a field named Stdout or Stderr; and when it declares an
// io.Writer field named Stdout or Stderr, the way an engine grew terminal output.
var terminalCalls = map[string]bool{
	"fmt.Print": true, "fmt.Printf": true, "fmt.Println": true,
	"log.Print": true, "log.Printf": true, "log.Println": true,
	"log.Fatal": true, "log.Fatalf": true, "log.Fatalln": true,
	"log.Panic": true, "log.Panicf": true, "log.Panicln": true,
}

// terminalFrontEnds are the front ends, which own the terminal, and test support.
var terminalFrontEnds = []string{
	"internal/cli/",    // the command-line front end
	"internal/serve/",  // the web front end (it writes HTTP responses)
	"cmd/",             // main
	"scripts/",         // the project's own programs (gendocs), mains too
	"internal/dbtest/", // test helpers, imported by tests only
	// gopher-lua, kept in the tree with changes to its interpreter (its README):
	// a library's code as upstream wrote it, as when it was a module dependency.
	// Its print, io.write and os functions reach the terminal only from a script,
	// and sblua replaces print with the writer the CLI hands in.
	"internal/lua/",
}

// terminalAllowed are the findings allowed below the front ends, by file and what
// was found, each with its reason.
var terminalAllowed = map[string]string{
	// pgbench scripts' \shell runs a command whose output pgbench prints on its
	// standard output: the writer is the one the CLI hands in (its stdout, or its
	// stderr with --json), never os.Stdout itself.
	"internal/workload/pgscript/workload.go: field Stdout": "\\shell output goes to the writer the CLI hands in",
}

func TestEngineWritesNoTerminal(t *testing.T) {
	root := filepath.Join("..", "..")
	n := 0
	used := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if path != root && strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		for _, p := range terminalFrontEnds {
			if strings.HasPrefix(rel, p) {
				return nil
			}
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		n++
		report := func(what string) {
			if _, ok := terminalAllowed[rel+": "+what]; ok {
				used[rel+": "+what] = true
				return
			}
			t.Errorf("%s: %s: only a front end (cli) writes to the terminal; emit an event (the engine hands the front end events, not text)", rel, what)
		}
		for _, what := range terminalUses(f) {
			report(what)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Fatalf("only %d files read: is the walk rooted at the module?", n)
	}
	for a := range terminalAllowed {
		if !used[a] {
			t.Errorf("allowance %q is no longer needed: remove it", a)
		}
	}
}

// terminalUses lists what in f writes to the terminal: "os.Stdout", "fmt.Printf",
// "fmt.Fprintf to Stderr", "field Stdout" …
func terminalUses(f *ast.File) []string {
	var out []string
	ast.Inspect(f, func(node ast.Node) bool {
		switch x := node.(type) {
		case *ast.SelectorExpr:
			if pkg, ok := x.X.(*ast.Ident); ok && pkg.Name == "os" && (x.Sel.Name == "Stdout" || x.Sel.Name == "Stderr") {
				out = append(out, "os."+x.Sel.Name)
			}
		case *ast.CallExpr:
			switch fun := x.Fun.(type) {
			case *ast.Ident:
				if fun.Name == "print" || fun.Name == "println" {
					out = append(out, fun.Name)
				}
			case *ast.SelectorExpr:
				pkg, ok := fun.X.(*ast.Ident)
				if !ok {
					return true
				}
				name := pkg.Name + "." + fun.Sel.Name
				if terminalCalls[name] {
					out = append(out, name)
				}
				if pkg.Name == "fmt" && strings.HasPrefix(fun.Sel.Name, "Fprint") && len(x.Args) > 0 {
					if w, ok := x.Args[0].(*ast.SelectorExpr); ok && (w.Sel.Name == "Stdout" || w.Sel.Name == "Stderr") {
						out = append(out, "fmt."+fun.Sel.Name+" to "+w.Sel.Name)
					}
				}
			}
		case *ast.Field:
			typ, ok := x.Type.(*ast.SelectorExpr)
			if !ok || typ.Sel.Name != "Writer" {
				return true
			}
			if pkg, ok := typ.X.(*ast.Ident); !ok || pkg.Name != "io" {
				return true
			}
			for _, id := range x.Names {
				if id.Name == "Stdout" || id.Name == "Stderr" {
					out = append(out, "field "+id.Name)
				}
			}
		}
		return true
	})
	return out
}

// The rule finds each way of writing to the terminal, and leaves writers handed in
// alone.
func TestTerminalRuleFinds(t *testing.T) {
	src := `package x

import (
	"fmt"
	"io"
	"log"
	"os"
)

type Options struct {
	Stdout io.Writer
	Out    io.Writer
}

func f(o Options, w io.Writer) {
	fmt.Println("a")
	fmt.Fprintf(os.Stderr, "b")
	fmt.Fprintf(o.Stdout, "c")
	fmt.Fprintf(w, "fine: a writer handed in")
	fmt.Fprintf(o.Out, "fine: not a terminal's name")
	log.Printf("d")
	println("e")
}
`
	f, err := parser.ParseFile(token.NewFileSet(), "x.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(terminalUses(f), "; ")
	want := "field Stdout; fmt.Println; fmt.Fprintf to Stderr; os.Stderr; fmt.Fprintf to Stdout; log.Printf; println"
	if got != want {
		t.Errorf("found %q, want %q", got, want)
	}
}
