package pgscript

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// op is an expression node's operation.
type op uint8

const (
	opConst op = iota
	opVar
	opNeg
	opBitNot
	opNot
	opAdd
	opSub
	opMul
	opDiv
	opMod
	opBitAnd
	opBitOr
	opBitXor
	opShl
	opShr
	opEq
	opNe
	opLt
	opLe
	opGt
	opGe
	opAnd
	opOr
	opIsNull
	opIsNotNull
	opIs    // IS TRUE / IS FALSE (args[1] is the constant)
	opIsNot // IS NOT TRUE / IS NOT FALSE
	opCase  // args: cond, value, cond, value, … [else]
	opFunc
)

// node is one expression node. Evaluation walks the tree without allocating.
type node struct {
	op   op
	val  value   // opConst
	slot int     // opVar
	fn   *fnSpec // opFunc
	args []*node
	// hasElse: opCase has a trailing ELSE value.
	hasElse bool
}

// token kinds of the expression lexer.
type tokKind uint8

const (
	tEOF tokKind = iota
	tInt
	tDouble
	tIdent
	tVar
	tOp
	tLParen
	tRParen
	tComma
)

type token struct {
	kind tokKind
	text string
	pos  int
}

// lexExpr splits an expression into tokens.
func lexExpr(s string) ([]token, error) {
	var out []token
	i := 0
	for i < len(s) {
		c := s[i]
		var t token
		var err error
		next := i + 1 // after a one-character token
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v':
			i++
			continue
		case c == '(':
			t = token{tLParen, "(", i}
		case c == ')':
			t = token{tRParen, ")", i}
		case c == ',':
			t = token{tComma, ",", i}
		case c == ':':
			t, next, err = lexVar(s, i)
		case isDigit(c) || (c == '.' && i+1 < len(s) && isDigit(s[i+1])):
			t, next, err = lexNumber(s, i)
		case isIdentStart(c):
			j := i + 1
			for j < len(s) && isVarChar(s[j]) {
				j++
			}
			t, next = token{tIdent, strings.ToLower(s[i:j]), i}, j
		default:
			t, next, err = lexOp(s, i)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, t)
		i = next
	}
	out = append(out, token{tEOF, "", len(s)})
	return out, nil
}

// lexVar reads the :name at s[i]; the token's text is the name. next is the index
// after it.
func lexVar(s string, i int) (t token, next int, err error) {
	j := i + 1
	for j < len(s) && isVarChar(s[j]) {
		j++
	}
	if j == i+1 {
		return token{}, 0, fmt.Errorf("a variable name must follow ':' at column %d", i+1)
	}
	return token{tVar, s[i+1 : j], i}, j, nil
}

// lexNumber reads the integer or double (digits, a fraction, an exponent) at s[i].
// next is the index after it.
func lexNumber(s string, i int) (t token, next int, err error) {
	j := i
	dbl := false
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	if j < len(s) && s[j] == '.' {
		dbl = true
		j++
		for j < len(s) && isDigit(s[j]) {
			j++
		}
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		k := j + 1
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			k++
		}
		if k < len(s) && isDigit(s[k]) {
			dbl = true
			for k < len(s) && isDigit(s[k]) {
				k++
			}
			j = k
		}
	}
	if j < len(s) && isIdentStart(s[j]) {
		return token{}, 0, fmt.Errorf("malformed number %q at column %d", s[i:j+1], i+1)
	}
	k := tInt
	if dbl {
		k = tDouble
	}
	return token{k, s[i:j], i}, j, nil
}

// lexOp reads the one- or two-character operator at s[i]. next is the index after it.
func lexOp(s string, i int) (t token, next int, err error) {
	c := s[i]
	two := ""
	if i+1 < len(s) {
		two = s[i : i+2]
	}
	switch two {
	case "<=", ">=", "<>", "!=", "<<", ">>":
		return token{tOp, two, i}, i + 2, nil
	}
	if strings.IndexByte("+-*/%<>=&|#~", c) >= 0 {
		return token{tOp, string(c), i}, i + 1, nil
	}
	return token{}, 0, fmt.Errorf("unexpected character %q at column %d", c, i+1)
}

func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool { return c == '_' || c >= 0x80 || (c|0x20 >= 'a' && c|0x20 <= 'z') }

// isVarChar: pgbench variable names are letters, digits, underscores and non-ASCII bytes.
func isVarChar(c byte) bool { return isIdentStart(c) || isDigit(c) }

// exprParser parses one \set or \if expression.
type exprParser struct {
	toks []token
	i    int
	vars *varTable
}

func parseExpr(s string, vars *varTable) (*node, error) {
	toks, err := lexExpr(s)
	if err != nil {
		return nil, err
	}
	if len(toks) == 1 {
		return nil, fmt.Errorf("missing expression")
	}
	p := &exprParser{toks: toks, vars: vars}
	n, err := p.or()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		return nil, fmt.Errorf("unexpected %q at column %d", t.text, t.pos+1)
	}
	return n, nil
}

func (p *exprParser) peek() token { return p.toks[p.i] }
func (p *exprParser) next() token { t := p.toks[p.i]; p.i++; return t }

func (p *exprParser) isKw(kw string) bool {
	t := p.peek()
	return t.kind == tIdent && t.text == kw
}

func (p *exprParser) isOp(o string) bool {
	t := p.peek()
	return t.kind == tOp && t.text == o
}

func (p *exprParser) unexpected(what string) error {
	t := p.peek()
	if t.kind == tEOF {
		return fmt.Errorf("expression ends where %s was expected", what)
	}
	return fmt.Errorf("unexpected %q at column %d (%s expected)", t.text, t.pos+1, what)
}

func bin(o op, a, b *node) *node { return &node{op: o, args: []*node{a, b}} }

func (p *exprParser) or() (*node, error) {
	n, err := p.and()
	for err == nil && p.isKw("or") {
		p.next()
		var r *node
		if r, err = p.and(); err == nil {
			n = bin(opOr, n, r)
		}
	}
	return n, err
}

func (p *exprParser) and() (*node, error) {
	n, err := p.not()
	for err == nil && p.isKw("and") {
		p.next()
		var r *node
		if r, err = p.not(); err == nil {
			n = bin(opAnd, n, r)
		}
	}
	return n, err
}

func (p *exprParser) not() (*node, error) {
	if p.isKw("not") {
		p.next()
		n, err := p.not()
		if err != nil {
			return nil, err
		}
		return &node{op: opNot, args: []*node{n}}, nil
	}
	return p.is()
}

// is parses IS [NOT] NULL|TRUE|FALSE, ISNULL and NOTNULL. As in pgbench's grammar,
// the test is a postfix operator whose result may go on as the left operand of a
// binary operator: a IS NULL >> 1 is (a IS NULL) >> 1.
func (p *exprParser) is() (*node, error) {
	n, err := p.cmp(nil)
	for err == nil {
		var t *node
		if t, err = p.isTest(n); err != nil || t == nil {
			break
		}
		n = t
		if k := p.peek(); k.kind == tOp {
			n, err = p.cmp(n)
		}
	}
	return n, err
}

// isTest wraps n in the IS test that follows, or returns nil when none does.
func (p *exprParser) isTest(n *node) (*node, error) {
	switch {
	case p.isKw("isnull"):
		p.next()
		return &node{op: opIsNull, args: []*node{n}}, nil
	case p.isKw("notnull"):
		p.next()
		return &node{op: opIsNotNull, args: []*node{n}}, nil
	case p.isKw("is"):
		p.next()
		neg := false
		if p.isKw("not") {
			p.next()
			neg = true
		}
		t := p.next()
		if t.kind == tIdent {
			switch t.text {
			case "null":
				if neg {
					return &node{op: opIsNotNull, args: []*node{n}}, nil
				}
				return &node{op: opIsNull, args: []*node{n}}, nil
			case "true", "false":
				o := opIs
				if neg {
					o = opIsNot
				}
				return bin(o, n, &node{op: opConst, val: boolVal(t.text == "true")}), nil
			}
		}
		p.i--
		return nil, p.unexpected("NULL, TRUE or FALSE after IS")
	}
	return nil, nil
}

var cmpOps = map[string]op{"=": opEq, "<>": opNe, "!=": opNe, "<": opLt, "<=": opLe, ">": opGt, ">=": opGe}

// cmp, bits, add and mul parse their level; left, when not nil, is the left operand
// already parsed.
func (p *exprParser) cmp(left *node) (*node, error) {
	n, err := p.bits(left)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind == tOp {
		if o, ok := cmpOps[t.text]; ok {
			p.next()
			r, err := p.bits(nil)
			if err != nil {
				return nil, err
			}
			n = bin(o, n, r)
			if t := p.peek(); t.kind == tOp && cmpOps[t.text] != 0 {
				return nil, fmt.Errorf("comparisons do not chain: unexpected %q at column %d (use AND)", t.text, t.pos+1)
			}
		}
	}
	return n, nil
}

var bitOps = map[string]op{"&": opBitAnd, "|": opBitOr, "#": opBitXor, "<<": opShl, ">>": opShr}

func (p *exprParser) bits(left *node) (*node, error) {
	n, err := p.add(left)
	for err == nil {
		t := p.peek()
		o, ok := bitOps[t.text]
		if t.kind != tOp || !ok {
			break
		}
		p.next()
		var r *node
		if r, err = p.add(nil); err == nil {
			n = bin(o, n, r)
		}
	}
	return n, err
}

func (p *exprParser) add(left *node) (*node, error) {
	n, err := p.mul(left)
	for err == nil && (p.isOp("+") || p.isOp("-")) {
		o := opAdd
		if p.next().text == "-" {
			o = opSub
		}
		var r *node
		if r, err = p.mul(nil); err == nil {
			n = bin(o, n, r)
		}
	}
	return n, err
}

func (p *exprParser) mul(left *node) (*node, error) {
	n, err := left, error(nil)
	if n == nil {
		n, err = p.unary()
	}
	for err == nil && (p.isOp("*") || p.isOp("/") || p.isOp("%")) {
		o := map[string]op{"*": opMul, "/": opDiv, "%": opMod}[p.next().text]
		var r *node
		if r, err = p.unary(); err == nil {
			n = bin(o, n, r)
		}
	}
	return n, err
}

func (p *exprParser) unary() (*node, error) {
	switch {
	case p.isOp("+"):
		p.next()
		return p.unary()
	case p.isOp("-"):
		p.next()
		// -9223372036854775808 is the one integer whose magnitude only fits negated.
		if t := p.peek(); t.kind == tInt && t.text == "9223372036854775808" {
			p.next()
			return &node{op: opConst, val: intVal(math.MinInt64)}, nil
		}
		n, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &node{op: opNeg, args: []*node{n}}, nil
	case p.isOp("~"):
		p.next()
		n, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &node{op: opBitNot, args: []*node{n}}, nil
	}
	return p.primary()
}

func (p *exprParser) primary() (*node, error) {
	t := p.next()
	switch t.kind {
	case tInt:
		i, err := strconv.ParseInt(t.text, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("bigint constant overflow: %s", t.text)
		}
		return &node{op: opConst, val: intVal(i)}, nil
	case tDouble:
		f, ok := parseDouble(t.text)
		if !ok { // too large, or too small for a normal double, as pgbench refuses it
			return nil, fmt.Errorf("double constant overflow: %s", t.text)
		}
		return &node{op: opConst, val: dblVal(f)}, nil
	case tVar:
		return &node{op: opVar, slot: p.vars.slot(t.text)}, nil
	case tLParen:
		n, err := p.or()
		if err != nil {
			return nil, err
		}
		if p.peek().kind != tRParen {
			return nil, p.unexpected("')'")
		}
		p.next()
		return n, nil
	case tIdent:
		switch t.text {
		case "true", "false":
			return &node{op: opConst, val: boolVal(t.text == "true")}, nil
		case "null":
			return &node{op: opConst}, nil
		case "case":
			return p.caseExpr()
		}
		if p.peek().kind != tLParen {
			return nil, fmt.Errorf("unexpected word %q at column %d (a function call needs parentheses; a variable needs a leading ':')", t.text, t.pos+1)
		}
		return p.call(t)
	}
	p.i--
	return nil, p.unexpected("a value")
}

func (p *exprParser) caseExpr() (*node, error) {
	n := &node{op: opCase}
	for p.isKw("when") {
		p.next()
		c, err := p.or()
		if err != nil {
			return nil, err
		}
		if !p.isKw("then") {
			return nil, p.unexpected("THEN")
		}
		p.next()
		v, err := p.or()
		if err != nil {
			return nil, err
		}
		n.args = append(n.args, c, v)
	}
	if len(n.args) == 0 {
		return nil, p.unexpected("WHEN after CASE")
	}
	if p.isKw("else") {
		p.next()
		v, err := p.or()
		if err != nil {
			return nil, err
		}
		n.args = append(n.args, v)
		n.hasElse = true
	}
	if !p.isKw("end") {
		return nil, p.unexpected("END of CASE")
	}
	p.next()
	return n, nil
}

func (p *exprParser) call(name token) (*node, error) {
	fn, ok := funcs[name.text]
	if !ok {
		return nil, fmt.Errorf("unknown function %q (functions: %s)", name.text, funcNames())
	}
	p.next() // (
	n := &node{op: opFunc, fn: fn}
	if p.peek().kind != tRParen {
		for {
			a, err := p.or()
			if err != nil {
				return nil, err
			}
			n.args = append(n.args, a)
			if p.peek().kind == tComma {
				p.next()
				continue
			}
			break
		}
	}
	if p.peek().kind != tRParen {
		return nil, p.unexpected("',' or ')'")
	}
	p.next()
	if len(n.args) < fn.min || (fn.max >= 0 && len(n.args) > fn.max) {
		return nil, fmt.Errorf("function %s takes %s, not %d", name.text, fn.arity(), len(n.args))
	}
	return n, nil
}
