package cli

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/stores"
)

// setDatabaseSetting runs ALTER DATABASE db SET name = value on the test server: new
// sessions of that database (and only those) see it, so other tests are not touched.
func setDatabaseSetting(t *testing.T, dsn, name, value string) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	db := strings.TrimPrefix(u.Path, "/")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgconn.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	q := `ALTER DATABASE "` + db + `" SET ` + name + ` = ` + value
	if value == "" {
		q = `ALTER DATABASE "` + db + `" RESET ` + name
	}
	if _, err := c.Exec(ctx, q).ReadAll(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// TestHistoryFindsASettingChange is the end-to-end case of the issue: 20 real 2-second
// tpcb runs against PostgreSQL, commit_delay 0 for the first 10 and 20 ms for the last
// 10 (with commit_siblings 0 every commit then sleeps 20 ms before its WAL flush).
// history finds the change at run 11 and explains it by the setting; regressions fails
// (exit 6) for the newest 10 runs, in text and JUnit, and passes for the newest 3.
//
// The step is one no load on a shared machine can make or hide: a transaction of
// ~0.5 ms becomes one of at least 20 ms. synchronous_commit off → on, used before,
// moved p50 from 0.5 to 0.6 ms on this machine's disk, less than CI's load moved tps
// between two runs of one setting, and the test failed once there.
func TestHistoryFindsASettingChange(t *testing.T) {
	dsn := dbtest.PostgresDatabase(t, "history_e2e")
	env := storeEnv(t)
	base := []string{"--target", dsn, "--workload", "tpcb", "--scale", "1"}
	if r := fathom(t, env, nil, append([]string{"prepare"}, base...)...); r.code != 0 {
		t.Fatalf("prepare: exit %d\n%s", r.code, r.stderr)
	}
	t.Cleanup(func() {
		setDatabaseSetting(t, dsn, "commit_delay", "")
		setDatabaseSetting(t, dsn, "commit_siblings", "")
		fathom(t, env, nil, append([]string{"cleanup"}, base...)...)
	})
	var ids []int64
	for i := 1; i <= 20; i++ {
		switch i {
		case 1:
			setDatabaseSetting(t, dsn, "commit_siblings", "0")
			setDatabaseSetting(t, dsn, "commit_delay", "0")
		case 11:
			setDatabaseSetting(t, dsn, "commit_delay", "20000")
		}
		r := fathom(t, env, nil, append([]string{"run", "-c", "1", "-T", "2s", "-q", "--json", "--label", "rep=" + string(rune('a'+i-1))}, base...)...)
		if r.code != 0 {
			t.Fatalf("run %d: exit %d\n%s", i, r.code, r.stderr)
		}
		s := summary(t, r)
		ids = append(ids, s.RunID)
		t.Logf("run %d (id %d): %.1f tps, p99 %.2f ms", i, s.RunID, s.TPS, s.Latency.P99)
	}

	r := fathom(t, env, nil, "history", "last", "--json", "--metric", "tps,p50")
	if r.code != 0 {
		t.Fatalf("history: exit %d\n%s", r.code, r.stderr)
	}
	var h struct {
		Series string `json:"series"`
		Points []struct {
			RunID int64 `json:"run_id"`
		} `json:"points"`
		Changes []struct {
			Metric  string   `json:"metric"`
			RunID   int64    `json:"run_id"`
			Worse   bool     `json:"worse"`
			Changed []string `json:"changed"`
		} `json:"changes"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &h); err != nil {
		t.Fatalf("history --json: %v\n%s", err, r.stdout)
	}
	if len(h.Points) != 20 {
		t.Fatalf("the series holds %d runs, want the 20 (the labels rep=… do not split it)", len(h.Points))
	}
	text := fathom(t, env, nil, "history", h.Series, "--metric", "tps,p50")
	t.Logf("fathom history %s:\n%s", h.Series, text.stdout)
	found := false
	for _, c := range h.Changes {
		explained := false
		for _, ch := range c.Changed {
			explained = explained || ch == "setting commit_delay: 0 → 20000"
		}
		if c.RunID == ids[10] {
			found = true
			if !c.Worse || !explained {
				t.Errorf("the %s change at run %d: worse %v, explained by %q; want worse, by commit_delay 0 → 20000", c.Metric, c.RunID, c.Worse, c.Changed)
			}
		} else if explained {
			t.Errorf("a %s change at run %d is explained by the setting, which changed at run %d", c.Metric, c.RunID, ids[10])
		}
	}
	if !found {
		t.Fatalf("no change at run %d (the first with commit_delay 20 ms): %+v", ids[10], h.Changes)
	}

	// p50 with tps: a commit's wait for its WAL flush shows in every transaction's
	// latency, while tps on this shared machine also swings with the other load.
	reg := fathom(t, env, nil, "regressions", h.Series, "--newest", "10", "--metric", "tps,p50")
	if reg.code != exitRegression || !strings.HasPrefix(reg.stdout, "REGRESSED") || !strings.Contains(reg.stdout, "setting commit_delay: 0 → 20000") {
		t.Errorf("regressions --newest 10: exit %d, want %d, REGRESSED and the setting\n%s%s", reg.code, exitRegression, reg.stdout, reg.stderr)
	}
	if n := strings.Count(strings.TrimSpace(reg.stderr), "\n"); reg.stderr == "" || n != 0 {
		t.Errorf("regressions: want one line on stderr, got %q", reg.stderr)
	}
	junit := fathom(t, env, nil, "regressions", h.Series, "--newest", "10", "--metric", "tps,p50", "-f", "junit")
	var v struct {
		Failures int `xml:"failures,attr"`
	}
	if err := xml.Unmarshal([]byte(junit.stdout), &v); err != nil || v.Failures < 1 || junit.code != exitRegression {
		t.Errorf("regressions -f junit: exit %d, %d failures (%v)\n%s", junit.code, v.Failures, err, junit.stdout)
	}
	if ok := fathom(t, env, nil, "regressions", h.Series, "--newest", "3", "--metric", "tps,p50"); ok.code != 0 || !strings.HasPrefix(ok.stdout, "OK") {
		t.Errorf("regressions --newest 3 (7 runs after the change): exit %d\n%s%s", ok.code, ok.stdout, ok.stderr)
	}
}

func TestHistoryBadInput(t *testing.T) {
	env := storeEnv(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"history", "nosuch"}, `no series "nosuch"`},
		{[]string{"history", "--metric", "tpx"}, `--metric "tpx" (did you mean tps?): use tps`},
		{[]string{"history", "--alpha", "2"}, "--alpha 2: use a level between 0 and 1"},
		{[]string{"history", "--alpha", "0.001", "--permutations", "99"}, "use at least 999"},
		{[]string{"history", "--min-runs", "1"}, "--min-runs 1: use 2 or more"},
		{[]string{"regressions", "x", "--newest", "0"}, "--newest 0"},
		{[]string{"regressions", "x", "-f", "csv"}, "--format csv"},
	} {
		oneLine(t, fathom(t, env, nil, c.args...), exitUsage, c.want)
	}
	if r := fathom(t, env, nil, "history"); r.code != 0 || !strings.HasPrefix(r.stdout, "no runs in") {
		t.Errorf("history on an empty store: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// storeSeries writes n complete runs of one series into the store at path: tps 1000
// until run stepAt, 600 from there (with synchronous_commit going from off to on).
func storeSeries(t *testing.T, path string, n, stepAt int) {
	t.Helper()
	st, err := stores.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	start := time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)
	for i := 1; i <= n; i++ {
		tps, sc := 1000.0+float64(i%3), "off"
		if i >= stepAt {
			tps, sc = 600+float64(i%3), "on"
		}
		r := &store.Run{ToolVersion: "test", Workload: "tpcb", Options: map[string]string{"scale": "1"}, TargetKind: "postgres",
			Target: "postgres://bench@db1/bench", Settings: map[string]string{"synchronous_commit": sc}, Clients: 4,
			Duration: 10 * time.Second, Interval: time.Second, StartedAt: start.Add(time.Duration(i) * 24 * time.Hour),
			Labels: map[string]string{"series": "nightly"}}
		id, err := st.CreateRun(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		js, _ := json.Marshal(measure.Summary{TypeSummary: measure.TypeSummary{Transactions: 1, TPS: tps, Latency: measure.Latency{P99: 3}}})
		if err := st.FinishRun(ctx, id, "complete", "", r.StartedAt.Add(r.Duration), js); err != nil {
			t.Fatal(err)
		}
	}
}

// regressions --webhook posts the changes found (generic JSON or Slack's shape) with
// a link to the history page; nothing when nothing changed; a failing webhook is
// exit 1 in one line that does not show the URL's secret path.
func TestRegressionsWebhook(t *testing.T) {
	env := storeEnv(t)
	storeSeries(t, env["FATHOM_STORE"], 12, 9)
	var mu sync.Mutex
	var bodies []string
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		if strings.Contains(r.URL.Path, "refuse") {
			http.Error(w, "no", http.StatusForbidden)
		}
	}))
	defer hook.Close()
	last := func() string {
		mu.Lock()
		defer mu.Unlock()
		if len(bodies) == 0 {
			return ""
		}
		return bodies[len(bodies)-1]
	}
	r := fathom(t, env, nil, "regressions", "nightly", "--newest", "4", "--webhook", hook.URL+"/T0/B0/secret", "--link", "https://bench.example.com")
	if r.code != exitRegression {
		t.Fatalf("regressions: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var got struct {
		Event     string `json:"event"`
		Series    string `json:"series"`
		Regressed bool   `json:"regressed"`
		Link      string `json:"link"`
		Changes   []struct {
			Metric  string   `json:"metric"`
			RunID   int64    `json:"run_id"`
			Changed []string `json:"changed"`
		} `json:"changes"`
	}
	if err := json.Unmarshal([]byte(last()), &got); err != nil {
		t.Fatalf("the webhook got %q: %v", last(), err)
	}
	if got.Event != "fathom.changes" || got.Series != "nightly" || !got.Regressed || got.Link != "https://bench.example.com/history/nightly" ||
		len(got.Changes) != 1 || got.Changes[0].RunID != 9 || got.Changes[0].Changed[0] != "setting synchronous_commit: off → on" {
		t.Errorf("the webhook got %+v", got)
	}
	r = fathom(t, env, nil, "regressions", "nightly", "--newest", "4", "--webhook", hook.URL, "--webhook-format", "slack", "--link", "https://bench.example.com")
	var slack map[string]string
	if err := json.Unmarshal([]byte(last()), &slack); err != nil || !strings.HasPrefix(slack["text"], "fathom: series <https://bench.example.com/history/nightly|nightly> *regressed*") ||
		!strings.Contains(slack["text"], "setting synchronous_commit: off → on") {
		t.Errorf("slack payload %q (%v)", last(), err)
	}
	junit := fathom(t, env, nil, "regressions", "nightly", "--newest", "4", "-f", "junit")
	if j := junitValid(t, junit.stdout); junit.code != exitRegression || j.Failures != 1 || j.Tests != 3 {
		t.Errorf("regressions -f junit: exit %d, %d failures of %d\n%s", junit.code, j.Failures, j.Tests, junit.stdout)
	}
	n := len(bodies)
	if r := fathom(t, env, nil, "regressions", "nightly", "--newest", "1", "--webhook", hook.URL); r.code != 0 || len(bodies) != n {
		t.Errorf("nothing changed in the newest run: exit %d, %d posts (want none)", r.code, len(bodies)-n)
	}
	bad := fathom(t, env, nil, "regressions", "nightly", "--newest", "4", "--webhook", hook.URL+"/refuse/secret-token")
	oneLine(t, bad, exitFailure, "answered 403 Forbidden")
	if strings.Contains(bad.stderr, "secret-token") {
		t.Errorf("the error shows the webhook's path: %q", bad.stderr)
	}
	oneLine(t, fathom(t, env, nil, "regressions", "nightly", "--webhook", "ftp://x"), exitUsage, "--webhook: give an http:// or https:// URL")
	oneLine(t, fathom(t, env, nil, "regressions", "nightly", "--webhook", hook.URL, "--webhook-format", "teams"), exitUsage, `--webhook-format "teams"`)
}
