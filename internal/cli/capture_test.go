package cli

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/db"
	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/target"
)

func rowsOf(t *testing.T, dsn, sql string) [][]string {
	t.Helper()
	tg, err := db.Open(dsn, target.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	c, err := tg.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rows, err := c.Query(context.Background(), sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return rows
}

// captureTolerance is how far a statement's share of the calls may be from the mix
// it was drawn from in the tests that draw about 1,200 statements: 0.05 is more than
// 3.5 standard deviations of a share near 0.5.
const captureTolerance = 0.05

// shareTolerance is five standard deviations of the difference between a share p
// drawn n[0] times and the same share drawn n[1] times (one n: the share against
// its exact value). Each draw picks one statement at random, so the share's count is
// binomial; a correct capture fails this about once in two million comparisons.
func shareTolerance(p float64, n ...float64) float64 {
	v := 0.0
	for _, k := range n {
		v += p * (1 - p) / k
	}
	return 5 * math.Sqrt(v)
}

// mix is the share of the calls of each of seqrand's three statements on the server,
// read from its statement statistics (statsSQL gives the text and the calls).
func mix(t *testing.T, dsn, statsSQL string) (map[string]float64, float64) {
	t.Helper()
	names := map[string]string{"where id = ": "point", "where id >= ": "scan", "insert into seqrand_rand": "insert"}
	calls := map[string]float64{}
	total := 0.0
	for _, r := range rowsOf(t, dsn, statsSQL) {
		text := strings.ToLower(strings.ReplaceAll(r[0], "`", ""))
		for frag, name := range names {
			if strings.Contains(text, frag) && (strings.Contains(text, "seqrand_seq") || name == "insert") {
				n, _ := strconv.ParseFloat(r[1], 64)
				calls[name] += n
				total += n
			}
		}
	}
	for k := range calls {
		calls[k] /= total
	}
	return calls, total
}

// A known mix is run, captured from the server's statistics, checked, and run again
// from the captured file: the statistics show the same mix within captureTolerance.
// PostgreSQL (pg_stat_statements) and MariaDB (performance_schema), each on a
// throwaway instance with the statistics turned on.
func TestCaptureRoundTrip(t *testing.T) {
	for _, c := range []struct {
		kind         instance.Kind
		setting      instance.Setting
		setup, reset string
		stats        string
		mode         string
	}{
		{instance.Postgres, instance.Setting{Name: "shared_preload_libraries", Value: "pg_stat_statements"},
			"CREATE EXTENSION pg_stat_statements", "SELECT pg_stat_statements_reset()",
			"SELECT query, calls FROM pg_stat_statements", "prepared"},
		// MariaDB's digests leave out server-side prepared statements: text protocol.
		{instance.MariaDB, instance.Setting{Name: "performance_schema", Value: "ON"},
			"", "TRUNCATE performance_schema.events_statements_summary_by_digest",
			"SELECT DIGEST_TEXT, COUNT_STAR FROM performance_schema.events_statements_summary_by_digest WHERE SCHEMA_NAME = DATABASE() AND DIGEST_TEXT IS NOT NULL", "simple"},
	} {
		t.Run(string(c.kind), func(t *testing.T) {
			needServer(t, c.kind)
			env, dir := expEnv(t)
			ctx := context.Background()
			inst, err := instance.Create(ctx, instance.Options{Kind: c.kind, Name: "cap", Dir: dir, Settings: []instance.Setting{c.setting}})
			if err != nil {
				t.Fatal(err)
			}
			defer inst.Remove(context.Background())
			if err := inst.Start(ctx); err != nil {
				t.Fatal(err)
			}
			dsn := inst.DSN()
			if c.setup != "" {
				execSQL(t, dsn, c.setup)
			}
			params := []string{"--set", "rows=3000", "--set", "seq_insert=0", "--set", "rand_insert=1", "--set", "seq_select=3", "--set", "rand_select=6"}
			if r := fathom(t, env, nil, append([]string{"prepare", "--target", dsn, "-w", "seqrand"}, params...)...); r.code != 0 {
				t.Fatalf("prepare: %s", r.stderr)
			}
			rowsOf(t, dsn, c.reset)
			slowLog := ""
			if c.kind == instance.MariaDB { // every statement in the slow log too, for --slow-log
				execSQL(t, dsn, "SET GLOBAL long_query_time = 0", "SET GLOBAL slow_query_log = ON")
				r := rowsOf(t, dsn, "SELECT @@datadir, @@slow_query_log_file")
				if slowLog = r[0][1]; !filepath.IsAbs(slowLog) {
					slowLog = filepath.Join(r[0][0], slowLog)
				}
			}
			runJSON(t, env, append([]string{"--target", dsn, "-w", "seqrand", "-M", c.mode, "-c", "2", "-t", "2500"}, params...)...)
			want, nWant := mix(t, dsn, c.stats)
			if slowLog != "" {
				execSQL(t, dsn, "SET GLOBAL slow_query_log = OFF")
				checkSlowLogCapture(t, env, dsn, slowLog, want)
			}

			file := filepath.Join(t.TempDir(), "captured.yaml")
			if r := fathom(t, env, nil, "capture", "--target", dsn, "--top", "3", "-o", file); r.code != 0 {
				t.Fatalf("capture: exit %d: %s", r.code, r.stderr)
			}
			if r := fathom(t, env, nil, "workload", "check", file); r.code != 0 {
				t.Fatalf("workload check: exit %d: %s%s", r.code, r.stdout, r.stderr)
			}
			rowsOf(t, dsn, c.reset)
			s := runJSON(t, env, "--target", dsn, "-w", file, "-M", c.mode, "-c", "2", "-t", "2500")
			if s.Failed > 0 {
				t.Errorf("the captured workload failed %d transactions: %v", s.Failed, s.ErrorsBy)
			}
			got, nGot := mix(t, dsn, c.stats)
			// The known mix is checked against the weights it was drawn from, and the
			// capture against what the known mix actually ran (its weights are that
			// run's shares), each within five standard deviations.
			for name, intended := range map[string]float64{"point": 0.6, "scan": 0.3, "insert": 0.1} {
				if tol := shareTolerance(intended, nWant); math.Abs(want[name]-intended) > tol {
					t.Errorf("%s: intended share %.2f, the known mix ran %.3f of %.0f calls (tolerance %.3f)", name, intended, want[name], nWant, tol)
				}
				if tol := shareTolerance(want[name], nWant, nGot); math.Abs(got[name]-want[name]) > tol {
					t.Errorf("%s: the known mix ran %.3f of %.0f calls, its capture ran %.3f of %.0f (tolerance %.3f)", name, want[name], nWant, got[name], nGot, tol)
				}
			}
			t.Logf("shares run / captured: point %.3f / %.3f, scan %.3f / %.3f, insert %.3f / %.3f",
				want["point"], got["point"], want["scan"], got["scan"], want["insert"], got["insert"])
		})
	}
}

// capture refuses what cannot work with one line.
func TestCaptureBadInput(t *testing.T) {
	env := storeEnv(t)
	sqlite := "sqlite:" + filepath.Join(t.TempDir(), "t.db")
	oneLine(t, fathom(t, env, nil, "capture", "--target", sqlite), exitFailure, "keeps no statement statistics")
	oneLine(t, fathom(t, env, nil, "capture", "--target", sqlite, "--by", "rows"), exitUsage, "use calls or time")
	oneLine(t, fathom(t, env, nil, "capture", "--target", sqlite, "--top", "0"), exitUsage, "--top 0")
	oneLine(t, fathom(t, env, nil, "capture", "--target", sqlite, "--slow-log", filepath.Join(t.TempDir(), "none.log")), exitFailure, "reading the slow query log")
}

// checkSlowLogCapture captures from a MariaDB slow log that saw the 60/30/10 mix: the
// file's weights are the shares the server's statistics counted (counted) for the
// same statements, to the rounding of the weights, and the file checks and runs.
func checkSlowLogCapture(t *testing.T, env map[string]string, dsn, slowLog string, counted map[string]float64) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "slow.yaml")
	if r := fathom(t, env, nil, "capture", "--target", dsn, "--slow-log", slowLog, "--top", "3", "-o", file); r.code != 0 {
		t.Fatalf("capture --slow-log: exit %d: %s", r.code, r.stderr)
	}
	if r := fathom(t, env, nil, "workload", "check", file); r.code != 0 {
		t.Fatalf("workload check of the slow-log capture: %s%s", r.stdout, r.stderr)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var weights [][]string
	weight := ""
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if w, ok := strings.CutPrefix(line, "weight: "); ok {
			weight = w
		}
		if q, ok := strings.CutPrefix(line, "- sql: "); ok {
			weights = append(weights, []string{q, weight})
		}
	}
	got := map[string]float64{}
	total := 0.0
	for _, w := range weights {
		n, _ := strconv.ParseFloat(w[1], 64)
		total += n
		switch q := strings.ToLower(w[0]); {
		case strings.Contains(q, "id >="):
			got["scan"] += n
		case strings.Contains(q, "id ="):
			got["point"] += n
		case strings.Contains(q, "insert into seqrand_rand"):
			got["insert"] += n
		}
	}
	for _, name := range []string{"point", "scan", "insert"} {
		if share := got[name] / total; math.Abs(share-counted[name]) > 0.01 {
			t.Errorf("slow log: %s has %.3f of the weight, the statement statistics counted %.3f (tolerance 0.01):\n%s", name, share, counted[name], b)
		}
	}
	s := runJSON(t, env, "--target", dsn, "-w", file, "-M", "simple", "-c", "2", "-t", "50")
	if s.Failed > 0 || s.Transactions != 100 {
		t.Errorf("the slow-log capture ran %d transactions, %d failed (%v):\n%s", s.Transactions, s.Failed, s.ErrorsBy, b)
	}
	t.Logf("slow log shares: point %.3f, scan %.3f, insert %.3f", got["point"]/total, got["scan"]/total, got["insert"]/total)
}
