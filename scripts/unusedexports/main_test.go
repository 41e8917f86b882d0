package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// copyTree copies the test module to a temporary directory for -fix to rewrite.
func copyTree(t *testing.T, from string) string {
	t.Helper()
	to := t.TempDir()
	err := filepath.WalkDir(from, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return to
}

func analyzed(t *testing.T, dir string) *program {
	t.Helper()
	p, err := load(dir)
	if err != nil {
		t.Fatal(err)
	}
	p.analyze()
	return p
}

func TestCandidatesAndKept(t *testing.T) {
	p := analyzed(t, "testdata/mod")
	unused, counts := p.candidates()
	var got []string
	for _, d := range unused {
		got = append(got, p.short(d.key))
	}
	want := []string{"a.Lonely", "a.Twin", "a.Shadowed", "a.T", "a.T.Helper", "a.Embedded", "a.Outer", "a.Default", "a.URLs", "b.B"}
	if !slices.Equal(got, want) {
		t.Errorf("unused names:\n got %v\nwant %v", got, want)
	}
	kept := map[string]string{}
	for k, d := range p.decls {
		if d.kept != "" {
			kept[p.short(k)] = d.kept
		}
	}
	for name, why := range map[string]string{
		"a.T.String": "satisfies fmt.Stringer",
		"a.T.Shown":  "named in a template",
		"a.Iface":    "an interface type",
		"a.Fn":       "a func type",
	} {
		if !strings.HasPrefix(kept[name], why) {
			t.Errorf("%s kept %q, want %q", name, kept[name], why)
		}
	}
	// 13 package-level names in a and b, 11 unused elsewhere (not Used, XTestOnly);
	// 3 methods, none used elsewhere.
	if counts != [2][2]int{{13, 11}, {3, 3}} {
		t.Errorf("counts %v", counts)
	}
}

func TestFix(t *testing.T) {
	dir := copyTree(t, "testdata/mod")
	p := analyzed(t, dir)
	p.as = map[string]string{"a.Shadowed": "shadowedFunc"} // -as: a name chosen where the lower-case one is taken
	if rc := p.fix(map[string]string{"a.Lonely": "a reason"}); rc != 0 {
		t.Fatalf("fix exit %d", rc)
	}
	b, err := os.ReadFile(filepath.Join(dir, "internal/a/a.go"))
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	for _, s := range []string{
		"// Twin is used", "var Twin = 2", // twin exists
		"func shadowedFunc()", "return shadowedFunc() + shadowed", // -as: a local shadows shadowed
		"type Embedded struct", "func Default()", // embedded, keyword
		"const Lonely = 1", // allowed
		"// t is a type", "type t struct", "func (t t) helper() int", "func (t) String()",
		"type outer struct{ Embedded }", "var urls = []string{}",
	} {
		if !strings.Contains(src, s) {
			t.Errorf("a.go lacks %q:\n%s", s, src)
		}
	}
	test, _ := os.ReadFile(filepath.Join(dir, "internal/a/in_test.go"))
	if !strings.Contains(string(test), "len(urls)") {
		t.Errorf("in_test.go not renamed:\n%s", test)
	}
	cmd := exec.Command("go", "vet", "./...")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go vet after -fix: %v\n%s", err, out)
	}
}
