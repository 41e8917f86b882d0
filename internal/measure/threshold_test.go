package measure

import (
	"strings"
	"testing"
)

func TestParseThreshold(t *testing.T) {
	for _, c := range []struct {
		in     string
		metric string
		op     string
		value  float64
	}{
		{"p99<20ms", "p99", "<", 20},
		{"p95 <= 1.5s", "p95", "<=", 1500},
		{"p50<500us", "p50", "<", 0.5},
		{"p99.9<40", "p999", "<", 40},
		{"tps>1000", "tps", ">", 1000},
		{"qps>=20000/s", "qps", ">=", 20000},
		{"errors<0.1%", "errors", "<", 0.1},
		{"ERRORS<=1", "errors", "<=", 1},
	} {
		th, err := ParseThreshold(c.in)
		if err != nil || th.Metric != c.metric || th.Op != c.op || th.Value != c.value {
			t.Errorf("%q: %+v, %v; want %s %s %g", c.in, th, err, c.metric, c.op, c.value)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"p99", "write METRIC OP VALUE"},
		{"<20", "write METRIC OP VALUE"},
		{"p98<20ms", `unknown metric "p98"`},
		{"tps>lots", `"lots" is not a value for tps`},
		{"p99<20 parsecs", "is not a value for p99"},
		{"errors<150%", "percent from 0 to 100"},
		{"tps>-5", "is not a value"},
		{"p99<NaN", "is not a value"},
	} {
		if _, err := ParseThreshold(c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one containing %q", c.in, err, c.want)
		}
	}
}

func FuzzParseThreshold(f *testing.F) {
	for _, s := range []string{"p99<20ms", "tps>1000", "errors<0.1%", "p95<=1.5s", "qps>=1/s", "x", ">"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		th, err := ParseThreshold(s)
		if err != nil {
			return
		}
		if th.Value < 0 || th.Value != th.Value {
			t.Fatalf("%q parsed to a value of %g", s, th.Value)
		}
		if _, ok := thresholdMetrics[th.Metric]; !ok {
			t.Fatalf("%q parsed to metric %q", s, th.Metric)
		}
	})
}

func TestCheckThresholds(t *testing.T) {
	s := &Summary{TypeSummary: TypeSummary{Transactions: 100, TPS: 812.4, Latency: Latency{P99: 12.3}}, ErrorRate: 0.05}
	var ts []Threshold
	for _, in := range []string{"p99<20ms", "tps>1000", "errors<0.1%", "p99<=12.3", "tps>=812.4"} {
		th, err := ParseThreshold(in)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, th)
	}
	rs := CheckThresholds(ts, s)
	want := []bool{true, false, true, true, true}
	for i, r := range rs {
		if r.Pass != want[i] {
			t.Errorf("%s: pass %v, want %v", r, r.Pass, want[i])
		}
	}
	if f := FailedThresholds(rs); len(f) != 1 || f[0].String() != "tps>1000: 812.4 tx/s, FAILED" {
		t.Errorf("failed: %v", f)
	}
	// No transaction succeeded: a latency of 0 does not pass a latency bar.
	none := &Summary{TypeSummary: TypeSummary{Failed: 10}}
	if r := ts[0].Check(none); r.Pass || !strings.Contains(r.String(), "no transaction succeeded") {
		t.Errorf("p99<20ms with nothing succeeded: %s", r)
	}
}
