package runner

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestBoundaries(t *testing.T) {
	cases := []struct {
		interval, warmup, duration time.Duration
		want                       []time.Duration
	}{
		{time.Second, 0, 3 * time.Second, []time.Duration{1e9, 2e9, 3e9}},
		// Warm-up that is not a multiple of the interval gets its own cut, and
		// measurement intervals start at its end.
		{time.Second, 1500 * time.Millisecond, 2 * time.Second, []time.Duration{1e9, 1.5e9, 2.5e9, 3.5e9}},
		// A duration that is not a multiple of the interval ends with a short interval.
		{250 * time.Millisecond, 0, 600 * time.Millisecond, []time.Duration{250e6, 500e6, 600e6}},
	}
	for _, c := range cases {
		r := &Runner{cfg: Config{Interval: c.interval, Warmup: c.warmup}}
		r.start = time.Unix(1000, 0)
		r.end = r.start.Add(c.warmup + c.duration)
		var got []time.Duration
		for prev := time.Duration(0); prev < c.warmup+c.duration; {
			prev = r.nextBoundary(prev)
			got = append(got, prev)
		}
		if len(got) != len(c.want) {
			t.Errorf("interval %s warmup %s duration %s: boundaries %v, want %v", c.interval, c.warmup, c.duration, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("interval %s warmup %s duration %s: boundaries %v, want %v", c.interval, c.warmup, c.duration, got, c.want)
				break
			}
		}
	}
}

// The schedule is a Poisson process of the asked rate: mean gap 1/rate, coefficient of
// variation 1, anchored at the start, and reproducible from the seed.
func TestPoissonSchedule(t *testing.T) {
	start := time.Unix(0, 0)
	s := newSchedule(start, 1000, 42, 0)
	const n = 200000
	prev := start
	var sum, sumsq float64
	for i := 0; i < n; i++ {
		at := s.next()
		gap := at.Sub(prev).Seconds()
		sum += gap
		sumsq += gap * gap
		prev = at
	}
	mean := sum / n
	sd := math.Sqrt(sumsq/n - mean*mean)
	if math.Abs(mean-0.001)/0.001 > 0.01 {
		t.Errorf("mean gap %.6fs, want 0.001s ±1%%", mean)
	}
	if math.Abs(sd/mean-1) > 0.02 {
		t.Errorf("coefficient of variation %.3f, want 1 (exponential gaps)", sd/mean)
	}
	a, b := newSchedule(start, 50, 7, 3), newSchedule(start, 50, 7, 3)
	for i := 0; i < 100; i++ {
		if a.next() != b.next() {
			t.Fatal("same seed and client gave different schedules")
		}
	}
	c := newSchedule(start, 50, 7, 4)
	if c.next() == newSchedule(start, 50, 7, 3).next() {
		t.Error("different clients share a schedule")
	}
	u := newSchedule(start, 50, 7, 3)
	first := u.next()
	u.unread()
	if u.next() != first {
		t.Error("unread did not return the same start again")
	}
}

func TestConfigValidate(t *testing.T) {
	ok := Config{Clients: 1, Duration: time.Second, Interval: time.Second, MaxTries: 1}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := []func(c *Config){
		func(c *Config) { c.Clients = 0 },
		func(c *Config) { c.Rate = -1 },
		func(c *Config) { c.Rate = math.NaN() },
		func(c *Config) { c.Rate = 1e12 }, // beyond a nanosecond schedule
		func(c *Config) { c.Rate = MaxRate * 1.01 },
		func(c *Config) { c.Interval = 0 },
		func(c *Config) { c.MaxTries = 0 },
		func(c *Config) { c.Transactions = 5 },
		func(c *Config) { c.Duration = 0 },
		func(c *Config) { c.Warmup = -time.Second },
	}
	for i, f := range bad {
		c := ok
		f(&c)
		if c.Validate() == nil {
			t.Errorf("case %d: %+v accepted", i, c)
		}
	}
}

// skipTo counts the starts it skips by the rate, and the schedule goes on from there
// with the same rate.
func TestScheduleSkipTo(t *testing.T) {
	start := time.Now()
	s := newSchedule(start, 1e6, 1, 0) // one start per µs
	first := s.next()
	n := s.skipTo(start.Add(time.Second))
	if want := int64(float64(time.Second-first.Sub(start)) / 1e3); n < want-1 || n > want+1 {
		t.Fatalf("skipped %d starts in a second at 1e6/s, want %d", n, want)
	}
	prev := start.Add(time.Second)
	var sum time.Duration
	const k = 10000
	for i := 0; i < k; i++ {
		next := s.next()
		if next.Before(prev) {
			t.Fatalf("start %d at %s, before the previous %s", i, next.Sub(start), prev.Sub(start))
		}
		sum += next.Sub(prev)
		prev = next
	}
	if mean := sum / k; mean < 950*time.Nanosecond || mean > 1050*time.Nanosecond {
		t.Fatalf("mean gap after skipTo %s, want 1µs", mean)
	}
	if s.skipTo(prev.Add(-time.Millisecond)) != 0 {
		t.Fatal("skipping backwards counted starts")
	}
}

// The warning names how many ends were late and how late, and says nothing when the
// cuts kept the schedule.
func TestLagWarnings(t *testing.T) {
	var l lagStats
	for i := 1; i <= 10; i++ {
		l.add(2*time.Millisecond, time.Duration(i)*100*time.Millisecond, 100*time.Millisecond)
	}
	if w := l.warnings(100 * time.Millisecond); w != nil {
		t.Fatalf("2ms late at 100ms intervals warned: %v", w)
	}
	l.add(250*time.Millisecond, 1100*time.Millisecond, 100*time.Millisecond)
	l.skipped = 2
	w := l.warnings(100 * time.Millisecond)
	if len(w) != 1 || w[0].Kind != WarnLateIntervals {
		t.Fatalf("warnings %v", w)
	}
	for _, part := range []string{"1 of 11 interval ends", "more than 10ms late", "worst 250ms, at 1.1s", "2 scheduled ends were skipped"} {
		if !strings.Contains(w[0].Text, part) {
			t.Errorf("warning %q lacks %q", w[0].Text, part)
		}
	}
}

// An interval end whose exchanges of the clients' recorders took longer than a tenth
// of the interval is named, with the worst; quick ones are not.
func TestWideCutWarnings(t *testing.T) {
	var l lagStats
	for range 10 {
		l.spread(3*time.Millisecond, 100*time.Millisecond)
	}
	if w := l.warnings(100 * time.Millisecond); w != nil {
		t.Fatalf("3ms exchanges at 100ms intervals warned: %v", w)
	}
	l.spread(42*time.Millisecond, 100*time.Millisecond)
	w := l.warnings(100 * time.Millisecond)
	if len(w) != 1 || w[0].Kind != warnWideCuts {
		t.Fatalf("warnings %v", w)
	}
	for _, part := range []string{"1 of 11 interval ends", "more than 10ms", "worst 42ms", "either side"} {
		if !strings.Contains(w[0].Text, part) {
			t.Errorf("warning %q lacks %q", w[0].Text, part)
		}
	}
	l.add(250*time.Millisecond, time.Second, 100*time.Millisecond)
	if w := l.warnings(100 * time.Millisecond); len(w) != 2 || w[0].Kind != WarnLateIntervals || w[1].Kind != warnWideCuts {
		t.Fatalf("late and wide: %v", w)
	}
}
