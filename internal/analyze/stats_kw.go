package analyze

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// kwTest is a Kruskal–Wallis H test over several groups: do they come from one
// distribution? H is corrected for ties; P is from the chi-squared distribution with
// DF = groups − 1 (as scipy.stats.kruskal computes it; with fewer than 5 values a
// group the approximation is rough, and Warnings say so).
type kwTest struct {
	H        float64  `json:"h"`
	DF       int      `json:"df"`
	P        float64  `json:"p"`
	N        int      `json:"n"`
	Warnings []string `json:"warnings,omitempty"`
}

// KruskalWallis tests groups of values (NaN values dropped; empty groups left out).
// P is NaN when fewer than two groups have values or every value is the same.
func KruskalWallis(groups [][]float64) kwTest {
	type obs struct {
		v float64
		g int
	}
	var all []obs
	k := 0
	sizes := map[int]int{}
	for gi, g := range groups {
		n := 0
		for _, v := range g {
			if !math.IsNaN(v) {
				all = append(all, obs{v, gi})
				n++
			}
		}
		if n > 0 {
			k++
			sizes[gi] = n
		}
	}
	t := kwTest{DF: k - 1, N: len(all), H: math.NaN(), P: math.NaN()}
	if k < 2 {
		return t
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v < all[j].v })
	rankSum := map[int]float64{}
	ties := 0.0
	for i := 0; i < len(all); {
		j := i
		for j+1 < len(all) && all[j+1].v == all[i].v {
			j++
		}
		r := float64(i+j)/2 + 1 // midrank, 1-based
		for x := i; x <= j; x++ {
			rankSum[all[x].g] += r
		}
		if m := float64(j - i + 1); m > 1 {
			ties += m*m*m - m
		}
		i = j + 1
	}
	n := float64(len(all))
	h := 0.0
	for g, s := range sizes {
		h += rankSum[g] * rankSum[g] / float64(s)
	}
	h = 12/(n*(n+1))*h - 3*(n+1)
	c := 1 - ties/(n*n*n-n)
	if c <= 0 {
		return t // every value the same: nothing to rank
	}
	t.H = h / c
	t.P = distuv.ChiSquared{K: float64(k - 1)}.Survival(t.H)
	for _, s := range sizes {
		if s < 5 {
			t.Warnings = append(t.Warnings, "fewer than 5 values in a group: the chi-squared p-value is approximate")
			break
		}
	}
	return t
}

// Holm adjusts p-values for multiple comparisons (Holm–Bonferroni, step-down): each
// adjusted p is at least the unadjusted one, capped at 1, and monotone in the order of
// the unadjusted ones. NaN p-values stay NaN and do not count as comparisons.
func Holm(ps []float64) []float64 {
	idx := make([]int, 0, len(ps))
	for i, p := range ps {
		if !math.IsNaN(p) {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return ps[idx[a]] < ps[idx[b]] })
	out := make([]float64, len(ps))
	for i := range out {
		out[i] = math.NaN()
	}
	m := len(idx)
	running := 0.0
	for rank, i := range idx {
		adj := math.Min(1, float64(m-rank)*ps[i])
		running = math.Max(running, adj)
		out[i] = running
	}
	return out
}
