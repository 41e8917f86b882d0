package promexp

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var (
	metricName = regexp.MustCompile(`\bfathom_[a-z0-9_]+\b`)
	matcher    = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)\s*"`)
	grouping   = regexp.MustCompile(`\b(?:by|without)\s*\(([^)]*)\)`)
)

// labelsUsed are the label names an expression matches or groups by.
func labelsUsed(expr string) []string {
	var out []string
	for _, m := range matcher.FindAllStringSubmatch(expr, -1) {
		out = append(out, m[1])
	}
	for _, m := range grouping.FindAllStringSubmatch(expr, -1) {
		for _, l := range strings.Split(m[1], ",") {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out
}

// dashboard is what the tests read of deploy/grafana/fathom.json.
type dashboard struct {
	Title, UID string
	Panels     []struct {
		ID      int
		Title   string
		Targets []struct{ Expr string }
	}
	Templating struct {
		List []struct {
			Name, Type string
			Query      json.RawMessage
		}
	}
}

func readDashboard(t *testing.T) dashboard {
	t.Helper()
	b, err := os.ReadFile("../../deploy/grafana/fathom.json")
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("deploy/grafana/fathom.json: %v", err)
	}
	return d
}

// The Grafana dashboard in the repository is valid JSON and every query in it names
// metrics and labels this package exports.
func TestDashboard(t *testing.T) {
	d := readDashboard(t)
	if d.Title == "" || d.UID == "" || len(d.Panels) == 0 {
		t.Fatalf("dashboard without title, uid or panels")
	}
	// fathom's labels, the histogram's le, and the labels Prometheus adds to every
	// scraped series (which the queries drop to count a run scraped twice once).
	labels := append(slices.Clone(runLabelNames), "txn", "window", "quantile", "class", "le", "job", "instance")
	check := func(where, expr string) {
		names := metricName.FindAllString(expr, -1)
		if len(names) == 0 {
			t.Errorf("%s: query %q names no fathom metric", where, expr)
		}
		for _, n := range names {
			if h := strings.TrimSuffix(n, "_bucket"); h != n && slices.Contains(declared, h) {
				continue // a histogram's bucket series
			}
			if !slices.Contains(declared, n) {
				t.Errorf("%s: query %q names %s, which fathom does not export", where, expr, n)
			}
		}
		for _, l := range labelsUsed(expr) {
			if !slices.Contains(labels, l) && !strings.HasPrefix(l, "label_") {
				t.Errorf("%s: query %q uses the label %q, which fathom's metrics do not carry", where, expr, l)
			}
		}
	}
	ids := map[int]bool{}
	var shown []string
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d twice", p.ID)
		}
		ids[p.ID] = true
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			check("panel "+p.Title, q.Expr)
			// The scrape configuration of docs/prometheus.md scrapes a run twice (fathom serve and
			// the run's own --metrics-addr): every query must count it once.
			if !strings.Contains(q.Expr, "max without (job, instance)") && !strings.Contains(q.Expr, "count by (run_id)") {
				t.Errorf("panel %q: query %q would count a run scraped from two sources twice", p.Title, q.Expr)
			}
			shown = append(shown, metricName.FindAllString(q.Expr, -1)...)
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct{ Query string }
		if err := json.Unmarshal(v.Query, &q); err != nil {
			t.Fatalf("variable %s: %v", v.Name, err)
		}
		check("variable "+v.Name, q.Query)
	}
	// What the issue asks the dashboard to show.
	for _, m := range []string{"fathom_run_transactions_total", "fathom_run_latency_seconds", "fathom_run_errors_total", "fathom_run_response_seconds_bucket"} {
		if !slices.Contains(shown, m) {
			t.Errorf("no panel shows %s", m)
		}
	}
}

// Every metric is documented in docs/prometheus.md.
func TestMetricsDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/prometheus.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range declared {
		if !strings.Contains(string(b), "`"+n+"`") {
			t.Errorf("docs/prometheus.md does not document `%s`", n)
		}
	}
}
