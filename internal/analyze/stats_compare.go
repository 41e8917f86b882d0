package analyze

import (
	"fmt"
	"math"
)

// Comparison is one metric compared between two samples (A the baseline, B the new),
// in the manner of benchstat: medians with confidence intervals, the change of the
// median, and whether a Mann–Whitney U test finds the difference significant.
type Comparison struct {
	Metric string  `json:"metric"`
	A      Summary `json:"a"`
	B      Summary `json:"b"`
	// DeltaPct is (median B − median A) / median A × 100; NaN when A's median is 0.
	DeltaPct float64 `json:"delta_pct"`
	// P is the U test's p-value, NaN when a side has no values.
	P     float64 `json:"p"`
	Exact bool    `json:"exact"`
	Alpha float64 `json:"alpha"`
	// Significant is P < Alpha. When false a reader should see "~": the data do not
	// show a difference (which is not the same as showing there is none).
	Significant bool     `json:"significant"`
	Warnings    []string `json:"warnings,omitempty"`
}

// Compare compares metric values a (baseline) and b. NaN values are ignored.
func Compare(metric string, a, b []float64, alpha, confidence float64) Comparison {
	a, b = dropNaN(a), dropNaN(b)
	c := Comparison{Metric: metric, A: Summarize(a, confidence), B: Summarize(b, confidence),
		DeltaPct: math.NaN(), P: math.NaN(), Alpha: alpha}
	if c.A.N > 0 && c.B.N > 0 && c.A.Median != 0 {
		c.DeltaPct = (c.B.Median - c.A.Median) / math.Abs(c.A.Median) * 100
	} else if c.A.N > 0 && c.B.N > 0 && c.B.Median == 0 {
		c.DeltaPct = 0
	}
	if c.A.N == 0 || c.B.N == 0 {
		c.Warnings = append(c.Warnings, "no values on one side")
		return c
	}
	t := mannWhitney(a, b)
	c.P, c.Exact = t.P, t.Exact
	c.Significant = t.P < alpha
	if t.MinP >= 1 && c.A.Min == c.A.Max && c.B.Min == c.B.Max && c.A.Min == c.B.Min {
		c.Warnings = append(c.Warnings, "every value is the same on both sides")
	} else if t.MinP >= alpha {
		c.Warnings = append(c.Warnings, fmt.Sprintf("too few repetitions to tell: with %d and %d values the smallest possible p-value is %.3g (≥ α %g); need ≥ %d per side",
			c.A.N, c.B.N, t.MinP, alpha, MinSamplesPerSide(alpha)))
	}
	return c
}

// MinSamplesPerSide is the smallest equal sample size at which the U test can reach
// significance level alpha (4 at 0.05: the most extreme of C(8,4) = 70 orderings has
// p = 2/70).
func MinSamplesPerSide(alpha float64) int {
	for n := 1; n <= exactUTestLimit/2; n++ {
		if 2/math.Exp(logChoose(2*n, n)) < alpha {
			return n
		}
	}
	return exactUTestLimit / 2
}

func dropNaN(xs []float64) []float64 {
	out := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) {
			out = append(out, x)
		}
	}
	return out
}
