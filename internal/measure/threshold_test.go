package measure

import (
	"strings"
	"testing"
	"time"
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
		{"p99<20ms;stop", `unknown option "stop"`},
		{"p99<20ms;abort=soon", "abort=soon: give how much measured time"},
		{"p99<20ms;abort=-1s", "abort=-1s"},
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
	if r := ts[0].check(none); r.Pass || !strings.Contains(r.String(), "no transaction succeeded") {
		t.Errorf("p99<20ms with nothing succeeded: %s", r)
	}
}

func TestParseThresholdAbort(t *testing.T) {
	for _, c := range []struct {
		in    string
		abort bool
		after time.Duration
	}{
		{"p99<20ms", false, 0},
		{"p99<20ms;abort", true, 0},
		{"p99 < 20ms ; abort = 30s", true, 30 * time.Second},
		{"tps>1000;ABORT=1m", true, time.Minute},
	} {
		th, err := ParseThreshold(c.in)
		if err != nil || th.Abort != c.abort || th.AbortAfter != c.after || th.Metric == "" {
			t.Errorf("%q: %+v, %v; want abort %v after %v", c.in, th, err, c.abort, c.after)
		}
	}
}

// TestAbortNow: an aborting threshold stops a run only on the evidence it needs: the
// measured time (10 s by default), 1,000 ended transactions for latencies and the
// error rate, and never while the running figure passes; max at once.
func TestAbortNow(t *testing.T) {
	sum := func(secs float64, ok, failed int64, p99, max float64) *Summary {
		s := &Summary{Seconds: secs, TypeSummary: TypeSummary{Transactions: ok, Failed: failed, TPS: float64(ok) / secs,
			Latency: Latency{P99: p99, Max: max}}}
		s.ErrorRate = errorRate(ok, failed)
		return s
	}
	for _, c := range []struct {
		th   string
		s    *Summary
		want bool
	}{
		{"p99<20ms", sum(60, 100000, 0, 50, 80), false},           // not aborting: checked at the end only
		{"p99<20ms;abort", sum(60, 100000, 0, 5, 8), false},       // passing
		{"p99<20ms;abort", sum(9.9, 100000, 0, 50, 80), false},    // before 10 s
		{"p99<20ms;abort", sum(10, 100000, 0, 50, 80), true},      // failing, after 10 s, enough transactions
		{"p99<20ms;abort", sum(30, 999, 0, 50, 80), false},        // too few transactions for a p99
		{"p99<20ms;abort=30s", sum(20, 100000, 0, 50, 80), false}, // its own wait
		{"p99<20ms;abort=30s", sum(30, 100000, 0, 50, 80), true},  //
		{"errors<1%;abort", sum(12, 500, 100, 1, 2), false},       // 600 ended: too few
		{"errors<1%;abort", sum(12, 1500, 100, 1, 2), true},       // 6.25% of 1,600
		{"tps>1000;abort", sum(12, 1200, 0, 1, 2), true},          // 100 tx/s: a rate needs no count
		{"tps>1000;abort", sum(5, 1200, 0, 1, 2), false},          // before 10 s
		{"max<100ms;abort", sum(0.5, 10, 0, 50, 120), true},       // a max cannot recover
		{"max<100ms;abort", sum(0.5, 10, 0, 50, 90), false},       //
		{"p99<20ms;abort", sum(15, 0, 2000, 0, 0), true},          // nothing succeeded: no latency, failed
		{"max<100ms;abort", &Summary{Seconds: 1}, false},          // nothing ended yet
	} {
		th, err := ParseThreshold(c.th)
		if err != nil {
			t.Fatal(err)
		}
		r, got := th.AbortNow(c.s)
		if got != c.want {
			t.Errorf("%s at %gs, %d ok, %d failed: abort %v (%s), want %v", c.th, c.s.Seconds, c.s.Transactions, c.s.Failed, got, r, c.want)
		}
		if got && r.Pass {
			t.Errorf("%s: aborts on a result that passed: %s", c.th, r)
		}
	}
}
