package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/store"
)

// Transaction types that never ran (a mix's zero weights) are named on one line, not
// given rows of dashes; a type that only failed keeps its row.
func TestSummaryIdleTypes(t *testing.T) {
	lat := measure.Latency{P50: 1, P90: 2, P95: 3, P99: 4, P999: 5, Max: 6, Mean: 1.5}
	s := &measure.Summary{RunID: 7, Status: "complete", Seconds: 10}
	s.Transactions, s.TPS, s.Latency = 100, 10, lat
	s.ByTxn = map[string]measure.TypeSummary{
		"read":   {Transactions: 100, TPS: 10, Latency: lat},
		"scan":   {},
		"insert": {},
		"update": {Failed: 3, Errors: 3},
	}
	var b bytes.Buffer
	WriteSummary(&b, &store.Run{Workload: "ycsb", Target: "sqlite:x.db", Clients: 2}, s)
	out := b.String()
	if !strings.Contains(out, "\nnot run: insert, scan\n") {
		t.Errorf("no 'not run' line naming insert and scan:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && (f[0] == "scan" || f[0] == "insert") {
			t.Errorf("row for a type that never ran: %q", line)
		}
	}
	if !strings.Contains(out, "  update ") || !strings.Contains(out, "  read ") {
		t.Errorf("rows for read and the failing update missing:\n%s", out)
	}
}
