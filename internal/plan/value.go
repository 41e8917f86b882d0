package plan

import (
	"math"
	"strconv"
	"strings"
)

// Values of settings are compared the way the server understands them: units,
// booleans and case normalised, so that "128MB" and "16384" × 8kB are the same.

func parseBool(v string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "on", "true", "yes", "1", "t", "y":
		return true, true
	case "off", "false", "no", "0", "f", "n":
		return false, true
	}
	return false, false
}

// SplitNumber splits "128MB" into 128 and "MB".
func SplitNumber(v string) (float64, string, bool) {
	v = strings.TrimSpace(v)
	i := 0
	for i < len(v) && (v[i] == '-' || v[i] == '+' || v[i] == '.' || (v[i] >= '0' && v[i] <= '9') || v[i] == 'e' && i > 0 && i+1 < len(v) && (v[i+1] >= '0' && v[i+1] <= '9' || v[i+1] == '-')) {
		i++
	}
	if i == 0 {
		return 0, "", false
	}
	f, err := strconv.ParseFloat(v[:i], 64)
	if err != nil {
		return 0, "", false
	}
	return f, strings.TrimSpace(v[i:]), true
}

// pgUnits are PostgreSQL's memory (bytes) and time (microseconds) units.
var pgUnits = map[string]float64{
	"B": 1, "kB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40,
	"us": 1, "ms": 1e3, "s": 1e6, "min": 60e6, "h": 3600e6, "d": 86400e6,
}

// pgBaseUnit turns pg_settings.unit ("8kB", "kB", "ms", "s") into a multiplier.
func pgBaseUnit(unit string) (float64, bool) {
	if unit == "" {
		return 1, true
	}
	n, u, ok := SplitNumber(unit)
	if !ok {
		n, u = 1, unit
	}
	m, ok := pgUnits[u]
	return n * m, ok
}

// sameValue reports whether a requested setting value is what the server reports,
// for the values every server shares: the same text in any case, or booleans written
// differently. The kinds' comparisons (SamePostgresValue, SameMySQLValue) start here.
func sameValue(requested, effective, vartype string) bool {
	r, e := strings.TrimSpace(requested), strings.TrimSpace(effective)
	if r == e || strings.EqualFold(r, e) {
		return true
	}
	if rb, ok := parseBool(r); ok && (vartype == "bool" || vartype == "") {
		if eb, ok := parseBool(e); ok {
			return rb == eb
		}
	}
	return false
}

// SamePostgresValue is SameValue for PostgreSQL: effective is pg_settings.setting in
// its unit (pg_settings.unit) and vartype is pg_settings.vartype.
func SamePostgresValue(requested, effective, unit, vartype string) bool {
	if sameValue(requested, effective, vartype) {
		return true
	}
	r, e := strings.TrimSpace(requested), strings.TrimSpace(effective)
	if vartype != "integer" && vartype != "real" {
		return false
	}
	base, ok := pgBaseUnit(unit)
	if !ok {
		return false
	}
	ef, err := strconv.ParseFloat(e, 64)
	if err != nil {
		return false
	}
	rn, ru, ok := SplitNumber(r)
	if !ok {
		return false
	}
	var rv float64
	if ru == "" {
		rv = rn * base // a bare number is in the setting's unit
	} else {
		m, ok := pgUnits[ru]
		if !ok {
			return false
		}
		rv = rn * m
	}
	ev := ef * base
	if ef == -1 || rn == -1 {
		return ef == rn
	}
	return closeEnough(rv, ev)
}

// SameMySQLValue is SameValue for MySQL/MariaDB: effective is @@GLOBAL.name, and sizes
// may be written with K, M, G suffixes.
func SameMySQLValue(requested, effective string) bool {
	if sameValue(requested, effective, "") {
		return true
	}
	r, e := strings.TrimSpace(requested), strings.TrimSpace(effective)
	rn, ru, ok := SplitNumber(r)
	ef, err := strconv.ParseFloat(e, 64)
	if !ok || err != nil {
		return false
	}
	mult := map[string]float64{"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}[strings.ToUpper(ru)]
	if mult == 0 {
		return false
	}
	return closeEnough(rn*mult, ef)
}

func closeEnough(a, b float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}
