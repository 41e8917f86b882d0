package gen

import (
	"math"
	"testing"
)

// moments draws n values and returns their mean and standard deviation, checking the
// range.
func moments(t *testing.T, n int, lo, hi int64, next func(*Rand) int64) (mean, sd float64) {
	t.Helper()
	g := New(5, 2)
	vals := make([]float64, n)
	for i := range vals {
		v := next(g)
		if v < lo || v > hi {
			t.Fatalf("%d out of [%d, %d]", v, lo, hi)
		}
		vals[i] = float64(v)
		mean += vals[i]
	}
	mean /= float64(n)
	for _, v := range vals {
		sd += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(sd / float64(n))
}

func TestShapes(t *testing.T) {
	exp, _ := NewExponential(0, 1<<40, 50)
	expCut, _ := NewExponential(10, 59, 50)
	hot, _ := NewHotSpot(1, 100, 0.2, 0.8)
	hotAll, _ := NewHotSpot(1, 100, 1, 0.5)
	norm, _ := NewNormal(0, 1000, 500, 100)
	normEdge, _ := NewNormal(0, 1000, 0, 100)
	for _, c := range []struct {
		name       string
		lo, hi     int64
		next       func(*Rand) int64
		mean, sd   float64
		tolM, tolS float64
	}{
		// floor of an exponential with mean m: mean 1/(e^(1/m)-1), sd sqrt(e^(1/m))/(e^(1/m)-1).
		{"exponential", 0, 1 << 40, exp.Next, 1 / math.Expm1(1.0/50), math.Sqrt(math.Exp(1.0/50)) / math.Expm1(1.0/50), 0.5, 0.5},
		// Truncated to 50 values above 10: mean 10 + m - 50/(e^(50/m)-1) - 1/2 roughly.
		{"exponential truncated", 10, 59, expCut.Next, 10 + 50 - 50/math.Expm1(1) - 0.5, 14.1, 0.3, 0.3},
		// 80% uniform on 1..20, 20% on 21..100.
		{"hotspot", 1, 100, hot.Next, 0.8*10.5 + 0.2*60.5, math.Sqrt(0.8*(33.25+10.5*10.5) + 0.2*(533.25+60.5*60.5) - math.Pow(0.8*10.5+0.2*60.5, 2)), 0.3, 0.3},
		{"hotspot all hot", 1, 100, hotAll.Next, 50.5, 28.87, 0.3, 0.3},
		{"normal", 0, 1000, norm.Next, 500, 100, 1, 1},
		// Centred on the lower bound: the half above it, redrawn, not piled up at 0.
		{"normal at the edge", 0, 1000, normEdge.Next, 100 * math.Sqrt(2/math.Pi), 100 * math.Sqrt(1-2/math.Pi), 1, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			mean, sd := moments(t, 200_000, c.lo, c.hi, c.next)
			if math.Abs(mean-c.mean) > c.tolM {
				t.Errorf("mean %.3f, want %.3f", mean, c.mean)
			}
			if math.Abs(sd-c.sd) > c.tolS {
				t.Errorf("sd %.3f, want %.3f", sd, c.sd)
			}
			a, b := New(9, 9), New(9, 9)
			for range 100 {
				if c.next(a) != c.next(b) {
					t.Fatal("same seed, different values")
				}
			}
		})
	}
	for _, bad := range []error{
		func() error { _, err := NewExponential(5, 4, 1); return err }(),
		func() error { _, err := NewExponential(1, 4, 0); return err }(),
		func() error { _, err := NewHotSpot(1, 4, 1.5, 0.5); return err }(),
		func() error { _, err := NewHotSpot(1, 4, 0.5, -1); return err }(),
		func() error { _, err := NewNormal(1, 4, 2, 0); return err }(),
	} {
		if bad == nil {
			t.Error("bad parameters accepted")
		}
	}
}

func TestScramble(t *testing.T) {
	seen := map[int64]bool{}
	for v := int64(1); v <= 1000; v++ {
		s := Scramble(v, 1, 1000)
		if s < 1 || s > 1000 {
			t.Fatalf("Scramble(%d) = %d", v, s)
		}
		if Scramble(v, 1, 1000) != s {
			t.Fatal("not deterministic")
		}
		seen[s] = true
	}
	// A hash, not a permutation: most values are hit, and neighbours are spread.
	if len(seen) < 550 {
		t.Errorf("only %d of 1000 values hit", len(seen))
	}
	if d := Scramble(1, 1, 1000) - Scramble(2, 1, 1000); d > -10 && d < 10 {
		t.Errorf("1 and 2 scramble to neighbours")
	}
}

func TestStrings(t *testing.T) {
	g := New(3, 3)
	var counts [256]int
	buf := make([]byte, 0, 64)
	for range 20_000 {
		buf = g.AppendString(buf[:0], 31)
		if len(buf) != 31 {
			t.Fatalf("length %d", len(buf))
		}
		for _, c := range buf {
			counts[c]++
		}
	}
	// Each of the 62 characters about 1/62 of the time.
	want := 20_000.0 * 31 / 62
	for _, c := range alnum {
		if f := float64(counts[c]); math.Abs(f-want) > 0.05*want {
			t.Errorf("%c drawn %v times, want ~%v", c, f, want)
		}
	}
	p := g.AppendPattern(nil, "id-##@@*.x")
	if len(p) != 10 || p[0] != 'i' || p[2] != '-' || p[3] < '0' || p[3] > '9' || p[5] < 'a' || p[5] > 'z' || string(p[8:]) != ".x" {
		t.Errorf("pattern %q", p)
	}
	if allocs := testing.AllocsPerRun(100, func() { buf = g.AppendString(buf[:0], 50) }); allocs != 0 {
		t.Errorf("AppendString allocates %v times", allocs)
	}
}
