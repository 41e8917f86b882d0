package report

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/fathom-lab/fathom/internal/db"
	"github.com/fathom-lab/fathom/internal/errkind"
)

func TestFormatRegistry(t *testing.T) {
	// Every format renders something, under a name and aliases of its own.
	seen := map[string]bool{}
	for _, f := range formatList() {
		if len(f.Render) == 0 || f.MediaType == "" || !strings.HasPrefix(f.Ext, ".") {
			t.Errorf("format %q: renders %d kinds, media type %q, extension %q", f.Name, len(f.Render), f.MediaType, f.Ext)
		}
		for _, n := range append([]string{f.Name}, f.Aliases...) {
			if seen[n] {
				t.Errorf("%q twice", n)
			}
			seen[n] = true
		}
	}
	for _, want := range []string{"text", "markdown", "md", "csv", "json", "html", "junit", "openmetrics"} {
		if !seen[want] {
			t.Errorf("no format %q", want)
		}
	}
	// A name registered twice is a bug found at start.
	func() {
		defer func() {
			if r := recover(); r == nil || !strings.Contains(r.(string), `"csv" registered twice`) {
				t.Errorf("a duplicate format: recovered %v, want a panic naming it", r)
			}
		}()
		registry(csvFormat, Format{Name: "csv", Render: csvFormat.Render})
	}()

	for _, c := range []struct {
		name  string
		kinds []Kind
		kind  Kind   // chosen
		err   string // or this error
	}{
		{"md", []Kind{KindComparison}, KindComparison, ""},
		{"junit", []Kind{KindIntervals, KindRun}, KindRun, ""},
		{"csv", []Kind{KindIntervals, KindRun}, KindIntervals, ""},
		{"json", []Kind{KindIntervals, KindRun}, KindIntervals, ""},
		{"xml", []Kind{KindComparison}, "", `--format "xml": fathom compare writes text, markdown, csv, json, junit or openmetrics`},
		{"junit", []Kind{KindRuns}, "", "--format junit: fathom compare renders a run list, which junit does not: use text or json"},
		{"html", []Kind{KindExperiment}, "", "renders an experiment, which html does not: use text or json"},
	} {
		ch, err := Choose("fathom compare", c.name, c.kinds...)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || errkind.KindOf(err) != errkind.Usage {
				t.Errorf("Choose(%s, %v): %v, want the usage error %q", c.name, c.kinds, err, c.err)
			}
			continue
		}
		if err != nil || ch.Kind != c.kind {
			t.Errorf("Choose(%s, %v): %v %v, want kind %s", c.name, c.kinds, ch.Kind, err, c.kind)
		}
	}
	if MediaTypeOf("run-1.om.txt") != openMetricsFormat.MediaType || MediaTypeOf("index.html") != htmlFormat.MediaType || MediaTypeOf("cells.csv") != csvFormat.MediaType {
		t.Error("media types by extension")
	}
	// A renderer given the wrong model says so rather than panicking.
	if err := renderFormat(context.Background(), io.Discard, "junit", KindRun, &comparison{}); err == nil {
		t.Error("a comparison rendered as a run")
	}
}

// compareFixture is TestCompareGolden's two sides: six runs each, B slower.
func compareFixture(t *testing.T) *comparison {
	t.Helper()
	var runs []fixtureRun
	for i := 0; i < 12; i++ {
		v, tps, lat := "off", 300.0, 1.0
		settings := map[string]string{}
		if i%2 == 1 {
			v, tps, lat = "on", 240, 1.4
			settings["synchronous_commit"] = "off"
		}
		runs = append(runs, fixtureRun{clients: 8, intervals: 6, warmup: 1, tps: tps + float64(i), latencyMs: lat, seed: uint64(i),
			settings: settings, labels: map[string]string{"variant": v}, errEvery: 100 * (i%3 + 1)})
	}
	st, ids := newFixtureStore(t, runs)
	data := loadFixture(t, st, ids)
	var a, b []*RunData
	for i, d := range data {
		if i%2 == 0 {
			a = append(a, d)
		} else {
			b = append(b, d)
		}
	}
	return Compare("", Side{Name: "label:variant=off", Runs: a}, Side{Name: "label:variant=on", Runs: b})
}

// runViews are two stored runs as show and export see them, each with one failed
// transaction in 100: the first within its --max-error-rate of 2%, the second
// failed by its 0.5%, as run.Execute leaves them.
func runViews(t *testing.T) []*runView {
	t.Helper()
	st, ids := newFixtureStore(t, []fixtureRun{
		{clients: 4, types: []string{"read", "write"}, intervals: 8, warmup: 2, tps: 200, latencyMs: 2, errEvery: 50, failEvery: 100, seed: 3, labels: map[string]string{"ci": "main"}},
		{clients: 4, intervals: 8, warmup: 2, tps: 200, latencyMs: 2, errEvery: 50, failEvery: 100, seed: 4},
	})
	var vs []*runView
	for i, id := range ids {
		v, err := LoadRunView(context.Background(), st, db.Figures(), strconv.FormatInt(id, 10))
		if err != nil {
			t.Fatal(err)
		}
		v.Store = nil
		limit := 2.0
		if i == 1 {
			limit = 0.5
			v.Run.Status, v.Run.Reason = "failed", fmt.Sprintf("error rate %v%% is above the maximum of 0.5%%\nfirst error: 40001", v.Summary.ErrorRate)
		}
		v.Summary.MaxErrorRate = &limit
		vs = append(vs, v)
	}
	if s := vs[1].Summary; s.Failed == 0 || s.ErrorRate <= 0.5 || s.ErrorRate >= 2 {
		t.Fatalf("fixture: %d failed, error rate %v%%: want between 0.5%% and 2%%", s.Failed, s.ErrorRate)
	}
	return vs
}

func render1(t *testing.T, format string, k Kind, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := renderFormat(context.Background(), &b, format, k, v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// junitDoc is the JUnit XML as a CI system reads it.
type junitDoc struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Skipped  int    `xml:"skipped,attr"`
		Cases    []struct {
			Name    string `xml:"name,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
			} `xml:"failure"`
			Skipped *struct{} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// validateJUnit checks doc against testdata/junit.xsd with xmllint, and decodes it.
func validateJUnit(t *testing.T, doc []byte) junitDoc {
	t.Helper()
	var d junitDoc
	if err := xml.Unmarshal(doc, &d); err != nil {
		t.Fatalf("not XML: %v\n%s", err, doc)
	}
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		if os.Getenv("FATHOM_TEST_REQUIRE") == "1" {
			t.Fatal("xmllint is not installed but FATHOM_TEST_REQUIRE=1: apt-get install libxml2-utils, or run .ci/run")
		}
		t.Skip("xmllint not installed (apt-get install libxml2-utils): the JUnit output is not validated against its schema")
	}
	f := filepath.Join(t.TempDir(), "junit.xml")
	if err := os.WriteFile(f, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(xmllint, "--noout", "--schema", filepath.Join("testdata", "junit.xsd"), f).CombinedOutput()
	if err != nil {
		t.Fatalf("the JUnit XML does not validate against testdata/junit.xsd: %v\n%s", err, out)
	}
	return d
}

func TestJUnitGolden(t *testing.T) {
	vs := runViews(t)
	ok, failed := render1(t, "junit", KindRun, vs[0]), render1(t, "junit", KindRun, vs[1])
	golden(t, "run.junit.xml", ok)
	golden(t, "run-failed.junit.xml", failed)
	c := compareFixture(t)
	cmp := render1(t, "junit", KindComparison, c)
	golden(t, "compare.junit.xml", cmp)

	d := validateJUnit(t, ok)
	if d.Tests != 2 || d.Failures != 0 || len(d.Suites) != 1 || d.Suites[0].Cases[1].Name != "error rate at most 2%" {
		t.Errorf("a complete run within its limit: %+v", d)
	}
	d = validateJUnit(t, failed)
	if d.Failures != 2 || d.Suites[0].Failures != 2 {
		t.Fatalf("a run failed by --max-error-rate: %d failures, want completed and the error rate", d.Failures)
	}
	s := vs[1].Summary
	if m, want := d.Suites[0].Cases[1].Failure.Message, fmt.Sprintf("%v%% of transactions failed (%d of %d), more than the maximum 0.5%%", s.ErrorRate, s.Failed, s.Failed+s.Transactions); m != want {
		t.Errorf("error rate failure %q, want %q", m, want)
	}
	if m := d.Suites[0].Cases[0].Failure.Message; !strings.HasPrefix(m, "the run is failed: error rate ") || strings.Contains(m, "\n") {
		t.Errorf("status failure %q: want the reason's first line", m)
	}

	// The comparison: each run a suite, then one case per metric; B is slower, so
	// throughput and the latencies fail as significant regressions.
	d = validateJUnit(t, cmp)
	if len(d.Suites) != 13 {
		t.Fatalf("%d suites, want 12 runs and the comparison", len(d.Suites))
	}
	cs := d.Suites[12]
	fails := map[string]string{}
	for _, k := range cs.Cases {
		if k.Failure != nil {
			fails[k.Name] = k.Failure.Message
		}
	}
	for i, m := range c.Metrics {
		_, failedCase := fails[metricTitles[m.Metric]]
		if failedCase != regression(m) {
			t.Errorf("%s: failed %v, regression %v", m.Metric, failedCase, regression(m))
		}
		if i == 0 && !failedCase {
			t.Errorf("throughput fell significantly from A to B: want a failing case, got %+v", cs.Cases[0])
		}
	}
	if cs.Failures != len(fails) || d.Failures != len(fails) {
		t.Errorf("counted %d failures, %d in the file", cs.Failures, len(fails))
	}
	if m := fails["throughput"]; !strings.Contains(m, "significant") || !strings.Contains(m, "n=6+6") {
		t.Errorf("throughput failure %q: want the figures and the verdict", m)
	}

	// One run a side: nothing can be told, so the cases are skipped, not passed.
	one := Compare("", Side{Name: "run 1", Runs: c.A.Runs[:1]}, Side{Name: "run 2", Runs: c.B.Runs[:1]})
	d = validateJUnit(t, render1(t, "junit", KindComparison, one))
	if s := d.Suites[2]; s.Skipped != len(one.Metrics) || s.Failures != 0 {
		t.Errorf("1 vs 1: %d skipped, %d failed; want every metric skipped", s.Skipped, s.Failures)
	}
}

// parseOpenMetrics reads an exposition with prometheus/common's OpenMetrics 1.0
// parser (the specification's ABNF grammar), failing on anything it rejects.
func parseOpenMetrics(t *testing.T, doc []byte) map[string]*dto.MetricFamily {
	t.Helper()
	dec := expfmt.NewDecoder(bytes.NewReader(doc), expfmt.NewFormat(expfmt.TypeOpenMetrics))
	fams := map[string]*dto.MetricFamily{}
	for {
		var f dto.MetricFamily
		err := dec.Decode(&f)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not OpenMetrics: %v\n%s", err, doc)
		}
		fams[f.GetName()] = &f
	}
	if !bytes.HasSuffix(doc, []byte("# EOF\n")) {
		t.Error("no # EOF line")
	}
	return fams
}

// familyValue finds the value of the series of family name with the given labels.
func familyValue(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, int64) {
	t.Helper()
	f := fams[name]
	if f == nil {
		t.Fatalf("no family %s", name)
	}
next:
	for _, m := range f.Metric {
		got := map[string]string{}
		for _, l := range m.Label {
			got[l.GetName()] = l.GetValue()
		}
		for k, v := range labels {
			if got[k] != v {
				continue next
			}
		}
		if m.Gauge != nil {
			return m.Gauge.GetValue(), m.GetTimestampMs()
		}
		return m.Counter.GetValue(), m.GetTimestampMs()
	}
	t.Fatalf("%s has no series %v", name, labels)
	return 0, 0
}

func TestOpenMetricsGolden(t *testing.T) {
	vs := runViews(t)
	run := render1(t, "openmetrics", KindRun, vs[0])
	golden(t, "run.om.txt", run)
	fams := parseOpenMetrics(t, run)
	v := vs[0]
	s := v.Summary
	id := map[string]string{"run_id": v.Run.UUID, "txn": "all", "label_ci": "main"}
	p99, ts := familyValue(t, fams, "fathom_run_latency_seconds", map[string]string{"run_id": v.Run.UUID, "txn": "all", "quantile": "0.99"})
	if p99 != s.Latency.P99/1e3 || ts != v.Run.EndedAt.UnixMilli() {
		t.Errorf("p99 %v s at %d, want %v s at the run's end %d", p99, ts, s.Latency.P99/1e3, v.Run.EndedAt.UnixMilli())
	}
	if got, _ := familyValue(t, fams, "fathom_run_measured_transactions_total", id); got != float64(s.Transactions) {
		t.Errorf("transactions %v, want %d", got, s.Transactions)
	}
	if got, _ := familyValue(t, fams, "fathom_run_measured_tps", map[string]string{"txn": "write"}); got != s.ByTxn["write"].TPS {
		t.Errorf("write tps %v, want %v", got, s.ByTxn["write"].TPS)
	}
	if got, _ := familyValue(t, fams, "fathom_run_max_error_ratio", nil); got != 0.02 {
		t.Errorf("max error ratio %v", got)
	}
	if fams["fathom_run_measured_transactions_total"].GetType() != dto.MetricType_COUNTER {
		t.Error("transactions are a counter")
	}

	c := compareFixture(t)
	cmp := render1(t, "openmetrics", KindComparison, c)
	golden(t, "compare.om.txt", cmp)
	fams = parseOpenMetrics(t, cmp)
	if n := len(fams["fathom_run_info"].Metric); n != 12 {
		t.Errorf("%d runs, want 12", n)
	}
	for _, m := range c.Metrics {
		reg, _ := familyValue(t, fams, "fathom_compare_regression", map[string]string{"metric": m.Metric})
		if reg != b2f(regression(m)) {
			t.Errorf("%s: regression %v", m.Metric, reg)
		}
		if p, _ := familyValue(t, fams, "fathom_compare_p_value", map[string]string{"metric": m.Metric}); math.Abs(p-m.P) > 1e-12 {
			t.Errorf("%s: p %v, want %v", m.Metric, p, m.P)
		}
	}
	med, _ := familyValue(t, fams, "fathom_compare_tps", map[string]string{"side": "b", "stat": "median"})
	if med != c.Metrics[0].B.Median {
		t.Errorf("B's median tps %v, want %v", med, c.Metrics[0].B.Median)
	}
	lo, _ := familyValue(t, fams, "fathom_compare_latency_seconds", map[string]string{"metric": "p99", "side": "a", "stat": "ci_lo"})
	if want := c.Metrics[3].A.Lo / 1e3; c.Metrics[3].Metric != "p99" || math.Abs(lo-want) > 1e-12 {
		t.Errorf("A's p99 CI low %v, want %v", lo, want)
	}
}
