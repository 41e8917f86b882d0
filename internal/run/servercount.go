package run

import (
	"context"
	"math"
	"sync"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
)

// serverCount reads a workload's server-side transaction count (workload.ServerCounter)
// before the run and after each interval is cut, on a connection of its own, so that
// the measured intervals' server TPM sits beside the clients' count. Reads happen off
// the runner's goroutine, a moment after each cut: both ends of the window lag alike.
type serverCount struct {
	sc     workload.ServerCounter
	conn   target.Conn
	ch     chan int
	done   chan struct{}
	mu     sync.Mutex
	start  int64
	source string
	at     map[int]int64 // interval index -> count read after its cut
	err    error
}

// startServerCount returns nil when wl has no server count or it cannot be read (the
// reason is passed to warn, and the summary simply has no server TPM).
func startServerCount(ctx context.Context, wl workload.Workload, tgt target.Target, warn func(string)) *serverCount {
	sc, ok := wl.(workload.ServerCounter)
	if !ok {
		return nil
	}
	conn, err := tgt.Connect(ctx)
	if err != nil {
		warn("server TPM: cannot connect to read the server's transaction counters: " + target.RedactString(err.Error()))
		return nil
	}
	n, source, err := sc.ServerTransactions(ctx, conn)
	if err != nil {
		conn.Close()
		if source != "" || target.ClassOf(err) != target.ClassOther {
			warn("server TPM: " + target.RedactString(err.Error()))
		}
		return nil
	}
	s := &serverCount{sc: sc, conn: conn, ch: make(chan int, 256), done: make(chan struct{}), start: n, source: source, at: map[int]int64{}}
	go s.loop(ctx)
	return s
}

func (s *serverCount) loop(ctx context.Context) {
	defer close(s.done)
	for idx := range s.ch {
		n, _, err := s.sc.ServerTransactions(ctx, s.conn)
		s.mu.Lock()
		if err != nil {
			s.err = err
		} else {
			s.at[idx] = n
		}
		s.mu.Unlock()
	}
}

// cut is called by the runner right after interval index is cut; it never blocks.
func (s *serverCount) cut(index int) {
	if s == nil {
		return
	}
	select {
	case s.ch <- index:
	default: // the reader is behind: this boundary goes without a reading
	}
}

// finish waits for the last reading and sets sum's server TPM over the measured
// intervals, from the reading after the last warm-up interval (or the one before the
// run) to the one after the last measured interval, over the measured seconds.
// lastWarm is -1 without warm-up; last is the last measured interval's index.
func (s *serverCount) finish(sum *measure.Summary, lastWarm, last int) {
	if s == nil {
		return
	}
	close(s.ch)
	<-s.done
	s.conn.Close()
	from, ok := s.start, true
	if lastWarm >= 0 {
		from, ok = s.at[lastWarm]
	}
	to, ok2 := s.at[last]
	if !ok || !ok2 || last < 0 || sum.Seconds <= 0 || sum.NOPM == 0 && sum.TPM == 0 {
		return
	}
	sum.ServerTPM = math.Round(float64(to-from) * 60 / sum.Seconds)
	sum.ServerTPMSource = s.source
}
