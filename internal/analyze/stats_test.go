package analyze

import (
	"math"
	"math/rand/v2"
	"testing"
)

func near(a, b, tol float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b))
}

func TestMedianAndQuantiles(t *testing.T) {
	for _, c := range []struct {
		xs     []float64
		med    float64
		q1, q3 float64
		desc   string
	}{
		{[]float64{3, 1, 2}, 2, 1.5, 2.5, "odd"},
		{[]float64{4, 1, 3, 2}, 2.5, 1.75, 3.25, "even"},
		{[]float64{7}, 7, 7, 7, "one"},
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 5.5, 3.25, 7.75, "ten"},
	} {
		s := Summarize(c.xs, 0.95)
		if s.Median != c.med || Median(c.xs) != c.med || s.Q1 != c.q1 || s.Q3 != c.q3 {
			t.Errorf("%s: median %v q1 %v q3 %v, want %v %v %v", c.desc, s.Median, s.Q1, s.Q3, c.med, c.q1, c.q3)
		}
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("median of nothing should be NaN")
	}
}

// Coverage of [x(k), x(n+1-k)] is 1 - 2·Σ_{i<k} C(n,i)/2^n, computed by hand:
// n=6, k=1: 1 - 2/64; n=10, k=2: 1 - 2·11/1024; n=5 [min,max] only 1 - 2/32 = 0.9375.
func TestMedianCIKnownValues(t *testing.T) {
	seq := func(n int) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(n - i) // reversed: Summarize must sort
		}
		return xs
	}
	for _, c := range []struct {
		n        int
		conf     float64
		ok       bool
		lo, hi   float64
		coverage float64
	}{
		{5, 0.95, false, 0, 0, 0},
		{6, 0.95, true, 1, 6, 1 - 2.0/64},
		{10, 0.95, true, 2, 9, 1 - 2*11.0/1024},
		{5, 0.90, true, 1, 5, 1 - 2.0/32},
		// n=20: P(B≤5) = 21700/1048576 = 0.0207 → k=6, coverage 0.9586
		{20, 0.95, true, 6, 15, 1 - 2*21700.0/1048576},
	} {
		s := Summarize(seq(c.n), c.conf)
		if s.HasCI != c.ok {
			t.Fatalf("n=%d: HasCI %v", c.n, s.HasCI)
		}
		if !c.ok {
			if len(s.Warnings) == 0 || !math.IsNaN(s.Lo) {
				t.Errorf("n=%d: want a warning and no interval, got %+v", c.n, s)
			}
			continue
		}
		if s.Lo != c.lo || s.Hi != c.hi || !near(s.Coverage, c.coverage, 1e-12) {
			t.Errorf("n=%d conf %v: [%v, %v] coverage %v, want [%v, %v] %v", c.n, c.conf, s.Lo, s.Hi, s.Coverage, c.lo, c.hi, c.coverage)
		}
	}
	if n := minSamplesForCI(0.95); n != 6 {
		t.Errorf("MinSamplesForCI(0.95) = %d, want 6", n)
	}
	if n := MinSamplesPerSide(0.05); n != 4 {
		t.Errorf("MinSamplesPerSide(0.05) = %d, want 4", n)
	}
}

func TestMannWhitneyKnownValues(t *testing.T) {
	for _, c := range []struct {
		name  string
		a, b  []float64
		u, p  float64
		exact bool
		minP  float64
	}{
		// Complete separation: p = 2 / C(6,3) and 2 / C(10,5).
		{"3v3 separated", []float64{1, 2, 3}, []float64{4, 5, 6}, 0, 0.1, true, 0.1},
		{"5v5 separated", []float64{6, 7, 8, 9, 10}, []float64{1, 2, 3, 4, 5}, 25, 2.0 / 252, true, 2.0 / 252},
		// Ties, enumerated by hand: midranks {1,3,3,3,5,6}; A = {1,3,3} sums 7, expected
		// 10.5; sums ≤ 7 or ≥ 14 occur in 3 + 3 of the 20 subsets.
		{"ties", []float64{1, 2, 2}, []float64{2, 3, 4}, 1, 0.3, true, 0.3},
		// Identical samples: nothing to see.
		{"equal", []float64{5, 5, 5}, []float64{5, 5, 5}, 4.5, 1, true, 1},
		// Interleaved: a={1,3,5,7}, b={2,4,6,8}: U = 6 of 16, E = 8.
		// P(|W - E| ≥ 2) over C(8,4) = 70 subsets: by the table of U for 4,4,
		// P(U ≤ 6) = 24/70, so p = 48/70.
		{"interleaved", []float64{1, 3, 5, 7}, []float64{2, 4, 6, 8}, 6, 48.0 / 70, true, 2.0 / 70},
	} {
		r := mannWhitney(c.a, c.b)
		if r.U != c.u || !near(r.P, c.p, 1e-12) || r.Exact != c.exact || !near(r.MinP, c.minP, 1e-12) {
			t.Errorf("%s: U %v p %v exact %v minP %v, want U %v p %v exact %v minP %v", c.name, r.U, r.P, r.Exact, r.MinP, c.u, c.p, c.exact, c.minP)
		}
	}
	if r := mannWhitney(nil, []float64{1}); !math.IsNaN(r.P) {
		t.Errorf("empty side: p %v", r.P)
	}
}

// bruteP enumerates every split of the pooled values into sizes len(a), len(b).
func bruteP(a, b []float64) float64 {
	ra, rb, _ := midranks(a, b)
	ranks := append(append([]int{}, ra...), rb...)
	n, k := len(ranks), len(a)
	obs := 0
	for _, r := range ra {
		obs += r
	}
	e := k * (n + 1)
	var hit, all int
	for mask := 0; mask < 1<<n; mask++ {
		if popcount(mask) != k {
			continue
		}
		s := 0
		for i := 0; i < n; i++ {
			if mask&(1<<i) != 0 {
				s += ranks[i]
			}
		}
		all++
		if abs(s-e) >= abs(obs-e) {
			hit++
		}
	}
	return float64(hit) / float64(all)
}

func popcount(x int) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

func TestMannWhitneyExactMatchesEnumeration(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for i := 0; i < 300; i++ {
		n1, n2 := 1+rng.IntN(7), 1+rng.IntN(7)
		a, b := make([]float64, n1), make([]float64, n2)
		levels := 2 + rng.IntN(12) // few levels: many ties
		for j := range a {
			a[j] = float64(rng.IntN(levels))
		}
		for j := range b {
			b[j] = float64(rng.IntN(levels) + rng.IntN(2))
		}
		got, want := mannWhitney(a, b).P, bruteP(a, b)
		if !near(got, want, 1e-9) {
			t.Fatalf("a=%v b=%v: exact p %v, enumeration %v", a, b, got, want)
		}
		if back := mannWhitney(b, a).P; !near(back, got, 1e-9) {
			t.Fatalf("a=%v b=%v: p not symmetric: %v vs %v", a, b, got, back)
		}
	}
}

// Beyond ExactUTestLimit the normal approximation takes over; just below it the two
// must agree closely (no ties, moderate p).
func TestMannWhitneyNormalApproximation(t *testing.T) {
	a := make([]float64, 20)
	b := make([]float64, 20)
	for i := range a {
		a[i] = float64(2 * i)
		b[i] = float64(2*i+1) + 6
	}
	exact := mannWhitney(a, b)
	if !exact.Exact {
		t.Fatal("20+20 should be exact")
	}
	// Same data, one more value each: normal approximation.
	approx := mannWhitney(append(a, 40), append(b, 47))
	if approx.Exact {
		t.Fatal("21+21 should be approximate")
	}
	// Hand computation for the approximate case: U = Σ over pairs; check formula.
	n1, n2 := 21.0, 21.0
	mean, sd := n1*n2/2, math.Sqrt(n1*n2*(n1+n2+1)/12)
	z := (math.Abs(approx.U-mean) - 0.5) / sd
	if want := math.Erfc(z / math.Sqrt2); !near(approx.P, want, 1e-12) {
		t.Errorf("normal p %v, want %v", approx.P, want)
	}
	if exact.P < 0.05 || exact.P > 0.5 || math.Abs(exact.P-approx.P) > 0.06 {
		t.Errorf("exact %v and approximate %v p-values too far apart", exact.P, approx.P)
	}
	// 25 v 25 completely separated: z = (312.5 - 0.5) / sqrt(25·25·51/12) = 6.0536.
	var s1, s2 []float64
	for i := 1; i <= 25; i++ {
		s1 = append(s1, float64(i))
		s2 = append(s2, float64(i+25))
	}
	r := mannWhitney(s1, s2)
	if want := math.Erfc(312.0 / math.Sqrt(2656.25) / math.Sqrt2); r.U != 0 || !near(r.P, want, 1e-9) || r.P > 2e-9 {
		t.Errorf("separated 25v25: U %v p %v want %v", r.U, r.P, want)
	}
}

func TestCompare(t *testing.T) {
	a := []float64{100, 102, 98, 101, 99, 100}
	b := []float64{110, 111, 109, 112, 108, 110}
	c := Compare("tps", a, b, DefaultAlpha, DefaultConfidence)
	if !c.Significant || !near(c.DeltaPct, 10, 1e-12) || !near(c.P, 2.0/924, 1e-12) || len(c.Warnings) != 0 {
		t.Errorf("clear difference: %+v", c)
	}
	few := Compare("tps", a[:3], b[:3], DefaultAlpha, DefaultConfidence)
	if few.Significant || len(few.Warnings) == 0 {
		t.Errorf("3 v 3 must warn and never be significant: %+v", few)
	}
	one := Compare("tps", a[:1], b[:1], DefaultAlpha, DefaultConfidence)
	if one.Significant || len(one.Warnings) == 0 || !near(one.DeltaPct, 10, 1e-12) {
		t.Errorf("1 v 1: %+v", one)
	}
	same := Compare("tps", a, a, DefaultAlpha, DefaultConfidence)
	if same.Significant || same.DeltaPct != 0 || same.P != 1 {
		t.Errorf("same: %+v", same)
	}
	zero := Compare("errors", []float64{0, 0, 0, 0}, []float64{0, 0, 0, 0}, DefaultAlpha, DefaultConfidence)
	if zero.Significant || zero.DeltaPct != 0 {
		t.Errorf("zero: %+v", zero)
	}
	nan := Compare("p99", []float64{math.NaN(), 1, 2}, nil, DefaultAlpha, DefaultConfidence)
	if nan.A.N != 2 || !math.IsNaN(nan.P) || len(nan.Warnings) == 0 {
		t.Errorf("nan: %+v", nan)
	}
}

func FuzzMannWhitney(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6}, 3)
	f.Add([]byte{5, 5, 5, 5}, 2)
	f.Fuzz(func(t *testing.T, data []byte, split int) {
		if len(data) > 16 || len(data) < 2 {
			return
		}
		if split < 1 || split >= len(data) {
			split = len(data) / 2
		}
		var a, b []float64
		for i, d := range data {
			if i < split {
				a = append(a, float64(d%8))
			} else {
				b = append(b, float64(d%8))
			}
		}
		r := mannWhitney(a, b)
		if !(r.P >= 0 && r.P <= 1) || r.MinP > r.P+1e-12 {
			t.Fatalf("a=%v b=%v: p %v minP %v", a, b, r.P, r.MinP)
		}
		if want := bruteP(a, b); !near(r.P, want, 1e-9) {
			t.Fatalf("a=%v b=%v: p %v, enumeration %v", a, b, r.P, want)
		}
	})
}

// TestMedianCIMatchesDefinition: the interval MedianCI picks in one pass is the one
// the definition gives, the largest k with 1 - 2·P(B ≤ k-1) ≥ confidence, P summed by
// binomialHalfCDF for each k afresh, with the same coverage, for every n to 400.
func TestMedianCIMatchesDefinition(t *testing.T) {
	for _, conf := range []float64{0.9, 0.95, 0.99} {
		for n := 1; n <= 400; n++ {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = float64(i)
			}
			best := 0
			for k := 1; k <= (n+1)/2 && 1-2*binomialHalfCDF(n, k-1) >= conf-1e-12; k++ {
				best = k
			}
			lo, hi, cov, ok := medianCI(xs, conf)
			if ok != (best > 0) {
				t.Fatalf("n=%d conf %g: ok %v, want %v", n, conf, ok, best > 0)
			}
			if !ok {
				continue
			}
			want := 1 - 2*binomialHalfCDF(n, best-1)
			if lo != xs[best-1] || hi != xs[n-best] || math.Abs(cov-want) > 1e-12 {
				t.Fatalf("n=%d conf %g: [%v, %v] coverage %v, want [%v, %v] %v", n, conf, lo, hi, cov, xs[best-1], xs[n-best], want)
			}
		}
	}
}
