package report

import (
	"math"
	"strconv"
	"strings"
)

// Unit scales the numbers of one column or axis: every value in it is shown in the
// same unit, chosen from the column's magnitude (µs/ms/s for latency, K/M for rates).
type Unit struct {
	Suffix string  // "ms", "K", "" …
	Div    float64 // value / Div is shown
}

// Quantity kinds for unit choice.
const (
	KindCount   = iota // plain number: tx/s, counts → "", K, M, G
	KindMillis         // a latency held in milliseconds → µs, ms, s
	KindPercent        // a percentage, shown as is with "%"
	KindBytes          // bytes → kB, MB, GB (powers of 1024, labelled as `fathom show` does)
)

// UnitFor picks the unit for values of a kind from their largest magnitude.
func UnitFor(kind int, values ...float64) Unit {
	m := 0.0
	for _, v := range values {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			m = math.Max(m, math.Abs(v))
		}
	}
	switch kind {
	case KindMillis:
		switch {
		case m == 0:
			return Unit{"ms", 1}
		case m < 1:
			return Unit{"µs", 1e-3}
		case m < 1000:
			return Unit{"ms", 1}
		}
		return Unit{"s", 1e3}
	case KindPercent:
		return Unit{"%", 1}
	case KindBytes:
		switch {
		case m >= 1<<30:
			return Unit{"GB", 1 << 30}
		case m >= 1<<20:
			return Unit{"MB", 1 << 20}
		case m >= 1<<10:
			return Unit{"kB", 1 << 10}
		}
		return Unit{"B", 1}
	}
	switch {
	case m >= 1e9:
		return Unit{"G", 1e9}
	case m >= 1e6:
		return Unit{"M", 1e6}
	case m >= 1e4:
		return Unit{"K", 1e3}
	}
	return Unit{"", 1}
}

// Format shows v in the unit with three significant digits (whole numbers as such).
func (u Unit) Format(v float64) string {
	return num(v/u.Div) + u.sep() + u.Suffix
}

// Number shows v in the unit without the suffix (for tables whose header names it).
func (u Unit) Number(v float64) string { return num(v / u.Div) }

func (u Unit) sep() string {
	if u.Suffix == "ms" || u.Suffix == "µs" || u.Suffix == "s" {
		return " "
	}
	return ""
}

// num formats with three significant digits, without exponent, trimming zeros.
func num(v float64) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case math.IsInf(v, 0):
		return "∞"
	case v == 0:
		return "0"
	}
	a := math.Abs(v)
	digits := 2 - int(math.Floor(math.Log10(a)))
	if digits < 0 {
		digits = 0
	}
	s := strconv.FormatFloat(v, 'f', digits, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// signedPct shows a change in percent with its sign: "+4.2%", "-98.1%".
func signedPct(v float64) string {
	if math.IsNaN(v) {
		return "?"
	}
	s := num(v)
	if v > 0 {
		s = "+" + s
	}
	return s + "%"
}

// pValue shows a p-value the way benchstat does.
func pValue(p float64) string {
	if math.IsNaN(p) {
		return "–"
	}
	if p < 0.001 {
		return "p<0.001"
	}
	return "p=" + strconv.FormatFloat(p, 'f', 3, 64)
}
