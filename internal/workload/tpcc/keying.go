package tpcc

import (
	"fmt"
	"math"
	"time"
)

// The spec's terminal timing (clause 5.2.5): before each transaction its user keys
// for a fixed time (clause 5.2.5.7's minimum keying times), after it thinks for a
// time drawn from a negative exponential distribution of the given mean, truncated
// at ten times the mean (clause 5.2.5.4), in the order of TxnTypes' first five.
var (
	keyingTime = [5]time.Duration{18 * time.Second, 3 * time.Second, 2 * time.Second, 2 * time.Second, 2 * time.Second}
	thinkMean  = [5]time.Duration{12 * time.Second, 12 * time.Second, 10 * time.Second, 5 * time.Second, 5 * time.Second}
)

// terminalsPerWarehouse is the spec's number of terminals per warehouse (clause 4.2.2).
const terminalsPerWarehouse = 10

// ceilingPerTerminal is the most New-Orders per minute one terminal can make
// with the spec's keying and think times and this mix (percent, New-Order first), if
// every transaction took no time at all: the New-Order share of a minute over the
// mean cycle of keying plus think time. With the default mix it is 1.286, so 12.86
// per warehouse of 10 terminals: the ceiling of a by-the-book tpmC, which counts the
// 1% of New-Orders the spec rolls back. NOPM, which leaves them out, is capped at 99%
// of it.
func ceilingPerTerminal(mix [5]int) float64 {
	var cycle float64 // seconds
	for i, p := range mix {
		cycle += float64(p) / 100 * (keyingTime[i] + thinkMean[i]).Seconds()
	}
	if cycle == 0 {
		return 0
	}
	return 60 * float64(mix[txnNewOrder]) / 100 / cycle
}

// think draws a think time of mean m: -ln(r) m, r uniform in (0, 1], at most 10 m.
func (k *worker) think(m time.Duration) time.Duration {
	r := 1 - k.r.Float64() // (0, 1]
	return time.Duration(math.Min(-math.Log(r), 10) * float64(m))
}

// Wait is the time the terminal's user spends before the drawn transaction: the think
// time after the previous one and the keying time of this one. Zero unless the
// keying option is on.
func (k *worker) Wait() time.Duration {
	if !k.w.keying {
		return 0
	}
	d := keyingTime[k.typ]
	if k.prev >= 0 {
		d += k.think(thinkMean[k.prev])
	}
	k.prev = k.typ
	return d
}

// RunNotes says what keying and think times imply for the run's NOPM.
func (w *tpccWorkload) RunNotes(clients int) []string {
	if !w.keying {
		return nil
	}
	per := ceilingPerTerminal(w.mix)
	want := int(w.warehouses) * terminalsPerWarehouse
	nopm := per * (1 - rollbackPct/100.0)
	note := fmt.Sprintf("keying and think times on (TPC-C's terminals): however fast the server, New-Orders per minute cannot exceed about %.2f per warehouse of %d terminals (the spec's tpmC ceiling; NOPM, without the 1%% rolled back, %.2f), so NOPM %.1f for these %d clients on %d warehouses",
		per*terminalsPerWarehouse, terminalsPerWarehouse, nopm*terminalsPerWarehouse, nopm*float64(clients), clients, w.warehouses)
	if clients != want {
		note += fmt.Sprintf("; the spec runs %d terminals per warehouse: -c %d", terminalsPerWarehouse, want)
	}
	return []string{note}
}
