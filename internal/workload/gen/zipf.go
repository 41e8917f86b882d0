package gen

import "math"

// Zipf draws integers in [1, n] with P(k) proportional to 1/k^e, by Hörmann and
// Derflinger's rejection-inversion method ("Rejection-inversion to generate variates
// from monotone discrete distributions", ACM TOMACS 6.3, 1996), the method sysbench
// uses for --rand-type=zipfian. Setup is O(1) and a draw takes a few logarithms and
// exponentials, with an expected number of rounds close to 1; no tables are built.
//
// A Zipf holds only constants, so one value can be shared by several workers, each
// drawing with its own Rand.
type Zipf struct {
	n    int64
	e    float64
	s    float64 // accept k at once when k - x <= s
	hx1  float64 // H(1.5) - 1
	hInt float64 // H(n + 0.5)
}

// NewZipf returns a Zipf over [1, n] with exponent e >= 0 (0 is uniform; sysbench's
// default is 0.8). n must be at least 1.
func NewZipf(n int64, e float64) Zipf {
	if n < 1 {
		n = 1
	}
	if e < 0 || math.IsNaN(e) {
		e = 0
	}
	return Zipf{
		n:    n,
		e:    e,
		s:    2 - hIntegralInverse(hIntegral(2.5, e)-h(2, e), e),
		hx1:  hIntegral(1.5, e) - 1,
		hInt: hIntegral(float64(n)+0.5, e),
	}
}

// N is the size of the range.
func (z *Zipf) N() int64 { return z.n }

// Next draws a value in [1, n]; 1 is the most frequent.
func (z *Zipf) Next(g *Rand) int64 {
	for {
		// u is uniform over (H(1.5) - 1, H(n + 0.5)], the area under the hat.
		u := z.hInt + g.r.Float64()*(z.hx1-z.hInt)
		x := hIntegralInverse(u, z.e)
		k := int64(x + 0.5)
		if k < 1 {
			k = 1
		} else if k > z.n {
			k = z.n
		}
		// The first test is a cheap sufficient condition for the second, which accepts
		// k with probability h(k) / (H(k + 1/2) - H(k - 1/2)).
		if float64(k)-x <= z.s || u >= hIntegral(float64(k)+0.5, z.e)-h(float64(k), z.e) {
			return k
		}
	}
}

// h is the unnormalised probability 1/x^e.
func h(x, e float64) float64 { return math.Exp(-e * math.Log(x)) }

// hIntegral is H(x) = (x^(1-e) - 1) / (1-e), or log(x) when e = 1: a primitive of h
// that stays finite and continuous in e.
func hIntegral(x, e float64) float64 {
	lx := math.Log(x)
	return expm1OverX((1-e)*lx) * lx
}

// hIntegralInverse is the inverse of hIntegral.
func hIntegralInverse(x, e float64) float64 {
	t := x * (1 - e)
	if t < -1 {
		// Only reachable through rounding; -1 is the edge of the domain.
		t = -1
	}
	return math.Exp(log1pOverX(t) * x)
}

// log1pOverX is log(1+x)/x, with its Taylor series near 0.
func log1pOverX(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Log1p(x) / x
	}
	return 1 - x*(0.5-x*(1.0/3-0.25*x))
}

// expm1OverX is (exp(x)-1)/x, with its Taylor series near 0.
func expm1OverX(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Expm1(x) / x
	}
	return 1 + x*0.5*(1+x/3*(1+0.25*x))
}
