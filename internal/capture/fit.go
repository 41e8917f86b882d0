package capture

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// minFit is the fewest observed values from which a distribution is inferred.
const minFit = 50

// ksCrit is the Kolmogorov–Smirnov distance above which a fit is rejected at the 5%
// level for n observations (the large-sample approximation 1.36/√n).
func ksCrit(n int) float64 { return 1.36 / math.Sqrt(float64(n)) }

// fitValues infers a generator from the values a parameter was observed with, and
// says how sure the inference is. Integers get uniform or Zipfian over the range
// (the column's range in the data when known, lo ≤ hi); a few repeated texts get a
// weighted choice; other values get nil (the caller falls back to the data).
func fitValues(vals []string, lo, hi int64, haveRange bool) *Generator {
	if len(vals) == 0 {
		return nil
	}
	if first := vals[0]; !slices.ContainsFunc(vals, func(v string) bool { return v != first }) && len(vals) >= 5 {
		return &Generator{constYAML(first), fmt.Sprintf("the same value in all %d observed calls", len(vals))}
	}
	ints := make([]int64, 0, len(vals))
	for _, v := range vals {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			ints = nil
			break
		}
		ints = append(ints, n)
	}
	if ints != nil {
		omin, omax := slices.Min(ints), slices.Max(ints)
		if !haveRange || omin < lo || omax > hi {
			lo, hi = min(lo, omin), max(hi, omax)
			if !haveRange {
				lo, hi = omin, omax
			}
		}
		return fitInts(ints, lo, hi)
	}
	return fitChoice(vals)
}

func constYAML(v string) string {
	if v == "\x00" {
		return "null"
	}
	if _, err := strconv.ParseFloat(v, 64); err == nil {
		return v
	}
	return quote(v)
}

// fitInts tells uniform from skewed: under a uniform draw of n values from N, about
// N(1-(1-1/N)^n) distinct values are expected. Far fewer mean that some keys are hot:
// a Zipfian is fitted to the values' ranks by maximum likelihood and its fit judged
// by the Kolmogorov–Smirnov distance between the observed and fitted rank shares.
func fitInts(v []int64, lo, hi int64) *Generator {
	n := len(v)
	N := float64(hi-lo) + 1
	counts := map[int64]int{}
	for _, x := range v {
		counts[x]++
	}
	k := len(counts)
	rng := fmt.Sprintf("[%d, %d]", lo, hi)
	if n < minFit {
		return &Generator{"{uniform: " + rng + "}", fmt.Sprintf("only %d observed values, too few to infer a distribution: uniform over %s assumed", n, rng)}
	}
	expect := N * -math.Expm1(float64(n)*math.Log1p(-1/N))
	sd := math.Sqrt(max(expect*(1-expect/N), 1))
	// Where the values fall in the range, for a uniform fit.
	sorted := slices.Sorted(func(yield func(int64) bool) {
		for _, x := range v {
			if !yield(x) {
				return
			}
		}
	})
	d := 0.0
	for i, x := range sorted {
		f := (float64(x-lo) + 1) / N
		d = max(d, math.Abs(float64(i+1)/float64(n)-f), math.Abs(float64(i)/float64(n)-f))
	}
	crit := ksCrit(n)
	if float64(k) >= expect-3*sd {
		if d <= crit {
			return &Generator{"{uniform: " + rng + "}", fmt.Sprintf("uniform fits the %d observed values: %d distinct (%.0f expected), KS distance %.3f < %.3f (5%% level)", n, k, expect, d, crit)}
		}
		return &Generator{"{uniform: " + rng + "}", fmt.Sprintf("NOT a good fit: the %d observed values repeat no more than uniform ones would (%d distinct, %.0f expected) but crowd part of the range (KS distance %.3f > %.3f): uniform kept, edit it (e.g. gaussian)", n, k, expect, d, crit)}
	}
	// Skewed: rank the values by frequency.
	type vc struct {
		v int64
		c int
	}
	ranked := make([]vc, 0, k)
	for x, c := range counts {
		ranked = append(ranked, vc{x, c})
	}
	slices.SortFunc(ranked, func(a, b vc) int {
		if a.c != b.c {
			return b.c - a.c
		}
		return int(a.v - b.v)
	})
	// The ranks of values seen often are reliable; the order of the rarely seen ones is
	// chance. So the exponent is fitted by maximum likelihood to the head (the values
	// seen at least minHead times, each at its rank) and the tail (the other calls, as
	// calls to some rank beyond the head), and judged by the Kolmogorov–Smirnov
	// distance within the head and by whether the head's share of all calls is what the
	// fitted distribution gives it.
	const minHead = 5
	var freq []int
	nHead := 0
	for _, r := range ranked {
		if r.c >= minHead {
			freq = append(freq, r.c)
			nHead += r.c
		}
	}
	R := int64(len(freq))
	if R < 3 {
		return &Generator{"{uniform: " + rng + "}", fmt.Sprintf("NOT a good fit: the %d observed values repeat more than uniform ones would (%d distinct, %.0f expected), but too few values are seen %d times or more to fit a skew: uniform kept, edit it", n, k, expect, minHead)}
	}
	s := zipfMLE(freq, n, hi-lo+1)
	dz := zipfKS(freq, nHead, R, s)
	crit = ksCrit(nHead)
	headObs, headFit := float64(nHead)/float64(n), harmonic(R, s)/harmonic(hi-lo+1, s)
	// The hottest values at the start of the range (pgbench's random_zipfian) need no
	// scrambling; hot values spread over it (YCSB's scrambled zipfian) do.
	scramble := false
	for i := 0; i < min(5, len(ranked)); i++ {
		if ranked[i].v > lo+10 {
			scramble = true
		}
	}
	y := fmt.Sprintf("{zipfian: {min: %d, max: %d, exp: %.3f", lo, hi, s)
	if scramble {
		y += ", scramble: true"
	}
	y += "}}"
	verdict := "a good fit"
	if dz > crit || math.Abs(headObs-headFit) > 0.05 {
		verdict = "a ROUGH fit (edit it if the hot keys matter)"
	}
	top := ranked[0]
	return &Generator{y, fmt.Sprintf("skewed: %d distinct of %d observed values (%.0f expected if uniform), the hottest (%d) %.1f%% of calls; Zipfian exponent %.3f fitted by maximum likelihood to the ranks of the %d values seen %d+ times and the share of the rest (KS distance %.3f vs %.3f at the 5%% level; they took %.1f%% of calls, the fit gives them %.1f%%): %s",
		k, n, expect, top.v, 100*float64(top.c)/float64(n), s, R, minHead, dz, crit, 100*headObs, 100*headFit, verdict)}
}

// harmonic is H(m, s) = Σ_{r=1}^{m} r^-s, exactly up to 100,000 terms and by the
// Euler–Maclaurin integral beyond.
func harmonic(m int64, s float64) float64 {
	const exact = 100_000
	h := 0.0
	for r := int64(1); r <= min(m, exact); r++ {
		h += math.Pow(float64(r), -s)
	}
	if m > exact {
		a, b := float64(exact)+0.5, float64(m)+0.5
		if math.Abs(s-1) < 1e-9 {
			h += math.Log(b / a)
		} else {
			h += (math.Pow(b, 1-s) - math.Pow(a, 1-s)) / (1 - s)
		}
	}
	return h
}

// zipfMLE maximises over s in [0, 5], by golden-section search, the log-likelihood
// of n calls of which the head's went to ranks 1 … len(head) with the counts in head
// and the rest to ranks beyond: -s Σ c_r ln r - h ln H(N, s) + (n-h) ln(1 - H(R, s)/H(N, s)).
func zipfMLE(head []int, n int, N int64) float64 {
	sl, h := 0.0, 0
	for r, c := range head {
		sl += float64(c) * math.Log(float64(r+1))
		h += c
	}
	R := int64(len(head))
	ll := func(s float64) float64 {
		hN := harmonic(N, s)
		l := -s*sl - float64(h)*math.Log(hN)
		if n > h {
			l += float64(n-h) * math.Log(max(1-harmonic(R, s)/hN, 1e-300))
		}
		return l
	}
	a, b := 0.0, 5.0
	g := (math.Sqrt(5) - 1) / 2
	x1, x2 := b-g*(b-a), a+g*(b-a)
	f1, f2 := ll(x1), ll(x2)
	for b-a > 1e-3 {
		if f1 < f2 {
			a, x1, f1 = x1, x2, f2
			x2 = a + g*(b-a)
			f2 = ll(x2)
		} else {
			b, x2, f2 = x2, x1, f1
			x1 = b - g*(b-a)
			f1 = ll(x1)
		}
	}
	return (a + b) / 2
}

// zipfKS is the largest difference between the observed and the fitted cumulative
// shares of the ranks 1 … len(freq) (the rest are values never observed).
func zipfKS(freq []int, n int, N int64, s float64) float64 {
	hN := harmonic(N, s)
	d, obs, fit := 0.0, 0.0, 0.0
	for r, c := range freq {
		obs += float64(c) / float64(n)
		fit += math.Pow(float64(r+1), -s) / hN
		d = max(d, math.Abs(obs-fit))
	}
	return d
}

// fitChoice makes a weighted choice of texts observed a few times each; other texts
// are left to the data (nil).
func fitChoice(vals []string) *Generator {
	counts := map[string]int{}
	for _, v := range vals {
		counts[v]++
	}
	if len(counts) > 20 || len(vals) < minFit {
		return nil
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range counts {
			if !yield(k) {
				return
			}
		}
	})
	var b strings.Builder
	b.WriteString("{choice: [")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "{value: %s, weight: %d}", constYAML(k), counts[k])
	}
	b.WriteString("]}")
	return &Generator{b.String(), fmt.Sprintf("the %d values observed in %d calls, weighted as observed", len(counts), len(vals))}
}
