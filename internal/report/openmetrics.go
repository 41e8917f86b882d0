package report

import (
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"

	"github.com/fathom-lab/fathom/internal/analyze"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/store"
)

// openMetricsFormat is a run's or a comparison's figures as an OpenMetrics text
// exposition, for a Pushgateway, `promtool tsdb create-blocks-from openmetrics` or
// any tool that reads the format. Every sample carries the time the run ended. The
// names the live exposition (fathom run --metrics-addr, serve's /metrics) also has
// mean the same here; the others are new (docs/reports.md).
var openMetricsFormat = Format{
	Name: "openmetrics", Aliases: []string{"om"}, MediaType: "application/openmetrics-text; version=1.0.0; charset=utf-8", Ext: ".om.txt",
	Render: map[Kind]Renderer{
		KindRun: plain(func(w io.Writer, v *runView) error {
			var om omSet
			om.run(v.Run, v.Summary, elapsedOf(v.Intervals))
			return om.write(w)
		}),
		KindComparison: plain(func(w io.Writer, c *comparison) error {
			var om omSet
			om.comparison(c)
			return om.write(w)
		}),
	},
}

// omSet collects metric families in the order they are first given.
type omSet struct {
	fams  map[string]*dto.MetricFamily
	order []string
}

func (o *omSet) add(name, help string, typ dto.MetricType, labels []*dto.LabelPair, v float64, at time.Time) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return // no figure rather than a made-up one
	}
	if o.fams == nil {
		o.fams = map[string]*dto.MetricFamily{}
	}
	f := o.fams[name]
	if f == nil {
		f = &dto.MetricFamily{Name: proto.String(name), Help: proto.String(help), Type: typ.Enum()}
		o.fams[name] = f
		o.order = append(o.order, name)
	}
	m := &dto.Metric{Label: labels}
	if !at.IsZero() {
		m.TimestampMs = proto.Int64(at.UnixMilli())
	}
	switch typ {
	case dto.MetricType_COUNTER:
		m.Counter = &dto.Counter{Value: proto.Float64(v)}
	default:
		m.Gauge = &dto.Gauge{Value: proto.Float64(v)}
	}
	f.Metric = append(f.Metric, m)
}

func (o *omSet) write(w io.Writer) error {
	for _, n := range o.order {
		if _, err := expfmt.MetricFamilyToOpenMetrics(w, o.fams[n]); err != nil {
			return err
		}
	}
	_, err := expfmt.FinalizeOpenMetrics(w)
	return err
}

func labelPairs(kv ...string) []*dto.LabelPair {
	out := make([]*dto.LabelPair, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, &dto.LabelPair{Name: proto.String(kv[i]), Value: proto.String(strings.ToValidUTF8(kv[i+1], "\uFFFD"))})
	}
	return out
}

func with(base []*dto.LabelPair, kv ...string) []*dto.LabelPair {
	return append(slices.Clone(base), labelPairs(kv...)...)
}

// omLabelName makes a run label's key a label name as the live exposition does:
// characters outside [a-zA-Z0-9_] become _.
func omLabelName(k string) string {
	return "label_" + strings.Map(func(r rune) rune {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, k)
}

// runLabelPairs are the labels of a run's series, as in the live exposition: run_id
// (the UUID), workload, target_kind and label_KEY per label (of two keys that become
// the same name, the first in sorted order is kept).
func runLabelPairs(r *store.Run) []*dto.LabelPair {
	ls := labelPairs("run_id", r.UUID, "workload", r.Workload, "target_kind", r.TargetKind)
	seen := map[string]bool{}
	for _, k := range slices.Sorted(maps.Keys(r.Labels)) {
		if n := omLabelName(k); !seen[n] {
			seen[n] = true
			ls = append(ls, labelPairs(n, r.Labels[k])...)
		}
	}
	return ls
}

// runEnd is when a run's figures were final: its end, or the end of its last
// finished interval for one that did not end.
func runEnd(r *store.Run, elapsed float64) time.Time {
	if !r.EndedAt.IsZero() {
		return r.EndedAt
	}
	return r.StartedAt.Add(time.Duration(elapsed * float64(time.Second)))
}

var omQuantiles = []struct {
	q string
	v func(measure.Latency) float64
}{
	{"0.5", func(l measure.Latency) float64 { return l.P50 }},
	{"0.9", func(l measure.Latency) float64 { return l.P90 }},
	{"0.95", func(l measure.Latency) float64 { return l.P95 }},
	{"0.99", func(l measure.Latency) float64 { return l.P99 }},
	{"0.999", func(l measure.Latency) float64 { return l.P999 }},
}

// run adds a run's figures: what it was and its summary over the measured intervals.
func (o *omSet) run(r *store.Run, s *measure.Summary, elapsed float64) {
	at := runEnd(r, elapsed)
	L := runLabelPairs(r)
	gauge, counter := dto.MetricType_GAUGE, dto.MetricType_COUNTER
	o.add("fathom_run_info", "1 for each run in the file: its labels say which run it is", gauge, L, 1, at)
	o.add("fathom_run_status", "1 for the run's status (complete, failed, interrupted, running)", gauge, with(L, "status", r.Status), 1, at)
	o.add("fathom_run_start_time_seconds", "when the run started (Unix seconds)", gauge, L, float64(r.StartedAt.UnixNano())/1e9, at)
	o.add("fathom_run_clients", "clients (connections) driving the run", gauge, L, float64(r.Clients), at)
	o.add("fathom_run_elapsed_seconds", "from the run's start to the end of its latest finished interval", gauge, L, elapsed, at)
	if s == nil {
		return
	}
	o.add("fathom_run_measured_seconds", "the length of the run's measured (non warm-up) intervals", gauge, L, s.Seconds, at)
	o.add("fathom_run_error_ratio", "failed transactions per transaction that ended, over the measured intervals", gauge, L, s.ErrorRate/100, at)
	if s.MaxErrorRate != nil {
		o.add("fathom_run_max_error_ratio", "the highest error ratio the run was allowed (--max-error-rate)", gauge, L, *s.MaxErrorRate/100, at)
	}
	types := []string{"all"}
	if len(s.ByTxn) > 1 {
		types = append(types, slices.Sorted(maps.Keys(s.ByTxn))...)
	}
	for _, txn := range types {
		ts := s.TypeSummary
		if txn != "all" {
			ts = s.ByTxn[txn]
		}
		T := with(L, "txn", txn)
		o.add("fathom_run_measured_transactions_total", "successful transactions in the measured intervals", counter, T, float64(ts.Transactions), at)
		o.add("fathom_run_measured_failed_total", "transactions that gave up in the measured intervals", counter, T, float64(ts.Failed), at)
		o.add("fathom_run_measured_retries_total", "retries in the measured intervals", counter, T, float64(ts.Retries), at)
		o.add("fathom_run_measured_tps", "successful transactions per second over the measured intervals", gauge, T, ts.TPS, at)
		if ts.Transactions == 0 {
			continue // no latency rather than a zero
		}
		for _, q := range omQuantiles {
			o.add("fathom_run_latency_seconds", "response time of successful transactions at quantile; window=\"run\": the measured intervals, as the summary gives it",
				gauge, with(T, "window", "run", "quantile", q.q), q.v(ts.Latency)/1e3, at)
		}
		o.add("fathom_run_latency_max_seconds", "the highest response time; window=\"run\": the measured intervals", gauge, with(T, "window", "run"), ts.Latency.Max/1e3, at)
	}
}

// comparison adds each run's figures and the comparison's: the medians of each side
// with their confidence intervals, the change, the p-value and the verdicts.
func (o *omSet) comparison(c *comparison) {
	var end time.Time
	for _, side := range []*Side{&c.A, &c.B} {
		for _, d := range side.Runs {
			o.run(d.Run, &d.Summary, rowsElapsed(d.Rows))
			if e := runEnd(d.Run, rowsElapsed(d.Rows)); e.After(end) {
				end = e
			}
		}
	}
	C := labelPairs("a", sideLabel(&c.A), "b", sideLabel(&c.B))
	gauge := dto.MetricType_GAUGE
	o.add("fathom_compare_runs", "runs on each side", gauge, with(C, "side", "a"), float64(len(c.A.Runs)), end)
	o.add("fathom_compare_runs", "runs on each side", gauge, with(C, "side", "b"), float64(len(c.B.Runs)), end)
	for _, m := range c.Metrics {
		name, help, scale := "fathom_compare_latency_seconds", "median of the side's runs (stat=median) and its confidence interval (ci_lo, ci_hi), in seconds", 1e-3
		switch metricKind(m.Metric) {
		case kindCount:
			name, help, scale = "fathom_compare_tps", "median throughput of the side's runs (stat=median) and its confidence interval (ci_lo, ci_hi)", 1
		case kindPercent:
			name, help, scale = "fathom_compare_ratio", "median ratio of the side's runs (stat=median) and its confidence interval (ci_lo, ci_hi)", 1e-2
		}
		for _, sd := range []struct {
			side string
			s    analyze.Summary
		}{{"a", m.A}, {"b", m.B}} {
			if sd.s.N == 0 {
				continue
			}
			S := with(C, "metric", m.Metric, "side", sd.side)
			o.add(name, help, gauge, with(S, "stat", "median"), sd.s.Median*scale, end)
			if sd.s.HasCI {
				o.add(name, help, gauge, with(S, "stat", "ci_lo"), sd.s.Lo*scale, end)
				o.add(name, help, gauge, with(S, "stat", "ci_hi"), sd.s.Hi*scale, end)
			}
		}
		M := with(C, "metric", m.Metric)
		if m.A.N > 0 && m.B.N > 0 {
			o.add("fathom_compare_change_ratio", "change of the median from A to B, relative to A", gauge, M, m.DeltaPct/100, end)
		}
		o.add("fathom_compare_p_value", "p-value of a two-sided Mann-Whitney U test over the runs of each side", gauge, M, m.P, end)
		o.add("fathom_compare_significant", "1 where the change is significant at the comparison's alpha", gauge, M, b2f(m.Significant), end)
		o.add("fathom_compare_regression", "1 where the change is significant and for the worse", gauge, M, b2f(regression(m)), end)
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
