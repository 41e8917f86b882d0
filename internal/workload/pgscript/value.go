// Package pgscript runs pgbench custom scripts unchanged: SQL commands with :variables
// and pgbench's meta-commands (\set with its expression language, \sleep, \if, \gset,
// \aset, \setshell, \shell, \startpipeline) as documented for PostgreSQL 17 and 18.
//
// A script is parsed once into commands; variables are resolved to slots at parse time
// so that a worker keeps its variables in a slice and evaluates expressions without
// maps or allocation. Each script (file or built-in) is one transaction type of the
// fathom workload, so results come per script as in pgbench's per-script report.
package pgscript

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// kind is the type of a value: pgbench's NULL, boolean, integer and double.
type kind uint8

const (
	kNull kind = iota
	kBool
	kInt
	kDouble
)

func (k kind) String() string {
	switch k {
	case kBool:
		return "boolean"
	case kInt:
		return "int"
	case kDouble:
		return "double"
	}
	return "null"
}

// Value is an expression's result.
type Value struct {
	K kind
	B bool
	I int64
	F float64
}

func intVal(i int64) Value                   { return Value{K: kInt, I: i} }
func dblVal(f float64) Value                 { return Value{K: kDouble, F: f} }
func boolVal(b bool) Value                   { return Value{K: kBool, B: b} }
func nullVal() Value                         { return Value{} }
func (v Value) isNull() bool                 { return v.K == kNull }
func (v Value) String() string               { return string(v.appendText(nil)) }
func (v Value) appendTextTo(b []byte) []byte { return v.appendText(b) }

// appendText renders v as pgbench substitutes it into SQL: integers in decimal,
// doubles with 15 significant digits, booleans as true/false, NULL as empty.
func (v Value) appendText(b []byte) []byte {
	switch v.K {
	case kInt:
		return strconv.AppendInt(b, v.I, 10)
	case kDouble:
		return strconv.AppendFloat(b, v.F, 'g', 15, 64)
	case kBool:
		if v.B {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	}
	return b
}

// EvalError is an expression or script error at run time (pgbench aborts the client).
type EvalError struct{ Msg string }

func (e *EvalError) Error() string { return e.Msg }

func evalErrf(format string, args ...any) error {
	return &EvalError{Msg: fmt.Sprintf(format, args...)}
}

// toInt coerces v to an integer as pgbench does: a double is rounded to the nearest integer (ties to even) if it fits.
func toInt(v Value) (int64, error) {
	switch v.K {
	case kInt:
		return v.I, nil
	case kDouble:
		f := math.RoundToEven(v.F) // pgbench rounds (rint), it does not truncate
		if math.IsNaN(f) || f < -9223372036854775808.0 || f >= 9223372036854775808.0 {
			return 0, evalErrf("double to int overflow for %g", f)
		}
		return int64(f), nil
	case kBool:
		return 0, evalErrf("cannot coerce boolean to int")
	}
	return 0, evalErrf("cannot coerce NULL to int")
}

// toDouble coerces v to a double.
func toDouble(v Value) (float64, error) {
	switch v.K {
	case kInt:
		return float64(v.I), nil
	case kDouble:
		return v.F, nil
	case kBool:
		return 0, evalErrf("cannot coerce boolean to double")
	}
	return 0, evalErrf("cannot coerce NULL to double")
}

// truth is v as a condition: NULL is false, numbers are true when not zero.
func truth(v Value) bool {
	switch v.K {
	case kBool:
		return v.B
	case kInt:
		return v.I != 0
	case kDouble:
		return v.F != 0
	}
	return false
}

// toBool coerces v for NOT, AND and OR: only a boolean is one (pgbench refuses
// numbers there, while \if and CASE take them).
func toBool(v Value) (bool, error) {
	if v.K != kBool {
		return false, evalErrf("cannot coerce %s to boolean", v.K)
	}
	return v.B, nil
}

// parseText reads a variable's text (from -D, \gset, \setshell) as pgbench does: NULL,
// a boolean word, an integer, or a double. ok is false when it is none of them.
func parseText(s []byte) (Value, bool) {
	if i, ok := parseInt(s); ok {
		return intVal(i), true // the common case, without allocating
	}
	t := strings.TrimSpace(string(s))
	switch strings.ToLower(t) {
	case "null":
		return nullVal(), true
	case "true", "on", "yes", "t", "y":
		return boolVal(true), true
	case "false", "off", "no", "f", "n":
		return boolVal(false), true
	}
	if i, err := strconv.ParseInt(t, 10, 64); err == nil {
		return intVal(i), true
	}
	if f, err := strconv.ParseFloat(t, 64); err == nil && !strings.ContainsAny(t, "xXpP_") {
		return dblVal(f), true
	}
	return Value{}, false
}

// parseInt reads a plain decimal integer (optional sign, no spaces) without allocating.
func parseInt(s []byte) (int64, bool) {
	neg := false
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if len(s) == 0 || len(s) > 19 {
		return 0, false
	}
	var u uint64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	switch {
	case neg && u <= 1<<63:
		return int64(-u), true
	case !neg && u < 1<<63:
		return int64(u), true
	}
	return 0, false
}
