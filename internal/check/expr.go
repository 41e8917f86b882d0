package check

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/vm"
)

// expression is a compiled check expression over a sample's variables.
//
// The language is expr-lang/expr's (arithmetic, comparisons, `and`/`or`/`not`,
// `cond ? a : b`), evaluated without reflection on user input and without any access
// to the process. Bare names are variables, case-insensitive (Threads_connected /
// max_connections * 100). On top of that:
//
//	current{X}, current("X")  the value now (also for names that are not identifiers)
//	lastrun{X}, lastrun("X")  the value at the previous run of the same check
//	delta(X)                  current - lastrun
//	rate(X)                   delta per second; a counter that went down is a reset
//	elapsed()                 seconds between the previous run and now
//	abs, min, max, round, ceil, floor
//
// Every number is a float64, integer literals too, as in the Perl of check_mysql_health
// and check_postgres: a sum past 2^63 is a large positive number, never a wrapped
// negative one that would alert CRITICAL; % is the floating-point remainder.
type expression struct {
	Source  string
	program *vm.Program
	// Vars are the variables it reads (lower case), sorted; Needs are those it also
	// reads from the previous run.
	Vars  []string
	Needs []string
	// spelled maps a variable's lower case name to how the expression spells it.
	spelled map[string]string
	// Stateful: it needs a previous run (lastrun, delta, rate, elapsed).
	Stateful bool
}

// functions the language adds; bare identifiers with these names are not variables.
var exprFuncs = map[string]bool{
	"current": true, "lastrun": true, "delta": true, "rate": true, "elapsed": true,
	"abs": true, "min": true, "max": true, "round": true, "ceil": true, "floor": true,
}

const maxExpressionLen = 4096

// evalEnv is the environment an expression runs in: its functions, bound to one pair
// of samples. The compile-time prototype has the same shape.
type evalEnv = map[string]any

func envFor(ev *evaluation) evalEnv {
	return evalEnv{
		modFunc:   mod,
		"current": ev.current,
		"lastrun": ev.lastrun,
		"delta":   ev.delta,
		"rate":    ev.rate,
		"elapsed": ev.elapsed,
	}
}

// modFunc is what a % b becomes: the remainder of floats (expr-lang's % takes
// integers only). Its name cannot be written in an expression.
const modFunc = "$mod"

func mod(a, b any) (float64, error) {
	x, ok1 := a.(float64)
	y, ok2 := b.(float64)
	if !ok1 || !ok2 {
		return 0, fmt.Errorf("invalid operation: %T %% %T: %% takes numbers", a, b)
	}
	return math.Mod(x, y), nil
}

// parseExpression compiles src. Errors are one line that says what is wrong and where.
func parseExpression(src string) (*expression, error) {
	if strings.TrimSpace(src) == "" {
		return nil, errors.New("the expression is empty: give one like 'Threads_connected / max_connections * 100'")
	}
	if len(src) > maxExpressionLen {
		return nil, fmt.Errorf("the expression is longer than %d characters", maxExpressionLen)
	}
	if strings.ContainsAny(src, "\x00") {
		return nil, errors.New("the expression contains a NUL byte")
	}
	rewritten, err := rewriteBraces(src)
	if err != nil {
		return nil, fmt.Errorf("expression %q: %v", src, err)
	}
	p := &patcher{vars: map[string]string{}, needs: map[string]bool{}}
	prog, err := expr.Compile(rewritten,
		expr.Env(envFor(&evaluation{})),
		expr.DisableAllBuiltins(),
		expr.EnableBuiltin("abs"), expr.EnableBuiltin("min"), expr.EnableBuiltin("max"),
		expr.EnableBuiltin("round"), expr.EnableBuiltin("ceil"), expr.EnableBuiltin("floor"),
		expr.Patch(p),
		expr.MaxNodes(1000),
	)
	if p.err != nil {
		return nil, fmt.Errorf("expression %q: %v", src, p.err)
	}
	if err != nil {
		return nil, fmt.Errorf("expression %q: %s", src, exprMessage(err, rewritten == src))
	}
	e := &expression{Source: src, program: prog, Stateful: p.stateful, spelled: p.vars}
	for v := range p.vars {
		e.Vars = append(e.Vars, v)
	}
	for v := range p.needs {
		e.Needs = append(e.Needs, v)
	}
	sort.Strings(e.Vars)
	sort.Strings(e.Needs)
	return e, nil
}

// exprMessage makes one line of an expr-lang error.
func exprMessage(err error, withColumn bool) string {
	var fe *file.Error
	if errors.As(err, &fe) {
		msg := fe.Message
		msg = strings.ReplaceAll(msg, "\n", " ")
		if withColumn && fe.Column > 0 {
			return fmt.Sprintf("%s (at column %d)", msg, fe.Column+1)
		}
		return msg
	}
	return strings.ReplaceAll(err.Error(), "\n", " ")
}

// rewriteBraces turns the original plugin's current{X} and lastrun{X} into
// current("X") and lastrun("X"), outside string literals. X may be any name without
// braces or quotes.
func rewriteBraces(src string) (string, error) {
	if !strings.Contains(src, "{") {
		return src, nil
	}
	var b strings.Builder
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			j := i + 1
			for j < len(src) && src[j] != c {
				if src[j] == '\\' && c != '`' {
					j++
				}
				j++
			}
			if j >= len(src) {
				return "", errors.New("a string literal is not closed")
			}
			b.WriteString(src[i : j+1])
			i = j + 1
		case isIdentStart(c):
			j := i
			for j < len(src) && isIdentPart(src[j]) {
				j++
			}
			word := src[i:j]
			k := j
			for k < len(src) && (src[k] == ' ' || src[k] == '\t') {
				k++
			}
			fn := strings.ToLower(word)
			if (fn == "current" || fn == "lastrun") && k < len(src) && src[k] == '{' {
				end := strings.IndexByte(src[k:], '}')
				if end < 0 {
					return "", fmt.Errorf("%s{ is not closed with }", word)
				}
				name := strings.TrimSpace(src[k+1 : k+end])
				if name == "" || strings.ContainsAny(name, "{\"'`\\\n") {
					return "", fmt.Errorf("%s{%s}: want a variable name between the braces", word, name)
				}
				b.WriteString(fn + "(" + strconv.Quote(name) + ")")
				i = k + end + 1
				continue
			}
			b.WriteString(word)
			i = j
		case c == '{':
			return "", errors.New("'{' is only used as current{NAME} or lastrun{NAME}")
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), nil
}

func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isIdentPart(c byte) bool { return isIdentStart(c) || (c >= '0' && c <= '9') }

// patcher turns bare names into current("name") calls, gives rate and delta their
// variable name as a string, and records what the expression reads.
type patcher struct {
	vars     map[string]string // lower case name -> as written
	needs    map[string]bool
	stateful bool
	made     map[ast.Node]string // current() calls made from bare names
	err      error
}

func (p *patcher) fail(format string, args ...any) {
	if p.err == nil {
		p.err = fmt.Errorf(format, args...)
	}
}

func (p *patcher) Visit(node *ast.Node) {
	switch n := (*node).(type) {
	case *ast.IntegerNode:
		// Integer arithmetic would wrap past 2^63 (expr-lang's ints are Go's).
		ast.Patch(node, &ast.FloatNode{Value: float64(n.Value)})
	case *ast.UnaryNode:
		if f, ok := n.Node.(*ast.FloatNode); ok && n.Operator == "-" {
			ast.Patch(node, &ast.FloatNode{Value: -f.Value})
		}
	case *ast.BinaryNode:
		if n.Operator == "%" {
			ast.Patch(node, &ast.CallNode{Callee: &ast.IdentifierNode{Value: modFunc}, Arguments: []ast.Node{n.Left, n.Right}})
		}
	case *ast.IdentifierNode:
		if exprFuncs[strings.ToLower(n.Value)] {
			return
		}
		switch n.Value {
		case "true", "false", "nil":
			return
		}
		call := &ast.CallNode{Callee: &ast.IdentifierNode{Value: "current"}, Arguments: []ast.Node{&ast.StringNode{Value: n.Value}}}
		if p.made == nil {
			p.made = map[ast.Node]string{}
		}
		p.made[call] = n.Value
		ast.Patch(node, call)
		p.vars[strings.ToLower(n.Value)] = n.Value
	case *ast.CallNode:
		if name, ok := p.made[n.Callee]; ok {
			p.fail("unknown function %s() (functions: rate, delta, current, lastrun, elapsed, abs, min, max, round, ceil, floor)", name)
			return
		}
		id, ok := n.Callee.(*ast.IdentifierNode)
		if !ok {
			p.fail("only named functions can be called")
			return
		}
		fn := strings.ToLower(id.Value)
		if fn != id.Value {
			id.Value = fn
		}
		switch fn {
		case "current", "lastrun", "rate", "delta":
			if len(n.Arguments) != 1 {
				p.fail("%s() takes one variable name, e.g. %s(Questions)", fn, fn)
				return
			}
			var name string
			switch a := n.Arguments[0].(type) {
			case *ast.StringNode:
				name = a.Value
			case *ast.CallNode:
				if v, ok := p.made[a]; ok {
					name = v
				} else if id, ok := a.Callee.(*ast.IdentifierNode); ok && strings.EqualFold(id.Value, "current") && len(a.Arguments) == 1 {
					if s, ok := a.Arguments[0].(*ast.StringNode); ok {
						name = s.Value
					}
				}
			}
			if name == "" {
				if fn == "rate" || fn == "delta" {
					p.fail("%s() takes a variable name, e.g. %s(Questions); for a sum write %s(A) + %s(B)", fn, fn, fn, fn)
				} else {
					p.fail("%s() takes a variable name in quotes, e.g. %s(\"Questions\") or %s{Questions}", fn, fn, fn)
				}
				return
			}
			n.Arguments[0] = &ast.StringNode{Value: name}
			lower := strings.ToLower(name)
			p.vars[lower] = name
			if fn != "current" {
				p.needs[lower] = true
				p.stateful = true
			}
		case "elapsed":
			if len(n.Arguments) != 0 {
				p.fail("elapsed() takes no arguments")
			}
			p.stateful = true
		}
	}
}

// errBaseline means the expression needs a previous run that is not there.
var errBaseline = errors.New("no previous run")

// resetError is a counter that went down between runs.
type resetError struct {
	name     string
	from, to float64
}

func (e *resetError) Error() string {
	return fmt.Sprintf("%s went down from %s to %s since the last run (a counter reset?)", e.name, formatNumber(e.from), formatNumber(e.to))
}

// unknownVarError names a variable the server does not have.
type unknownVarError struct {
	name    string
	suggest string
}

func (e *unknownVarError) Error() string {
	s := fmt.Sprintf("unknown variable %q", e.name)
	if e.suggest != "" {
		s += fmt.Sprintf(" (did you mean %s?)", e.suggest)
	}
	return s + "; `fathom check --list` shows the variables this server has"
}

// evaluation binds an expression to the current sample and, for stateful
// expressions, the previous one.
type evaluation struct {
	cur, last     vars
	elapsedSecond float64
	hasLast       bool
}

func (ev *evaluation) lookup(vars vars, name string) (any, error) {
	v, ok := vars.Get(name)
	if !ok {
		return nil, &unknownVarError{name: name, suggest: vars.suggest(name)}
	}
	return v.any(), nil
}

func (ev *evaluation) current(name string) (any, error) { return ev.lookup(ev.cur, name) }

func (ev *evaluation) lastrun(name string) (any, error) {
	if !ev.hasLast {
		return nil, errBaseline
	}
	if _, ok := ev.cur.Get(name); !ok {
		return nil, &unknownVarError{name: name, suggest: ev.cur.suggest(name)}
	}
	if _, ok := ev.last.Get(name); !ok {
		return nil, errBaseline
	}
	return ev.lookup(ev.last, name)
}

func (ev *evaluation) numbers(name string) (cur, last float64, err error) {
	c, err := ev.current(name)
	if err != nil {
		return 0, 0, err
	}
	l, err := ev.lastrun(name)
	if err != nil {
		return 0, 0, err
	}
	cf, ok1 := c.(float64)
	lf, ok2 := l.(float64)
	if !ok1 || !ok2 {
		return 0, 0, fmt.Errorf("%s is not a number (%v), so it has no delta or rate", name, c)
	}
	return cf, lf, nil
}

func (ev *evaluation) delta(name string) (float64, error) {
	c, l, err := ev.numbers(name)
	return c - l, err
}

func (ev *evaluation) rate(name string) (float64, error) {
	c, l, err := ev.numbers(name)
	if err != nil {
		return 0, err
	}
	if c < l {
		return 0, &resetError{name: name, from: l, to: c}
	}
	if ev.elapsedSecond <= 0 {
		return 0, errBaseline
	}
	return (c - l) / ev.elapsedSecond, nil
}

func (ev *evaluation) elapsed() (float64, error) {
	if !ev.hasLast {
		return 0, errBaseline
	}
	return ev.elapsedSecond, nil
}

// eval evaluates the expression. The result is a finite number; booleans are 1 and 0.
func (e *expression) eval(cur, last vars, hasLast bool, elapsed float64) (float64, error) {
	ev := &evaluation{cur: cur, last: last, hasLast: hasLast, elapsedSecond: elapsed}
	// Unknown variables first, so that the message names them even on a first run.
	for _, name := range e.Vars {
		if _, ok := cur.Get(name); !ok {
			return 0, &unknownVarError{name: e.spelled[name], suggest: cur.suggest(name)}
		}
	}
	out, err := expr.Run(e.program, envFor(ev))
	if err != nil {
		return 0, unwrapRunError(err)
	}
	var f float64
	switch v := out.(type) {
	case float64:
		f = v
	case int:
		f = float64(v)
	case int64:
		f = float64(v)
	case bool:
		if v {
			f = 1
		}
	case string:
		return 0, fmt.Errorf("the expression gives the text %q, not a number", v)
	case nil:
		return 0, errors.New("the expression gives nothing (nil), not a number")
	default:
		return 0, fmt.Errorf("the expression gives a %T, not a number", out)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return f, fmt.Errorf("the expression is not a finite number (%s): a division by zero?", strconv.FormatFloat(f, 'g', -1, 64))
	}
	return f, nil
}

// unwrapRunError keeps our own errors (baseline, reset, unknown variable) recognisable
// and makes others one line.
func unwrapRunError(err error) error {
	var (
		ue *unknownVarError
		re *resetError
	)
	switch {
	case errors.Is(err, errBaseline):
		return errBaseline
	case errors.As(err, &ue):
		return ue
	case errors.As(err, &re):
		return re
	}
	var fe *file.Error
	if errors.As(err, &fe) {
		if fe.Prev != nil {
			return errors.New(strings.ReplaceAll(fe.Prev.Error(), "\n", " "))
		}
		return errors.New(strings.ReplaceAll(fe.Message, "\n", " "))
	}
	return errors.New(strings.ReplaceAll(err.Error(), "\n", " "))
}
