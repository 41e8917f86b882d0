// Command unusedexports lists the exported names under internal/ that no other package
// of the module uses, and with -fix unexports them (issue #31: "names unexported where
// nothing outside uses them", kept so by scripts/lint.sh).
//
// It loads every package of the module with its tests (golang.org/x/tools/go/packages)
// and counts a use from any other package, other packages' tests included; a package's
// external _test package counts as another user, since it cannot see unexported names.
// Candidates are package-level funcs, types, vars and consts and the methods of types;
// struct fields never are (encoding/json, yaml, templates, expr-lang and SQL scanning
// reach them by reflection). These stay exported however unused:
//
//   - interface types, their methods, and func types;
//   - methods that make their type (or a type embedding it) satisfy an interface seen
//     in the loaded program: the module's, the standard library's, a dependency's, and
//     the few the standard library asserts unnamed (Unwrap, Is, As, Timeout, IsZero);
//   - methods named Unwrap (errors and net/http.ResponseController find them so);
//   - methods named in text/template or html/template text (".Name" inside "{{ }}" in a
//     string of a package that imports a template package, or in its embedded files),
//     and methods reached by reflect's MethodByName with a constant name;
//   - names in scripts/unusedexports/allow.txt ("pkg.Name  reason", one a line).
//
// Files built only for other platforms (build tags) are parsed too: a name they use
// counts as used, and -fix leaves a name alone when its package's such files mention
// it or its new name.
//
// Report mode prints "path:line: pkg.Name" for each name no other package uses and a
// summary, and exits 1 when any is not allowed (2 when the module cannot be loaded).
// -fix renames each to its lower-case form on the type-checked syntax (every reference,
// the package's own test files included, and the doc comment's first word), skipping
// (and listing) a name whose new name would collide with or be shadowed by a
// declaration in a scope of one of its uses.
//
//	go run . [-C module-root] [-v] [-only internal/a,...] [-skip internal/c,...]
//	go run . -fix [-as pkg.Name=newName,...] [-only ...] [-skip ...]
package main

import (
	"bufio"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/tools/go/packages"
)

func main() {
	os.Exit(run())
}

func run() int {
	root := flag.String("C", ".", "the module's root directory")
	fix := flag.Bool("fix", false, "unexport the names found (not the allowed ones)")
	only := flag.String("only", "", "comma-separated package directories (relative to the root) to report or fix; empty: all under internal/")
	skip := flag.String("skip", "", "comma-separated package directories (relative to the root) to leave out")
	as := flag.String("as", "", "comma-separated pkg.Name=newName: the unexported names -fix gives instead of the lower-case forms (for names it skipped)")
	verbose := flag.Bool("v", false, "also list the unused names that stay exported, with the rule that keeps each")
	allowPath := flag.String("allow", "", "allow-list file (default scripts/unusedexports/allow.txt under the root)")
	flag.Parse()
	if *allowPath == "" {
		*allowPath = filepath.Join(*root, "scripts", "unusedexports", "allow.txt")
	}
	allow, err := readAllow(*allowPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "unusedexports:", err)
		return 2
	}
	p, err := load(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "unusedexports:", err)
		return 2
	}
	p.only = dirList(*only)
	p.skip = dirList(*skip)
	p.analyze()
	if *verbose {
		p.listKept()
	}
	if *fix {
		p.as = map[string]string{}
		for _, kv := range strings.Split(*as, ",") {
			if from, to, ok := strings.Cut(strings.TrimSpace(kv), "="); ok {
				p.as[from] = to
			}
		}
		return p.fix(allow)
	}
	return p.report(allow)
}

func dirList(s string) []string {
	var out []string
	for _, d := range strings.Split(s, ",") {
		if d = strings.Trim(strings.TrimSpace(d), "/"); d != "" {
			out = append(out, strings.TrimPrefix(d, "./"))
		}
	}
	return out
}

// key names an exported name: a package-level one (recv empty) or a method.
type key struct{ pkg, recv, name string }

// decl is one exported name declared in a non-test file under internal/.
type decl struct {
	key
	pos    token.Position
	method bool
	doc    *ast.CommentGroup
	kept   string // why it stays exported although no other package uses it
}

type program struct {
	fset    *token.FileSet
	modPath string
	modDir  string
	pkgs    []*packages.Package // the module's packages, every variant
	only    []string
	skip    []string
	as      map[string]string // -as: names chosen for -fix

	decls map[key]*decl
	used  map[key]bool
	// usedMethodName: a method of that package with that name is perhaps used from a
	// file built for another platform (its receiver's type is not known there).
	usedMethodName map[key]bool
	// platformNames: identifiers in a package's files built only for other platforms.
	platformNames map[string]map[string]bool
	templateNames map[string]bool
	reflectNames  map[string]bool
	ifaces        []*iface

	selections map[*ast.Ident]*types.Selection
	indexed    map[*packages.Package]bool
}

type iface struct {
	name string
	t    *types.Interface
}

func load(root string) (*program, error) {
	fset := token.NewFileSet()
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles |
			packages.NeedImports | packages.NeedTypes | packages.NeedTypesInfo |
			packages.NeedSyntax | packages.NeedModule | packages.NeedEmbedFiles,
		Dir:   root,
		Fset:  fset,
		Tests: true,
	}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		return nil, err
	}
	p := &program{fset: fset}
	var errs []string
	for _, pk := range pkgs {
		if strings.HasSuffix(pk.ID, ".test") && pk.Name == "main" {
			continue // the generated test main
		}
		for _, e := range pk.Errors {
			errs = append(errs, e.Error())
		}
		if pk.Module != nil && p.modPath == "" && pk.Module.Main {
			p.modPath, p.modDir = pk.Module.Path, pk.Module.Dir
		}
		p.pkgs = append(p.pkgs, pk)
	}
	if len(errs) > 0 {
		if len(errs) > 10 {
			errs = append(errs[:10], fmt.Sprintf("and %d more", len(errs)-10))
		}
		return nil, fmt.Errorf("the module does not load:\n  %s", strings.Join(errs, "\n  "))
	}
	if p.modPath == "" {
		return nil, fmt.Errorf("no main module at %s", root)
	}
	return p, nil
}

// rel is a package path relative to the module ("internal/chart").
func (p *program) rel(path string) string {
	return strings.TrimPrefix(strings.TrimPrefix(path, p.modPath), "/")
}

// short names a key the way reports and allow.txt do: "chart.Floats",
// "db/postgres/target.Conn.Close" (the package relative to internal/).
func (p *program) short(k key) string {
	s := strings.TrimPrefix(p.rel(k.pkg), "internal/")
	if k.recv != "" {
		s += "." + k.recv
	}
	return s + "." + k.name
}

func (p *program) internal(path string) bool {
	return strings.HasPrefix(path, p.modPath+"/internal/")
}

func inList(rel string, list []string) bool {
	for _, d := range list {
		if rel == d {
			return true
		}
	}
	return false
}

// forks are the directories of libraries kept in the tree as modified copies
// (internal/lua is gopher-lua; its README says why): their exported API is the
// library's, used or not by fathom, and is left as upstream has it.
var forks = []string{"internal/lua"}

func isFork(rel string) bool {
	for _, f := range forks {
		if rel == f || strings.HasPrefix(rel, f+"/") {
			return true
		}
	}
	return false
}

// selected reports whether names declared in the package are reported or fixed.
func (p *program) selected(path string) bool {
	rel := p.rel(path)
	if inList(rel, p.skip) || isFork(rel) {
		return false
	}
	return len(p.only) == 0 || inList(rel, p.only)
}

// objKey returns the key of an object that may be a candidate: a package-level object
// or a method of a non-interface named type.
func objKey(obj types.Object) (key, bool) {
	switch o := obj.(type) {
	case *types.Func:
		obj = o.Origin()
	case *types.Var:
		if o.IsField() {
			return key{}, false
		}
		obj = o.Origin()
	case *types.TypeName, *types.Const:
	default:
		return key{}, false
	}
	pkg := obj.Pkg()
	if pkg == nil {
		return key{}, false
	}
	if f, ok := obj.(*types.Func); ok {
		if recv := f.Signature().Recv(); recv != nil {
			n := recvNamed(recv.Type())
			if n == nil || types.IsInterface(n) {
				return key{}, false
			}
			return key{pkg.Path(), n.Origin().Obj().Name(), obj.Name()}, true
		}
	}
	if obj.Parent() != pkg.Scope() {
		return key{}, false
	}
	return key{pkg.Path(), "", obj.Name()}, true
}

func recvNamed(t types.Type) *types.Named {
	if ptr, ok := t.(*types.Pointer); ok {
		t = ptr.Elem()
	}
	n, _ := types.Unalias(t).(*types.Named)
	return n
}

func isTestFile(name string) bool { return strings.HasSuffix(name, "_test.go") }

func (p *program) analyze() {
	p.decls = map[key]*decl{}
	p.used = map[key]bool{}
	p.usedMethodName = map[key]bool{}
	p.platformNames = map[string]map[string]bool{}
	p.templateNames = map[string]bool{}
	p.reflectNames = map[string]bool{}
	for _, pk := range p.pkgs {
		p.collectDecls(pk)
		p.collectUses(pk)
		p.collectTemplateNames(pk)
		p.collectReflectNames(pk)
		p.collectPlatformFiles(pk)
	}
	p.collectInterfaces()
	p.markKept()
}

func (p *program) collectDecls(pk *packages.Package) {
	if !p.internal(pk.PkgPath) || strings.HasSuffix(pk.Name, "_test") || pk.Name == "main" {
		return
	}
	for _, f := range pk.Syntax {
		if isTestFile(p.fset.File(f.Pos()).Name()) {
			continue
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				p.addDecl(pk, d.Name, d.Doc)
			case *ast.GenDecl:
				for _, s := range d.Specs {
					doc := d.Doc
					if d.Lparen.IsValid() {
						doc = nil
					}
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Doc != nil {
							doc = s.Doc
						}
						p.addDecl(pk, s.Name, doc)
					case *ast.ValueSpec:
						if s.Doc != nil {
							doc = s.Doc
						}
						for _, n := range s.Names {
							p.addDecl(pk, n, doc)
						}
					}
				}
			}
		}
	}
}

func (p *program) addDecl(pk *packages.Package, id *ast.Ident, doc *ast.CommentGroup) {
	if !id.IsExported() {
		return
	}
	obj := pk.TypesInfo.Defs[id]
	if obj == nil {
		return
	}
	k, ok := objKey(obj)
	if !ok || p.decls[k] != nil {
		return
	}
	d := &decl{key: k, pos: p.fset.Position(id.Pos()), method: k.recv != "", doc: doc}
	if tn, ok := obj.(*types.TypeName); ok {
		switch tn.Type().Underlying().(type) {
		case *types.Interface:
			d.kept = "an interface type"
		case *types.Signature:
			d.kept = "a func type"
		}
	}
	p.decls[k] = d
}

func (p *program) collectUses(pk *packages.Package) {
	user := pk.Types.Path()
	for id, obj := range pk.TypesInfo.Uses {
		if !id.IsExported() {
			continue
		}
		if k, ok := objKey(obj); ok && k.pkg != user {
			p.used[k] = true
		}
	}
}

var (
	templateAction = regexp.MustCompile(`(?s)\{\{.*?\}\}`)
	templateField  = regexp.MustCompile(`\.([A-Z][A-Za-z0-9_]*)`)
)

func (p *program) templateText(s string) {
	for _, a := range templateAction.FindAllString(s, -1) {
		for _, m := range templateField.FindAllStringSubmatch(a, -1) {
			p.templateNames[m[1]] = true
		}
	}
}

func (p *program) collectTemplateNames(pk *packages.Package) {
	if pk.Imports["text/template"] == nil && pk.Imports["html/template"] == nil {
		return
	}
	for _, f := range pk.Syntax {
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil {
					p.templateText(s)
				}
			}
			return true
		})
	}
	for _, name := range pk.EmbedFiles {
		if b, err := os.ReadFile(name); err == nil {
			p.templateText(string(b))
		}
	}
}

func (p *program) collectReflectNames(pk *packages.Package) {
	for _, f := range pk.Syntax {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 1 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "MethodByName" {
				return true
			}
			if tv, ok := pk.TypesInfo.Types[call.Args[0]]; ok && tv.Value != nil {
				if s, err := strconv.Unquote(tv.Value.ExactString()); err == nil {
					p.reflectNames[s] = true
				}
			}
			return true
		})
	}
}

// collectPlatformFiles parses the package's files that build only for other platforms:
// a qualified name they use counts as used, a selector's name as a possible method use
// of any package the file imports, and every identifier in them is remembered so that
// -fix leaves such names alone.
func (p *program) collectPlatformFiles(pk *packages.Package) {
	for _, name := range pk.IgnoredFiles {
		if !strings.HasSuffix(name, ".go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.SkipObjectResolution)
		if err != nil {
			continue
		}
		user := pk.PkgPath
		if strings.HasSuffix(f.Name.Name, "_test") {
			user += "_test"
		}
		names := p.platformNames[pk.PkgPath]
		if names == nil {
			names = map[string]bool{}
			p.platformNames[pk.PkgPath] = names
		}
		imports := map[string]string{}
		for _, is := range f.Imports {
			path, _ := strconv.Unquote(is.Path.Value)
			local := filepath.Base(path)
			if is.Name != nil {
				local = is.Name.Name
			} else if imp := pk.Imports[path]; imp != nil {
				local = imp.Name
			}
			imports[local] = path
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.Ident:
				if user == pk.PkgPath {
					names[n.Name] = true
				}
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok {
					if path, ok := imports[x.Name]; ok {
						if path != user {
							p.used[key{path, "", n.Sel.Name}] = true
						}
						return true
					}
				}
				for _, path := range imports {
					if path != user {
						p.usedMethodName[key{path, "", n.Sel.Name}] = true
					}
				}
			}
			return true
		})
	}
}

// unnamed are interfaces the standard library asserts without a name (errors.Is/As/
// Unwrap, net's Timeout, encoding/json's omitzero), so export data does not show them.
// (Any method named Unwrap stays exported: net/http.ResponseController unwraps a
// ResponseWriter so too.)
func unnamed() []*iface {
	errType := types.Universe.Lookup("error").Type()
	anyType := types.Universe.Lookup("any").Type()
	boolType := types.Typ[types.Bool]
	sig := func(params, results []types.Type) *types.Signature {
		vars := func(ts []types.Type) *types.Tuple {
			var vs []*types.Var
			for _, t := range ts {
				vs = append(vs, types.NewParam(token.NoPos, nil, "", t))
			}
			return types.NewTuple(vs...)
		}
		return types.NewSignatureType(nil, nil, nil, vars(params), vars(results), false)
	}
	one := func(name string, s *types.Signature) *iface {
		f := types.NewFunc(token.NoPos, nil, name, s)
		t := types.NewInterfaceType([]*types.Func{f}, nil)
		t.Complete()
		return &iface{"interface{ " + name + " }", t}
	}
	return []*iface{
		one("Unwrap", sig(nil, []types.Type{errType})),
		one("Unwrap", sig(nil, []types.Type{types.NewSlice(errType)})),
		one("Is", sig([]types.Type{errType}, []types.Type{boolType})),
		one("As", sig([]types.Type{anyType}, []types.Type{boolType})),
		one("Timeout", sig(nil, []types.Type{boolType})),
		one("Temporary", sig(nil, []types.Type{boolType})),
		one("IsZero", sig(nil, []types.Type{boolType})),
	}
}

// collectInterfaces gathers every interface type with methods seen in the program: the
// named ones of every package reached (source or export data) and every interface type
// expression in the module's own code, function-local ones included.
func (p *program) collectInterfaces() {
	seen := map[*types.Interface]bool{}
	add := func(name string, t *types.Interface) {
		if t.NumMethods() == 0 || seen[t] {
			return
		}
		seen[t] = true
		p.ifaces = append(p.ifaces, &iface{name, t})
	}
	visited := map[*types.Package]bool{}
	var walk func(pkg *types.Package)
	walk = func(pkg *types.Package) {
		if visited[pkg] {
			return
		}
		visited[pkg] = true
		scope := pkg.Scope()
		for _, name := range scope.Names() {
			tn, ok := scope.Lookup(name).(*types.TypeName)
			if !ok || tn.IsAlias() {
				continue
			}
			if n, ok := tn.Type().(*types.Named); ok && n.TypeParams().Len() > 0 {
				continue // generic interfaces: their instances appear as type expressions
			}
			if t, ok := tn.Type().Underlying().(*types.Interface); ok {
				add(pkg.Path()+"."+name, t)
			}
		}
		for _, imp := range pkg.Imports() {
			walk(imp)
		}
	}
	for _, pk := range p.pkgs {
		walk(pk.Types)
		for expr, tv := range pk.TypesInfo.Types {
			if !tv.IsType() {
				continue
			}
			if t, ok := tv.Type.Underlying().(*types.Interface); ok {
				pos := p.fset.Position(expr.Pos())
				add(fmt.Sprintf("%s (%s:%d)", types.TypeString(tv.Type, nil), p.relFile(pos.Filename), pos.Line), t)
			}
		}
	}
	p.ifaces = append(p.ifaces, unnamed()...)
}

func (p *program) relFile(name string) string {
	if r, err := filepath.Rel(p.modDir, name); err == nil {
		return r
	}
	return name
}

// markKept marks the unused methods that make a type satisfy an interface, directly or
// promoted into a type that embeds theirs, and the names templates and reflection use.
func (p *program) markKept() {
	byName := map[string][]*iface{}
	for _, in := range p.ifaces {
		for i := 0; i < in.t.NumMethods(); i++ {
			m := in.t.Method(i)
			if m.Exported() {
				byName[m.Name()] = append(byName[m.Name()], in)
			}
		}
	}
	for k, d := range p.decls {
		if d.method && p.usedMethodName[key{k.pkg, "", k.name}] {
			p.used[k] = true
		}
	}
	done := map[*types.Named]bool{}
	for _, pk := range p.pkgs {
		scope := pk.Types.Scope()
		for _, name := range scope.Names() {
			tn, ok := scope.Lookup(name).(*types.TypeName)
			if !ok || tn.IsAlias() || types.IsInterface(tn.Type()) {
				continue
			}
			n, ok := tn.Type().(*types.Named)
			if !ok || done[n] {
				continue
			}
			done[n] = true
			if n.TypeParams().Len() > 0 {
				p.keepGenericMethods(n, byName)
				continue
			}
			for _, t := range []types.Type{n, types.NewPointer(n)} {
				ms := types.NewMethodSet(t)
				for i := 0; i < ms.Len(); i++ {
					m, ok := ms.At(i).Obj().(*types.Func)
					if !ok || !m.Exported() {
						continue
					}
					k, ok := objKey(m)
					if !ok {
						continue
					}
					d := p.decls[k]
					if d == nil || d.kept != "" || p.used[k] {
						continue
					}
					for _, in := range byName[m.Name()] {
						if types.Implements(t, in.t) {
							d.kept = "satisfies " + in.name
							if t := types.TypeString(t, types.RelativeTo(pk.Types)); recvName(t) != k.recv {
								d.kept += " in " + t
							}
							break
						}
					}
				}
			}
		}
	}
	for k, d := range p.decls {
		if d.kept != "" || p.used[k] || !d.method {
			continue
		}
		switch {
		case k.name == "Unwrap":
			d.kept = "Unwrap (errors and net/http.ResponseController find it through unnamed interfaces)"
		case p.templateNames[k.name]:
			d.kept = "named in a template"
		case p.reflectNames[k.name]:
			d.kept = "named in reflect's MethodByName"
		}
	}
}

func recvName(t string) string { return strings.TrimPrefix(t, "*") }

// candidates are the names no other package uses, in the selected packages, sorted by
// position.
func (p *program) candidates() (unused []*decl, counts [2][2]int) {
	for k, d := range p.decls {
		if !p.selected(k.pkg) {
			continue
		}
		i := 0
		if d.method {
			i = 1
		}
		counts[i][0]++
		if p.used[k] {
			continue
		}
		counts[i][1]++
		if d.kept == "" {
			unused = append(unused, d)
		}
	}
	sort.Slice(unused, func(i, j int) bool {
		a, b := unused[i].pos, unused[j].pos
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		return a.Offset < b.Offset
	})
	return unused, counts
}

func (p *program) report(allow map[string]string) int {
	unused, counts := p.candidates()
	found, allowed := 0, 0
	seen := map[string]bool{}
	for _, d := range unused {
		s := p.short(d.key)
		seen[s] = true
		if allow[s] != "" {
			allowed++
			continue
		}
		found++
		fmt.Printf("%s:%d: %s\n", p.relFile(d.pos.Filename), d.pos.Line, s)
	}
	kept := counts[0][1] + counts[1][1] - len(unused)
	fmt.Printf("exported names in internal/: %d package-level, %d methods; used by no other package: %d package-level, %d methods",
		counts[0][0], counts[1][0], counts[0][1], counts[1][1])
	fmt.Printf(" (%d stay exported by rule, %d allowed in allow.txt, %d to unexport)\n", kept, allowed, found)
	for s := range allow {
		if !seen[s] && len(p.only) == 0 {
			fmt.Fprintf(os.Stderr, "unusedexports: allow.txt: %s is no longer an unused exported name: remove its line\n", s)
			found++
		}
	}
	if found > 0 {
		return 1
	}
	return 0
}

// readAllow reads "pkg.Name  reason" lines; # starts a comment.
func readAllow(path string) (map[string]string, error) {
	allow := map[string]string{}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return allow, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, reason, _ := strings.Cut(line, " ")
		if reason = strings.TrimSpace(reason); reason == "" {
			return nil, fmt.Errorf("%s:%d: %s has no reason", path, n, name)
		}
		allow[name] = reason
	}
	return allow, sc.Err()
}

// lower is the unexported form of an exported name: "Foo" foo, "URL" url, "HTTPServer"
// httpServer, "IDs" ids.
func lower(name string) string {
	runes := []rune(name)
	n := 0
	for n < len(runes) && (unicode.IsUpper(runes[n]) || (n > 0 && unicode.IsDigit(runes[n]))) {
		n++
	}
	switch {
	case n == len(runes):
	case n > 1 && n < len(runes) && runes[n] == 's' && (n+1 == len(runes) || !unicode.IsLower(runes[n+1])):
		// "IDs", "URLs": the plural s belongs to the initialism
	case n > 1:
		n-- // the last capital starts the next word: HTTPServer
	}
	for i := 0; i < n; i++ {
		runes[i] = unicode.ToLower(runes[i])
	}
	return string(runes)
}

type edit struct {
	offset int
	old    string
	new    string
}

func (p *program) fix(allow map[string]string) int {
	unused, _ := p.candidates()
	want := map[key]string{}
	for _, d := range unused {
		if allow[p.short(d.key)] == "" {
			want[d.key] = lower(d.name)
			if to := p.as[p.short(d.key)]; to != "" {
				want[d.key] = to
			}
		}
	}
	// Uses and declarations of each wanted name, in every variant of its package.
	sites := map[key][]site{}
	embedded := map[key]bool{}
	for _, pk := range p.pkgs {
		if !p.selected(pk.PkgPath) {
			continue
		}
		for id, obj := range pk.TypesInfo.Defs {
			if obj == nil {
				continue
			}
			if v, ok := obj.(*types.Var); ok && v.Embedded() {
				if n := recvNamed(v.Type()); n != nil {
					embedded[key{n.Obj().Pkg().Path(), "", n.Obj().Name()}] = true
				}
				continue
			}
			if k, ok := objKey(obj); ok && want[k] != "" {
				sites[k] = append(sites[k], site{pk, id, true})
			}
		}
		for id, obj := range pk.TypesInfo.Uses {
			if k, ok := objKey(obj); ok && want[k] != "" {
				sites[k] = append(sites[k], site{pk, id, false})
			}
		}
	}
	edits := map[string]map[int]edit{}
	addEdit := func(pos token.Pos, old, new string) {
		position := p.fset.Position(pos)
		m := edits[position.Filename]
		if m == nil {
			m = map[int]edit{}
			edits[position.Filename] = m
		}
		m[position.Offset] = edit{position.Offset, old, new}
	}
	taken := map[key]bool{} // new names given in this run: pkg, recv ("" for package level), name
	var skipped []string
	renamed := map[string][]string{}
	for _, d := range unused {
		newName, ok := want[d.key]
		if !ok {
			continue
		}
		var ss []site
		for _, s := range sites[d.key] {
			ss = append(ss, s)
		}
		why := p.collision(d, newName, embedded[d.key], taken, ss)
		if why != "" {
			skipped = append(skipped, fmt.Sprintf("%s:%d: %s: %s", p.relFile(d.pos.Filename), d.pos.Line, p.short(d.key), why))
			continue
		}
		taken[key{d.pkg, d.recv, newName}] = true
		for _, s := range sites[d.key] {
			addEdit(s.id.Pos(), d.name, newName)
		}
		if d.doc != nil && len(d.doc.List) > 0 {
			c := d.doc.List[0]
			text := strings.TrimPrefix(c.Text, "//")
			trimmed := strings.TrimLeft(text, " ")
			if strings.HasPrefix(trimmed, d.name) {
				rest := trimmed[len(d.name):]
				r, _ := utf8.DecodeRuneInString(rest)
				if rest == "" || !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_') {
					off := 2 + len(text) - len(trimmed)
					if strings.HasPrefix(c.Text, "//") {
						addEdit(c.Slash+token.Pos(off), d.name, newName)
					}
				}
			}
		}
		rel := p.rel(d.pkg)
		renamed[rel] = append(renamed[rel], strings.TrimPrefix(p.short(d.key), strings.TrimPrefix(rel, "internal/")+"."))
	}
	files := make([]string, 0, len(edits))
	for f := range edits {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, name := range files {
		if err := applyEdits(name, edits[name]); err != nil {
			fmt.Fprintln(os.Stderr, "unusedexports:", err)
			return 2
		}
	}
	rels := make([]string, 0, len(renamed))
	for rel := range renamed {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	for _, rel := range rels {
		names := renamed[rel]
		sort.Strings(names)
		fmt.Printf("%s: unexported %d: %s\n", rel, len(names), strings.Join(names, ", "))
	}
	for _, s := range skipped {
		fmt.Println("skipped", s)
	}
	return 0
}

// site is a declaration or use of a name.
type site struct {
	pk  *packages.Package
	id  *ast.Ident
	def bool
}

// collision says why newName cannot replace d's name, or "".
func (p *program) collision(d *decl, newName string, embedded bool, taken map[key]bool, sites []site) string {
	if token.IsKeyword(newName) {
		return newName + " is a keyword"
	}
	if !token.IsIdentifier(newName) || ast.IsExported(newName) {
		return newName + " is not an unexported identifier"
	}
	if embedded {
		return "embedded as a field (the field's name would change)"
	}
	if names := p.platformNames[d.pkg]; names[d.name] || names[newName] {
		return "its package's files for other platforms name it or " + newName
	}
	if taken[key{d.pkg, d.recv, newName}] {
		return newName + " is the new name of another name"
	}
	why := ""
	checked := map[*packages.Package]bool{}
	for _, st := range sites {
		pk, id, def := st.pk, st.id, st.def
		if !checked[pk] {
			checked[pk] = true
			if d.method {
				obj := pk.TypesInfo.ObjectOf(id)
				recv := obj.(*types.Func).Signature().Recv().Type()
				if n := recvNamed(recv); n != nil {
					if o, _, _ := types.LookupFieldOrMethod(types.NewPointer(n), true, pk.Types, newName); o != nil {
						return fmt.Sprintf("%s already has %s", d.recv, newName)
					}
				}
			} else {
				if o := pk.Types.Scope().Lookup(newName); o != nil {
					return fmt.Sprintf("the package declares %s (%s)", newName, p.relFile(p.fset.Position(o.Pos()).Filename))
				}
				for _, f := range pk.Syntax {
					if s := pk.TypesInfo.Scopes[f]; s != nil && s.Lookup(newName) != nil {
						return fmt.Sprintf("%s imports %s", p.relFile(p.fset.Position(f.Pos()).Filename), newName)
					}
				}
				if types.Universe.Lookup(newName) != nil {
					return newName + " is predeclared"
				}
			}
		}
		if def {
			continue
		}
		if d.method {
			if sel := p.selection(pk, id); sel != nil {
				if o, _, _ := types.LookupFieldOrMethod(sel.Recv(), true, pk.Types, newName); o != nil {
					pos := p.fset.Position(id.Pos())
					why = fmt.Sprintf("at %s:%d the receiver %s has %s", p.relFile(pos.Filename), pos.Line, sel.Recv(), newName)
					break
				}
			}
			continue
		}
		if s := pk.Types.Scope().Innermost(id.Pos()); s != nil {
			if _, o := s.LookupParent(newName, id.Pos()); o != nil {
				pos := p.fset.Position(id.Pos())
				why = fmt.Sprintf("at %s:%d %s is %s", p.relFile(pos.Filename), pos.Line, newName, o)
				break
			}
		}
	}
	return why
}

// selection is the selection whose selector is id, or nil.
func (p *program) selection(pk *packages.Package, id *ast.Ident) *types.Selection {
	if p.selections == nil {
		p.selections = map[*ast.Ident]*types.Selection{}
	}
	if !p.indexed[pk] {
		if p.indexed == nil {
			p.indexed = map[*packages.Package]bool{}
		}
		p.indexed[pk] = true
		for expr, sel := range pk.TypesInfo.Selections {
			p.selections[expr.Sel] = sel
		}
	}
	return p.selections[id]
}

func applyEdits(name string, m map[int]edit) error {
	b, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	es := make([]edit, 0, len(m))
	for _, e := range m {
		es = append(es, e)
	}
	sort.Slice(es, func(i, j int) bool { return es[i].offset > es[j].offset })
	for _, e := range es {
		if e.offset+len(e.old) > len(b) || string(b[e.offset:e.offset+len(e.old)]) != e.old {
			return fmt.Errorf("%s: offset %d does not hold %s", name, e.offset, e.old)
		}
		b = append(b[:e.offset], append([]byte(e.new), b[e.offset+len(e.old):]...)...)
	}
	info, err := os.Stat(name)
	if err != nil {
		return err
	}
	return os.WriteFile(name, b, info.Mode())
}

// keepGenericMethods keeps the unused methods of a generic type that share a name with
// an interface's method (whether a generic type satisfies an interface is only known
// per instance).
func (p *program) keepGenericMethods(n *types.Named, byName map[string][]*iface) {
	for i := 0; i < n.NumMethods(); i++ {
		m := n.Method(i)
		k, ok := objKey(m)
		if !ok {
			continue
		}
		if d := p.decls[k]; d != nil && d.kept == "" && !p.used[k] && len(byName[m.Name()]) > 0 {
			d.kept = "a generic type's method named as " + byName[m.Name()][0].name + "'s"
		}
	}
}

// listKept prints the names no other package uses that stay exported by rule.
func (p *program) listKept() {
	var lines []string
	for k, d := range p.decls {
		if p.selected(k.pkg) && !p.used[k] && d.kept != "" {
			lines = append(lines, fmt.Sprintf("%s:%d: %s: kept: %s", p.relFile(d.pos.Filename), d.pos.Line, p.short(k), d.kept))
		}
	}
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
}
