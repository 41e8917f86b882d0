package yamlfile

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestList(t *testing.T) {
	var l List
	if l.Err("f.yaml") != nil {
		t.Fatal("an empty list is an error")
	}
	l.Add(7, "seven %d", 7)
	l.At(&yaml.Node{Line: 3}, "three")
	l.At(nil, "whole file")
	l.Add(7, "seven %d", 7) // reached twice: reported once
	var o List
	o.Add(5, "five")
	l.Merge(&o)
	if l.Len() != 5 {
		t.Fatalf("Len() = %d", l.Len())
	}
	want := "f.yaml: whole file\nf.yaml:3: three\nf.yaml:5: five\nf.yaml:7: seven 7"
	if got := l.Err("f.yaml").Error(); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestYAML(t *testing.T) {
	var v any
	err := yaml.Unmarshal([]byte("a: 1\nb: [\n"), &v)
	line, msg := yamlSyntax(err)
	if line == 0 || msg == "" || msg[:5] != "YAML:" {
		t.Fatalf("YAML(%v) = %d, %q", err, line, msg)
	}
}

func TestDocument(t *testing.T) {
	for _, tt := range []struct {
		data, want string // want: the problems' text, "" for none
		node       bool
	}{
		{"a: 1\nb: [2, 3]\n", "", true},
		{"", "f.yaml: the file is empty: needs a", false},
		{"a: 1\nb: [2\n", "YAML: did not find expected", false},
		{"a: 1\n---\nb: 2\n", "f.yaml:2: a thing holds one YAML document; remove the second one (---)", true},
	} {
		var l List
		root := l.Document([]byte(tt.data), "a thing", "the file is empty: needs a")
		if (root != nil) != tt.node {
			t.Errorf("%q: node %v, want %v", tt.data, root != nil, tt.node)
		}
		if root != nil && root.Kind != yaml.MappingNode {
			t.Errorf("%q: top node kind %v, want the mapping", tt.data, root.Kind)
		}
		err := l.Err("f.yaml")
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%q: %v", tt.data, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%q: %v, want %q", tt.data, err, tt.want)
		}
	}
}
