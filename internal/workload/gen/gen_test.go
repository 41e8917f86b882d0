package gen

import (
	"math"
	"strings"
	"testing"
)

const draws = 200_000

func TestUniformRangeAndShape(t *testing.T) {
	g := New(1, 0)
	for _, c := range []struct{ a, b int64 }{{1, 1}, {1, 10}, {-5000, 5000}, {0, 1 << 40}, {math.MinInt64, math.MaxInt64}} {
		for range 10_000 {
			if v := g.Uniform(c.a, c.b); v < c.a || v > c.b {
				t.Fatalf("Uniform(%d, %d) = %d", c.a, c.b, v)
			}
		}
	}
	var counts [10]int
	for range draws {
		counts[g.Uniform(1, 10)-1]++
	}
	for i, c := range counts {
		if f := float64(c) / draws; math.Abs(f-0.1) > 0.01 {
			t.Errorf("value %d drawn %.3f of the time, want ~0.1", i+1, f)
		}
	}
}

func TestDeterminism(t *testing.T) {
	seq := func(seed, stream uint64) []int64 {
		g := New(seed, stream)
		d, err := newDist("special", 1, 10_000, DefaultParams())
		if err != nil {
			t.Fatal(err)
		}
		out := make([]int64, 100)
		for i := range out {
			out[i] = d.Next(g) + g.Uniform(0, 1<<30)
		}
		return out
	}
	a, b := seq(42, 3), seq(42, 3)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed and stream differ at %d", i)
		}
	}
	for _, other := range [][]int64{seq(42, 4), seq(43, 3)} {
		same := 0
		for i := range a {
			if a[i] == other[i] {
				same++
			}
		}
		if same > 10 {
			t.Errorf("different seed or stream gives %d of 100 equal values", same)
		}
	}
}

// dist draws n values and returns them with their range checked.
func drawAll(t *testing.T, name string, lo, hi int64, p Params) []int64 {
	t.Helper()
	d, err := newDist(name, lo, hi, p)
	if err != nil {
		t.Fatal(err)
	}
	g := New(7, 1)
	out := make([]int64, draws)
	for i := range out {
		v := d.Next(g)
		if v < lo || v > hi {
			t.Fatalf("%s over [%d, %d] drew %d", name, lo, hi, v)
		}
		out[i] = v
	}
	return out
}

func TestZipfianShape(t *testing.T) {
	for _, e := range []float64{0.8, 1, 1.5} {
		p := DefaultParams()
		p.ZipfExp = e
		const n = 100
		vals := drawAll(t, "zipfian", 1, n, p)
		var counts [n + 1]int
		for _, v := range vals {
			counts[v]++
		}
		var norm float64
		for k := 1; k <= n; k++ {
			norm += math.Pow(float64(k), -e)
		}
		for _, k := range []int{1, 2, 3, 10, 50} {
			want := math.Pow(float64(k), -e) / norm
			got := float64(counts[k]) / draws
			if math.Abs(got-want) > 0.1*want+0.001 {
				t.Errorf("exp %v: P(%d) = %.4f, want %.4f", e, k, got, want)
			}
		}
	}
	// Exponent 0 is uniform; a shifted range keeps its bounds.
	p := DefaultParams()
	p.ZipfExp = 0
	vals := drawAll(t, "zipfian", 11, 20, p)
	var counts [10]int
	for _, v := range vals {
		counts[v-11]++
	}
	for i, c := range counts {
		if f := float64(c) / draws; math.Abs(f-0.1) > 0.01 {
			t.Errorf("exp 0: value %d drawn %.3f of the time, want ~0.1", i+11, f)
		}
	}
	// Large ranges need no tables and stay in range.
	drawAll(t, "zipfian", 1, 1_000_000_000, DefaultParams())
}

func TestGaussianShape(t *testing.T) {
	vals := drawAll(t, "gaussian", 1, 10_000, DefaultParams())
	var sum, sq float64
	for _, v := range vals {
		sum += float64(v)
	}
	mean := sum / draws
	for _, v := range vals {
		sq += (float64(v) - mean) * (float64(v) - mean)
	}
	sd := math.Sqrt(sq / draws)
	// The mean of 12 uniforms over 10,000: centre 5,000, sd 10,000/sqrt(12*12).
	if math.Abs(mean-5000) > 30 {
		t.Errorf("mean %.0f, want ~5000", mean)
	}
	if want := 10_000 / 12.0; math.Abs(sd-want) > 0.05*want {
		t.Errorf("sd %.0f, want ~%.0f", sd, want)
	}
	// More iterations, narrower bell.
	p := DefaultParams()
	p.Iter = 1
	wide := drawAll(t, "gaussian", 1, 10_000, p)
	in := 0
	for _, v := range wide {
		if v > 4000 && v <= 6000 {
			in++
		}
	}
	if f := float64(in) / draws; math.Abs(f-0.2) > 0.01 {
		t.Errorf("iter 1 is uniform: %.3f in the middle fifth, want 0.2", f)
	}
}

func TestSpecialShape(t *testing.T) {
	const n = 100_000
	vals := drawAll(t, "special", 1, n, DefaultParams())
	// sysbench's hot 1% sits in the middle of the range.
	lo, hi := int64(n/2-n/200), int64(n/2+n/200)
	hot := 0
	for _, v := range vals {
		if v >= lo && v <= hi {
			hot++
		}
	}
	// 75% hot plus the gaussian's share of that window (about 1.4%).
	if f := float64(hot) / draws; f < 0.74 || f > 0.78 {
		t.Errorf("%.3f of draws in the central 1%%, want ~0.76", f)
	}
	p := DefaultParams()
	// With one iteration the cold draws are uniform: 50% hot + 10% of the other 50%.
	p.SpecialPct, p.SpecialRes, p.Iter = 10, 50, 1
	vals = drawAll(t, "special", 1, n, p)
	hot = 0
	for _, v := range vals {
		if v >= n/2-n/20 && v <= n/2+n/20 {
			hot++
		}
	}
	if f := float64(hot) / draws; f < 0.53 || f > 0.57 {
		t.Errorf("pct 10 res 50: %.3f of draws in the central 10%%, want ~0.55", f)
	}
	// Degenerate ranges.
	drawAll(t, "special", 5, 5, DefaultParams())
	drawAll(t, "special", 1, 2, DefaultParams())
}

func TestDistNames(t *testing.T) {
	for _, name := range kinds() {
		d, err := newDist(strings.ToUpper(name), 1, 10, DefaultParams())
		if err != nil || d.distKind().String() != name {
			t.Errorf("NewDist(%q): %v, %v", name, d, err)
		}
	}
	_, err := newDist("pareto", 1, 10, DefaultParams())
	if err == nil || !strings.Contains(err.Error(), `unknown distribution "pareto" (use uniform, zipfian, gaussian, special)`) {
		t.Errorf("unknown name: %v", err)
	}
	if _, err := newDist("uniform", 10, 1, DefaultParams()); err == nil {
		t.Error("empty range accepted")
	}
	for _, p := range []Params{
		{ZipfExp: -1, Iter: 12, SpecialPct: 1, SpecialRes: 75},
		{ZipfExp: 0.8, Iter: 0, SpecialPct: 1, SpecialRes: 75},
		{ZipfExp: 0.8, Iter: 12, SpecialPct: 101, SpecialRes: 75},
		{ZipfExp: 0.8, Iter: 12, SpecialPct: 1, SpecialRes: 100},
		{ZipfExp: math.NaN(), Iter: 12, SpecialPct: 1, SpecialRes: 75},
	} {
		if _, err := newDist("special", 1, 10, p); err == nil {
			t.Errorf("params %+v accepted", p)
		}
	}
}

func TestDigits(t *testing.T) {
	g := New(1, 1)
	buf := make([]byte, 200)
	c := g.C(buf)
	if len(c) != CLen || CLen != 119 {
		t.Fatalf("c has %d bytes", len(c))
	}
	pad := g.Pad(make([]byte, PadLen))
	if len(pad) != PadLen || PadLen != 59 {
		t.Fatalf("pad has %d bytes", len(pad))
	}
	for _, s := range []string{string(c), string(pad)} {
		for _, grp := range strings.Split(s, "-") {
			if len(grp) != 11 || strings.Trim(grp, "0123456789") != "" {
				t.Fatalf("bad group %q in %q", grp, s)
			}
		}
	}
	if strings.Count(string(c), "-") != 9 || strings.Count(string(pad), "-") != 4 {
		t.Errorf("separators: %q %q", c, pad)
	}
	// Digits are uniform in every position.
	var counts [12][10]int
	const n = 20_000
	for range n {
		s := g.digits(buf, 1)
		for i, ch := range s {
			counts[i][ch-'0']++
		}
	}
	for pos := range 11 {
		for d, cnt := range counts[pos] {
			if f := float64(cnt) / n; math.Abs(f-0.1) > 0.012 {
				t.Errorf("position %d digit %d: %.3f", pos, d, f)
			}
		}
	}
}

func TestZeroAllocs(t *testing.T) {
	g := New(1, 2)
	buf := make([]byte, CLen)
	var sink int64
	for _, name := range kinds() {
		d, _ := newDist(name, 1, 1_000_000, DefaultParams())
		if a := testing.AllocsPerRun(1000, func() { sink += d.Next(g) }); a != 0 {
			t.Errorf("%s: %v allocs per draw", name, a)
		}
	}
	if a := testing.AllocsPerRun(1000, func() { sink += g.Uniform(1, 10) + g.Gaussian(1, 10, 12) + g.Special(1, 10, 1, 75, 12) }); a != 0 {
		t.Errorf("Rand methods: %v allocs per draw", a)
	}
	if a := testing.AllocsPerRun(1000, func() { g.C(buf); g.Pad(buf) }); a != 0 {
		t.Errorf("strings: %v allocs per draw", a)
	}
	_ = sink
}

var benchSink int64

func benchDist(b *testing.B, name string) {
	d, err := newDist(name, 1, 10_000_000, DefaultParams())
	if err != nil {
		b.Fatal(err)
	}
	g := New(1, 1)
	b.ReportAllocs()
	for b.Loop() {
		benchSink += d.Next(g)
	}
}

func BenchmarkUniform(b *testing.B)  { benchDist(b, "uniform") }
func BenchmarkZipfian(b *testing.B)  { benchDist(b, "zipfian") }
func BenchmarkGaussian(b *testing.B) { benchDist(b, "gaussian") }
func BenchmarkSpecial(b *testing.B)  { benchDist(b, "special") }

func BenchmarkC(b *testing.B) {
	g := New(1, 1)
	buf := make([]byte, CLen)
	b.ReportAllocs()
	for b.Loop() {
		g.C(buf)
	}
}

func BenchmarkPad(b *testing.B) {
	g := New(1, 1)
	buf := make([]byte, PadLen)
	b.ReportAllocs()
	for b.Loop() {
		g.Pad(buf)
	}
}
