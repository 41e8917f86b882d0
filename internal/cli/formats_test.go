package cli

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/fathom-lab/fathom/internal/serve"
	"github.com/fathom-lab/fathom/internal/store/stores"
)

type junitFile struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Suites   []struct {
		Name    string `xml:"name,attr"`
		Skipped int    `xml:"skipped,attr"`
		Cases   []struct {
			Name    string `xml:"name,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
			} `xml:"failure"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// junitValid decodes a JUnit file and validates it against the schema the report
// package's tests use (xmllint; CI installs it).
func junitValid(t *testing.T, doc string) junitFile {
	t.Helper()
	var j junitFile
	if err := xml.Unmarshal([]byte(doc), &j); err != nil {
		t.Fatalf("not XML: %v\n%s", err, doc)
	}
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		if os.Getenv("FATHOM_TEST_REQUIRE") == "1" {
			t.Fatal("xmllint is not installed but FATHOM_TEST_REQUIRE=1: apt-get install libxml2-utils, or run .ci/run")
		}
		t.Log("xmllint not installed (apt-get install libxml2-utils): JUnit output not validated against its schema")
		return j
	}
	f := filepath.Join(t.TempDir(), "junit.xml")
	if err := os.WriteFile(f, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(xmllint, "--noout", "--schema", filepath.Join("..", "report", "testdata", "junit.xsd"), f).CombinedOutput(); err != nil {
		t.Fatalf("JUnit output does not validate: %v\n%s", err, out)
	}
	return j
}

func openMetrics(t *testing.T, doc string) map[string]*dto.MetricFamily {
	t.Helper()
	dec := expfmt.NewDecoder(strings.NewReader(doc), expfmt.NewFormat(expfmt.TypeOpenMetrics))
	fams := map[string]*dto.MetricFamily{}
	for {
		var f dto.MetricFamily
		err := dec.Decode(&f)
		if errors.Is(err, io.EOF) {
			return fams
		}
		if err != nil {
			t.Fatalf("not OpenMetrics: %v\n%s", err, doc)
		}
		fams[f.GetName()] = &f
	}
}

// Real runs on SQLite, one within its --max-error-rate and one over it, exported
// for CI: JUnit with the threshold as a failing test case, OpenMetrics with the
// run's figures; compare renders both sides' runs; serve's downloads give the same
// bytes; formats a command cannot render are one line with exit 2.
func TestFormatsForCI(t *testing.T) {
	env := storeEnv(t)
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "t.db")
	wl, _ := sometimes(t, "sqlite")
	args := []string{"run", "--target", dsn, "--workload", wl, "-c", "2", "-t", "200", "--seed", "7", "--json", "-q"}
	r := fathom(t, env, nil, append(args, "--max-error-rate", "90")...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	ok := summary(t, r)
	if ok.Failed == 0 {
		t.Fatalf("the workload should fail some transactions: %+v", ok)
	}
	low := fmt.Sprintf("%g", ok.ErrorRate/2)
	r = fathom(t, env, nil, append(args, "--max-error-rate", low)...)
	if r.code != exitThreshold {
		t.Fatalf("--max-error-rate %s: exit %d, want %d\n%s", low, r.code, exitThreshold, r.stderr)
	}
	bad := summary(t, r)

	get := func(args ...string) string {
		t.Helper()
		r := fathom(t, env, nil, args...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
		}
		return r.stdout
	}
	j := junitValid(t, get("export", "1", "-f", "junit"))
	if j.Tests != 2 || j.Failures != 0 || j.Suites[0].Cases[1].Name != "error rate at most 90%" {
		t.Errorf("run 1 within its limit: %+v", j)
	}
	j = junitValid(t, get("export", "2", "-f", "junit"))
	if j.Failures != 2 {
		t.Fatalf("run 2 over its limit: %d failures, want completed and the error rate", j.Failures)
	}
	want := fmt.Sprintf("%g%% of transactions failed (%d of %d), more than the maximum %s%%", bad.ErrorRate, bad.Failed, bad.Failed+bad.Transactions, low)
	if m := j.Suites[0].Cases[1].Failure.Message; m != want {
		t.Errorf("error rate failure %q, want %q", m, want)
	}
	if show := get("show", "2", "-f", "junit"); show != get("export", "2", "-f", "junit") {
		t.Error("show and export render a run's JUnit differently")
	}

	om := get("export", "2", "-f", "openmetrics")
	fams := openMetrics(t, om)
	st := fams["fathom_run_status"].Metric[0]
	if st.Label[len(st.Label)-1].GetValue() != "failed" {
		t.Errorf("status series %v", st)
	}
	if got := fams["fathom_run_error_ratio"].Metric[0].Gauge.GetValue(); got != bad.ErrorRate/100 {
		t.Errorf("error ratio %v, want %v", got, bad.ErrorRate/100)
	}
	if got := fams["fathom_run_measured_transactions_total"].Metric[0].Counter.GetValue(); got != float64(bad.Transactions) {
		t.Errorf("transactions %v, want %d", got, bad.Transactions)
	}

	cmp := get("compare", "1", "2", "-f", "junit")
	j = junitValid(t, cmp)
	if len(j.Suites) != 3 || j.Suites[2].Skipped != len(j.Suites[2].Cases) {
		t.Errorf("1 vs 1: want both runs' suites and a comparison whose cases are all skipped: %+v", j.Suites)
	}

	// --json is -f json; unknown formats and formats for other models are one line.
	if get("show", "1", "--json") != get("show", "1", "-f", "json") || get("runs", "--json") != get("runs", "-f", "json") {
		t.Error("--json and -f json differ")
	}
	oneLine(t, fathom(t, env, nil, "runs", "-f", "junit"), exitUsage, "--format junit: fathom runs renders a run list, which junit does not: use text or json")
	oneLine(t, fathom(t, env, nil, "compare", "1", "2", "-f", "html"), exitUsage, "use text, markdown, csv, json, junit or openmetrics")
	oneLine(t, fathom(t, env, nil, "export", "1", "--per-command", "-f", "junit"), exitUsage, "use csv or json")
	oneLine(t, fathom(t, env, nil, "show", "1", "--json", "-f", "csv"), exitUsage, "--json and --format csv")

	// serve's downloads come from the same registry: the same bytes.
	store, err := stores.Open(env["FATHOM_STORE"])
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	srv, err := serve.New(serve.Options{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer func() { srv.Close(); hs.Close() }()
	for _, c := range []struct {
		path, ctype, file, body string
	}{
		{"/api/runs/2/export?format=openmetrics", "application/openmetrics-text; version=1.0.0; charset=utf-8", "run-2.om.txt", om},
		{"/api/runs/1/export", "text/csv; charset=utf-8", "run-1-intervals.csv", get("export", "1")},
		{"/api/compare?a=1&b=2&format=junit", "application/xml", "compare.xml", cmp},
	} {
		resp, err := hs.Client().Get(hs.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != c.ctype ||
			resp.Header.Get("Content-Disposition") != fmt.Sprintf("attachment; filename=%q", c.file) || !bytes.Equal(body, []byte(c.body)) {
			t.Errorf("GET %s: %d %q %q, body equal %v", c.path, resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Content-Disposition"), bytes.Equal(body, []byte(c.body)))
		}
	}
	resp, err := hs.Client().Get(hs.URL + "/api/runs/1/export?format=markdown")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "use text, csv, json, junit or openmetrics") {
		t.Errorf("a format export cannot render: %d %s", resp.StatusCode, body)
	}
}
