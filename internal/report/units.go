package report

import (
	"github.com/fathom-lab/fathom/internal/chart"
	"math"
	"strconv"
)

// scaleUnit scales the numbers of one column or axis: every value in it is shown in the
// same unit, chosen from the column's magnitude (µs/ms/s for latency, K/M for rates).
type scaleUnit = chart.Unit

// Quantity kinds for unit choice.
const (
	kindCount   = iota // plain number: tx/s, counts → "", K, M, G
	kindMillis         // a latency held in milliseconds → µs, ms, s
	kindPercent        // a percentage, shown as is with "%"
	kindBytes          // bytes → kB, MB, GB (powers of 1024, labelled as `fathom show` does)
)

// unitFor picks the unit for values of a kind from their largest magnitude.
func unitFor(kind int, values ...float64) scaleUnit {
	m := 0.0
	for _, v := range values {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			m = math.Max(m, math.Abs(v))
		}
	}
	switch kind {
	case kindMillis:
		switch {
		case m == 0:
			return scaleUnit{Suffix: "ms", Div: 1}
		case m < 1:
			return scaleUnit{Suffix: "µs", Div: 1e-3}
		case m < 1000:
			return scaleUnit{Suffix: "ms", Div: 1}
		}
		return scaleUnit{Suffix: "s", Div: 1e3}
	case kindPercent:
		return scaleUnit{Suffix: "%", Div: 1}
	case kindBytes:
		switch {
		case m >= 1<<30:
			return scaleUnit{Suffix: "GB", Div: 1 << 30}
		case m >= 1<<20:
			return scaleUnit{Suffix: "MB", Div: 1 << 20}
		case m >= 1<<10:
			return scaleUnit{Suffix: "kB", Div: 1 << 10}
		}
		return scaleUnit{Suffix: "B", Div: 1}
	}
	switch {
	case m >= 1e9:
		return scaleUnit{Suffix: "G", Div: 1e9}
	case m >= 1e6:
		return scaleUnit{Suffix: "M", Div: 1e6}
	case m >= 1e4:
		return scaleUnit{Suffix: "K", Div: 1e3}
	}
	return scaleUnit{Suffix: "", Div: 1}
}

// num formats with three significant digits, without exponent, trimming zeros.
func num(v float64) string { return chart.Num(v) }

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

// columnUnit is one unit of milliseconds for a whole table column: UnitFor's over
// all the values, except that a column whose values span from below a millisecond
// to seconds is shown in milliseconds (0.253 ms and 1420 ms rather than 0.000253 s).
func columnUnit(values ...float64) scaleUnit {
	u := unitFor(kindMillis, values...)
	if u.Suffix == "s" {
		for _, v := range values {
			if v > 0 && v < 1 {
				return scaleUnit{Suffix: "ms", Div: 1}
			}
		}
	}
	return u
}
