package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/store"
)

// On a saturated client host the dips only the host explains are one warning line with
// their spans, not a list of stalls (issue 32: 5–13 of them per 15 s run); a stall a
// server-side cause matches, even with the host also matching, stays listed.
func TestClientHostStallsFolded(t *testing.T) {
	host := store.StallCause{Key: "client_host", Title: "saturated client host: the dip may be fathom's own"}
	mk := func(n int, from, to float64, causes ...store.StallCause) store.Stall {
		s := store.Stall{Number: n, Start: time.Duration(from * float64(time.Second)), End: time.Duration(to * float64(time.Second)),
			Throughput: "tps", Baseline: 1000, Mean: 400, Min: 300, Depth: 0.6, Lost: 600, Causes: causes}
		if len(causes) > 0 {
			s.Cause, s.Title = causes[0].Key, causes[0].Title
		}
		return s
	}
	stalls := []store.Stall{
		mk(1, 2, 3, host), mk(2, 5, 6, host),
		mk(3, 7, 9, store.StallCause{Key: "checkpoint", Title: "PostgreSQL checkpoint"}, host),
		mk(4, 11, 12, host),
	}
	var b bytes.Buffer
	WriteStalls(&b, stalls, 9)
	out := b.String()
	if !strings.HasPrefix(out, "Stalls: 1\n! 3 dip(s) only the saturated client host explains") ||
		!strings.Contains(out, "2.0s–3.0s, 5.0s–6.0s, 11.0s–12.0s (~1800 lost in all)") {
		t.Errorf("folded:\n%s", out)
	}
	if !strings.Contains(out, "#3  7.0s–9.0s") || strings.Contains(out, "#1 ") || strings.Contains(out, "#4 ") {
		t.Errorf("listed stalls:\n%s", out)
	}
	d := &RunData{Stalls: stalls}
	if rows := stallRows(d); len(rows) != 1 || rows[0].Number != 3 {
		t.Errorf("report rows %+v", rows)
	}
}
