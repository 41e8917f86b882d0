// Package gen draws the random values workloads send: integers from the distributions
// sysbench offers (uniform, zipfian, gaussian, special) and sysbench's digit strings.
//
// Each worker owns one Rand, seeded from the run's seed and its worker id, so a run is
// reproducible and workers never share state. Drawing never allocates.
package gen

import (
	"math"
	"math/rand/v2"
)

// Rand is one worker's random source: a PCG generator from math/rand/v2. It is not
// safe for concurrent use.
type Rand struct {
	pcg rand.PCG
	r   *rand.Rand
}

// New returns a generator for one worker. The same (seed, stream) always yields the
// same sequence; different streams (worker ids) yield unrelated sequences.
func New(seed, stream uint64) *Rand {
	g := &Rand{}
	// PCG takes a 128-bit seed; the stream half goes through a mixer so that
	// neighbouring worker ids start far apart in the state space.
	g.pcg.Seed(seed, Mix64(stream^0x9e3779b97f4a7c15))
	g.r = rand.New(&g.pcg)
	return g
}

// Mix64 is the splitmix64 finalizer: it spreads the bits of x over the whole word
// (neighbouring inputs give unrelated outputs).
func Mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// Uint64 returns 64 random bits.
func (g *Rand) Uint64() uint64 { return g.r.Uint64() }

// Float64 returns a number in [0, 1).
func (g *Rand) Float64() float64 { return g.r.Float64() }

// Uniform returns an integer in [a, b], every value equally likely. a must not be
// greater than b.
func (g *Rand) Uniform(a, b int64) int64 {
	span := uint64(b - a)
	if span == math.MaxUint64 {
		return int64(g.r.Uint64())
	}
	return a + int64(g.r.Uint64N(span+1))
}

// Gaussian returns an integer in [a, b] with sysbench's "gaussian" distribution: the
// mean of iter uniform draws over the range, a bell centred on the middle of the range
// that narrows as iter grows (sysbench's default iter is 12).
func (g *Rand) Gaussian(a, b int64, iter int) int64 {
	t := float64(b-a) + 1
	var sum float64
	for range iter {
		sum += g.r.Float64() * t
	}
	return clamp(a+int64(sum/float64(iter)), a, b)
}

// Special returns an integer in [a, b] with sysbench's "special" distribution: res
// percent of the draws fall in a window of pct percent of the range around its middle
// (sysbench's defaults, pct 1 and res 75: three quarters of the draws hit one percent of
// the rows); the rest follow Gaussian(a, b, iter).
//
// The arithmetic is sysbench's own, including one quirk kept for fidelity: the hot
// draws reuse the uniform number that chose the hot branch, so they land in the upper
// res percent of the window rather than all of it.
func (g *Rand) Special(a, b int64, pct, res float64, iter int) int64 {
	t := float64(b - a)
	rangeSize := t * 100 / (100 - res)
	rnd := g.r.Float64()
	if rnd*rangeSize < t {
		var sum float64
		for range iter {
			sum += g.r.Float64()
		}
		return clamp(a+int64(sum*t/float64(iter)), a, b)
	}
	d := t * pct / 100
	v := rnd*(d+1) + t/2 - t*pct/200
	return clamp(a+int64(v), a, b)
}

func clamp(v, a, b int64) int64 {
	if v < a {
		return a
	}
	if v > b {
		return b
	}
	return v
}
