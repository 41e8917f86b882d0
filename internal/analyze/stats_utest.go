package analyze

import (
	"math"
	"slices"
)

// exactUTestLimit is the largest combined sample size for which MannWhitney computes
// the exact permutation distribution; larger samples use the normal approximation.
const exactUTestLimit = 40

// uTest is the result of a two-sided Mann–Whitney U (Wilcoxon rank-sum) test.
type uTest struct {
	N1, N2 int
	// U counts the pairs (a, b) with a > b, ties counting one half.
	U float64
	// P is the two-sided p-value: the probability, if both samples came from the same
	// distribution, of a rank sum at least as far from its expectation as observed.
	P float64
	// Exact is true when P comes from the exact permutation distribution of the rank
	// sum given the observed ties, false for the tie-corrected normal approximation
	// with continuity correction.
	Exact bool
	// MinP is the smallest p-value these sample sizes and ties can produce. When it
	// exceeds the significance level, no difference can ever be significant.
	MinP float64
}

// midranks returns 2×(mid-rank) of each value of a then b in the combined sample,
// and Σ(t³−t) over tie groups.
func midranks(a, b []float64) (ra, rb []int, ties float64) {
	type item struct {
		v    float64
		from int // 0 a, 1 b
		i    int
	}
	all := make([]item, 0, len(a)+len(b))
	for i, v := range a {
		all = append(all, item{v, 0, i})
	}
	for i, v := range b {
		all = append(all, item{v, 1, i})
	}
	slices.SortStableFunc(all, func(x, y item) int {
		switch {
		case x.v < y.v:
			return -1
		case x.v > y.v:
			return 1
		}
		return 0
	})
	ra, rb = make([]int, len(a)), make([]int, len(b))
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		// positions i..j-1 hold ranks i+1..j; their mean doubled is i+1+j.
		r2 := i + 1 + j
		for k := i; k < j; k++ {
			if all[k].from == 0 {
				ra[all[k].i] = r2
			} else {
				rb[all[k].i] = r2
			}
		}
		t := float64(j - i)
		ties += t*t*t - t
		i = j
	}
	return ra, rb, ties
}

// mannWhitney runs a two-sided Mann–Whitney U test of a against b. It needs at least
// one value on each side; otherwise P is NaN. NaN values must not be passed.
func mannWhitney(a, b []float64) uTest {
	n1, n2 := len(a), len(b)
	t := uTest{N1: n1, N2: n2, P: math.NaN(), MinP: math.NaN()}
	if n1 == 0 || n2 == 0 {
		return t
	}
	ra, rb, ties := midranks(a, b)
	r1 := 0
	for _, r := range ra {
		r1 += r
	}
	n := n1 + n2
	t.U = float64(r1)/2 - float64(n1*(n1+1))/2
	if n <= exactUTestLimit {
		t.Exact = true
		t.P, t.MinP = exactRankSumP(append(slices.Clone(ra), rb...), n1, r1)
		return t
	}
	mean := float64(n1*n2) / 2
	v := float64(n1*n2) / 12 * (float64(n+1) - ties/float64(n*(n-1)))
	if v <= 0 {
		t.P, t.MinP = 1, 1
		return t
	}
	sd := math.Sqrt(v)
	p := func(u float64) float64 {
		z := math.Max(math.Abs(u-mean)-0.5, 0) / sd
		return math.Min(1, math.Erfc(z/math.Sqrt2))
	}
	t.P = p(t.U)
	t.MinP = p(0)
	return t
}

// exactRankSumP returns the two-sided p-value of the doubled rank sum obs of a sample
// of size k drawn without replacement from the doubled ranks, and the smallest
// p-value possible. It counts, by dynamic programming over the ranks, how many of
// the C(n, k) equally likely subsets have each sum.
func exactRankSumP(ranks []int, k, obs int) (p, minP float64) {
	n := len(ranks)
	total := 0
	for _, r := range ranks {
		total += r
	}
	if k > n-k { // count the complement: same distribution, smaller table
		k, obs = n-k, total-obs
	}
	// ways[j][s]: subsets of j ranks so far with doubled sum s.
	maxSum := 0
	sorted := slices.Clone(ranks)
	slices.Sort(sorted)
	for i := n - k; i < n; i++ {
		maxSum += sorted[i]
	}
	ways := make([][]float64, k+1)
	for j := range ways {
		ways[j] = make([]float64, maxSum+1)
	}
	ways[0][0] = 1
	for i, r := range ranks {
		for j := min(k, i+1); j >= 1; j-- {
			prev, cur := ways[j-1], ways[j]
			for s := maxSum - r; s >= 0; s-- {
				if prev[s] != 0 {
					cur[s+r] += prev[s]
				}
			}
		}
	}
	dist := ways[k]
	all := 0.0 // C(n, k), summed so that p is exactly 1 when every subset counts
	for _, w := range dist {
		all += w
	}
	// Expected doubled rank sum: k·(n+1).
	e := k * (n + 1)
	dev := abs(obs - e)
	maxDev := 0
	for s, w := range dist {
		if w != 0 && abs(s-e) > maxDev {
			maxDev = abs(s - e)
		}
	}
	var hit, extreme float64
	for s, w := range dist {
		if w == 0 {
			continue
		}
		if abs(s-e) >= dev {
			hit += w
		}
		if abs(s-e) >= maxDev {
			extreme += w
		}
	}
	return math.Min(1, hit/all), math.Min(1, extreme/all)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
