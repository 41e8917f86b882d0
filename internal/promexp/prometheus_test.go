package promexp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/store/sqlite"
)

// prometheusBin finds Debian's prometheus. Without it the test skips, also under
// FATHOM_TEST_REQUIRE=1: Prometheus is not one of the servers every development and CI
// machine must have (make test does not install it). FATHOM_TEST_REQUIRE_PROMETHEUS=1
// makes a missing binary fail instead, for the machines that promise it.
func prometheusBin(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("prometheus"); err == nil {
		return p
	}
	if os.Getenv("FATHOM_TEST_REQUIRE_PROMETHEUS") == "1" {
		t.Fatal("prometheus is not installed but FATHOM_TEST_REQUIRE_PROMETHEUS=1: apt-get install prometheus")
	}
	t.Skip("prometheus is not installed: skipping the scrape by a real Prometheus (apt-get install prometheus; FATHOM_TEST_REQUIRE_PROMETHEUS=1 fails instead)")
	return ""
}

// lockedBuffer collects a process's output while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// start runs a process until the test ends, then stops it by its pid.
func start(t *testing.T, name string, cmd *exec.Cmd) *lockedBuffer {
	t.Helper()
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("%s output:\n%s", name, out.String())
		}
	})
	return out
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// poll calls f until it says done, for up to two minutes (the machine may be busy).
func poll(t *testing.T, what string, f func() bool) {
	t.Helper()
	dbtest.WaitFor(t, 2*time.Minute, 200*time.Millisecond, what, f)
}

type promSample struct {
	labels map[string]string
	value  float64
}

// query asks Prometheus's HTTP API for an instant vector, now.
func query(t *testing.T, base, q string) []promSample {
	t.Helper()
	return queryAt(t, base, q, "")
}

// queryAt asks for an instant vector at the evaluation time at (Unix seconds; "" is now),
// so that several queries see the same samples.
func queryAt(t *testing.T, base, q, at string) []promSample {
	t.Helper()
	v := url.Values{"query": {q}}
	if at != "" {
		v.Set("time", at)
	}
	resp, err := http.Get(base + "/api/v1/query?" + v.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Status string
		Error  string
		Data   struct {
			Result []struct {
				Metric map[string]string
				Value  [2]json.RawMessage
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	if r.Status != "success" {
		t.Fatalf("%s: %s", q, r.Error)
	}
	var out []promSample
	for _, s := range r.Data.Result {
		var v string
		if err := json.Unmarshal(s.Value[1], &v); err != nil {
			t.Fatal(err)
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, promSample{s.Metric, f})
	}
	return out
}

var metricsAt = regexp.MustCompile(`fathom: metrics of this run at http://(\S+)/metrics`)

// TestPrometheusScrapes: a real Prometheus scrapes `fathom serve`'s /metrics (a run in
// progress in its store) and a live `fathom run --metrics-addr`, both the fathom binary
// built from this checkout, and its HTTP API then answers the runs' series with the
// values fathom stored.
func TestPrometheusScrapes(t *testing.T) {
	prom := prometheusBin(t)
	dir := t.TempDir()
	ctx := context.Background()
	bin := filepath.Join(dir, "fathom")
	build := exec.Command("go", "build", "-o", bin, "../../cmd/fathom")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	// `fathom serve` over a store with a run in progress (written by this process):
	// 3 intervals of 40 transactions.
	st, hubStore := openStore(t)
	types := []string{"deposit"}
	r := createRun(t, st, map[string]string{"env": "hub"}, types...)
	for i := 0; i < 3; i++ {
		if err := st.AddInterval(ctx, r.ID, interval(types, i, false, 40, 50)); err != nil {
			t.Fatal(err)
		}
	}
	direct := scrape(t, NewHandler(st, Options{}))
	hubAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	start(t, "fathom serve", exec.Command(bin, "serve", "--store", hubStore, "--addr", hubAddr))

	// A live `fathom run --metrics-addr` on SQLite.
	tgt := "sqlite:" + filepath.Join(dir, "target.db")
	liveStore := filepath.Join(dir, "live.db")
	env := append(os.Environ(), "FATHOM_STORE="+liveStore)
	prep := exec.Command(bin, "prepare", "--target", tgt, "--workload", "tpcb", "--scale", "1")
	prep.Env = env
	if out, err := prep.CombinedOutput(); err != nil {
		t.Fatalf("fathom prepare: %v\n%s", err, out)
	}
	run := exec.Command(bin, "run", "--target", tgt, "--workload", "tpcb", "-c", "2", "-T", "10m", "-P", "1s",
		"--label", "env=live", "--metrics-addr", "127.0.0.1:0")
	run.Env = env
	runOut := start(t, "fathom run", run)
	var liveAddr string
	poll(t, "fathom run's metrics address", func() bool {
		if m := metricsAt.FindStringSubmatch(runOut.String()); m != nil {
			liveAddr = m[1]
		}
		return liveAddr != ""
	})

	// A second `fathom serve`, over the live run's store: docs/prometheus.md's scrape
	// configuration (serve plus each run) then sees the live run twice.
	liveHub := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	start(t, "fathom serve (live store)", exec.Command(bin, "serve", "--store", liveStore, "--addr", liveHub))

	// Prometheus scraping all three every second.
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: fathom-serve
    static_configs:
      - targets: [%q, %q]
  - job_name: fathom-run
    static_configs:
      - targets: [%q]
`, hubAddr, liveHub, liveAddr)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	start(t, "prometheus", exec.Command(prom, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "tsdb"), fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port)))
	api := fmt.Sprintf("http://127.0.0.1:%d", port)
	poll(t, "Prometheus to answer", func() bool {
		resp, err := http.Get(api + "/-/ready")
		if err != nil {
			return false
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	poll(t, "the three targets up", func() bool {
		up := query(t, api, `up == 1`)
		return len(up) == 3
	})

	// The hub's run: exactly what the store holds, as the exporter says it.
	var got []promSample
	poll(t, "the hub's run in Prometheus", func() bool {
		got = query(t, api, fmt.Sprintf(`fathom_run_transactions_total{job="fathom-serve",instance=%q}`, hubAddr))
		return len(got) == 1
	})
	if l := got[0].labels; l["run_id"] != r.UUID || l["workload"] != "tpcb" || l["target_kind"] != "postgres" || l["label_env"] != "hub" || l["txn"] != "deposit" {
		t.Errorf("hub series labels %v (run %s)", l, r.UUID)
	}
	if got[0].value != 120 {
		t.Errorf("Prometheus has %v transactions of the hub's run, the store 3 × 40", got[0].value)
	}
	p99 := query(t, api, fmt.Sprintf(`fathom_run_latency_seconds{instance=%q,window="run",quantile="0.99",txn="deposit"}`, hubAddr))
	want := samples(direct, "fathom_run_latency_seconds", map[string]string{"window": "run", "quantile": "0.99", "txn": "deposit"})
	var exported []float64
	for _, v := range want {
		exported = append(exported, v)
	}
	if len(p99) != 1 || len(exported) != 1 || !near(p99[0].value, exported[0]) || exported[0] <= 0 {
		t.Fatalf("p99 in Prometheus %v, exported %v", p99, exported)
	}
	t.Logf("hub: %v transactions, p99 %v s", got[0].value, p99[0].value)

	// The live run: its UUID, its clients, and a transaction count that is at most what
	// its store holds by the time we look (the counter only grows) and more than zero.
	poll(t, "the live run's transactions in Prometheus", func() bool {
		got = query(t, api, `fathom_run_transactions_total{job="fathom-run"} > 0`)
		return len(got) == 1
	})
	clients := query(t, api, `fathom_run_clients{job="fathom-run"}`)
	if len(clients) != 1 || clients[0].value != 2 {
		t.Errorf("live run clients %v, want 2", clients)
	}
	ls, err := sqlite.Open(liveStore)
	if err != nil {
		t.Fatal(err)
	}
	defer ls.Close()
	lr, err := ls.Run(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	ivs, err := ls.Intervals(ctx, lr.ID)
	if err != nil {
		t.Fatal(err)
	}
	var stored int64
	for _, iv := range ivs {
		for _, ty := range iv.Types {
			stored += ty.OK
		}
	}
	if l := got[0].labels; l["run_id"] != lr.UUID || l["label_env"] != "live" || l["target_kind"] != "sqlite" {
		t.Errorf("live series labels %v (run %s)", l, lr.UUID)
	}
	if got[0].value > float64(stored) {
		t.Errorf("Prometheus has %v transactions of the live run, more than the %d its store holds", got[0].value, stored)
	}
	t.Logf("live run: Prometheus %v transactions, store %d after %d intervals", got[0].value, stored, len(ivs))

	// The live run is on the page of its own process and on its store's serve: two
	// series of every metric. Each of the dashboard's queries counts it once (one
	// series per key, throughput not doubled), and its histogram counts what its
	// counter counts, scrape by scrape.
	live := lr.UUID
	poll(t, "the live run from both sources", func() bool {
		return len(query(t, api, fmt.Sprintf(`fathom_run_transactions_total{run_id=%q} > 0`, live))) == 2
	})
	// rate() over [1m] divides by the whole minute, so while a series is younger than
	// that its rate depends on how many scrapes it has: the two sources started at
	// different times and their single rates differ by as much as 1.7x early on (CI saw
	// 701 against 458 tx/s). So the three queries are evaluated at one instant and the
	// dashboard's figure must be exactly the larger of the two sources' (a sum, the old
	// doubling, would exceed it by the smaller one).
	tput := fmt.Sprintf(`sum by (run_id, workload) (max without (job, instance) (rate(fathom_run_transactions_total{run_id=%q}[1m])))`, live)
	bySource := func(sel string) string {
		return fmt.Sprintf(`sum by (run_id) (rate(fathom_run_transactions_total{run_id=%q, %s}[1m]))`, live, sel)
	}
	var dash, own, served []promSample
	poll(t, "the live run's throughput from both sources", func() bool {
		at := strconv.FormatFloat(float64(time.Now().UnixMilli())/1000, 'f', 3, 64)
		dash, own, served = queryAt(t, api, tput, at), queryAt(t, api, bySource(`job="fathom-run"`), at), queryAt(t, api, bySource(fmt.Sprintf(`instance=%q`, liveHub)), at)
		return len(dash) == 1 && len(own) == 1 && len(served) == 1 && own[0].value > 0 && served[0].value > 0
	})
	if larger := math.Max(own[0].value, served[0].value); math.Abs(dash[0].value-larger) > 1e-9*larger {
		t.Errorf("the dashboard's throughput of the live run is %v tx/s; its own page says %v, its store's serve %v: counted twice?", dash[0].value, own[0].value, served[0].value)
	}
	t.Logf("live run scraped twice: dashboard %.1f tx/s, its own page %.1f tx/s, its store's serve %.1f tx/s", dash[0].value, own[0].value, served[0].value)
	for _, src := range []string{`job="fathom-run"`, fmt.Sprintf(`instance=%q`, liveHub)} {
		diff := query(t, api, fmt.Sprintf(`sum(fathom_run_response_seconds_count{run_id=%q, %s}) - sum(fathom_run_transactions_total{run_id=%q, %s})`, live, src, live, src))
		if len(diff) != 1 || diff[0].value != 0 {
			t.Errorf("%s: histogram count minus transactions = %v, want 0", src, diff)
		}
	}
	poll(t, "a p99 from the histogram", func() bool {
		q := query(t, api, fmt.Sprintf(`histogram_quantile(0.99, sum by (le) (max without (job, instance) (rate(fathom_run_response_seconds_bucket{run_id=%q}[1m]))))`, live))
		return len(q) == 1 && q[0].value > 0 && q[0].value <= 60
	})

	// Every query of the Grafana dashboard, as Grafana would send it (its variables
	// replaced: all runs, all transaction types, a one-minute rate window), is
	// evaluated by this Prometheus; those about throughput, latency and progress must
	// answer for the live run. Errors, failures, retries and reconnects have no series
	// while there are none, so those need only evaluate.
	vars := strings.NewReplacer(`"$run_id"`, `".+"`, `"$txn"`, `".+"`, "$__rate_interval", "1m")
	for _, p := range readDashboard(t).Panels {
		for _, q := range p.Targets {
			expr := vars.Replace(q.Expr)
			if strings.Contains(expr, "$") {
				t.Errorf("panel %q: query %q has a variable this test does not know", p.Title, q.Expr)
				continue
			}
			if regexp.MustCompile(`errors|failed|retries|reconnects`).MatchString(expr) {
				query(t, api, expr)
				continue
			}
			poll(t, fmt.Sprintf("panel %q's query %s to answer", p.Title, expr), func() bool {
				return len(query(t, api, expr)) > 0
			})
			// One series per key for the live run, though two sources have it.
			seen := map[string]bool{}
			for _, r := range query(t, api, strings.ReplaceAll(vars.Replace(q.Expr), `run_id=~".+"`, fmt.Sprintf(`run_id=%q`, live))) {
				k := fmt.Sprint(r.labels)
				if seen[k] {
					t.Errorf("panel %q: query %s answers %v twice", p.Title, expr, r.labels)
				}
				seen[k] = true
			}
		}
	}
}
