package yamlfile

import (
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/fathom-lab/fathom/internal/suggest"
)

// The checks both decoders of user files (plan, workload file) make on a node, each
// adding a problem at the node's line when the node is not what the file needs there.
// what names the place for the message ("the plan", "a table", "unique").

// Describe says what a node holds, for a message ("… must be a list, not %s"):
// nothing, a mapping, a list, empty, or the value quoted (cut at 40 characters).
func Describe(n *yaml.Node) string {
	n = Deref(n)
	if n == nil {
		return "nothing"
	}
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "empty"
		}
		return "the value " + quote(n.Value)
	}
	return "a document"
}

// quote writes s as YAML would quote it, cut to 40 characters.
func quote(s string) string {
	if len(s) > 40 {
		s = s[:37] + "..."
	}
	b, _ := yaml.Marshal(s)
	q := strings.TrimSpace(string(b))
	if !strings.HasPrefix(q, "'") && !strings.HasPrefix(q, `"`) {
		q = `"` + q + `"`
	}
	return q
}

// Mapping returns n (aliases followed) when it is a mapping; otherwise ok is false
// and the problem is added.
func (p *List) Mapping(n *yaml.Node, what string) (*yaml.Node, bool) {
	m := Deref(n)
	if m == nil || m.Kind != yaml.MappingNode {
		p.At(n, "%s must be a mapping (key: value lines), not %s", what, Describe(n))
		return nil, false
	}
	return m, true
}

// Fields checks that n is a mapping with only known keys, each once, and returns the
// values by key; ok is false when n is not a mapping. An unknown key is reported with
// the known one it most likely misspells, and the list of known keys.
func (p *List) Fields(n *yaml.Node, what string, known ...string) (map[string]*yaml.Node, bool) {
	m, ok := p.Mapping(n, what)
	if !ok {
		return nil, false
	}
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			p.At(k, "%s: keys must be plain names", what)
			continue
		}
		if !slices.Contains(known, k.Value) {
			p.At(k, "unknown key %q in %s%s; known: %s", k.Value, what, suggest.Hint(k.Value, known), strings.Join(known, ", "))
			continue
		}
		if _, dup := out[k.Value]; dup {
			p.At(k, "%s: key %q is given twice", what, k.Value)
			continue
		}
		out[k.Value] = v
	}
	return out, true
}

// Scalar reads a value as written (numbers and booleans keep their text: on stays
// "on"); ok is false, and the problem added, when n is no value (a mapping, a list,
// empty).
func (p *List) Scalar(n *yaml.Node, what string) (string, bool) {
	m := Deref(n)
	if m == nil || m.Kind != yaml.ScalarNode || m.Tag == "!!null" {
		p.At(n, "%s must be a value, not %s", what, Describe(n))
		return "", false
	}
	return m.Value, true
}

// Str is Scalar's text, "" when n is no value.
func (p *List) Str(n *yaml.Node, what string) string {
	s, _ := p.Scalar(n, what)
	return s
}

// Bool reads true/yes/on or false/no/off, in any case.
func (p *List) Bool(n *yaml.Node, what string) bool {
	m := Deref(n)
	if m != nil && m.Kind == yaml.ScalarNode {
		switch strings.ToLower(m.Value) {
		case "true", "yes", "on":
			return true
		case "false", "no", "off":
			return false
		}
	}
	p.At(n, "%s must be true or false, not %s", what, Describe(n))
	return false
}
