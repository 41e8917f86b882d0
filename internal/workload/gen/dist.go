package gen

import (
	"fmt"
	"math"
	"strings"
)

// Kind names a distribution.
type Kind uint8

// The distributions, with sysbench's names.
const (
	uniform Kind = iota
	zipfian
	Gaussian
	Special
	numKinds
)

var kindNames = [numKinds]string{"uniform", "zipfian", "gaussian", "special"}

func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// kinds lists the distribution names.
func kinds() []string { return kindNames[:] }

// ParseKind returns the distribution with this name.
func ParseKind(name string) (Kind, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	for i, s := range kindNames {
		if n == s {
			return Kind(i), nil
		}
	}
	return 0, fmt.Errorf("unknown distribution %q (use %s)", name, strings.Join(kindNames[:], ", "))
}

// Params shape the non-uniform distributions. The zero value is not useful; start
// from DefaultParams, which are sysbench's defaults.
type Params struct {
	// ZipfExp is the zipfian exponent (sysbench --rand-zipfian-exp), >= 0.
	ZipfExp float64
	// Iter is the number of uniform draws averaged by gaussian and by the cold part of
	// special (sysbench --rand-spec-iter), >= 1.
	Iter int
	// SpecialPct is the percentage of the range that is hot in special (sysbench
	// --rand-spec-pct), 0 to 100.
	SpecialPct float64
	// SpecialRes is the percentage of special draws that hit the hot part (sysbench
	// --rand-spec-res), 0 to 99.
	SpecialRes float64
}

// DefaultParams are sysbench's defaults: exponent 0.8, 12 iterations, 75% of draws in 1%.
func DefaultParams() Params {
	return Params{ZipfExp: 0.8, Iter: 12, SpecialPct: 1, SpecialRes: 75}
}

// check reports the first parameter out of range.
func (p Params) check() error {
	switch {
	case !(p.ZipfExp >= 0) || math.IsInf(p.ZipfExp, 0):
		return fmt.Errorf("zipfian exponent %v must be 0 or more", p.ZipfExp)
	case p.Iter < 1:
		return fmt.Errorf("iterations %d must be 1 or more", p.Iter)
	case !(p.SpecialPct >= 0 && p.SpecialPct <= 100):
		return fmt.Errorf("special percentage of the range %v must be 0 to 100", p.SpecialPct)
	case !(p.SpecialRes >= 0 && p.SpecialRes < 100):
		return fmt.Errorf("special percentage of draws %v must be 0 to 99", p.SpecialRes)
	}
	return nil
}

// Dist draws integers in a fixed range [lo, hi] from one distribution. It holds only
// constants: several workers may share one, each drawing with its own Rand.
type Dist struct {
	kind   Kind
	lo, hi int64
	p      Params
	zipf   Zipf
}

// newDist returns the distribution named name (uniform, zipfian, gaussian or special)
// over [lo, hi].
func newDist(name string, lo, hi int64, p Params) (*Dist, error) {
	k, err := ParseKind(name)
	if err != nil {
		return nil, err
	}
	return NewDistKind(k, lo, hi, p)
}

// NewDistKind is NewDist for a parsed Kind.
func NewDistKind(k Kind, lo, hi int64, p Params) (*Dist, error) {
	if k >= numKinds {
		return nil, fmt.Errorf("unknown distribution %v", k)
	}
	if hi < lo {
		return nil, fmt.Errorf("empty range [%d, %d]", lo, hi)
	}
	if err := p.check(); err != nil {
		return nil, err
	}
	d := &Dist{kind: k, lo: lo, hi: hi, p: p}
	if k == zipfian {
		d.zipf = NewZipf(hi-lo+1, p.ZipfExp)
	}
	return d, nil
}

// distKind is the distribution's kind.
func (d *Dist) distKind() Kind { return d.kind }

// Next draws one value in [Min, Max].
func (d *Dist) Next(g *Rand) int64 {
	switch d.kind {
	case zipfian:
		return d.lo + d.zipf.Next(g) - 1
	case Gaussian:
		return g.Gaussian(d.lo, d.hi, d.p.Iter)
	case Special:
		return g.Special(d.lo, d.hi, d.p.SpecialPct, d.p.SpecialRes, d.p.Iter)
	default:
		return g.Uniform(d.lo, d.hi)
	}
}
