package analyze

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
)

// Change-point detection for a series of runs' figures: E-Divisive Means (Matteson
// and James, "A Nonparametric Approach for Multiple Change Point Analysis of
// Multivariate Data", JASA 2014), the method Apache Otava (formerly DataStax's Hunter)
// and MongoDB's CI use, written here from the paper.
//
// For a segment x[a:b) split at t into X = x[a:t) (m values) and Y = x[t:b) (n values),
// the divergence with exponent 1 is
//
//	Ê(X, Y) = 2/(mn)·Σ|xᵢ−yⱼ| − 1/C(m,2)·Σ_{i<k}|xᵢ−xₖ| − 1/C(n,2)·Σ_{j<k}|yⱼ−yₖ|
//
// and the statistic Q̂(t) = mn/(m+n)·Ê(X, Y). The end of the segment is fixed at b
// (as Hunter does); the best split is the t that maximises Q̂. Changes are found one at
// a time: the best split over every segment of the current partition is tested by
// permutation (each segment's values shuffled within it, R times, the largest Q̂ over
// the segments each time); p = (1 + #{permuted ≥ observed}) / (R + 1). While p ≤ the
// false-positive level the split is kept and the search goes on in the new segments.
// A change whose median moves by less than the minimum relative magnitude is then
// dropped (the smallest first, its neighbours re-measured), so that a real but
// unimportant wobble is not reported.
//
// With exponent 1 on one dimension the three sums for every split of a segment come
// from running sums over the values' ranks (a Fenwick tree): O(L log L) per segment
// and per permutation, so a series of 10,000 runs is analysed in seconds.

// ChangeOptions tune ChangePoints. The zero value means the defaults.
type ChangeOptions struct {
	// Alpha is the false-positive level of each permutation test: a split is a change
	// when its p-value is at most Alpha (default 0.01).
	Alpha float64 `json:"alpha"`
	// MinMagnitude is the smallest relative move of the median, |after−before|/|before|,
	// reported as a change (default 0.05, i.e. 5%; a negative value: none).
	MinMagnitude float64 `json:"min_magnitude"`
	// Permutations is R, the shuffles per test (default 199; p can be no smaller than
	// 1/(R+1), so R must reach 1/Alpha − 1).
	Permutations int `json:"permutations"`
	// MinSize is the fewest points a segment may hold (default 3).
	MinSize int `json:"min_size"`
	// Confidence is the level of the medians' intervals (default 0.95).
	Confidence float64 `json:"confidence"`
	// Seed makes the permutations, and so the p-values, reproducible (default 1).
	Seed uint64 `json:"seed"`
}

func (o ChangeOptions) withDefaults() ChangeOptions {
	if o.Alpha <= 0 {
		o.Alpha = 0.01
	}
	if o.MinMagnitude == 0 {
		o.MinMagnitude = 0.05
	}
	if o.MinMagnitude < 0 {
		o.MinMagnitude = 0
	}
	if o.Permutations <= 0 {
		o.Permutations = 199
	}
	if need := int(math.Ceil(1/o.Alpha)) - 1; o.Permutations < need {
		o.Permutations = need
	}
	if o.MinSize < 2 {
		o.MinSize = 3
	}
	if o.Confidence <= 0 || o.Confidence >= 1 {
		o.Confidence = 0.95
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	return o
}

// Change is one change point in a series.
type Change struct {
	// Index is the first point after the change (0-based in the series given).
	Index int `json:"index"`
	// PValue is the permutation test's p-value when the change was found.
	PValue float64 `json:"p_value"`
	// Before and After describe the segments on either side (median with its
	// confidence interval), as the final partition has them.
	Before Summary `json:"before"`
	After  Summary `json:"after"`
	// Relative is (after − before) / |before| of the medians (±Inf from 0).
	Relative float64 `json:"relative"`
}

// ChangePoints finds the change points of xs (in series order) by E-Divisive Means
// with a permutation test. It is a pure function: the same values and options give
// the same changes. NaN values are not allowed (drop them first: the indices are
// the caller's).
func ChangePoints(xs []float64, o ChangeOptions) []Change {
	o = o.withDefaults()
	n := len(xs)
	if n < 2*o.MinSize {
		return nil
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x6661_7468_6f6d)) // "fathom"
	type found struct {
		at int
		p  float64
	}
	var cuts []found
	bounds := []int{0, n}
	var buf segBuf
	for {
		// The best split of every segment.
		bestQ, bestAt := math.Inf(-1), -1
		for i := 0; i+1 < len(bounds); i++ {
			q, at := buf.best(xs[bounds[i]:bounds[i+1]], o.MinSize)
			if at >= 0 && q > bestQ {
				bestQ, bestAt = q, bounds[i]+at
			}
		}
		if bestAt < 0 || bestQ <= 0 {
			break
		}
		p := permutationP(xs, bounds, bestQ, o, rng, &buf)
		if p > o.Alpha {
			break
		}
		cuts = append(cuts, found{bestAt, p})
		bounds = append(bounds, bestAt)
		slices.Sort(bounds)
	}
	slices.SortFunc(cuts, func(a, b found) int { return cmp.Compare(a.at, b.at) })
	// Drop the changes too small to matter, the smallest first.
	for {
		worst, worstRel := -1, math.Inf(1)
		for i, c := range cuts {
			lo, hi := 0, n
			if i > 0 {
				lo = cuts[i-1].at
			}
			if i+1 < len(cuts) {
				hi = cuts[i+1].at
			}
			r := math.Abs(relative(Median(xs[lo:c.at]), Median(xs[c.at:hi])))
			if r < o.MinMagnitude && r < worstRel {
				worst, worstRel = i, r
			}
		}
		if worst < 0 {
			break
		}
		cuts = slices.Delete(cuts, worst, worst+1)
	}
	out := make([]Change, len(cuts))
	for i, c := range cuts {
		lo, hi := 0, n
		if i > 0 {
			lo = cuts[i-1].at
		}
		if i+1 < len(cuts) {
			hi = cuts[i+1].at
		}
		b, a := Summarize(xs[lo:c.at], o.Confidence), Summarize(xs[c.at:hi], o.Confidence)
		out[i] = Change{Index: c.at, PValue: c.p, Before: b, After: a, Relative: relative(b.Median, a.Median)}
	}
	return out
}

// relative is (after − before) / |before|: ±Inf when before is 0 and after is not, 0
// when both are.
func relative(before, after float64) float64 {
	if before == after {
		return 0
	}
	if before == 0 {
		return math.Copysign(math.Inf(1), after)
	}
	return (after - before) / math.Abs(before)
}

// permutationP tests the partition's best statistic q: the share of shuffles (values
// shuffled within each segment) whose best statistic over the segments reaches q. It
// stops early once the p-value cannot come below alpha.
func permutationP(xs []float64, bounds []int, q float64, o ChangeOptions, rng *rand.Rand, buf *segBuf) float64 {
	r := o.Permutations
	limit := int(math.Floor(o.Alpha * float64(r+1))) // more than limit−1 hits: p > alpha
	// A shuffle moves values with their ranks: each segment is ranked once.
	work := slices.Clone(xs)
	ranks := make([]int, len(xs))
	for i := 0; i+1 < len(bounds); i++ {
		buf.ranks(xs[bounds[i]:bounds[i+1]])
		copy(ranks[bounds[i]:], buf.rank)
	}
	hits := 0
	for k := 0; k < r; k++ {
		best := math.Inf(-1)
		for i := 0; i+1 < len(bounds); i++ {
			seg, rk := work[bounds[i]:bounds[i+1]], ranks[bounds[i]:bounds[i+1]]
			if len(seg) < 2*o.MinSize {
				continue
			}
			rng.Shuffle(len(seg), func(a, b int) {
				seg[a], seg[b] = seg[b], seg[a]
				rk[a], rk[b] = rk[b], rk[a]
			})
			if s, at := buf.bestRanked(seg, rk, o.MinSize); at >= 0 && s > best {
				best = s
			}
		}
		if best >= q*(1-1e-12) {
			hits++
			if hits >= limit {
				// p ≥ (1 + limit)/(r + 1) > alpha whatever the rest give.
				return float64(1+hits) / float64(k+2)
			}
		}
	}
	return float64(1+hits) / float64(r+1)
}

// segBuf holds the scratch space of best, reused across calls.
type segBuf struct {
	order       []int
	rank        []int
	left, right []float64 // within-sums of prefixes and suffixes
	cnt         []float64 // Fenwick trees over ranks: counts and sums
	sum         []float64
}

// best returns the largest Q̂(t) over the splits of seg that leave at least minSize
// values a side, and t (−1 when none can).
func (b *segBuf) best(seg []float64, minSize int) (float64, int) {
	L := len(seg)
	if L < 2*minSize {
		return 0, -1
	}
	b.ranks(seg)
	return b.bestRanked(seg, b.rank, minSize)
}

// bestRanked is best with the ranks of seg's values given (1-based, ascending).
func (b *segBuf) bestRanked(seg []float64, rank []int, minSize int) (float64, int) {
	L := len(seg)
	b.left = grow(b.left, L+1)
	b.right = grow(b.right, L+1)
	b.within(seg, rank, b.left, false)
	b.within(seg, rank, b.right, true)
	total := b.left[L]
	bestQ, bestT := math.Inf(-1), -1
	for t := minSize; t <= L-minSize; t++ {
		m, n := float64(t), float64(L-t)
		wl, wr := b.left[t], b.right[t]
		between := total - wl - wr
		e := 2*between/(m*n) - 2*wl/(m*(m-1)) - 2*wr/(n*(n-1))
		q := m * n / (m + n) * e
		if q > bestQ {
			bestQ, bestT = q, t
		}
	}
	return bestQ, bestT
}

// ranks sets b.rank[i] to the 1-based position of seg[i] in ascending order.
func (b *segBuf) ranks(seg []float64) {
	L := len(seg)
	b.order = growInt(b.order, L)
	for i := range b.order {
		b.order[i] = i
	}
	slices.SortFunc(b.order, func(i, j int) int { return cmp.Compare(seg[i], seg[j]) })
	b.rank = growInt(b.rank, L)
	for r, i := range b.order {
		b.rank[i] = r + 1
	}
}

// within fills out[j] with Σ|xᵢ−xₖ| over the pairs among the first j values of seg
// (reverse: out[j] over the values from j to the end).
func (b *segBuf) within(seg []float64, rank []int, out []float64, reverse bool) {
	L := len(seg)
	b.cnt = grow(b.cnt, L+1)
	b.sum = grow(b.sum, L+1)
	clear(b.cnt)
	clear(b.sum)
	var seen, seenSum, acc float64
	step := func(i int) {
		x, r := seg[i], rank[i]
		var c, s float64 // count and sum of the values seen with a lower rank
		for k := r - 1; k > 0; k -= k & -k {
			c += b.cnt[k]
			s += b.sum[k]
		}
		acc += (c*x - s) + ((seenSum - s) - (seen-c)*x)
		for k := r; k <= L; k += k & -k {
			b.cnt[k]++
			b.sum[k] += x
		}
		seen++
		seenSum += x
	}
	if !reverse {
		out[0] = 0
		for i := 0; i < L; i++ {
			step(i)
			out[i+1] = acc
		}
		return
	}
	out[L] = 0
	for i := L - 1; i >= 0; i-- {
		step(i)
		out[i] = acc
	}
}

func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

func growInt(s []int, n int) []int {
	if cap(s) < n {
		return make([]int, n)
	}
	return s[:n]
}
