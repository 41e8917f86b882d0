package runner

import (
	"math"
	"math/rand/v2"
	"time"
)

// schedule yields one client's intended start times: a Poisson process of the given
// rate anchored at the run's start, so that a late client does not shift its future
// starts (that is what makes latency coordinated-omission correct).
type schedule struct {
	start  time.Time
	mean   float64 // mean gap in nanoseconds
	rng    *rand.Rand
	at     float64 // offset of the current intended start, ns
	cur    time.Time
	reread bool
}

func newSchedule(start time.Time, rate float64, seed uint64, client int) *schedule {
	return &schedule{
		start: start,
		mean:  1e9 / rate,
		rng:   rand.New(rand.NewPCG(seed^0x5eed5eed, uint64(client)+1)),
	}
}

// next returns the next intended start.
func (s *schedule) next() time.Time {
	if s.reread {
		s.reread = false
		return s.cur
	}
	s.at += s.rng.ExpFloat64() * s.mean
	s.cur = s.start.Add(time.Duration(s.at))
	return s.cur
}

// skipTo moves the schedule to t (after cur) without drawing the starts between: the
// next start is drawn from t on, which is exact for a Poisson process (it has no
// memory). It returns the expected number of starts skipped, after cur and before t.
func (s *schedule) skipTo(t time.Time) int64 {
	s.reread = false
	gap := float64(t.Sub(s.cur))
	s.at = float64(t.Sub(s.start))
	s.cur = t
	if gap <= 0 {
		return 0
	}
	return int64(math.Round(gap / s.mean))
}

// unread makes the next call to next return the same start again.
func (s *schedule) unread() { s.reread = true }
