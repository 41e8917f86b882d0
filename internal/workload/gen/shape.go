package gen

import (
	"fmt"
	"math"
)

// The generators in this file complement Dist (sysbench's four distributions) with the
// shapes YCSB and hand-written workload files use. Like Dist, each holds only
// constants, so workers may share one and draw with their own Rand; drawing never
// allocates.

// exponential draws integers in [lo, hi]: lo plus the integer part of an exponential
// variate with the given mean, truncated at the top of the range (inverse transform of
// the truncated distribution, one uniform number per draw, no rejection).
type exponential struct {
	lo, hi int64
	mean   float64
	c      float64 // 1 - exp(-(hi-lo+1)/mean): the mass below the top of the range
}

// NewExponential returns an exponential distribution over [lo, hi] whose untruncated
// mean offset from lo is mean (> 0). Small values are frequent, large ones rare.
func NewExponential(lo, hi int64, mean float64) (*exponential, error) {
	if hi < lo {
		return nil, fmt.Errorf("empty range [%d, %d]", lo, hi)
	}
	if !(mean > 0) || math.IsInf(mean, 0) {
		return nil, fmt.Errorf("exponential mean %v must be more than 0", mean)
	}
	span := float64(hi-lo) + 1
	return &exponential{lo: lo, hi: hi, mean: mean, c: -math.Expm1(-span / mean)}, nil
}

// Next draws one value in [lo, hi].
func (e *exponential) Next(g *Rand) int64 {
	x := -e.mean * math.Log1p(-g.r.Float64()*e.c)
	return clamp(e.lo+int64(x), e.lo, e.hi)
}

// hotSpot draws integers in [lo, hi] as YCSB's hotspot generator does: a fraction of
// the draws (hotProb) goes uniformly to the first hotFrac of the range, the others
// uniformly to the rest.
type hotSpot struct {
	lo, hi  int64
	hotHi   int64 // last value of the hot set
	hotProb float64
}

// NewHotSpot returns a hot-spot distribution over [lo, hi]: hotFrac (0 to 1) of the
// values receive hotProb (0 to 1) of the draws.
func NewHotSpot(lo, hi int64, hotFrac, hotProb float64) (*hotSpot, error) {
	if hi < lo {
		return nil, fmt.Errorf("empty range [%d, %d]", lo, hi)
	}
	if !(hotFrac >= 0 && hotFrac <= 1) {
		return nil, fmt.Errorf("hot fraction %v must be 0 to 1", hotFrac)
	}
	if !(hotProb >= 0 && hotProb <= 1) {
		return nil, fmt.Errorf("hot probability %v must be 0 to 1", hotProb)
	}
	n := float64(hi-lo) + 1
	hotN := int64(n * hotFrac)
	if hotN < 1 {
		hotN = 1
	}
	return &hotSpot{lo: lo, hi: hi, hotHi: lo + hotN - 1, hotProb: hotProb}, nil
}

// Next draws one value in [lo, hi].
func (h *hotSpot) Next(g *Rand) int64 {
	if g.r.Float64() < h.hotProb || h.hotHi >= h.hi {
		return g.Uniform(h.lo, h.hotHi)
	}
	return g.Uniform(h.hotHi+1, h.hi)
}

// normal draws integers in [lo, hi] from a normal distribution with the given mean
// and standard deviation, rounded to the nearest integer. Draws outside the range are
// drawn again (up to 16 times, then clamped), so the shape inside the range is kept.
type normal struct {
	lo, hi   int64
	mean, sd float64
}

// NewNormal returns a normal distribution over [lo, hi]; sd must be positive.
func NewNormal(lo, hi int64, mean, sd float64) (*normal, error) {
	if hi < lo {
		return nil, fmt.Errorf("empty range [%d, %d]", lo, hi)
	}
	if !(sd > 0) || math.IsInf(sd, 0) || math.IsNaN(mean) || math.IsInf(mean, 0) {
		return nil, fmt.Errorf("normal distribution needs a finite mean and a standard deviation above 0 (got %v, %v)", mean, sd)
	}
	return &normal{lo: lo, hi: hi, mean: mean, sd: sd}, nil
}

// Next draws one value in [lo, hi].
func (n *normal) Next(g *Rand) int64 {
	var x float64
	for range 16 {
		x = math.Round(n.mean + n.sd*g.r.NormFloat64())
		if x >= float64(n.lo) && x <= float64(n.hi) {
			return int64(x)
		}
	}
	if x < float64(n.lo) {
		return n.lo
	}
	return n.hi
}

// Scramble maps v to a pseudo-random but fixed value in [lo, hi] by hashing it (FNV-1a
// over its eight bytes), as YCSB's scrambled zipfian does to spread the popular ranks
// of a zipfian over the key space instead of bunching them at its start.
func Scramble(v, lo, hi int64) int64 {
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	h := uint64(offset)
	u := uint64(v)
	for range 8 {
		h ^= u & 0xff
		h *= prime
		u >>= 8
	}
	span := uint64(hi-lo) + 1
	if span == 0 {
		return int64(h)
	}
	return lo + int64(h%span)
}

// FloatRange returns a float in [lo, hi).
func (g *Rand) FloatRange(lo, hi float64) float64 { return lo + g.r.Float64()*(hi-lo) }

// alnum holds the characters of random strings: digits and ASCII letters.
const alnum = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

// AppendString appends n random letters and digits to dst and returns it. Each
// 64-bit draw yields up to ten characters from six-bit chunks; chunks of 62 or 63 are
// skipped, so every character is equally likely.
func (g *Rand) AppendString(dst []byte, n int) []byte {
	for n > 0 {
		v := g.r.Uint64()
		for i := 0; i < 10 && n > 0; i++ {
			if c := v & 0x3f; c < 62 {
				dst = append(dst, alnum[c])
				n--
			}
			v >>= 6
		}
	}
	return dst
}

// AppendPattern appends a string made from pattern to dst: '#' becomes a random digit,
// '@' a random lower-case letter, '*' a random letter or digit, and every other byte
// stays as written (sysbench's templates use '#' and '@').
func (g *Rand) AppendPattern(dst []byte, pattern string) []byte {
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; c {
		case '#':
			dst = append(dst, byte('0'+g.r.Uint64N(10)))
		case '@':
			dst = append(dst, byte('a'+g.r.Uint64N(26)))
		case '*':
			dst = append(dst, alnum[g.r.Uint64N(62)])
		default:
			dst = append(dst, c)
		}
	}
	return dst
}
