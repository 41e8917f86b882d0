package measure

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Threshold is a pass/fail bar on a run's summary, k6-style: "p99<20ms", "tps>1000",
// "errors<0.1%". Value is in the metric's base unit: ms for latencies, transactions
// (or statements) per second for tps (qps), percent for errors.
type Threshold struct {
	Metric string  `json:"metric"`
	Op     string  `json:"op"`
	Value  float64 `json:"value"`
	Text   string  `json:"text"` // as given
	// Abort ("p99<20ms;abort"): the run is stopped as soon as the threshold is failed
	// on enough evidence (AbortNow), not only checked at its end; AbortAfter is the
	// measured time that evidence needs ("p99<20ms;abort=30s"; 0: DefaultAbortAfter).
	Abort      bool          `json:"abort,omitempty"`
	AbortAfter time.Duration `json:"abort_after_ns,omitempty"`
}

// The evidence an aborting threshold needs before it stops a run, so that the noise
// of a run's first seconds (connections warming, caches filling) stops nothing:
// DefaultAbortAfter of measured time (warm-up excluded), and for latency and error
// rate thresholds at least AbortMinTransactions ended transactions (1,000: a p99
// then stands on ten transactions above it, and one error in 1,000 is 0.1%).
const (
	defaultAbortAfter    = 10 * time.Second
	AbortMinTransactions = 1000
)

// thresholdResult is a threshold checked against a run.
type thresholdResult struct {
	Threshold string  `json:"threshold"`
	Actual    float64 `json:"actual"`
	Unit      string  `json:"unit"`
	Pass      bool    `json:"pass"`
	// Note says why a threshold failed without a figure (no transaction succeeded).
	Note string `json:"note,omitempty"`
}

// thresholdMetrics are the figures a threshold can name, with their unit and reader.
var thresholdMetrics = map[string]struct {
	unit    string
	latency bool
	of      func(s *Summary) float64
}{
	"tps":    {"tx/s", false, func(s *Summary) float64 { return s.TPS }},
	"qps":    {"stmt/s", false, func(s *Summary) float64 { return s.QPS }},
	"p50":    {"ms", true, func(s *Summary) float64 { return s.Latency.P50 }},
	"p90":    {"ms", true, func(s *Summary) float64 { return s.Latency.P90 }},
	"p95":    {"ms", true, func(s *Summary) float64 { return s.Latency.P95 }},
	"p99":    {"ms", true, func(s *Summary) float64 { return s.Latency.P99 }},
	"p999":   {"ms", true, func(s *Summary) float64 { return s.Latency.P999 }},
	"max":    {"ms", true, func(s *Summary) float64 { return s.Latency.Max }},
	"mean":   {"ms", true, func(s *Summary) float64 { return s.Latency.Mean }},
	"errors": {"%", false, func(s *Summary) float64 { return s.ErrorRate }},
}

// thresholdHelp names what ParseThreshold takes, for help texts and errors.
const thresholdHelp = "METRIC OP VALUE[;abort[=TIME]]: tps, qps, p50, p90, p95, p99, p999, max or mean (latency: 20ms, 1.5s, 500us; a plain number is ms), errors (percent: 0.1%); OP <, <=, > or >=; ;abort stops the run once it fails (after 10s measured, or TIME)"

// ParseThreshold reads "p99<20ms", "tps > 1000", "errors<=0.1%", "p99<20ms;abort",
// "p99<20ms;abort=30s".
func ParseThreshold(s string) (Threshold, error) {
	text := strings.Join(strings.Fields(s), "")
	bar, opt, hasOpt := strings.Cut(text, ";")
	t, err := parseBar(s, bar)
	if err != nil {
		return t, err
	}
	t.Text = text
	if hasOpt {
		name, val, hasVal := strings.Cut(opt, "=")
		if strings.ToLower(name) != "abort" {
			return Threshold{}, fmt.Errorf("threshold %q: unknown option %q after ';': the one option is abort (p99<20ms;abort, or ;abort=30s to wait 30 s of measured time)", s, opt)
		}
		t.Abort = true
		if hasVal {
			d, err := time.ParseDuration(val)
			if err != nil || d <= 0 {
				return Threshold{}, fmt.Errorf("threshold %q: abort=%s: give how much measured time to wait before aborting, e.g. abort=30s", s, val)
			}
			t.AbortAfter = d
		}
	}
	return t, nil
}

// parseBar reads the bar of a threshold, "p99<20ms"; s is the whole text, for errors.
func parseBar(s, text string) (Threshold, error) {
	i := strings.IndexAny(text, "<>")
	if i <= 0 {
		return Threshold{}, fmt.Errorf("threshold %q: write %s, e.g. p99<20ms", s, thresholdHelp)
	}
	t := Threshold{Metric: strings.ToLower(text[:i]), Op: text[i : i+1], Text: text}
	rest := text[i+1:]
	if strings.HasPrefix(rest, "=") {
		t.Op += "="
		rest = rest[1:]
	}
	if t.Metric == "p99.9" {
		t.Metric = "p999"
	}
	m, ok := thresholdMetrics[t.Metric]
	if !ok {
		return Threshold{}, fmt.Errorf("threshold %q: unknown metric %q; use tps, qps, p50, p90, p95, p99, p999, max, mean or errors", s, t.Metric)
	}
	num, scale := rest, 1.0
	switch {
	case m.latency:
		for _, u := range []struct {
			suffix string
			ms     float64
		}{{"ms", 1}, {"us", 1e-3}, {"µs", 1e-3}, {"s", 1000}} {
			if strings.HasSuffix(rest, u.suffix) {
				num, scale = strings.TrimSuffix(rest, u.suffix), u.ms
				break
			}
		}
	case t.Metric == "errors":
		num = strings.TrimSuffix(rest, "%")
	default:
		num = strings.TrimSuffix(rest, "/s")
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return Threshold{}, fmt.Errorf("threshold %q: %q is not a value for %s (e.g. %s)", s, rest, t.Metric, map[bool]string{true: "20ms", false: "1000"}[m.latency])
	}
	if t.Metric == "errors" && v > 100 {
		return Threshold{}, fmt.Errorf("threshold %q: an error rate is a percent from 0 to 100", s)
	}
	t.Value = v * scale
	return t, nil
}

// check checks t against s.
func (t Threshold) check(s *Summary) thresholdResult {
	m := thresholdMetrics[t.Metric]
	r := thresholdResult{Threshold: t.Text, Unit: m.unit, Actual: m.of(s)}
	if m.latency && s.Transactions == 0 {
		r.Note = "no transaction succeeded: no latency to check"
		return r
	}
	switch t.Op {
	case "<":
		r.Pass = r.Actual < t.Value
	case "<=":
		r.Pass = r.Actual <= t.Value
	case ">":
		r.Pass = r.Actual > t.Value
	case ">=":
		r.Pass = r.Actual >= t.Value
	}
	return r
}

// AbortNow reports whether an aborting threshold fails the running summary s (the
// measured intervals so far, warm-up excluded: the figures the end of the run would
// check if it ended now) on enough evidence to stop the run. A max bar fails for good
// the moment one transaction passes it, so it stops the run at once; every other
// figure can still recover, and is acted on only after AbortAfter (default
// DefaultAbortAfter) of measured time, and for latencies and the error rate after
// AbortMinTransactions ended transactions too.
func (t Threshold) AbortNow(s *Summary) (thresholdResult, bool) {
	if !t.Abort {
		return thresholdResult{}, false
	}
	r := t.check(s)
	if r.Pass {
		return r, false
	}
	if t.Metric == "max" && s.Transactions > 0 {
		return r, true
	}
	after := t.AbortAfter
	if after == 0 {
		after = defaultAbortAfter
	}
	if s.Seconds < after.Seconds() {
		return r, false
	}
	if m := thresholdMetrics[t.Metric]; (m.latency || t.Metric == "errors") && s.Transactions+s.Failed < AbortMinTransactions {
		return r, false
	}
	return r, true
}

// HasAbort reports whether any of ts aborts the run when it fails.
func HasAbort(ts []Threshold) bool {
	for _, t := range ts {
		if t.Abort {
			return true
		}
	}
	return false
}

// CheckThresholds checks every threshold (nil for none).
func CheckThresholds(ts []Threshold, s *Summary) []thresholdResult {
	var out []thresholdResult
	for _, t := range ts {
		out = append(out, t.check(s))
	}
	return out
}

// FailedThresholds are the results that did not pass.
func FailedThresholds(rs []thresholdResult) []thresholdResult {
	var out []thresholdResult
	for _, r := range rs {
		if !r.Pass {
			out = append(out, r)
		}
	}
	return out
}

// String is "p99<20ms: 12.3 ms, passed".
func (r thresholdResult) String() string {
	verdict := "passed"
	if !r.Pass {
		verdict = "FAILED"
	}
	if r.Note != "" {
		return fmt.Sprintf("%s: %s, %s", r.Threshold, r.Note, verdict)
	}
	return fmt.Sprintf("%s: %s %s, %s", r.Threshold, strconv.FormatFloat(r.Actual, 'f', -1, 64), r.Unit, verdict)
}
