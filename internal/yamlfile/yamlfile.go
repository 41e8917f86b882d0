// Package yamlfile reads the YAML files a user writes (a workload file, an experiment
// plan): it parses the document and collects the mistakes found in it, each with its
// line, so that all of them are reported at once.
package yamlfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Problem is one mistake, at a line (0 when it concerns the file as a whole or a
// value given on the command line).
type Problem struct {
	Line int
	Msg  string
}

// Error lists every problem found in a file, sorted by line. It is a user mistake:
// commands print each problem on its own line and exit 2.
type Error struct {
	File     string
	Problems []Problem
}

func (e *Error) Error() string {
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.File)
		if p.Line > 0 {
			fmt.Fprintf(&b, ":%d", p.Line)
		}
		b.WriteString(": ")
		b.WriteString(p.Msg)
	}
	return b.String()
}

// List collects problems as decoding and checking go on.
type List struct {
	list []Problem
}

// Add records a problem at a line.
func (p *List) Add(line int, format string, args ...any) {
	p.list = append(p.list, Problem{Line: line, Msg: fmt.Sprintf(format, args...)})
}

// At records a problem at a YAML node's line (0 for a nil node).
func (p *List) At(n *yaml.Node, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	p.Add(line, format, args...)
}

// Len is the number of problems recorded so far.
func (p *List) Len() int { return len(p.list) }

// Merge appends another list's problems.
func (p *List) Merge(o *List) { p.list = append(p.list, o.list...) }

// Err returns the problems as an *Error sorted by line, duplicates removed, or nil
// when there are none.
func (p *List) Err(file string) error {
	if len(p.list) == 0 {
		return nil
	}
	list := append([]Problem(nil), p.list...)
	sort.SliceStable(list, func(i, j int) bool { return list[i].Line < list[j].Line })
	// The same mistake can be reached twice (e.g. a value shared by two groups).
	out := list[:0]
	for i, q := range list {
		if i > 0 && q == list[i-1] {
			continue
		}
		out = append(out, q)
	}
	return &Error{File: file, Problems: out}
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlSyntax turns a yaml.v3 syntax error into its line (0 if it names none) and a message
// without the library's prefix.
func yamlSyntax(err error) (int, string) {
	if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n, "YAML: " + m[2]
	}
	return 0, strings.Replace(err.Error(), "yaml: ", "YAML: ", 1)
}

// Document parses data as one YAML document and returns its top node, or nil with the
// reason added to p: an empty file (empty says what such a file needs), a syntax
// error, or a second document (what names the kind of file, "a plan").
func (p *List) Document(data []byte, what, empty string) *yaml.Node {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			p.Add(0, "%s", empty)
		} else {
			line, msg := yamlSyntax(err)
			p.Add(line, "%s", msg)
		}
		return nil
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		p.At(&extra, "%s holds one YAML document; remove the second one (---)", what)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	return root
}

// Deref follows YAML aliases (*name) to the node they stand for.
func Deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}
