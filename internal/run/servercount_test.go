package run

import (
	"testing"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/target"
)

// The server's TPM covers the measured intervals only: from the reading after the last
// warm-up interval (or the one before the run) to the reading after the last measured
// interval, over the measured seconds; without a reading at either end, or for a run
// without NOPM/TPM, there is none rather than a wrong one.
func TestServerCountWindow(t *testing.T) {
	for _, c := range []struct {
		name           string
		at             map[int]int64
		lastWarm, last int
		sum            measure.Summary
		want           float64
	}{
		{"no warm-up", map[int]int64{0: 1100, 1: 1300}, -1, 1, measure.Summary{Seconds: 30, TPM: 1}, (1300 - 1000) * 2},
		{"after warm-up", map[int]int64{0: 1100, 1: 1300, 2: 1600}, 0, 2, measure.Summary{Seconds: 60, TPM: 1}, 500},
		{"reading missing", map[int]int64{0: 1100}, 0, 2, measure.Summary{Seconds: 60, TPM: 1}, 0},
		{"not tpcc", map[int]int64{0: 1100, 1: 1300}, -1, 1, measure.Summary{Seconds: 30}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &serverCount{ch: make(chan int), done: make(chan struct{}), start: 1000, source: "test", at: c.at, conn: nopConn{}}
			close(s.done)
			sum := c.sum
			s.finish(&sum, c.lastWarm, c.last)
			if sum.ServerTPM != c.want || (c.want > 0) != (sum.ServerTPMSource == "test") {
				t.Errorf("server TPM %v (%q), want %v", sum.ServerTPM, sum.ServerTPMSource, c.want)
			}
		})
	}
	var none *serverCount // a workload without a server count
	none.cut(3)
	none.finish(&measure.Summary{}, -1, 0)
}

// nopConn is a connection that only closes.
type nopConn struct{ target.Conn }

func (nopConn) Close() error { return nil }
