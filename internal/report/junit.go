package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/fathom-lab/fathom/internal/analyze"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/store"
)

// junitFormat is JUnit XML for CI (Jenkins, GitLab, GitHub test reporters): each run
// a test suite whose test cases are its thresholds — it completed; its error rate
// stayed within --max-error-rate when it had one — and, for a comparison, a suite
// whose test cases are its metrics: a significant change for the worse fails, one
// the sample sizes cannot decide is skipped.
var junitFormat = Format{
	Name: "junit", MediaType: "application/xml", Ext: ".xml",
	Render: map[Kind]Renderer{
		KindRun: plain(func(w io.Writer, v *runView) error {
			return writeJUnit(w, []junitSuite{runSuite(v.Run, v.Summary, elapsedOf(v.Intervals))})
		}),
		KindComparison: plain(func(w io.Writer, c *comparison) error {
			var suites []junitSuite
			for _, side := range []*Side{&c.A, &c.B} {
				for _, d := range side.Runs {
					suites = append(suites, runSuite(d.Run, &d.Summary, rowsElapsed(d.Rows)))
				}
			}
			return writeJUnit(w, append(suites, compareSuite(c)))
		}),
	},
}

// The elements and attributes CI systems read (Jenkins' JUnit schema, GitLab's and
// GitHub's test reporters): testdata/junit.xsd is the subset fathom writes.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Hostname   string          `xml:"hostname,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
	seconds    float64
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string       `xml:"name,attr"`
	Classname string       `xml:"classname,attr"`
	Time      string       `xml:"time,attr,omitempty"`
	Failure   *junitResult `xml:"failure,omitempty"`
	Skipped   *junitResult `xml:"skipped,omitempty"`
	SystemOut string       `xml:"system-out,omitempty"`
}

type junitResult struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

func junitTime(secs float64) string { return strconv.FormatFloat(max(secs, 0), 'f', 3, 64) }

func writeJUnit(w io.Writer, suites []junitSuite) error {
	all := junitSuites{Name: "fathom", Suites: suites}
	var secs float64
	for i := range all.Suites {
		s := &all.Suites[i]
		s.Tests = len(s.Cases)
		for _, c := range s.Cases {
			switch {
			case c.Failure != nil:
				s.Failures++
			case c.Skipped != nil:
				s.Skipped++
			}
		}
		all.Tests += s.Tests
		all.Failures += s.Failures
		secs += s.seconds
	}
	all.Time = junitTime(secs)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(all); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// elapsedOf is from a run's start to the end of its last finished interval, in seconds.
func elapsedOf(ivs []*measure.Interval) float64 {
	if len(ivs) == 0 {
		return 0
	}
	return ivs[len(ivs)-1].End.Seconds()
}

func rowsElapsed(rows []intervalTxnRow) float64 {
	if len(rows) == 0 {
		return 0
	}
	return rows[len(rows)-1].EndS
}

// runTitle names a run as report titles do.
func runTitle(r *store.Run) string {
	return fmt.Sprintf("run %d: %s, %d clients, %s", r.ID, r.Workload, r.Clients, r.TargetKind)
}

// runSuite is a run as a test suite: that it completed, and that its error rate
// stayed within the limit it was given (--max-error-rate), with the run's figures in
// the first case's output.
func runSuite(r *store.Run, s *measure.Summary, elapsed float64) junitSuite {
	class := "fathom.run." + strconv.FormatInt(r.ID, 10)
	su := junitSuite{Name: runTitle(r), Time: junitTime(elapsed), seconds: elapsed, Hostname: r.Host.Hostname}
	if !r.StartedAt.IsZero() {
		su.Timestamp = r.StartedAt.UTC().Format("2006-01-02T15:04:05")
	}
	su.Properties = []junitProperty{{"run_id", r.UUID}, {"workload", r.Workload}, {"target_kind", r.TargetKind},
		{"target", r.Target}, {"server_version", r.ServerVersion}, {"clients", strconv.Itoa(r.Clients)}, {"tool_version", r.ToolVersion}}
	for _, k := range slices.Sorted(maps.Keys(r.Labels)) {
		su.Properties = append(su.Properties, junitProperty{"label." + k, r.Labels[k]})
	}
	done := junitCase{Name: "completed", Classname: class, Time: su.Time, SystemOut: runFiguresLine(s)}
	switch st := runStatus(r); {
	case r.Status == "complete":
	case r.Status == "running" && !r.Gone:
		done.Skipped = &junitResult{Message: "the run is still running"}
	default:
		msg := "the run is " + st
		if r.Reason != "" && !r.Gone {
			msg += ": " + firstLine(r.Reason)
		}
		done.Failure = &junitResult{Message: msg, Type: r.Status, Text: r.Reason}
	}
	su.Cases = append(su.Cases, done)
	if s.MaxErrorRate != nil {
		limit := *s.MaxErrorRate
		c := junitCase{Name: "error rate at most " + fmtPct(limit) + "%", Classname: class}
		ended := s.Transactions + s.Failed
		// The test run.Execute applies: more than limit percent of the transactions
		// that ended failed.
		if float64(s.Failed)*100 > limit*float64(ended) {
			c.Failure = &junitResult{Type: "max-error-rate",
				Message: fmt.Sprintf("%s%% of transactions failed (%d of %d), more than the maximum %s%%", fmtPct(s.ErrorRate), s.Failed, ended, fmtPct(limit))}
		} else {
			c.SystemOut = fmt.Sprintf("%s%% of transactions failed (%d of %d); maximum %s%%", fmtPct(s.ErrorRate), s.Failed, ended, fmtPct(limit))
		}
		su.Cases = append(su.Cases, c)
	}
	for _, t := range s.Thresholds {
		c := junitCase{Name: "threshold " + t.Threshold, Classname: class, SystemOut: t.String()}
		if !t.Pass {
			c.Failure = &junitResult{Type: "threshold", Message: t.String()}
		}
		su.Cases = append(su.Cases, c)
	}
	return su
}

// runFiguresLine is a run's summary in one line.
func runFiguresLine(s *measure.Summary) string {
	if s == nil {
		return ""
	}
	return fmt.Sprintf("%d transactions in %s s measured: %s tx/s, latency p50 %s ms, p95 %s ms, p99 %s ms, max %s ms; %d failed, %d errors",
		s.Transactions, num(s.Seconds), num(s.TPS), num(s.Latency.P50), num(s.Latency.P95), num(s.Latency.P99), num(s.Latency.Max), s.Failed, s.Errors)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// regression reports whether a significant change is for the worse: less throughput,
// more latency, errors, late starts or dropped transactions.
func regression(m analyze.Comparison) bool {
	if !m.Significant || m.A.N == 0 || m.B.N == 0 {
		return false
	}
	if metricKind(m.Metric) == kindCount {
		return m.B.Median < m.A.Median
	}
	return m.B.Median > m.A.Median
}

// compareSuite is a comparison as a test suite: one case per metric, failing on a
// significant regression, skipped where the data cannot tell, with what differs
// between the sides as properties.
func compareSuite(c *comparison) junitSuite {
	su := junitSuite{Name: "compare " + sideLabel(&c.A) + " with " + sideLabel(&c.B), Time: junitTime(0)}
	su.Properties = []junitProperty{{"a", sideLabel(&c.A)}, {"b", sideLabel(&c.B)},
		{"alpha", strconv.FormatFloat(c.Alpha, 'f', -1, 64)}, {"confidence", strconv.FormatFloat(c.Confidence, 'f', -1, 64)}}
	if len(c.A.Runs) > 0 && c.A.Runs[0].Judge != "" {
		su.Properties = append(su.Properties, junitProperty{"judge", c.A.Runs[0].Judge})
	}
	for _, d := range c.Differences {
		su.Properties = append(su.Properties, junitProperty{"differs." + d.Key, sideValues(d.A) + " → " + sideValues(d.B)})
	}
	for _, m := range c.Metrics {
		_, a, b := c.metricCells(m)
		figures := fmt.Sprintf("%s: A %s, B %s, change %s, %s (%s, n=%s)", metricTitles[m.Metric], a, b, changeCell(m), judgement(m), pValue(m.P), nCell(m))
		tc := junitCase{Name: metricTitles[m.Metric], Classname: "fathom.compare"}
		switch j := judgement(m); {
		case regression(m):
			tc.Failure = &junitResult{Type: "regression", Message: figures}
		case j != "significant" && j != "~":
			tc.Skipped = &junitResult{Message: figures}
		default:
			tc.SystemOut = figures
		}
		su.Cases = append(su.Cases, tc)
	}
	return su
}
