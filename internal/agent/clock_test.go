package agent

import (
	"strings"
	"testing"
	"time"
)

// The applied offset is the one nearest zero that the measurement allows: nothing
// within the uncertainty (a one-way delay fakes up to half the round trip), and only
// what the uncertainty cannot explain beyond it; it never has the other sign.
func TestClockApplied(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct{ off, rtt, want time.Duration }{
		{150 * ms, 300 * ms, 0},               // an identical clock behind a 300 ms one-way delay
		{-149 * ms, 300 * ms, 0},              // the delay on the other way
		{250 * ms, 300 * ms, 100 * ms},        // 100 ms off, behind that delay: exactly right
		{-250 * ms, 300 * ms, -100 * ms},      //
		{100 * ms, 2 * ms, 99 * ms},           // a near link: almost the whole offset
		{0, 0, 0},                             //
		{3 * time.Second, 0, 3 * time.Second}, // no uncertainty at all
	} {
		if got := clockApplied(c.off, c.rtt); got != c.want {
			t.Errorf("offset %v rtt %v: applied %v, want %v", c.off, c.rtt, got, c.want)
		}
	}
	for off := -time.Second; off <= time.Second; off += 7 * ms {
		for rtt := time.Duration(0); rtt <= time.Second; rtt += 13 * ms {
			a := clockApplied(off, rtt)
			if a*off < 0 || abs(a) > abs(off) || abs(off-a) > rtt/2 {
				t.Fatalf("offset %v rtt %v: applied %v is outside what was measured", off, rtt, a)
			}
		}
	}
}

func abs(d time.Duration) time.Duration { return max(d, -d) }

// A warning when the uncertainty or the applied offset passes 5% of the interval, and
// none below.
func TestClockWarning(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		off, rtt, interval time.Duration
		want               string
	}{
		{150 * ms, 300 * ms, time.Second, "known only to ±150.0 ms"},
		{1 * ms, 2 * ms, time.Second, ""},
		{0, 90 * ms, time.Second, ""},               // ±45 ms: under 5% of 1 s
		{0, 90 * ms, 500 * ms, "known only to ±45"}, // 9% of 0.5 s
		{-200 * ms, 2 * ms, time.Second, "clock was +199.0 ms off"},
	} {
		got := clockWarning("agent 1", c.off, c.rtt, c.interval)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("offset %v rtt %v interval %v: %q, want %q", c.off, c.rtt, c.interval, got, c.want)
		}
	}
}
