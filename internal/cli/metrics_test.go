package cli

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"regexp"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/store/stores"
)

var metricsAt = regexp.MustCompile(`fathom: metrics of this run at (http://\S+/metrics)`)

// TestMetricsAddr: `fathom run --metrics-addr` serves the run's metrics while it runs,
// in the Prometheus text format, and they are the numbers the run stores for the same
// interval.
func TestMetricsAddr(t *testing.T) {
	for _, tg := range cliTargets[:2] { // sqlite, postgres
		t.Run(tg.name, func(t *testing.T) {
			dsn := tg.dsn(t)
			env := storeEnv(t)
			base := []string{"--target", dsn, "--workload", "tpcb", "--scale", "1"}
			if r := fathom(t, env, nil, append([]string{"prepare"}, base...)...); r.code != 0 {
				t.Fatalf("prepare: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			var stderr syncBuffer
			done := make(chan result, 1)
			go func() {
				var out syncBuffer
				e := &Env{Args: append([]string{"run", "-c", "2", "-T", "5s", "-P", "250ms", "--warmup", "250ms", "--json",
					"--label", "env=ci", "--metrics-addr", "127.0.0.1:0"}, base...),
					Stdout: &out, Stderr: &stderr, Getenv: func(k string) string { return env[k] }, Now: time.Now,
					Interrupts: func(ctx context.Context) (context.Context, context.CancelFunc) { return context.WithCancel(ctx) }}
				code := Run(context.Background(), e)
				done <- result{code, out.String(), stderr.String()}
			}()
			var url string
			waitFor(t, "the metrics address on stderr", func() bool {
				m := metricsAt.FindStringSubmatch(stderr.String())
				if m != nil {
					url = m[1]
				}
				return m != nil || len(done) > 0
			})
			if url == "" {
				r := <-done
				t.Fatalf("no metrics address; exit %d\n%s", r.code, r.stderr)
			}
			// A scrape while the run runs, once a measured interval has ended.
			var fams map[string]*dto.MetricFamily
			waitFor(t, "the run's metrics", func() bool {
				fams = scrapeURL(t, url)
				return len(sampleValues(fams, "fathom_run_latency_seconds", map[string]string{"window": "run", "txn": "tpcb-like", "quantile": "0.99"})) == 1 || len(done) > 0
			})
			r := <-done
			if r.code != 0 {
				t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
			}
			if fams["fathom_run_info"] == nil {
				t.Fatalf("the run ended before a scrape saw a measured interval; stderr:\n%s", r.stderr)
			}
			info := fams["fathom_run_info"].Metric[0]
			labels := map[string]string{}
			for _, l := range info.Label {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["workload"] != "tpcb" || labels["target_kind"] != tg.name || labels["label_env"] != "ci" || len(labels["run_id"]) != 36 {
				t.Errorf("run labels %v", labels)
			}
			compareWithStore(t, env["FATHOM_STORE"], labels["run_id"], fams)
			if _, err := http.Get(url); err == nil {
				t.Errorf("%s still answers after the run ended", url)
			}
		})
	}
}

// compareWithStore checks the scraped figures against the stored intervals up to the
// one the scrape saw last (its end is fathom_run_elapsed_seconds).
func compareWithStore(t *testing.T, path, uuid string, fams map[string]*dto.MetricFamily) {
	t.Helper()
	st, err := stores.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	id, _ := st.LatestRunID(ctx)
	run, err := st.Run(ctx, id)
	if err != nil || run.UUID != uuid {
		t.Fatalf("stored run %d (%v): uuid %q, scraped %q", id, err, run.UUID, uuid)
	}
	ivs, err := st.Intervals(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	elapsed := one(t, fams, "fathom_run_elapsed_seconds", nil)
	k := -1
	for i, iv := range ivs {
		if iv.End.Seconds() == elapsed {
			k = i
		}
	}
	if k < 0 {
		t.Fatalf("no stored interval ends at the scraped elapsed %vs", elapsed)
	}
	txn := map[string]string{"txn": "tpcb-like"}
	var ok int64
	runLat := measure.NewHistogram()
	for _, iv := range ivs[:k+1] {
		ok += iv.Types[0].OK
		if !iv.Warmup {
			runLat.Merge(iv.Types[0].Latency)
		}
	}
	last := ivs[k].Types[0]
	q := func(h *hdr.Histogram, p float64) float64 { return float64(h.ValueAtQuantile(p)) / 1e9 }
	for _, c := range []struct {
		metric string
		labels map[string]string
		want   float64
	}{
		{"fathom_run_transactions_total", txn, float64(ok)},
		{"fathom_run_tps", txn, float64(last.OK) / ivs[k].Seconds()},
		{"fathom_run_latency_seconds", map[string]string{"txn": "tpcb-like", "window": "interval", "quantile": "0.99"}, q(last.Latency, 99)},
		{"fathom_run_latency_seconds", map[string]string{"txn": "tpcb-like", "window": "run", "quantile": "0.5"}, q(runLat, 50)},
		{"fathom_run_latency_max_seconds", map[string]string{"txn": "tpcb-like", "window": "run"}, float64(runLat.Max()) / 1e9},
	} {
		if got := one(t, fams, c.metric, c.labels); got != c.want {
			t.Errorf("%s%v = %v, stored interval %d says %v", c.metric, c.labels, got, k, c.want)
		}
	}
}

func one(t *testing.T, fams map[string]*dto.MetricFamily, name string, match map[string]string) float64 {
	t.Helper()
	vs := sampleValues(fams, name, match)
	if len(vs) != 1 {
		t.Fatalf("%s%v: %d samples, want 1", name, match, len(vs))
	}
	return vs[0]
}

func scrapeURL(t *testing.T, url string) map[string]*dto.MetricFamily {
	resp, err := http.Get(url)
	if err != nil {
		return nil // not yet, or the run has ended
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		t.Errorf("scrape is not the Prometheus text format: %v\n%s", err, b)
		return nil
	}
	return fams
}

// sampleValues are the values of name's samples whose labels include match.
func sampleValues(fams map[string]*dto.MetricFamily, name string, match map[string]string) []float64 {
	var out []float64
	if fams[name] == nil {
		return nil
	}
next:
	for _, m := range fams[name].Metric {
		for _, l := range m.Label {
			if v, ok := match[l.GetName()]; ok && v != l.GetValue() {
				continue next
			}
		}
		if m.Counter != nil {
			out = append(out, m.Counter.GetValue())
		} else {
			out = append(out, m.Gauge.GetValue())
		}
	}
	return out
}

// A --metrics-addr that cannot be bound is one line and exit 2, before anything runs.
func TestMetricsAddrBad(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	env := storeEnv(t)
	for _, c := range []struct{ addr, want string }{
		{"nonsense", "--metrics-addr nonsense: address nonsense: missing port in address; give a free host:port"},
		{ln.Addr().String(), "address already in use"},
	} {
		r := fathom(t, env, nil, "run", "--workload", "tpcb", "--target", "sqlite:"+t.TempDir()+"/x.db", "--metrics-addr", c.addr)
		oneLine(t, r, exitUsage, c.want)
	}
}
