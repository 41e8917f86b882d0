package report

import (
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/db"
)

// axisClass groups units that can share a chart's axis: counts of different things
// can (the axis is then labelled for none), bytes, percentages and times cannot.
func axisClass(unit string) string {
	switch unit {
	case "bytes", "%", "ms", "seconds":
		return unit
	}
	return "count"
}

// Every default chart names declared metrics whose units can share an axis, so a
// renamed metric fails here instead of leaving an empty chart.
func TestMetricChartsDeclared(t *testing.T) {
	vocab, err := db.Vocabulary()
	if err != nil {
		t.Fatal(err)
	}
	all := map[string][]metricChart{"os": hostCharts}
	for _, k := range db.Names() {
		all[k] = db.ChartsOf(k)
	}
	if len(all["postgres"]) == 0 || len(all["mysql"]) == 0 || len(all["redis"]) == 0 {
		t.Fatalf("a server kind has no default charts")
	}
	for src, charts := range all {
		for _, c := range charts {
			unit := ""
			for i, n := range c.Metrics {
				if !vocab.Declared(n) {
					t.Errorf("%s chart %q: %s is not a declared metric", src, c.Title, n)
					continue
				}
				if strings.HasSuffix(n, "*") {
					continue
				}
				d, _ := vocab.Lookup(n)
				if i == 0 {
					unit = d.Unit
				} else if axisClass(d.Unit) != axisClass(unit) {
					t.Errorf("%s chart %q mixes units %q and %q (%s)", src, c.Title, unit, d.Unit, n)
				}
			}
		}
	}
}
