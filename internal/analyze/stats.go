// Package analyze turns stored measurements into conclusions: robust statistics over
// repetitions (medians with distribution-free confidence intervals, Mann–Whitney U
// tests) and, in other files, stall detection. It is pure computation on numbers
// handed to it; it never reads a store or talks to a database.
package analyze

import (
	"fmt"
	"math"
	"slices"
)

// Defaults used by fathom's reports and comparisons, as benchstat does.
const (
	DefaultConfidence = 0.95 // confidence level of intervals
	DefaultAlpha      = 0.05 // significance level of tests
)

// Summary describes a sample (one metric over repetitions) without assuming any
// distribution: its median and an order-statistic confidence interval for the median.
type Summary struct {
	N      int     `json:"n"`
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	Q1     float64 `json:"q1"` // first and third quartiles, for box plots
	Q3     float64 `json:"q3"`
	// Lo and Hi bound the median with at least Confidence coverage. HasCI is false
	// (and Lo, Hi are NaN) when the sample is too small for any interval to reach it.
	HasCI      bool    `json:"has_ci"`
	Lo         float64 `json:"lo"`
	Hi         float64 `json:"hi"`
	Confidence float64 `json:"confidence"`
	// Coverage is the exact coverage of [Lo, Hi] (order statistics give discrete
	// levels: with 10 values a 95% interval really covers 97.9%).
	Coverage float64 `json:"coverage"`
	// Warnings are things a reader must know, e.g. that there is no interval.
	Warnings []string `json:"warnings,omitempty"`
}

// Median returns the median of xs (the mean of the middle two for an even count),
// or NaN for no values. xs is not modified.
func Median(xs []float64) float64 {
	s := sortedCopy(xs)
	return QuantileSorted(s, 0.5)
}

// QuantileSorted returns the q-quantile of sorted values by linear interpolation
// between order statistics (Hyndman–Fan type 7, the default of R and numpy), or NaN
// for no values.
func QuantileSorted(sorted []float64, q float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	if q <= 0 {
		return sorted[0]
	}
	if q >= 1 {
		return sorted[n-1]
	}
	h := q * float64(n-1)
	lo := int(math.Floor(h))
	if lo+1 >= n {
		return sorted[n-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}

func sortedCopy(xs []float64) []float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s
}

// binomialHalfCDF returns P(B ≤ k) for B ~ Binomial(n, 1/2).
func binomialHalfCDF(n, k int) float64 {
	if k < 0 {
		return 0
	}
	if k >= n {
		return 1
	}
	// Sum C(n,i)/2^n in log space to stay exact enough for large n.
	sum := 0.0
	for i := 0; i <= k; i++ {
		sum += math.Exp(logChoose(n, i) - float64(n)*math.Ln2)
	}
	return math.Min(sum, 1)
}

func logChoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// medianCI returns the narrowest symmetric order-statistic interval
// [x(k), x(n+1-k)] (1-based) whose coverage of the population median is at least
// confidence, with that exact coverage 1 - 2·P(B ≤ k-1), B ~ Binomial(n, 1/2).
// ok is false when even [min, max] covers less than confidence (n < 6 at 95%).
// sorted must be in ascending order.
func medianCI(sorted []float64, confidence float64) (lo, hi, coverage float64, ok bool) {
	n := len(sorted)
	best, cdf, bestCDF := 0, 0.0, 0.0
	// cdf is P(B ≤ k-1), summed term by term as binomialHalfCDF sums it (the same
	// figures), but once for all k: the loop is O(n), not O(n²) (a 10,000-run
	// history's medians took most of its page's time).
	for k := 1; k <= (n+1)/2; k++ {
		cdf += math.Exp(logChoose(n, k-1) - float64(n)*math.Ln2)
		c := math.Min(cdf, 1)
		if k-1 >= n {
			c = 1
		}
		if 1-2*c >= confidence-1e-12 {
			best, bestCDF = k, c
		} else {
			break
		}
	}
	if best == 0 {
		return math.NaN(), math.NaN(), 0, false
	}
	return sorted[best-1], sorted[n-best], 1 - 2*bestCDF, true
}

// minSamplesForCI is the smallest sample whose [min, max] reaches confidence.
func minSamplesForCI(confidence float64) int {
	for n := 1; n < 64; n++ {
		if 1-2*binomialHalfCDF(n, 0) >= confidence-1e-12 {
			return n
		}
	}
	return 64
}

// Summarize describes xs at the given confidence level (e.g. 0.95). NaN values are
// ignored.
func Summarize(xs []float64, confidence float64) Summary {
	var s []float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			s = append(s, x)
		}
	}
	slices.Sort(s)
	sum := Summary{N: len(s), Confidence: confidence, Lo: math.NaN(), Hi: math.NaN(),
		Median: math.NaN(), Min: math.NaN(), Max: math.NaN(), Q1: math.NaN(), Q3: math.NaN()}
	if len(s) == 0 {
		sum.Warnings = append(sum.Warnings, "no values")
		return sum
	}
	sum.Median = QuantileSorted(s, 0.5)
	sum.Min, sum.Max = s[0], s[len(s)-1]
	sum.Q1, sum.Q3 = QuantileSorted(s, 0.25), QuantileSorted(s, 0.75)
	if lo, hi, cov, ok := medianCI(s, confidence); ok {
		sum.HasCI, sum.Lo, sum.Hi, sum.Coverage = true, lo, hi, cov
	} else {
		sum.Warnings = append(sum.Warnings, fmt.Sprintf("need ≥ %d values for a %s confidence interval (have %d)",
			minSamplesForCI(confidence), percent(confidence), len(s)))
	}
	return sum
}

func percent(p float64) string {
	return fmt.Sprintf("%g%%", math.Round(p*1000)/10)
}
