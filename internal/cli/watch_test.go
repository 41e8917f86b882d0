package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/report"
	fathomrun "github.com/fathom-lab/fathom/internal/run"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/stores"
)

// A run samples the server and the OS on its own clock; show lists what was seen and
// the stalls; --no-collect turns it off.
func TestRunSamples(t *testing.T) {
	dsn := dbtest.SQLiteDSN(t)
	db := filepath.Join(t.TempDir(), "fathom.db")
	env := map[string]string{}
	wl := []string{"--target", dsn, "--workload", "oltp_point_select", "--table-size", "1000"}
	base := append([]string{"--store", db}, wl...)
	if r := fathom(t, env, nil, append([]string{"prepare"}, wl...)...); r.code != 0 {
		t.Fatalf("prepare: %d %s", r.code, r.stderr)
	}
	r := fathom(t, env, nil, append([]string{"run", "-c", "2", "-T", "2s", "-P", "500ms", "--warmup", "500ms"}, base...)...)
	if r.code != 0 || !strings.Contains(r.stdout, "stalls:") {
		t.Fatalf("run: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	st, err := stores.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id, _ := st.LatestRunID(ctx)
	ser, err := st.MetricSeries(ctx, id, "os.cpu.user_pct")
	if err != nil || len(ser) != 1 {
		t.Fatalf("os.cpu.user_pct: %v %v", ser, err)
	}
	// One reading per interval boundary plus the baseline, each on the run's clock:
	// taken after its interval's end, in order. (How soon after depends on how busy
	// the machine is: not asserted.)
	ivs, err := st.EncodedIntervals(ctx, mustRun(t, st, id))
	if err != nil {
		t.Fatal(err)
	}
	ends := map[int]time.Duration{}
	for _, iv := range ivs {
		ends[iv.Index] = iv.End
	}
	if len(ser[0].Points) < len(ivs) {
		t.Errorf("%d readings for %d intervals", len(ser[0].Points), len(ivs))
	}
	var prev time.Duration
	for i, p := range ser[0].Points {
		if i > 0 && p.At < prev {
			t.Errorf("reading %d at %s, before the one before it (%s)", i, p.At, prev)
		}
		prev = p.At
		if p.Interval < 0 {
			if _, ok := ends[0]; ok && p.At > ends[0] {
				t.Errorf("baseline at %s, after the first interval ended (%s)", p.At, ends[0])
			}
			continue
		}
		if p.At < ends[p.Interval] {
			t.Errorf("reading for interval %d at %s, before the interval ends at %s", p.Interval, p.At, ends[p.Interval])
		}
	}
	st.Close()
	show := fathom(t, env, nil, "show", "last", "--store", db)
	for _, want := range []string{"Server and OS samples", "os.cpu.user_pct", "Stalls:"} {
		if !strings.Contains(show.stdout, want) {
			t.Errorf("show lacks %q:\n%s", want, show.stdout)
		}
	}
	js := fathom(t, env, nil, "show", "last", "--store", db, "--json")
	var v struct {
		Sampling *report.SamplingJSON `json:"sampling"`
	}
	if err := json.Unmarshal([]byte(js.stdout), &v); err != nil || v.Sampling == nil || !v.Sampling.Analyzed || len(v.Sampling.Collectors) == 0 {
		t.Errorf("show --json sampling: %v %+v", err, v.Sampling)
	}
	if r := fathom(t, env, nil, append([]string{"run", "-T", "500ms", "--no-collect", "-q"}, base...)...); r.code != 0 {
		t.Fatalf("run --no-collect: %d %s", r.code, r.stderr)
	}
	if show := fathom(t, env, nil, "show", "last", "--store", db); strings.Contains(show.stdout, "Server and OS samples") {
		t.Errorf("--no-collect run has samples:\n%s", show.stdout)
	}
	if r := fathom(t, env, nil, "stalls", "1", "--store", db, "--threshold", "0.9", "--json"); r.code != 0 || !strings.HasPrefix(strings.TrimSpace(r.stdout), "[") {
		t.Errorf("stalls --threshold: %d %s %s", r.code, r.stdout, r.stderr)
	}
	// --threshold shows another analysis; only --save replaces the stored one.
	stored := func() string {
		st, err := stores.Open(db)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		_, p, _, err := st.Stalls(context.Background(), 1)
		if err != nil {
			t.Fatal(err)
		}
		return string(p)
	}
	before := stored()
	if r := fathom(t, env, nil, "stalls", "1", "--store", db, "--threshold", "0.9"); r.code != 0 || !strings.Contains(r.stdout, "not stored") {
		t.Errorf("stalls --threshold: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if after := stored(); after != before {
		t.Errorf("stalls --threshold without --save changed the stored analysis: %s → %s", before, after)
	}
	if r := fathom(t, env, nil, "stalls", "1", "--store", db, "--threshold", "0.9", "--save"); r.code != 0 {
		t.Errorf("stalls --save: %d %s", r.code, r.stderr)
	}
	if after := stored(); after == before || !strings.Contains(after, "0.9") {
		t.Errorf("stalls --save kept %s", after)
	}
}

func mustRun(t *testing.T, st store.Store, id int64) *store.Run {
	t.Helper()
	r, err := st.Run(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestWatch(t *testing.T) {
	for _, tg := range dbtest.All {
		t.Run(tg.Name, func(t *testing.T) {
			dsn := tg.DSN(t)
			db := filepath.Join(t.TempDir(), "fathom.db")
			env := map[string]string{}
			r := fathom(t, env, nil, "watch", "--target", dsn, "-T", "2s", "-P", "500ms", "--store", db, "--label", "phase=before")
			if r.code != 0 {
				t.Fatalf("watch: %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			// Piped output: a header and one line per interval, then the end. A baseline and
			// four boundaries in 2s at 500ms: on a busy machine a sample may come later than
			// the next boundary, which is then skipped and said so; none goes missing.
			m := regexp.MustCompile(`watch 1 complete: (\d+) samples over [^,\n]+(?:, (\d+) intervals skipped)?`).FindStringSubmatch(r.stdout)
			if !strings.Contains(r.stdout, "usr%") || m == nil {
				t.Fatalf("watch output:\n%s", r.stdout)
			}
			samples, _ := strconv.Atoi(m[1])
			skipped := 0
			if m[2] != "" {
				skipped, _ = strconv.Atoi(m[2])
			}
			if samples+skipped != 5 || samples < 2 {
				t.Errorf("%d samples and %d skipped, want 5 in all:\n%s", samples, skipped, r.stdout)
			}
			if lines := strings.Count(r.stdout, "\n"); lines < samples+1 {
				t.Errorf("%d lines for %d samples:\n%s", lines, samples, r.stdout)
			}
			runs := fathom(t, env, nil, "runs", "--store", db, "--label", "phase=before")
			if !strings.Contains(runs.stdout, "watch") {
				t.Errorf("runs:\n%s", runs.stdout)
			}
			show := fathom(t, env, nil, "show", "1", "--store", db)
			if show.code != 0 || !strings.Contains(show.stdout, "Server and OS samples (every 500ms") {
				t.Errorf("show: %d\n%s\n%s", show.code, show.stdout, show.stderr)
			}
			if tg.Name == "postgres" && !strings.Contains(show.stdout, "pg.xact_commit") {
				t.Errorf("show lacks pg.xact_commit:\n%s", show.stdout)
			}
			if tg.Name == "mysql" && !strings.Contains(show.stdout, "mysql.Questions") {
				t.Errorf("show lacks mysql.Questions:\n%s", show.stdout)
			}
			// The report shows what was watched: the span and samples, metric charts
			// over it, no empty throughput charts.
			out := filepath.Join(t.TempDir(), "rep")
			rep := fathom(t, env, nil, "report", "1", "--store", db, "-o", out)
			if rep.code != 0 {
				t.Fatalf("report: %d\n%s", rep.code, rep.stderr)
			}
			page, err := os.ReadFile(filepath.Join(out, "index.html"))
			if err != nil {
				t.Fatal(err)
			}
			p := string(page)
			if strings.Contains(p, "0 s in 0 intervals") || !strings.Contains(p, "samples every 500ms") || !strings.Contains(p, "Watch 1:") ||
				strings.Contains(p, "Throughput over time") || !strings.Contains(p, `id="run-1-metric-`) ||
				!strings.Contains(p, "s of server and OS metrics</h1>") {
				t.Errorf("watch report does not show what was watched:\n%s", grepLines(p, "watched", "Watch 1", "intervals"))
			}
		})
	}
}

// Ctrl-C is how a watch without -T ends: complete, exit 0.
func TestWatchUntilInterrupted(t *testing.T) {
	db := filepath.Join(t.TempDir(), "fathom.db")
	stop := make(chan struct{})
	go func() {
		// Stop once three samples are stored, however slow the start.
		err := poll("three stored samples", func() bool {
			st, err := stores.Open(db)
			if err != nil {
				return false
			}
			defer st.Close()
			ser, err := st.MetricSeries(context.Background(), 1, "os.cpu.user_pct")
			return err == nil && len(ser) == 1 && len(ser[0].Points) >= 3
		})
		if err != nil {
			t.Error(err)
		}
		close(stop)
	}()
	r := fathom(t, map[string]string{}, stop, "watch", "--target", dbtest.SQLiteDSN(t), "-P", "300ms", "--store", db, "--json")
	if r.code != 0 {
		t.Fatalf("watch interrupted: %d %s %s", r.code, r.stdout, r.stderr)
	}
	var s fathomrun.WatchSummary
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil || s.Status != "complete" || s.Samples < 3 {
		t.Errorf("summary %+v %v", s, err)
	}
}

func TestSamplingBadInput(t *testing.T) {
	db := filepath.Join(t.TempDir(), "fathom.db")
	sqlite := dbtest.SQLiteDSN(t)
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"watch", "--target", sqlite, "--collect", "pg_lock"}, exitUsage, `unknown collector "pg_lock"`},
		{[]string{"watch", "--target", sqlite, "-P", "10ms"}, exitUsage, "at least 100ms"},
		{[]string{"watch", "--target", "oracle://x"}, exitUsage, "unknown target"},
		{[]string{"watch", "--target", "postgres://nobody:pw@127.0.0.1:1/x?sslmode=disable", "--connect-timeout", "1s"}, exitFailure, "cannot connect"},
		{[]string{"run", "--target", sqlite, "--collect", "nosuch"}, exitUsage, `unknown collector "nosuch"`},
		{[]string{"run", "--target", sqlite, "--stall-threshold", "2"}, exitUsage, "stall-threshold"},
		{[]string{"snapshot", "--target", sqlite, "-i", "10ms"}, exitUsage, "at least 1s"},
		{[]string{"snapshot", "--target", sqlite, "-o", "/dev/null/x.tar.gz"}, exitUsage, "not a directory"},
		{[]string{"stalls", "99", "--store", db}, exitUsage, "run 99"},
	}
	for _, tc := range cases {
		r := fathom(t, map[string]string{"FATHOM_STORE": db}, nil, tc.args...)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		if r.code != tc.code || !strings.Contains(r.stderr, tc.want) || len(lines) != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and one line with %q", tc.args, r.code, r.stderr, tc.code, tc.want)
		}
		if strings.Contains(r.stderr, "pw@") {
			t.Errorf("%v: password in %q", tc.args, r.stderr)
		}
	}
	// Nothing half-recorded by the refused runs.
	if st, err := stores.Open(db); err == nil {
		runs, _ := st.Runs(context.Background(), store.RunFilter{})
		if len(runs) != 0 {
			t.Errorf("refused commands left %d runs", len(runs))
		}
		st.Close()
	}
}

func TestSnapshotCommand(t *testing.T) {
	dsn := dbtest.PostgresDSN(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "review.tar.gz")
	r := fathom(t, map[string]string{}, nil, "snapshot", "--target", dsn, "-i", "1s", "-o", out)
	if r.code != 0 || !strings.Contains(r.stdout, "snapshot written to "+out) || !strings.Contains(r.stdout, "# fathom snapshot") {
		t.Fatalf("snapshot: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if st, err := os.Stat(out); err != nil || st.Size() < 1000 {
		t.Errorf("archive %v %v", st, err)
	}
	if r := fathom(t, map[string]string{}, nil, "snapshot", "--target", dsn, "-i", "1s", "-o", out); r.code != exitUsage || !strings.Contains(r.stderr, "already exists") {
		t.Errorf("existing archive: %d %s", r.code, r.stderr)
	}
	// SQLite: the file and the host only.
	sq := filepath.Join(dir, "sq")
	if r := fathom(t, map[string]string{}, nil, "snapshot", "--target", dbtest.SQLiteDSN(t), "-i", "1s", "-o", sq); r.code != 0 {
		t.Fatalf("sqlite snapshot: %d %s", r.code, r.stderr)
	}
	for _, f := range []string{"summary.txt", "server.txt", "os.txt", "vmstat.txt", "status_diff.tsv"} {
		if _, err := os.Stat(filepath.Join(sq, f)); err != nil {
			t.Errorf("sqlite snapshot: %v", err)
		}
	}
}

func TestCollectorsCommand(t *testing.T) {
	r := fathom(t, map[string]string{}, nil, "collectors")
	for _, want := range []string{"pg_stat_checkpointer", "17.0", "mysql_innodb_status", "os_disk"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("collectors lacks %q:\n%s", want, r.stdout)
		}
	}
}

// collectors --metrics lists the declarations: every metric with its kind and unit.
func TestCollectorsMetrics(t *testing.T) {
	r := fathom(t, map[string]string{}, nil, "collectors", "--metrics")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range [][]string{{"pg.xact_commit", "counter", "transactions", "pg_stat_database"},
		{"pg.wait_event.*", "gauge", "sessions", "pg_stat_activity"}, {"os.disk.await_ms", "gauge", "ms", "os_disk"},
		{"mysql.*", "per variable", "mysql_global_status"}} {
		line := grepLines(r.stdout, want[0]+" ")
		if line == "" {
			t.Errorf("collectors --metrics: no %s line", want[0])
		}
		for _, w := range want[1:] {
			if !strings.Contains(line, w) {
				t.Errorf("collectors --metrics: %s line lacks %q: %q", want[0], w, line)
			}
		}
	}
}

// grepLines keeps the lines of s that contain any of words.
func grepLines(s string, words ...string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		for _, w := range words {
			if strings.Contains(l, w) {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}
