package pgscript

import (
	"fmt"
	"math"
	"testing"
)

// draws evaluates expr n times with a fixed seed and counts the values in [lb, ub].
func draws(t *testing.T, expr string, lb, ub int64, n int) []float64 {
	t.Helper()
	vars := newVarTable()
	e, err := parseExpr(expr, vars)
	if err != nil {
		t.Fatal(err)
	}
	s := newState(vars, 20261123, 7, nil)
	counts := make([]float64, ub-lb+1)
	for range n {
		v, err := s.eval(e)
		if err != nil {
			t.Fatal(err)
		}
		if v.K != kInt || v.I < lb || v.I > ub {
			t.Fatalf("%s gave %s, outside [%d, %d]", expr, show(v, nil), lb, ub)
		}
		counts[v.I-lb]++
	}
	return counts
}

// chiSquare compares counts with expected probabilities; the bound is the 0.999
// quantile of the chi-square distribution for len(p)-1 degrees of freedom (a fixed
// seed makes the test deterministic; the bound says the formula, not luck, holds).
func chiSquare(t *testing.T, name string, counts, p []float64) {
	t.Helper()
	n := 0.0
	for _, c := range counts {
		n += c
	}
	x2 := 0.0
	for i, c := range counts {
		e := n * p[i]
		x2 += (c - e) * (c - e) / e
	}
	df := float64(len(p) - 1)
	// Wilson–Hilferty approximation of the 0.999 quantile (z = 3.09).
	bound := df * math.Pow(1-2/(9*df)+3.09*math.Sqrt(2/(9*df)), 3)
	if x2 > bound {
		t.Errorf("%s: chi-square %.1f exceeds %.1f (df %.0f): counts %v", name, x2, bound, df, counts)
	}
}

const nDraws = 200000

func TestRandomUniform(t *testing.T) {
	c := draws(t, "random(-5, 14)", -5, 14, nDraws)
	p := make([]float64, 20)
	for i := range p {
		p[i] = 1.0 / 20
	}
	chiSquare(t, "random", c, p)
}

// pgbench's documented formula: P(lb+k) ∝ exp(-param·k/n) for k in 0..n-1.
func TestRandomExponential(t *testing.T) {
	for _, param := range []float64{0.5, 2.5, 10} {
		const n = 20
		c := draws(t, fmt.Sprintf("random_exponential(1, %d, %g)", n, param), 1, n, nDraws)
		p := make([]float64, n)
		for k := range p {
			p[k] = (math.Exp(-param*float64(k)/n) - math.Exp(-param*float64(k+1)/n)) / (1 - math.Exp(-param))
		}
		chiSquare(t, fmt.Sprintf("random_exponential param %g", param), c, p)
	}
}

// pgbench's documented formula: a normal distribution truncated to ±param standard
// deviations over the range, P(lb+k) = (Φ(z(k+1)) − Φ(z(k))) / (2Φ(param) − 1)
// with z(k) = −param + 2·param·k/n.
func TestRandomGaussian(t *testing.T) {
	phi := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	for _, param := range []float64{2, 2.5, 5} {
		const n = 20
		c := draws(t, fmt.Sprintf("random_gaussian(1, %d, %g)", n, param), 1, n, nDraws)
		p := make([]float64, n)
		for k := range p {
			z0 := -param + 2*param*float64(k)/n
			z1 := -param + 2*param*float64(k+1)/n
			p[k] = (phi(z1) - phi(z0)) / (2*phi(param) - 1)
		}
		chiSquare(t, fmt.Sprintf("random_gaussian param %g", param), c, p)
	}
}

// pgbench's documented formula: P(lb+k−1) ∝ 1/k^param for k in 1..n.
func TestRandomZipfian(t *testing.T) {
	for _, param := range []float64{1.01, 1.5, 3} {
		const n = 30
		c := draws(t, fmt.Sprintf("random_zipfian(1, %d, %g)", n, param), 1, n, nDraws)
		p := make([]float64, n)
		sum := 0.0
		for k := range p {
			p[k] = 1 / math.Pow(float64(k+1), param)
			sum += p[k]
		}
		for k := range p {
			p[k] /= sum
		}
		// Merge the tail so that every expected count is at least 5.
		for len(p) > 2 && nDraws*p[len(p)-1] < 5 {
			p[len(p)-2] += p[len(p)-1]
			c[len(c)-2] += c[len(c)-1]
			p, c = p[:len(p)-1], c[:len(c)-1]
		}
		chiSquare(t, fmt.Sprintf("random_zipfian param %g", param), c, p)
	}
}

func TestPermuteIsAPermutation(t *testing.T) {
	for _, size := range []uint64{1, 2, 3, 7, 64, 65, 1000, 4097} {
		for _, seed := range []uint64{0, 1, 42, 1 << 63} {
			seen := make([]bool, size)
			same := 0
			for i := range size {
				v := permute(i, size, seed)
				if v < 0 || uint64(v) >= size || seen[v] {
					t.Fatalf("permute(%d, %d, %d) = %d: not a permutation", i, size, seed, v)
				}
				seen[v] = true
				if uint64(v) == i {
					same++
				}
			}
			if size >= 1000 && same > int(size)/50 {
				t.Errorf("permute size %d seed %d leaves %d values in place: not mixed", size, seed, same)
			}
		}
	}
	// Different seeds give different permutations; i outside the range wraps.
	if permute(1, 1000, 1) == permute(1, 1000, 2) && permute(2, 1000, 1) == permute(2, 1000, 2) {
		t.Error("seeds 1 and 2 give the same permutation")
	}
	v1, _ := evalText(t, "permute(1003, 1000, 5)")
	v2, _ := evalText(t, "permute(3, 1000, 5)")
	v3, _ := evalText(t, "permute(-997, 1000, 5)")
	if v1 != v2 || v2 != v3 {
		t.Errorf("permute does not take i modulo size: %v %v %v", v1, v2, v3)
	}
}
