package report

import (
	"strconv"
	"strings"
)

// Axis values are text as the plan wrote them ("16MB", "250ms", "8"). An axis whose
// values are all numbers of one kind, bare or with a unit, sorts by their quantity and
// is drawn on a numeric x axis; any other axis keeps the order it was given in.

// quantity units: bytes (PostgreSQL's kB/MB/GB and MySQL's K/M/G, powers of 1024),
// durations (kept in milliseconds), rates per second.
var axisUnits = map[string]struct {
	kind int
	mult float64
}{
	"b": {kindBytes, 1}, "kb": {kindBytes, 1 << 10}, "k": {kindBytes, 1 << 10}, "kib": {kindBytes, 1 << 10},
	"mb": {kindBytes, 1 << 20}, "m": {kindBytes, 1 << 20}, "mib": {kindBytes, 1 << 20},
	"gb": {kindBytes, 1 << 30}, "g": {kindBytes, 1 << 30}, "gib": {kindBytes, 1 << 30},
	"tb": {kindBytes, 1 << 40}, "t": {kindBytes, 1 << 40}, "tib": {kindBytes, 1 << 40},
	"ns": {kindMillis, 1e-6}, "us": {kindMillis, 1e-3}, "µs": {kindMillis, 1e-3}, "ms": {kindMillis, 1},
	"s": {kindMillis, 1e3}, "sec": {kindMillis, 1e3}, "min": {kindMillis, 60e3}, "h": {kindMillis, 3600e3}, "d": {kindMillis, 86400e3},
	"/s": {kindCount, 1}, "tps": {kindCount, 1},
}

// parseQuantity reads "128MB", "250ms", "1.5", "100/s" as a number in its kind's base
// unit (bytes, milliseconds, a plain count).
func parseQuantity(v string) (float64, int, bool) {
	s := strings.TrimSpace(v)
	i := 0
	for i < len(s) && (s[i] == '-' || s[i] == '+' || s[i] == '.' || s[i] >= '0' && s[i] <= '9') {
		i++
	}
	if i == 0 {
		return 0, 0, false
	}
	f, err := strconv.ParseFloat(s[:i], 64)
	if err != nil || f != f {
		return 0, 0, false
	}
	suffix := strings.TrimSpace(s[i:])
	if suffix == "" {
		return f, kindCount, true
	}
	// Case decides one suffix: "M" is MySQL's megabyte (64M), "m" Go's minute (5m).
	if suffix == "m" {
		return f * 60e3, kindMillis, true
	}
	u, ok := axisUnits[strings.ToLower(suffix)]
	if !ok {
		return 0, 0, false
	}
	return f * u.mult, u.kind, true
}

// axisQuantities parses every value of an axis; ok when all are bare numbers or all
// are quantities of one kind. A bare number beside values with units is not read as
// either (PostgreSQL counts a bare shared_buffers in 8kB pages): such an axis keeps
// its order.
func axisQuantities(values []string) (nums []float64, kind int, ok bool) {
	kind = -1
	bare := 0
	for _, v := range values {
		f, k, good := parseQuantity(v)
		if !good {
			return nil, 0, false
		}
		if _, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
			bare++
		} else if kind >= 0 && kind != k {
			return nil, 0, false
		} else {
			kind = k
		}
		nums = append(nums, f)
	}
	switch {
	case bare == len(values):
		kind = kindCount
	case bare > 0:
		return nil, 0, false
	}
	return nums, kind, true
}
