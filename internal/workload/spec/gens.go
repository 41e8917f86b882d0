package spec

import (
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload/gen"
)

// drawer is where values are drawn: a worker's or a loader's random source and the
// buffer that text values are appended to. The buffer is reset before each
// transaction (or row); values drawn earlier keep pointing at their bytes even when
// an append moves the buffer, because nothing is ever written over them until the
// reset.
type drawer struct {
	r    *gen.Rand
	text []byte
}

// valueGen draws one value. Implementations hold only constants (and, for sequences,
// an atomic counter shared by all clients), so one is shared by every worker.
type valueGen interface {
	draw(d *drawer, dst *target.Value)
	// intRange reports the bounds of an integer generator.
	intRange() (lo, hi int64, ok bool)
	String() string
}

// constGen is a constant.
type constGen struct {
	v    target.Value
	desc string
}

func (g *constGen) draw(_ *drawer, dst *target.Value) { *dst = g.v }
func (g *constGen) intRange() (int64, int64, bool) {
	return g.v.Int, g.v.Int, g.v.Kind == target.KindInt
}
func (g *constGen) String() string { return g.desc }

// constValue types a constant: a whole number, a decimal number, null or text.
func constValue(s string, null bool) (target.Value, string) {
	if null {
		return target.Null(), "null"
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return target.Int64(i), s
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && isDecimal(s) {
		return target.Float(f), s
	}
	return target.Text([]byte(s)), strconv.Quote(s)
}

func isDecimal(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E') {
			return false
		}
	}
	return s != ""
}

// intGen draws integers with one of package gen's distributions.
type intGen struct {
	lo, hi int64
	next   func(*gen.Rand) int64
	desc   string
}

func (g *intGen) draw(d *drawer, dst *target.Value) { *dst = target.Int64(g.next(d.r)) }
func (g *intGen) intRange() (int64, int64, bool)    { return g.lo, g.hi, true }
func (g *intGen) String() string                    { return g.desc }

// seqState is a sequence: a counter shared by all clients, so its values are unique
// across them. Drawing is one atomic add.
type seqState struct {
	name        string
	start, step int64
	after       string // table.column whose maximum Setup continues after
	next        atomic.Int64
}

func newSeq(name string, start, step int64, after string) *seqState {
	s := &seqState{name: name, start: start, step: step, after: after}
	s.next.Store(start)
	return s
}

// continueAfter moves the sequence past max, the largest value already used.
func (s *seqState) continueAfter(max int64) {
	if s.step > 0 && max+s.step > s.next.Load() {
		s.next.Store(max + s.step)
	}
	if s.step < 0 && max+s.step < s.next.Load() {
		s.next.Store(max + s.step)
	}
}

func (s *seqState) String() string {
	d := fmt.Sprintf("start %d, step %d", s.start, s.step)
	if s.after != "" {
		d += ", after max(" + s.after + ")"
	}
	return d
}

type seqGen struct{ s *seqState }

func (g *seqGen) draw(_ *drawer, dst *target.Value) {
	*dst = target.Int64(g.s.next.Add(g.s.step) - g.s.step)
}
func (g *seqGen) intRange() (int64, int64, bool) { return 0, 0, false }
func (g *seqGen) String() string {
	if g.s.name != "" {
		return "sequence " + g.s.name + " (" + g.s.String() + ")"
	}
	return "sequence (" + g.s.String() + ")"
}

// latestGen favours the values a sequence handed out last: the last one is the most
// likely, then the one before, with zipfian probabilities over a window (YCSB's
// "latest" request distribution).
type latestGen struct {
	s      *seqState
	z      gen.Zipf
	window int64
	exp    float64
}

func (g *latestGen) draw(d *drawer, dst *target.Value) {
	last := g.s.next.Load() - g.s.step
	v := last - (g.z.Next(d.r)-1)*g.s.step
	if (g.s.step > 0 && v < g.s.start) || (g.s.step < 0 && v > g.s.start) {
		v = g.s.start
	}
	*dst = target.Int64(v)
}
func (g *latestGen) intRange() (int64, int64, bool) { return 0, 0, false }
func (g *latestGen) String() string {
	return fmt.Sprintf("latest of sequence %s (zipfian over the last %d, exp %g)", g.s.name, g.window, g.exp)
}

// stringGen draws random letters and digits of a length in [min, max], or fills a
// pattern.
type stringGen struct {
	min, max int
	pattern  string
}

func (g *stringGen) draw(d *drawer, dst *target.Value) {
	start := len(d.text)
	if g.pattern != "" {
		d.text = d.r.AppendPattern(d.text, g.pattern)
	} else {
		n := g.min
		if g.max > g.min {
			n = int(d.r.Uniform(int64(g.min), int64(g.max)))
		}
		d.text = d.r.AppendString(d.text, n)
	}
	*dst = target.Text(d.text[start:len(d.text):len(d.text)])
}
func (g *stringGen) intRange() (int64, int64, bool) { return 0, 0, false }
func (g *stringGen) String() string {
	switch {
	case g.pattern != "":
		return "string of pattern " + strconv.Quote(g.pattern)
	case g.min == g.max:
		return fmt.Sprintf("random string of %d", g.min)
	}
	return fmt.Sprintf("random string of %d to %d", g.min, g.max)
}

// choiceGen picks one of several constants with weights.
type choiceGen struct {
	vals []target.Value
	cum  []float64 // cumulative weights
	desc string
}

func (g *choiceGen) draw(d *drawer, dst *target.Value) {
	u := d.r.Float64() * g.cum[len(g.cum)-1]
	for i, c := range g.cum {
		if u < c {
			*dst = g.vals[i]
			return
		}
	}
	*dst = g.vals[len(g.vals)-1]
}
func (g *choiceGen) intRange() (int64, int64, bool) {
	var lo, hi int64
	for i, v := range g.vals {
		if v.Kind != target.KindInt {
			return 0, 0, false
		}
		if i == 0 || v.Int < lo {
			lo = v.Int
		}
		if i == 0 || v.Int > hi {
			hi = v.Int
		}
	}
	return lo, hi, len(g.vals) > 0
}
func (g *choiceGen) String() string { return g.desc }

// timeGen draws the current time, or a time uniformly in [lo, hi] (microseconds).
type timeGen struct {
	now    bool
	lo, hi int64 // Unix microseconds
}

func (g *timeGen) draw(d *drawer, dst *target.Value) {
	if g.now {
		*dst = target.Time(time.Now().UTC().Truncate(time.Microsecond))
		return
	}
	*dst = target.Time(time.UnixMicro(d.r.Uniform(g.lo, g.hi)).UTC())
}
func (g *timeGen) intRange() (int64, int64, bool) { return 0, 0, false }
func (g *timeGen) String() string {
	if g.now {
		return "timestamp now"
	}
	return "timestamp from " + time.UnixMicro(g.lo).UTC().Format(time.RFC3339) + " to " + time.UnixMicro(g.hi).UTC().Format(time.RFC3339)
}

// floatGen draws a float uniformly in [lo, hi).
type floatGen struct{ lo, hi float64 }

func (g *floatGen) draw(d *drawer, dst *target.Value) {
	*dst = target.Float(d.r.FloatRange(g.lo, g.hi))
}
func (g *floatGen) intRange() (int64, int64, bool) { return 0, 0, false }
func (g *floatGen) String() string                 { return fmt.Sprintf("float uniform in [%g, %g)", g.lo, g.hi) }
