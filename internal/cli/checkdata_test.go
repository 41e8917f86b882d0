package cli

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	sqlite "github.com/fathom-lab/fathom/internal/db/sqlite/target"
	"github.com/fathom-lab/fathom/internal/target"
)

// TestCheckDataTPCC: tpcc prepared and run through the CLI passes check-data (exit
// 0, every warehouse consistent); data corrupted on purpose fails it with exit 5, one
// line naming the warehouse, and the violation in the JSON; a workload without rules
// and missing tables are refused with one line.
func TestCheckDataTPCC(t *testing.T) {
	dir := t.TempDir()
	dsn := "sqlite:" + filepath.Join(dir, "tpcc.db")
	env := storeEnv(t)
	if r := fathom(t, env, nil, "prepare", "-w", "tpcc", "--warehouses", "1", "--target", dsn); r.code != 0 {
		t.Fatalf("prepare: %d %s", r.code, r.stderr)
	}
	r := fathom(t, env, nil, "run", "-w", "tpcc", "-c", "2", "-t", "50", "--max-tries", "10", "--target", dsn, "--json")
	if r.code != 0 {
		t.Fatalf("run: %d %s", r.code, r.stderr)
	}
	s := summary(t, r)
	if s.ByTxn["new-order"].Transactions == 0 || s.ByTxn["payment"].Transactions == 0 || s.Failed != 0 {
		t.Errorf("run summary: %+v", s)
	}
	// Seconds is rounded to the millisecond in the summary: 1% of slack.
	near := func(a, b float64) bool { return math.Abs(a-b) <= b*0.01+1 }
	if want := float64(s.ByTxn["new-order"].Transactions) * 60 / s.Seconds; s.NOPM == 0 || !near(s.NOPM, want) || !near(s.TPM, float64(s.Transactions)*60/s.Seconds) {
		t.Errorf("NOPM %v TPM %v; want NOPM %v from %d new-orders in %vs", s.NOPM, s.TPM, want, s.ByTxn["new-order"].Transactions, s.Seconds)
	}
	// The text summary and the live lines say them too.
	r = fathom(t, env, nil, "run", "-w", "tpcc", "-c", "2", "-T", "2s", "-P", "1", "--max-tries", "10", "--target", dsn)
	if r.code != 0 || !strings.Contains(r.stdout, " nopm: ") || !strings.Contains(r.stdout, "NOPM: ") || !strings.Contains(r.stdout, "new-order-rollback") {
		t.Errorf("run output:\n%s%s", r.stdout, r.stderr)
	}

	r = fathom(t, env, nil, "check-data", "--target", dsn)
	if r.code != 0 || !strings.Contains(r.stdout, "warehouse 1: consistent") || !strings.Contains(r.stdout, "condition 4: sum(O_OL_CNT)") {
		t.Fatalf("check-data after a run: %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	tg, err := sqlite.Open(dsn, target.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	conn, err := tg.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.Exec(context.Background(), "DELETE FROM new_order WHERE no_w_id = 1 AND no_d_id = 6 AND no_o_id = (SELECT min(no_o_id) + 1 FROM new_order WHERE no_w_id = 1 AND no_d_id = 6)"); err != nil {
		t.Fatal(err)
	}
	conn.Close()

	r = fathom(t, env, nil, "check-data", "-w", "tpcc", "--target", dsn)
	oneLine(t, r, exitInconsistent, "the tpcc data on "+dsn+" is inconsistent: 2 violations in warehouse 1")
	if !strings.Contains(r.stdout, "warehouse 1: INCONSISTENT (2)") || !strings.Contains(r.stdout, "condition 3 district 6: NEW_ORDER holds orders") {
		t.Errorf("check-data output:\n%s", r.stdout)
	}
	r = fathom(t, env, nil, "check-data", "--json", "--target", dsn)
	var rep struct {
		OK         bool
		Parts      []struct{ Name string }
		Violations []struct{ Rule, Part, Where string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("--json: %v\n%s", err, r.stdout)
	}
	if r.code != exitInconsistent || rep.OK || len(rep.Parts) != 1 || len(rep.Violations) != 2 ||
		rep.Violations[0].Rule != "condition 3" || rep.Violations[0].Where != "district 6" || rep.Violations[1].Rule != "condition 5" {
		t.Errorf("--json: exit %d %+v", r.code, rep)
	}

	oneLine(t, fathom(t, env, nil, "check-data", "-w", "tpcb", "--target", dsn), exitUsage, "workload tpcb has no data rules to check")
	oneLine(t, fathom(t, env, nil, "check-data", "--target", "sqlite:"+filepath.Join(dir, "empty.db")), exitFailure, "tables missing: item")
}
