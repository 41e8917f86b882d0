package spec

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Numbers in a workload file may refer to parameters: $rows is the value of rows, and
// $(rows * 100 + 1) is arithmetic over parameters and numbers with + - * / % and
// parentheses. Everything is computed in float64; where a whole number is needed the
// result must be one.

func isNameStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isNameByte(c byte) bool  { return isNameStart(c) || c >= '0' && c <= '9' }

// eval computes a number: a literal, $name or $(expression). lookup returns a
// parameter's value and whether it is defined.
func eval(s string, lookup func(string) (string, bool)) (float64, error) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "$") {
		return parseNumber(s)
	}
	body := s[1:]
	if body == "" {
		return 0, fmt.Errorf("%q: $ must be followed by a parameter name or (expression)", s)
	}
	if body[0] != '(' {
		if !nameRE.MatchString(body) {
			return 0, fmt.Errorf("%q: after $ comes a parameter name; use $(…) for arithmetic", s)
		}
		return param(body, lookup)
	}
	p := &exprParser{s: body, lookup: lookup}
	v, err := p.expr()
	if err != nil {
		return 0, fmt.Errorf("%q: %v", s, err)
	}
	p.space()
	if p.i != len(p.s) {
		return 0, fmt.Errorf("%q: unexpected %q", s, p.s[p.i:])
	}
	return v, nil
}

func parseNumber(s string) (float64, error) {
	t := strings.ReplaceAll(s, "_", "")
	if v, err := strconv.ParseInt(t, 10, 64); err == nil {
		return float64(v), nil
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return v, nil
}

func param(name string, lookup func(string) (string, bool)) (float64, error) {
	v, ok := lookup(name)
	if !ok {
		return 0, fmt.Errorf("parameter %s is used but not defined under params:", name)
	}
	f, err := parseNumber(strings.TrimSpace(v))
	if err != nil {
		return 0, fmt.Errorf("parameter %s is %q, not a number", name, v)
	}
	return f, nil
}

type exprParser struct {
	s      string
	i      int
	lookup func(string) (string, bool)
	depth  int
}

func (p *exprParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *exprParser) peek() byte {
	p.space()
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *exprParser) expr() (float64, error) {
	v, err := p.term()
	if err != nil {
		return 0, err
	}
	for {
		switch p.peek() {
		case '+':
			p.i++
			w, err := p.term()
			if err != nil {
				return 0, err
			}
			v += w
		case '-':
			p.i++
			w, err := p.term()
			if err != nil {
				return 0, err
			}
			v -= w
		default:
			return v, nil
		}
	}
}

func (p *exprParser) term() (float64, error) {
	v, err := p.factor()
	if err != nil {
		return 0, err
	}
	for {
		op := p.peek()
		if op != '*' && op != '/' && op != '%' {
			return v, nil
		}
		p.i++
		w, err := p.factor()
		if err != nil {
			return 0, err
		}
		switch op {
		case '*':
			v *= w
		case '/':
			if w == 0 {
				return 0, fmt.Errorf("division by zero")
			}
			v /= w
		case '%':
			if w == 0 {
				return 0, fmt.Errorf("modulo by zero")
			}
			v = math.Mod(v, w)
		}
	}
}

func (p *exprParser) factor() (float64, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > 100 {
		return 0, fmt.Errorf("expression nested too deeply")
	}
	c := p.peek()
	switch {
	case c == '(':
		p.i++
		v, err := p.expr()
		if err != nil {
			return 0, err
		}
		if p.peek() != ')' {
			return 0, fmt.Errorf("missing )")
		}
		p.i++
		return v, nil
	case c == '-':
		p.i++
		v, err := p.factor()
		return -v, err
	case c >= '0' && c <= '9' || c == '.':
		j := p.i
		for j < len(p.s) && (p.s[j] >= '0' && p.s[j] <= '9' || p.s[j] == '.' || p.s[j] == '_' || p.s[j] == 'e' || p.s[j] == 'E') {
			j++
		}
		v, err := parseNumber(p.s[p.i:j])
		p.i = j
		return v, err
	case isNameStart(c):
		j := p.i
		for j < len(p.s) && isNameByte(p.s[j]) {
			j++
		}
		name := p.s[p.i:j]
		p.i = j
		return param(name, p.lookup)
	case c == 0:
		return 0, fmt.Errorf("expression ends too early")
	}
	return 0, fmt.Errorf("unexpected %q", string(c))
}
