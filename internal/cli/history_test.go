package cli

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fathom-lab/fathom/internal/dbtest"
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

// TestHistoryFindsASettingChange is the end-to-end case of the issue: 20 real short
// tpcb runs against PostgreSQL, synchronous_commit off for the first 10 and on for the
// last 10 (every commit then waits for its WAL flush). history finds the change in tps
// at run 11 and explains it by the setting; regressions fails (exit 5) for the newest
// 10 runs, in text and JUnit, and passes for the newest 3.
func TestHistoryFindsASettingChange(t *testing.T) {
	dsn := dbtest.PostgresDatabase(t, "history_e2e")
	env := storeEnv(t)
	base := []string{"--target", dsn, "--workload", "tpcb", "--scale", "1"}
	if r := fathom(t, env, nil, append([]string{"prepare"}, base...)...); r.code != 0 {
		t.Fatalf("prepare: exit %d\n%s", r.code, r.stderr)
	}
	t.Cleanup(func() {
		setDatabaseSetting(t, dsn, "synchronous_commit", "")
		fathom(t, env, nil, append([]string{"cleanup"}, base...)...)
	})
	var ids []int64
	for i := 1; i <= 20; i++ {
		switch i {
		case 1:
			setDatabaseSetting(t, dsn, "synchronous_commit", "off")
		case 11:
			setDatabaseSetting(t, dsn, "synchronous_commit", "on")
		}
		r := fathom(t, env, nil, append([]string{"run", "-c", "1", "-T", "1s", "-q", "--json", "--label", "rep=" + string(rune('a'+i-1))}, base...)...)
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
			explained = explained || ch == "setting synchronous_commit: off → on"
		}
		if c.RunID == ids[10] {
			found = true
			if !c.Worse || !explained {
				t.Errorf("the %s change at run %d: worse %v, explained by %q; want worse, by synchronous_commit off → on", c.Metric, c.RunID, c.Worse, c.Changed)
			}
		} else if explained {
			t.Errorf("a %s change at run %d is explained by the setting, which changed at run %d", c.Metric, c.RunID, ids[10])
		}
	}
	if !found {
		t.Fatalf("no change at run %d (the first with synchronous_commit on): %+v", ids[10], h.Changes)
	}

	reg := fathom(t, env, nil, "regressions", h.Series, "--newest", "10")
	if reg.code != ExitRegression || !strings.HasPrefix(reg.stdout, "REGRESSED") || !strings.Contains(reg.stdout, "setting synchronous_commit: off → on") {
		t.Errorf("regressions --newest 10: exit %d, want %d, REGRESSED and the setting\n%s%s", reg.code, ExitRegression, reg.stdout, reg.stderr)
	}
	if n := strings.Count(strings.TrimSpace(reg.stderr), "\n"); reg.stderr == "" || n != 0 {
		t.Errorf("regressions: want one line on stderr, got %q", reg.stderr)
	}
	junit := fathom(t, env, nil, "regressions", h.Series, "--newest", "10", "-f", "junit")
	var v struct {
		Failures int `xml:"failures,attr"`
	}
	if err := xml.Unmarshal([]byte(junit.stdout), &v); err != nil || v.Failures < 1 || junit.code != ExitRegression {
		t.Errorf("regressions -f junit: exit %d, %d failures (%v)\n%s", junit.code, v.Failures, err, junit.stdout)
	}
	if ok := fathom(t, env, nil, "regressions", h.Series, "--newest", "3"); ok.code != 0 || !strings.HasPrefix(ok.stdout, "OK") {
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
		{[]string{"history", "--metric", "tpx"}, `--metric "tpx": use tps`},
		{[]string{"history", "--alpha", "2"}, "--alpha 2: use a level between 0 and 1"},
		{[]string{"history", "--alpha", "0.001", "--permutations", "99"}, "use at least 999"},
		{[]string{"history", "--min-runs", "1"}, "--min-runs 1: use 2 or more"},
		{[]string{"regressions", "x", "--newest", "0"}, "--newest 0"},
		{[]string{"regressions", "x", "-f", "csv"}, "--format csv"},
	} {
		oneLine(t, fathom(t, env, nil, c.args...), ExitUsage, c.want)
	}
	if r := fathom(t, env, nil, "history"); r.code != 0 || !strings.HasPrefix(r.stdout, "no runs in") {
		t.Errorf("history on an empty store: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
