package plan

import (
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Problem is one mistake in a plan file, at a line (0: the file as a whole).
type Problem struct {
	Line int
	Msg  string
}

// Error lists every problem found in a plan, sorted by line. It is a user mistake:
// the command exits 2 and prints each problem on its own line.
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

// problems collects problems as decoding and checking go on.
type problems struct{ list []Problem }

func (p *problems) add(line int, format string, args ...any) {
	p.list = append(p.list, Problem{Line: line, Msg: fmt.Sprintf(format, args...)})
}

func (p *problems) at(n *yaml.Node, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	p.add(line, format, args...)
}

// err returns the problems as an *Error sorted by line, duplicates removed, or nil.
func (p *problems) err(file string) error {
	if len(p.list) == 0 {
		return nil
	}
	list := append([]Problem(nil), p.list...)
	sort.SliceStable(list, func(i, j int) bool { return list[i].Line < list[j].Line })
	out := list[:0]
	for i, q := range list {
		if i > 0 && q == list[i-1] {
			continue
		}
		out = append(out, q)
	}
	return &Error{File: file, Problems: out}
}
