package check

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// thresholdRange is a Nagios plugin threshold range (monitoring-plugins' "Threshold and ranges"):
//
//	10      alert if the value is < 0 or > 10
//	10:     alert if < 10
//	~:10    alert if > 10
//	10:20   alert if < 10 or > 20
//	@10:20  alert if 10 <= value <= 20
//
// The zero Range is "not set" and never alerts.
type thresholdRange struct {
	Start, End float64 // -Inf / +Inf for an open side
	Inside     bool    // '@': alert inside [Start, End] instead of outside
	set        bool
	text       string // normalized text, for perfdata
}

// number is the numbers a range or comparison accepts: plain decimals, optionally
// signed, optionally with an exponent. No hex, no underscores, no inf or NaN.
var number = regexp.MustCompile(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]{1,3})?$`)

func ParseNumber(s string) (float64, bool) {
	if !number.MatchString(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// parseRange parses a threshold in Nagios range syntax. An empty string is a Range
// that is not set.
func parseRange(s string) (thresholdRange, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return thresholdRange{}, nil
	}
	bad := func(why string) (thresholdRange, error) {
		return thresholdRange{}, fmt.Errorf("threshold %q: %s; use Nagios ranges: 10, 10:, ~:10, 10:20 or @10:20", s, why)
	}
	r := thresholdRange{set: true}
	body := t
	if strings.HasPrefix(body, "@") {
		r.Inside = true
		body = strings.TrimSpace(body[1:])
	}
	if body == "" {
		return bad("nothing after '@'")
	}
	startText, endText, hasColon := strings.Cut(body, ":")
	startText, endText = strings.TrimSpace(startText), strings.TrimSpace(endText)
	if !hasColon {
		// "10" is 0:10
		startText, endText = "0", startText
	}
	switch startText {
	case "~":
		r.Start = math.Inf(-1)
	case "":
		r.Start = 0
	default:
		f, ok := ParseNumber(startText)
		if !ok {
			return bad(fmt.Sprintf("%q is not a number", startText))
		}
		r.Start = f
	}
	if endText == "" {
		if !hasColon {
			return bad("empty")
		}
		r.End = math.Inf(1)
	} else {
		if endText == "~" {
			return bad("'~' (minus infinity) can only start a range; leave the end empty for infinity (10:)")
		}
		f, ok := ParseNumber(endText)
		if !ok {
			return bad(fmt.Sprintf("%q is not a number", endText))
		}
		r.End = f
	}
	if r.Start > r.End {
		return bad("the start is greater than the end")
	}
	r.text = r.format()
	return r, nil
}

// MustRange is ParseRange for constants; it panics on a malformed range.
func MustRange(s string) thresholdRange {
	r, err := parseRange(s)
	if err != nil {
		panic(err)
	}
	return r
}

// IsSet reports whether the range was given.
func (r thresholdRange) IsSet() bool { return r.set }

// Alert reports whether v is outside the range (inside with '@'). A NaN always alerts
// when the range is set.
func (r thresholdRange) Alert(v float64) bool {
	if !r.set {
		return false
	}
	if math.IsNaN(v) {
		return true
	}
	in := v >= r.Start && v <= r.End
	return in == r.Inside
}

// String is the range in canonical Nagios syntax ("" when not set).
func (r thresholdRange) String() string { return r.text }

func (r thresholdRange) format() string {
	var b strings.Builder
	if r.Inside {
		b.WriteByte('@')
	}
	switch {
	case math.IsInf(r.Start, -1):
		b.WriteString("~:")
	case r.Start == 0 && !math.IsInf(r.End, 1):
		// "0:10" is written "10"
	default:
		b.WriteString(exactNumber(r.Start))
		b.WriteByte(':')
	}
	if !math.IsInf(r.End, 1) {
		b.WriteString(exactNumber(r.End))
	}
	return b.String()
}

// describe says in words why v alerts, for status messages: "> 80", "< 10",
// "inside 10:20", "= 0".
func (r thresholdRange) describe(v float64) string {
	if !r.set {
		return ""
	}
	if r.Inside {
		lo, hi := math.IsInf(r.Start, -1), math.IsInf(r.End, 1)
		switch {
		case r.Start == r.End:
			return "= " + formatNumber(r.Start)
		case hi:
			return ">= " + formatNumber(r.Start)
		case lo:
			return "<= " + formatNumber(r.End)
		}
		return "inside " + r.text
	}
	if r.Start == r.End {
		return "!= " + formatNumber(r.Start)
	}
	if v < r.Start {
		return "< " + formatNumber(r.Start)
	}
	return "> " + formatNumber(r.End)
}

// comparison matches the compatibility form "> 75", ">=75", "< 10", "== 0", "!= 0".
var comparison = regexp.MustCompile(`^\s*(>=|<=|==|!=|=|>|<)\s*(\S+)\s*$`)

// parseComparison turns the comparison form of --comparison_warning and
// --comparison_critical ("> 75": alert when the value is greater than 75) into the
// equivalent Nagios range. An empty string is a Range that is not set.
func parseComparison(s string) (thresholdRange, error) {
	if strings.TrimSpace(s) == "" {
		return thresholdRange{}, nil
	}
	m := comparison.FindStringSubmatch(s)
	if m == nil {
		return thresholdRange{}, fmt.Errorf("comparison %q: want an operator and a number, like \"> 75\", \">= 75\", \"< 10\", \"<= 10\", \"== 0\" or \"!= 0\"", s)
	}
	n, ok := ParseNumber(m[2])
	if !ok {
		return thresholdRange{}, fmt.Errorf("comparison %q: %q is not a number", s, m[2])
	}
	r := thresholdRange{set: true, Start: math.Inf(-1), End: math.Inf(1)}
	switch m[1] {
	case ">": // alert outside ~:n
		r.End = n
	case "<": // alert outside n:
		r.Start = n
	case ">=": // alert inside n:
		r.Start, r.Inside = n, true
	case "<=": // alert inside ~:n
		r.End, r.Inside = n, true
	case "==", "=": // alert inside n:n
		r.Start, r.End, r.Inside = n, n, true
	case "!=": // alert outside n:n
		r.Start, r.End = n, n
	}
	r.text = r.format()
	return r, nil
}

// exactNumber renders a threshold exactly, in plain decimal notation.
func exactNumber(f float64) string {
	if f == 0 {
		return "0" // no "-0"
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// formatNumber renders a number for messages and perfdata: plain decimal notation (no
// exponent, as the plugin guidelines require) with 12 significant digits, so small
// values keep their precision (1e-8 is 0.00000001, not 0) and binary noise such as
// 0.30000000000000004 does not show. No trailing zeros.
func formatNumber(f float64) string {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return "U"
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e18 {
		return strconv.FormatInt(int64(f), 10)
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(f, 'e', 11, 64), 64)
	if err != nil {
		r = f
	}
	s := strconv.FormatFloat(r, 'f', -1, 64)
	if s == "-0" {
		s = "0"
	}
	return s
}
