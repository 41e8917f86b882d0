package pgscript

import (
	"fmt"
	"io"
	"math"
	"math/bits"
	"math/rand/v2"
)

// varTable maps variable names to slots; it is built while parsing and fixed after.
type varTable struct {
	names []string
	index map[string]int
}

func newVarTable() *varTable { return &varTable{index: map[string]int{}} }

// slot returns the slot of name, adding it if new.
func (t *varTable) slot(name string) int {
	if i, ok := t.index[name]; ok {
		return i
	}
	t.index[name] = len(t.names)
	t.names = append(t.names, name)
	return len(t.names) - 1
}

// lookup returns the slot of name, or -1.
func (t *varTable) lookup(name string) int {
	if i, ok := t.index[name]; ok {
		return i
	}
	return -1
}

// variable is one client's value of a variable: a Value (from \set) or text (from -D,
// \gset, \aset, \setshell) with the value it parses to.
type variable struct {
	set    bool
	val    value
	isText bool
	valid  bool // isText: the text parses as a value
	text   []byte
}

func (v *variable) setValue(x value) {
	v.set, v.val, v.isText, v.valid = true, x, false, true
}

func (v *variable) setText(b []byte) {
	v.set, v.isText = true, true
	v.text = append(v.text[:0], b...)
	v.val, v.valid = parseText(v.text)
}

// appendSQL renders the variable as text for SQL.
func (v *variable) appendSQL(b []byte) []byte {
	if v.isText {
		return append(b, v.text...)
	}
	return v.val.appendText(b)
}

// state is what expressions see: one client's variables and random source.
type state struct {
	vars     []variable
	names    []string // by slot, for messages
	pcg      rand.PCG
	rng      *rand.Rand
	stack    []value // function arguments
	debug    io.Writer
	seedSlot int // default_seed
	// script and command say where debug() was called (pgbench's numbering).
	script, command int
}

func newState(t *varTable, seed1, seed2 uint64, debug io.Writer) *state {
	s := &state{vars: make([]variable, len(t.names)), names: t.names, debug: debug, seedSlot: t.lookup("default_seed")}
	s.pcg.Seed(seed1, seed2)
	s.rng = rand.New(&s.pcg)
	s.stack = make([]value, 0, 16)
	return s
}

func (s *state) eval(n *node) (value, error) {
	switch n.op {
	case opConst:
		return n.val, nil
	case opVar:
		return s.evalVar(n)
	case opAnd, opOr:
		return s.evalAndOr(n)
	case opCase:
		return s.evalCase(n)
	case opIsNull, opIsNotNull:
		a, err := s.eval(n.args[0])
		return boolVal(a.isNull() == (n.op == opIsNull)), err
	case opIs, opIsNot:
		a, err := s.eval(n.args[0])
		is := a.K == kBool && a.B == n.args[1].val.B
		return boolVal(is == (n.op == opIs)), err
	case opFunc:
		return s.call(n)
	}
	return s.evalOperator(n)
}

// evalVar is a variable's value; an error when it is not set or its text is not
// a number.
func (s *state) evalVar(n *node) (value, error) {
	v := &s.vars[n.slot]
	if !v.set {
		return value{}, evalErrf("undefined variable %q", s.names[n.slot])
	}
	if v.isText && !v.valid {
		return value{}, evalErrf("malformed variable %q value: %q", s.names[n.slot], v.text)
	}
	return v.val, nil
}

// evalAndOr evaluates AND and OR, the second operand only when the first does not
// decide; NULL in, NULL out.
func (s *state) evalAndOr(n *node) (value, error) {
	a, err := s.eval(n.args[0])
	if err != nil || a.isNull() {
		return a, err
	}
	ab, err := toBool(a)
	if err != nil {
		return a, err
	}
	if n.op == opAnd && !ab {
		return boolVal(false), nil
	}
	if n.op == opOr && ab {
		return boolVal(true), nil
	}
	b, err := s.eval(n.args[1])
	if err != nil || b.isNull() {
		return b, err
	}
	bb, err := toBool(b)
	return boolVal(bb), err
}

// evalCase evaluates CASE WHEN … THEN … [ELSE …] END: the first true condition's
// result, else the ELSE, else NULL.
func (s *state) evalCase(n *node) (value, error) {
	k := len(n.args)
	if n.hasElse {
		k--
	}
	for i := 0; i < k; i += 2 {
		c, err := s.eval(n.args[i])
		if err != nil {
			return c, err
		}
		if truth(c) {
			return s.eval(n.args[i+1])
		}
	}
	if n.hasElse {
		return s.eval(n.args[k])
	}
	return nullVal(), nil
}

// evalOperator evaluates a unary or binary operator: NULL in, NULL out.
func (s *state) evalOperator(n *node) (value, error) {
	a, err := s.eval(n.args[0])
	if err != nil {
		return a, err
	}
	var b value
	if len(n.args) > 1 {
		if b, err = s.eval(n.args[1]); err != nil {
			return b, err
		}
		if b.isNull() {
			return b, nil
		}
	}
	if a.isNull() {
		return a, nil
	}
	return operate(n.op, a, b)
}

// operate applies an operator to non-NULL operands.
func operate(o op, a, b value) (value, error) {
	switch o {
	case opNeg:
		// As pgbench: 0 - a (so -0.0 is 0, and -MinInt64 overflows).
		if a.K == kDouble {
			return dblVal(0 - a.F), nil
		}
		i, err := toInt(a)
		if err != nil {
			return a, err
		}
		return intArith(opSub, 0, i)
	case opNot:
		x, err := toBool(a)
		return boolVal(!x), err
	case opBitNot:
		i, err := toInt(a)
		return intVal(^i), err
	case opAdd, opSub, opMul, opDiv:
		if a.K == kDouble || b.K == kDouble {
			x, y, bad, err := bothDouble(a, b)
			if err != nil {
				return bad, err
			}
			switch o {
			case opAdd:
				return dblVal(x + y), nil
			case opSub:
				return dblVal(x - y), nil
			case opMul:
				return dblVal(x * y), nil
			}
			return dblVal(x / y), nil // IEEE: ±Infinity or NaN when y is 0, as in pgbench
		}
		x, y, bad, err := bothInt(a, b)
		if err != nil {
			return bad, err
		}
		return intArith(o, x, y)
	case opMod, opBitAnd, opBitOr, opBitXor, opShl, opShr:
		x, y, bad, err := bothInt(a, b)
		if err != nil {
			return bad, err
		}
		switch o {
		case opMod:
			return intArith(opMod, x, y)
		case opBitAnd:
			return intVal(x & y), nil
		case opBitOr:
			return intVal(x | y), nil
		case opBitXor:
			return intVal(x ^ y), nil
		case opShl:
			return intVal(x << (uint64(y) & 63)), nil
		}
		return intVal(x >> (uint64(y) & 63)), nil
	}
	// Comparisons: as doubles if either side is one, else as integers.
	var c int
	if a.K == kDouble || b.K == kDouble {
		x, y, bad, err := bothDouble(a, b)
		if err != nil {
			return bad, err
		}
		c = cmpF(x, y)
	} else {
		x, y, bad, err := bothInt(a, b)
		if err != nil {
			return bad, err
		}
		c = cmpI(x, y)
	}
	switch o {
	case opEq:
		return boolVal(c == 0), nil
	case opNe:
		return boolVal(c != 0), nil
	case opLt:
		return boolVal(c < 0), nil
	case opLe:
		return boolVal(c <= 0), nil
	case opGt:
		return boolVal(c > 0), nil
	}
	return boolVal(c >= 0), nil
}

func cmpI(x, y int64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func cmpF(x, y float64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// intArith is integer + - * / % with pgbench's overflow and division errors.
func intArith(o op, x, y int64) (value, error) {
	switch o {
	case opAdd:
		r := x + y
		if (x >= 0) == (y >= 0) && (r >= 0) != (x >= 0) {
			return value{}, evalErrf("bigint out of range")
		}
		return intVal(r), nil
	case opSub:
		r := x - y
		if (x >= 0) != (y >= 0) && (r >= 0) != (x >= 0) {
			return value{}, evalErrf("bigint out of range")
		}
		return intVal(r), nil
	case opMul:
		hi, lo := bits.Mul64(uint64(abs64(x)), uint64(abs64(y)))
		neg := (x < 0) != (y < 0)
		if hi != 0 || (lo > math.MaxInt64 && !(neg && lo == 1<<63)) {
			return value{}, evalErrf("bigint out of range")
		}
		if neg {
			return intVal(-int64(lo)), nil
		}
		return intVal(int64(lo)), nil
	case opDiv:
		if y == 0 {
			return value{}, evalErrf("division by zero")
		}
		if y == -1 {
			if x == math.MinInt64 {
				return value{}, evalErrf("bigint out of range")
			}
			return intVal(-x), nil
		}
		return intVal(x / y), nil
	}
	// opMod
	if y == 0 {
		return value{}, evalErrf("division by zero")
	}
	if y == -1 {
		return intVal(0), nil
	}
	return intVal(x % y), nil
}

// abs64 is |x| as a bit pattern (MinInt64 stays 1<<63 when read as unsigned).
func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// maxFuncArgs is pgbench's limit on a function's arguments: more is an error when
// the call is evaluated (not when the script is read).
const maxFuncArgs = 16

// call evaluates a function's arguments onto the stack and calls it.
func (s *state) call(n *node) (value, error) {
	base := len(s.stack)
	defer func() { s.stack = s.stack[:base] }()
	null := false
	for _, a := range n.args {
		v, err := s.eval(a)
		if err != nil {
			return v, err
		}
		null = null || v.isNull()
		s.stack = append(s.stack, v)
	}
	if len(n.args) > maxFuncArgs {
		return nullVal(), evalErrf("too many function arguments, maximum is %d", maxFuncArgs)
	}
	if null && !n.fn.nullOK {
		return nullVal(), nil
	}
	return n.fn.call(s, s.stack[base:])
}

// debugf writes debug()'s line as pgbench does, to the workload's debug writer.
func (s *state) debugf(v value) {
	if s.debug == nil {
		return
	}
	switch v.K {
	case kNull:
		fmt.Fprintf(s.debug, "debug(script=%d,command=%d): null\n", s.script, s.command)
	case kBool:
		fmt.Fprintf(s.debug, "debug(script=%d,command=%d): boolean %t\n", s.script, s.command, v.B)
	case kInt:
		fmt.Fprintf(s.debug, "debug(script=%d,command=%d): int %d\n", s.script, s.command, v.I)
	default:
		fmt.Fprintf(s.debug, "debug(script=%d,command=%d): double %s\n", s.script, s.command, v.appendText(nil))
	}
}

// bothInt converts both operands to integers; on failure bad is the operand that failed.
func bothInt(a, b value) (x, y int64, bad value, err error) {
	if x, err = toInt(a); err != nil {
		return 0, 0, a, err
	}
	if y, err = toInt(b); err != nil {
		return 0, 0, b, err
	}
	return x, y, a, nil
}

// bothDouble converts both operands to doubles; on failure bad is the operand that
// failed.
func bothDouble(a, b value) (x, y float64, bad value, err error) {
	if x, err = toDouble(a); err != nil {
		return 0, 0, a, err
	}
	if y, err = toDouble(b); err != nil {
		return 0, 0, b, err
	}
	return x, y, a, nil
}
