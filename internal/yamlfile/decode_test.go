package yamlfile

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The shared checks: what each returns, and the problem each adds at the node's line.
func TestChecks(t *testing.T) {
	var l List
	root := l.Document([]byte(`
top:
  durtion: 5
  name: a
  name: b
  on: yes
  off: maybe
  list: [1]
  long: "`+strings.Repeat("x", 60)+`"
  alias: &v {k: 1}
  again: *v
`), "a test file", "empty")
	top, ok := l.Fields(root, "the file", "top")
	if !ok || top["top"] == nil {
		t.Fatalf("Fields(root) = %v, %v", top, ok)
	}
	f, ok := l.Fields(top["top"], "top", "duration", "name", "on", "off", "list", "long", "alias", "again")
	if !ok {
		t.Fatal("top is a mapping")
	}
	if s := l.Str(f["name"], "name"); s != "a" {
		t.Errorf("a key given twice keeps the first value: %q", s)
	}
	if !l.Bool(f["on"], "on") || l.Bool(f["off"], "off") {
		t.Error("on: yes is true, off: maybe false (and a problem)")
	}
	if _, ok := l.Scalar(f["list"], "list"); ok {
		t.Error("a list is no value")
	}
	if _, ok := l.Mapping(f["again"], "again"); !ok {
		t.Error("an alias of a mapping is a mapping")
	}
	if _, ok := l.Fields(f["long"], "long"); ok {
		t.Error("a value is no mapping")
	}
	want := []string{
		`f.yaml:3: unknown key "durtion" in top (did you mean duration?); known: duration, name, on, off, list, long, alias, again`,
		`f.yaml:5: top: key "name" is given twice`,
		`f.yaml:7: off must be true or false, not the value "maybe"`,
		`f.yaml:8: list must be a value, not a list`,
		`f.yaml:9: long must be a mapping (key: value lines), not the value "` + strings.Repeat("x", 37) + `..."`,
	}
	err := l.Err("f.yaml")
	if err == nil {
		t.Fatal("no problems")
	}
	if got := err.Error(); got != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
	if d := Describe(nil); d != "nothing" {
		t.Errorf("Describe(nil) = %q", d)
	}
	if d := Describe(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}); d != "empty" {
		t.Errorf("Describe(null) = %q", d)
	}
}
