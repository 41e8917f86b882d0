// Package promexp exposes runs in progress in the Prometheus text format: their
// throughput, latency quantiles and errors by transaction type, with the run's id,
// workload, target kind and labels as labels. NewHandler reads the runs in progress
// from a results store (for `fathom serve`); Listen serves one run from its own
// events (for `fathom run --metrics-addr`). Both build the numbers from the intervals
// as the store keeps them, so the two agree with each other and with the store.
//
// A run that ends (or whose process is gone) is no longer exposed: its series stop,
// and Prometheus marks them stale. The metrics are described in docs/prometheus.md
// ("Prometheus metrics"); every one is declared once below.
package promexp

import (
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/fathom-lab/fathom/internal/target"
)

// The labels every run's series carry, in this order; the run's own labels follow as
// label_KEY.
var runLabelNames = []string{"run_id", "workload", "target_kind"}

// declared are the names of every metric, in the order declared.
var declared []string

// desc declares one of a run's metrics, labelled by the run and by extra.
func desc(name, help string, extra ...string) *prometheus.Desc {
	return plainDesc(name, help, append(slices.Clone(runLabelNames), extra...))
}

func plainDesc(name, help string, labels []string) *prometheus.Desc {
	declared = append(declared, name)
	return prometheus.NewDesc(name, help, labels, nil)
}

// The metrics, declared once.
var (
	descInfo       = desc("fathom_run_info", "A run in progress: always 1; its labels say which run it is (run_id is the run's UUID).")
	descStart      = desc("fathom_run_start_time_seconds", "When the run started, in seconds since the Unix epoch.")
	descElapsed    = desc("fathom_run_elapsed_seconds", "Time from the run's start to the end of its latest finished interval.")
	descClients    = desc("fathom_run_clients", "Clients (connections) driving the run.")
	descWarmup     = desc("fathom_run_warmup", "1 while the run's latest interval is warm-up, else 0.")
	descReconnects = desc("fathom_run_reconnects_total", "Successful reconnections of the run's clients so far.")

	descTxns       = desc("fathom_run_transactions_total", "Successful transactions so far, warm-up included.", "txn")
	descFailed     = desc("fathom_run_failed_total", "Transactions that gave up (a non-retryable error or out of tries) so far.", "txn")
	descRetries    = desc("fathom_run_retries_total", "Retries of transactions after a serialization failure or deadlock so far.", "txn")
	descStatements = desc("fathom_run_statements_total", "Statements executed so far.", "txn")
	descLate       = desc("fathom_run_late_total", "Open loop: transactions that started late against their intended start so far.", "txn")
	descDropped    = desc("fathom_run_dropped_total", "Open loop: intended transactions that never started so far.", "txn")
	descErrors     = desc("fathom_run_errors_total", "Failed attempts so far by error class (retried ones included).", "txn", "class")
	descTPS        = desc("fathom_run_tps", "Successful transactions per second in the run's latest finished interval.", "txn")
	descLatency    = desc("fathom_run_latency_seconds", "Response time quantile of successful transactions: window=\"interval\" is the latest finished interval, window=\"run\" the run's measured (non warm-up) intervals so far; txn=\"all\" is every type together.", "txn", "window", "quantile")
	descResponse   = desc("fathom_run_response_seconds", "Response times of successful transactions so far, warm-up included, as a histogram: unlike fathom_run_latency_seconds it can be summed over types, runs and agents (histogram_quantile). A value within 0.1% of a bucket's bound may be counted in the next bucket.", "txn")
	descLatencyMax = desc("fathom_run_latency_max_seconds", "Highest response time of a successful transaction, by window as fathom_run_latency_seconds.", "txn", "window")

	descInProgress = plainDesc("fathom_runs_in_progress", "Runs in progress exposed on this page.", nil)
	descStoreUp    = plainDesc("fathom_store_up", "1 if the results store was read without error for this scrape, else 0.", nil)
)

// quantiles are the latency quantiles exposed, with their label values.
var quantiles = []struct {
	label string
	value func(f *latencyFigures) float64
}{
	{"0.5", func(f *latencyFigures) float64 { return seconds(f.P50) }},
	{"0.9", func(f *latencyFigures) float64 { return seconds(f.P90) }},
	{"0.99", func(f *latencyFigures) float64 { return seconds(f.P99) }},
	{"0.999", func(f *latencyFigures) float64 { return seconds(f.P999) }},
}

func seconds(ns int64) float64 { return float64(ns) / 1e9 }

// errorClasses are the classes errors are counted by: every class but canceled (the
// run stopping), all of them exposed from the first scrape so that rate() sees the
// first error.
var errorClasses = func() []target.Class {
	var out []target.Class
	for c := target.Class(0); c < target.NumClasses; c++ {
		if c != target.ClassCanceled {
			out = append(out, c)
		}
	}
	return out
}()

// collector turns run states into metrics. It is unchecked (Describe sends nothing):
// the runs' own labels differ from run to run, which a checked collector's fixed
// label names cannot hold.
type collector struct {
	// gather calls emit with every run in progress while their states cannot
	// change, and reports whether the source was read without error (nil: no
	// fathom_store_up metric).
	gather func(emit func(*runState)) *bool
}

func (c *collector) Describe(chan<- *prometheus.Desc) {}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	n := 0
	up := c.gather(func(s *runState) {
		n++
		s.collect(ch)
	})
	ch <- prometheus.MustNewConstMetric(descInProgress, prometheus.GaugeValue, float64(n))
	if up != nil {
		v := 0.0
		if *up {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(descStoreUp, prometheus.GaugeValue, v)
	}
}

// labeled is a metric with the run's own labels added to those of its Desc.
type labeled struct {
	prometheus.Metric
	extra []*dto.LabelPair
}

func (m labeled) Write(out *dto.Metric) error {
	if err := m.Metric.Write(out); err != nil {
		return err
	}
	if len(m.extra) > 0 {
		out.Label = append(out.Label, m.extra...)
		slices.SortFunc(out.Label, func(a, b *dto.LabelPair) int { return strings.Compare(a.GetName(), b.GetName()) })
	}
	return nil
}

func (s *runState) dtoLabels() []*dto.LabelPair {
	if s.dto == nil && len(s.extra) > 0 {
		for _, l := range s.extra {
			s.dto = append(s.dto, &dto.LabelPair{Name: &l.name, Value: &l.value})
		}
	}
	return s.dto
}

// collect sends the run's metrics.
func (s *runState) collect(ch chan<- prometheus.Metric) {
	extra := s.dtoLabels()
	send := func(d *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string) {
		m := prometheus.MustNewConstMetric(d, t, v, append(s.values[:len(s.values):len(s.values)], labels...)...)
		if len(extra) > 0 {
			m = labeled{m, extra}
		}
		ch <- m
	}
	sendHist := func(d *prometheus.Desc, h *histState, labels ...string) {
		buckets := make(map[float64]uint64, len(histBounds))
		var cum uint64
		for j, b := range histBounds {
			cum += h.per[j]
			buckets[b] = cum
		}
		cum += h.per[len(histBounds)]
		var m prometheus.Metric = prometheus.MustNewConstHistogram(d, cum, h.sum, buckets, append(s.values[:len(s.values):len(s.values)], labels...)...)
		if len(extra) > 0 {
			m = labeled{m, extra}
		}
		ch <- m
	}
	gauge, counter := prometheus.GaugeValue, prometheus.CounterValue
	send(descInfo, gauge, 1)
	send(descStart, gauge, float64(s.start.UnixNano())/1e9)
	send(descClients, gauge, float64(s.clients))
	if s.lastIndex < 0 {
		return // nothing measured yet
	}
	send(descElapsed, gauge, s.elapsed.Seconds())
	warm := 0.0
	if s.warmup {
		warm = 1
	}
	send(descWarmup, gauge, warm)
	send(descReconnects, counter, float64(s.reconnects))
	for i := range s.types {
		t := &s.types[i]
		send(descTxns, counter, float64(t.total.OK), t.name)
		send(descFailed, counter, float64(t.total.Failed), t.name)
		send(descRetries, counter, float64(t.total.Retries), t.name)
		send(descStatements, counter, float64(t.total.Statements), t.name)
		if s.openLoop {
			send(descLate, counter, float64(t.total.Late), t.name)
			send(descDropped, counter, float64(t.total.Dropped), t.name)
		}
		for _, c := range errorClasses {
			send(descErrors, counter, float64(t.total.Errors[c]), t.name, c.String())
		}
		send(descTPS, gauge, t.tps, t.name)
		t.lat.collect(send, t.name)
		sendHist(descResponse, &t.hist, t.name)
	}
	if !s.hasTypeNamed("all") {
		s.all.collect(send, "all")
	}
}

func (s *runState) hasTypeNamed(n string) bool {
	for i := range s.types {
		if s.types[i].name == n {
			return true
		}
	}
	return false
}

// collect sends the latency figures of both windows; a window without a successful
// transaction has none.
func (l *latencyState) collect(send func(*prometheus.Desc, prometheus.ValueType, float64, ...string), txn string) {
	for _, w := range []struct {
		name string
		f    *latencyFigures
		n    int64
	}{{"interval", &l.last, l.lastN}, {"run", &l.run, l.runN}} {
		if w.n == 0 {
			continue
		}
		for _, q := range quantiles {
			send(descLatency, prometheus.GaugeValue, q.value(w.f), txn, w.name, q.label)
		}
		send(descLatencyMax, prometheus.GaugeValue, seconds(w.f.Max), txn, w.name)
	}
}
