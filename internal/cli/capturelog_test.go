package cli

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/instance"
)

var (
	runsRE = regexp.MustCompile(`# ([0-9.]+)% of the transactions: (\d+) runs`)
	expRE  = regexp.MustCompile(`k: \{zipfian: \{min: 1, max: 2000, exp: ([0-9.]+)\}\}  # skewed: .*: a good fit`)
)

// TestCaptureTransactionsFromPostgresLog: two pgbench scripts run on PostgreSQL with
// every statement logged (a 1:2 mix of a BEGIN … END transaction updating and reading
// one zipfian key, and an autocommit read of a uniform key); capture --slow-log groups
// the log's calls into those two transactions with their weights, makes the key one
// value, fits a Zipfian near the exponent it was drawn with and calls the other
// uniform; the file checks and runs, and capturing its own run finds the same mix.
// The runs are seeded, so the values drawn (and the fits' verdicts) are the same each time.
func TestCaptureTransactionsFromPostgresLog(t *testing.T) {
	needServer(t, instance.Postgres)
	env, dir := expEnv(t)
	ctx := context.Background()
	inst, err := instance.Create(ctx, instance.Options{Kind: instance.Postgres, Name: "caplog", Dir: dir,
		Settings: []instance.Setting{{Name: "log_min_duration_statement", Value: "0"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Remove(context.Background())
	if err := inst.Start(ctx); err != nil {
		t.Fatal(err)
	}
	dsn := inst.DSN()
	execSQL(t, dsn, "CREATE TABLE kv (k int PRIMARY KEY, v int NOT NULL)", "INSERT INTO kv SELECT g, 0 FROM generate_series(1, 2000) g")
	hot := scriptFile(t, "hot.sql", "\\set k random_zipfian(1, 2000, 1.1)\nBEGIN;\nUPDATE kv SET v = v + 1 WHERE k = :k;\nSELECT v FROM kv WHERE k = :k;\nEND;\n")
	cold := scriptFile(t, "cold.sql", "\\set u random(1, 2000)\nSELECT v FROM kv WHERE k = :u;\n")

	// capture runs capture on the log written since offset and returns the file.
	capture := func(offset int64) (string, string) {
		t.Helper()
		b, err := os.ReadFile(inst.LogFile())
		if err != nil {
			t.Fatal(err)
		}
		seg := filepath.Join(t.TempDir(), "seg.log")
		if err := os.WriteFile(seg, b[offset:], 0o600); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(t.TempDir(), "cap.yaml")
		if r := fathom(t, env, nil, "capture", "--target", dsn, "--slow-log", seg, "-o", file); r.code != 0 {
			t.Fatalf("capture: exit %d: %s", r.code, r.stderr)
		}
		if r := fathom(t, env, nil, "workload", "check", file); r.code != 0 {
			t.Fatalf("workload check: %s%s", r.stdout, r.stderr)
		}
		out, _ := os.ReadFile(file)
		return file, string(out)
	}
	// shares reads the transactions' shares: the explicit one's and the autocommit one's.
	shares := func(text string) (explicit, auto float64) {
		t.Helper()
		blocks := strings.Split(text, "  # ")
		for _, b := range blocks {
			m := runsRE.FindStringSubmatch("# " + b)
			if m == nil {
				continue
			}
			s, _ := strconv.ParseFloat(m[1], 64)
			if strings.Contains(b, "autocommit: true") {
				auto = s / 100
			} else {
				explicit = s / 100
			}
		}
		return explicit, auto
	}
	logSize := func() int64 {
		fi, err := os.Stat(inst.LogFile())
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}

	off := logSize()
	runJSON(t, env, "--target", dsn, "-f", hot+"@1", "-f", cold+"@2", "-c", "2", "-t", "900", "--seed", "7", "-M", "prepared") // the log shows $1 where a simple query shows the value
	file, text := capture(off)
	ex, au := shares(text)
	want := []string{`- sql: "UPDATE kv SET v = v + 1 WHERE k = :k"` + "\n      - sql: \"SELECT v FROM kv WHERE k = :k\"",
		`k: {uniform: [1, 2000]}  # uniform fits`, "# Transactions: as the sessions ran them"}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("the capture lacks %q:\n%s", w, text)
		}
	}
	m := expRE.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no well-fitting zipfian for the hot key:\n%s", text)
	}
	exp, _ := strconv.ParseFloat(m[1], 64)
	if math.Abs(exp-1.1) > 0.2 || math.Abs(ex-1.0/3) > captureTolerance || math.Abs(au-2.0/3) > captureTolerance {
		t.Errorf("exponent %.3f (drawn with 1.1), shares %.3f / %.3f (run 1/3, 2/3):\n%s", exp, ex, au, text)
	}

	off = logSize()
	if s := runJSON(t, env, "--target", dsn, "-w", file, "-c", "2", "-t", "900", "--seed", "7"); s.Failed > 0 {
		t.Fatalf("the captured workload failed %d transactions: %v", s.Failed, s.ErrorsBy)
	}
	_, again := capture(off)
	ex2, au2 := shares(again)
	m2 := expRE.FindStringSubmatch(again)
	if m2 == nil || math.Abs(ex2-ex) > captureTolerance || math.Abs(au2-au) > captureTolerance {
		t.Errorf("replayed: shares %.3f / %.3f against %.3f / %.3f, zipfian %v:\n%s", ex2, au2, ex, au, m2, again)
	}
	t.Logf("captured exponent %s, replay's %v; shares %.3f/%.3f, replay's %.3f/%.3f", m[1], m2, ex, au, ex2, au2)
}
