package check

import (
	"fmt"
	"math"
	"strings"
)

// Status is a Nagios plugin status; its value is the plugin's exit code.
type Status int

const (
	OK       Status = 0
	Warning  Status = 1
	Critical Status = 2
	Unknown  Status = 3
)

func (s Status) String() string {
	switch s {
	case OK:
		return "OK"
	case Warning:
		return "WARNING"
	case Critical:
		return "CRITICAL"
	}
	return "UNKNOWN"
}

// ParseStatus reads ok, warning, critical or unknown (any case).
func ParseStatus(s string) (Status, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "ok", "0":
		return OK, nil
	case "warning", "warn", "1":
		return Warning, nil
	case "critical", "crit", "2":
		return Critical, nil
	case "unknown", "3":
		return Unknown, nil
	}
	return Unknown, fmt.Errorf("status %q: use ok, warning, critical or unknown", s)
}

// worse orders statuses for combining: CRITICAL > WARNING > UNKNOWN > OK, as Nagios
// plugins that combine several checks do.
func worse(a, b Status) Status {
	rank := func(s Status) int {
		switch s {
		case Critical:
			return 3
		case Warning:
			return 2
		case Unknown:
			return 1
		}
		return 0
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}

// Perf is one performance data item.
type Perf struct {
	Label      string
	Value      float64
	UOM        string
	Warn, Crit thresholdRange
	Min, Max   *float64
}

// uoms are the units of measurement the plugin guidelines allow.
var uoms = map[string]bool{"": true, "s": true, "ms": true, "us": true, "%": true, "B": true, "KB": true, "MB": true, "TB": true, "c": true}

// checkUOM validates a unit of measurement for perfdata.
func checkUOM(u string) error {
	if !uoms[u] {
		return fmt.Errorf("unit %q: perfdata units are s, ms, us, %%, B, KB, MB, TB or c (a counter), or none", u)
	}
	return nil
}

// String renders 'label'=value[UOM];warn;crit;min;max with trailing empty fields
// dropped, or "" when the value is not a finite number.
func (p Perf) String() string {
	if math.IsNaN(p.Value) || math.IsInf(p.Value, 0) {
		return ""
	}
	label := strings.NewReplacer("'", "''", "=", "_", "\n", " ", "|", "/").Replace(p.Label)
	fields := []string{formatNumber(p.Value) + p.UOM, p.Warn.String(), p.Crit.String(), "", ""}
	if p.Min != nil {
		fields[3] = formatNumber(*p.Min)
	}
	if p.Max != nil {
		fields[4] = formatNumber(*p.Max)
	}
	n := len(fields)
	for n > 1 && fields[n-1] == "" {
		n--
	}
	return "'" + label + "'=" + strings.Join(fields[:n], ";")
}

// Result is the outcome of one check.
type Result struct {
	Name    string
	Status  Status
	Message string
	Perf    []Perf
}

// cleanMessage keeps a message to one line without the perfdata separator.
func cleanMessage(s string) string { return PluginText(s) }

// PluginText makes text safe for the text part of plugin output: one line, and no
// '|', which Nagios reads as the start of perfdata (it becomes '/').
func PluginText(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "|", "/")
}

// Line is the plugin output line: NAME STATUS - message | perfdata.
func (r Result) Line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s - %s", PluginText(r.Name), r.Status, cleanMessage(r.Message))
	if pd := perfString(r.Perf); pd != "" {
		b.WriteString(" | " + pd)
	}
	return b.String()
}

func perfString(ps []Perf) string {
	var parts []string
	for _, p := range ps {
		if s := p.String(); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, " ")
}

// Combine renders the results of several checks as one plugin output: the worst
// status, a summary line with all perfdata, then one line per check (long output).
func Combine(name string, results []Result) (Status, string) {
	if len(results) == 1 {
		return results[0].Status, results[0].Line() + "\n"
	}
	status := OK
	counts := map[Status]int{}
	var perf []Perf
	for _, r := range results {
		status = worse(status, r.Status)
		counts[r.Status]++
		perf = append(perf, r.Perf...)
	}
	var parts, bad []string
	for _, s := range []Status{Critical, Warning, Unknown, OK} {
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], strings.ToLower(s.String())))
		}
	}
	for _, r := range results {
		if r.Status != OK {
			bad = append(bad, r.Name+" "+r.Status.String())
		}
	}
	msg := strings.Join(parts, ", ")
	if len(bad) > 0 {
		msg += ": " + strings.Join(bad, ", ")
	}
	var b strings.Builder
	b.WriteString(Result{Name: name, Status: status, Message: msg, Perf: perf}.Line())
	b.WriteByte('\n')
	for _, r := range results {
		fmt.Fprintf(&b, "%s %s - %s\n", PluginText(r.Name), r.Status, cleanMessage(r.Message))
	}
	return status, b.String()
}
