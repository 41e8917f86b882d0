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

// value is an expression's result.
type value struct {
	K kind
	B bool
	I int64
	F float64
}

func intVal(i int64) value     { return value{K: kInt, I: i} }
func dblVal(f float64) value   { return value{K: kDouble, F: f} }
func boolVal(b bool) value     { return value{K: kBool, B: b} }
func nullVal() value           { return value{} }
func (v value) isNull() bool   { return v.K == kNull }
func (v value) String() string { return string(v.appendText(nil)) }

// appendText renders v as pgbench substitutes it into SQL: integers in decimal,
// doubles with 15 significant digits (Infinity, -Infinity and NaN spelled as
// PostgreSQL reads them), booleans as true/false, NULL as the word NULL.
func (v value) appendText(b []byte) []byte {
	switch v.K {
	case kInt:
		return strconv.AppendInt(b, v.I, 10)
	case kDouble:
		switch {
		case math.IsInf(v.F, 1):
			return append(b, "Infinity"...)
		case math.IsInf(v.F, -1):
			return append(b, "-Infinity"...)
		case math.IsNaN(v.F):
			return append(b, "NaN"...)
		}
		return strconv.AppendFloat(b, v.F, 'g', 15, 64)
	case kBool:
		if v.B {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	}
	return append(b, "NULL"...)
}

// evalError is an expression or script error at run time (pgbench aborts the client).
type evalError struct{ Msg string }

func (e *evalError) Error() string { return e.Msg }

func evalErrf(format string, args ...any) error {
	return &evalError{Msg: fmt.Sprintf(format, args...)}
}

// toInt coerces v to an integer as pgbench does: a double is rounded to the nearest integer (ties to even) if it fits.
func toInt(v value) (int64, error) {
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
func toDouble(v value) (float64, error) {
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
func truth(v value) bool {
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
func toBool(v value) (bool, error) {
	if v.K != kBool {
		return false, evalErrf("cannot coerce %s to boolean", v.K)
	}
	return v.B, nil
}

// parseText reads a variable's text (from -D, \gset, \aset) as pgbench does when an
// expression uses it: NULL (any case); a boolean as PostgreSQL's boolean input takes
// it without spaces (a unique prefix of true, false, yes or no; on; of or off); an
// integer (spaces before, a sign, digits: out of range is an error, not a double); or
// a double as C's strtod reads it (spaces before, hexadecimal, inf, nan), neither
// overflowing nor underflowing. ok is false when it is none of them.
func parseText(s []byte) (value, bool) {
	if i, ok := parseInt(s); ok {
		return intVal(i), true // the common case, without allocating
	}
	t := string(s)
	if strings.EqualFold(t, "null") {
		return nullVal(), true
	}
	if b, ok := parseBoolPrefix(t); ok {
		return boolVal(b), true
	}
	u := strings.TrimLeft(t, cSpace)
	if intLike(u) {
		i, err := strconv.ParseInt(u, 10, 64)
		if err != nil {
			return value{}, false
		}
		return intVal(i), true
	}
	if f, ok := parseDouble(u); ok {
		return dblVal(f), true
	}
	return value{}, false
}

// cSpace is what C's isspace takes.
const cSpace = " \t\n\v\f\r"

// intLike: an optional sign and digits only (pgbench then reads it as a bigint).
func intLike(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// parseBoolPrefix reads PostgreSQL's boolean words and their unique prefixes.
func parseBoolPrefix(s string) (bool, bool) {
	if s == "" {
		return false, false
	}
	l := strings.ToLower(s)
	switch {
	case strings.HasPrefix("true", l), strings.HasPrefix("yes", l):
		return true, true
	case strings.HasPrefix("false", l), strings.HasPrefix("no", l):
		return false, true
	case l == "on":
		return true, true
	case len(l) >= 2 && strings.HasPrefix("off", l):
		return false, true
	}
	return false, false
}

// parseDouble reads a whole string as C's strtod does (s has no leading spaces):
// decimal or hexadecimal (0x1.8, 0x10 without an exponent), inf, infinity, nan and
// nan(chars); a value too large or too small for a normal double is refused, as
// strtod reports it out of range.
func parseDouble(s string) (float64, bool) {
	if s == "" || strings.ContainsRune(s, '_') {
		return 0, false
	}
	body := s
	if body[0] == '+' || body[0] == '-' {
		body = body[1:]
	}
	l := strings.ToLower(body)
	if strings.HasPrefix(l, "nan(") && strings.HasSuffix(l, ")") {
		for _, c := range l[4 : len(l)-1] {
			if !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z') {
				return 0, false
			}
		}
		return math.NaN(), true
	}
	hex := strings.HasPrefix(l, "0x")
	if hex && !strings.ContainsAny(l, "p") {
		s += "p0"
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return f, strings.HasPrefix(l, "inf") || strings.HasPrefix(l, "nan")
	}
	if a := math.Abs(f); a < 0x1p-1022 && (a != 0 || nonZeroMantissa(l, hex)) {
		return 0, false // underflow: strtod says out of range
	}
	return f, true
}

// nonZeroMantissa: the number's digits before its exponent are not all zero.
func nonZeroMantissa(l string, hex bool) bool {
	exp := "e"
	if hex {
		l, exp = l[2:], "p"
	}
	if i := strings.Index(l, exp); i >= 0 {
		l = l[:i]
	}
	return strings.Trim(l, "0.") != ""
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
