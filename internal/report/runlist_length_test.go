package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/store"
)

// A run cut short shows the time it measured against the length asked for; a complete
// run the length asked for.
func TestRunsLengthMeasured(t *testing.T) {
	sum := func(sec float64) json.RawMessage {
		b, err := json.Marshal(measure.Summary{Seconds: sec})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	runs := []store.Run{
		{ID: 1, Workload: "tpcb", Status: "complete", Duration: time.Minute, Summary: sum(60)},
		{ID: 2, Workload: "tpcb", Status: "interrupted", Duration: time.Minute, Summary: sum(5.93)},
		{ID: 3, Workload: "tpcb", Status: "failed", Transactions: 1000, Summary: sum(75.4)},
		{ID: 4, Workload: "tpcb", Status: "interrupted", Duration: time.Minute},
		{ID: 5, Workload: "tpcb", Status: "running", Duration: time.Minute},
	}
	var out bytes.Buffer
	writeRuns(&out, runs)
	lines := strings.Split(out.String(), "\n")
	for i, want := range []string{" 1m0s ", " 5.9s of 1m0s ", " 1m15s of 1000 tx/client ", " ? of 1m0s ", " 1m0s "} {
		if !strings.Contains(lines[i+1], want) {
			t.Errorf("run %d: %q does not show %q", i+1, lines[i+1], want)
		}
	}
	if strings.Contains(lines[1], " of ") {
		t.Errorf("a complete run is marked: %q", lines[1])
	}
}
