package problem

import (
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
	line, msg := YAML(err)
	if line == 0 || msg == "" || msg[:5] != "YAML:" {
		t.Fatalf("YAML(%v) = %d, %q", err, line, msg)
	}
}
