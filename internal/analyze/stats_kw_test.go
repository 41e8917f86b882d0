package analyze

import (
	"math"
	"testing"
)

// References computed by hand from the definitions (scipy.stats.kruskal computes the
// same H with the same tie correction and chi-squared p):
//
//	[1 2 3] [4 5 6] [7 8 9]: rank sums 6, 15, 24; H = 12/(9·10)·(36+225+576)/3 − 30 = 7.2;
//	  df 2, p = exp(−7.2/2) = 0.0273237
//	[1 1 2] [2 3 3]: midranks 1.5 1.5 3.5 | 3.5 5.5 5.5; sums 6.5, 14.5; raw
//	  H = 12/42·(42.25+210.25)/3 − 21 = 3.047619; ties 3 pairs: C = 1 − 18/210 =
//	  0.9142857; H = 3.333333; df 1, p = P(χ²₁ > 3.3333) = 0.0678892
func TestKruskalWallisReferences(t *testing.T) {
	for _, c := range []struct {
		groups [][]float64
		h, p   float64
		df     int
	}{
		{[][]float64{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}, 7.2, math.Exp(-3.6), 2},
		{[][]float64{{1, 1, 2}, {2, 3, 3}}, 10.0 / 3, 0.0678892, 1},
		// Interleaved groups: no evidence of a difference. Rank sums 1+4+7=12, 15, 18:
		// H = 12/90·(144+225+324)/3 − 30 = 0.8; p = exp(−0.4).
		{[][]float64{{1, 4, 7}, {2, 5, 8}, {3, 6, 9}}, 0.8, math.Exp(-0.4), 2},
	} {
		got := KruskalWallis(c.groups)
		if math.Abs(got.H-c.h) > 1e-9 || math.Abs(got.P-c.p) > 1e-6 || got.DF != c.df {
			t.Errorf("%v: H %v p %v df %d, want H %v p %v df %d", c.groups, got.H, got.P, got.DF, c.h, c.p, c.df)
		}
	}
	if got := KruskalWallis([][]float64{{1, 1}, {1, 1}}); !math.IsNaN(got.P) {
		t.Errorf("all equal: p %v", got.P)
	}
	if got := KruskalWallis([][]float64{{1, 2}, {}}); !math.IsNaN(got.P) || got.DF != 0 {
		t.Errorf("one group: %+v", got)
	}
}

// Holm's step-down: p sorted 0.01, 0.03, 0.04 over 3 → 0.03, 0.06, 0.06 (monotone).
func TestHolm(t *testing.T) {
	got := Holm([]float64{0.04, 0.01, math.NaN(), 0.03})
	want := []float64{0.06, 0.03, math.NaN(), 0.06}
	for i := range want {
		if math.IsNaN(want[i]) != math.IsNaN(got[i]) || !math.IsNaN(want[i]) && math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("Holm: %v, want %v", got, want)
			break
		}
	}
}
