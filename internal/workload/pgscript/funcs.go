package pgscript

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/fathom-lab/fathom/internal/workload/gen"
)

// fnSpec is one built-in function of the expression language.
type fnSpec struct {
	min, max int  // argument count; max -1: any
	nullOK   bool // called with NULL arguments (otherwise NULL in, NULL out)
	call     func(s *state, a []value) (value, error)
}

func (f *fnSpec) arity() string {
	switch {
	case f.min == f.max && f.min == 1:
		return "1 argument"
	case f.min == f.max:
		return fmt.Sprintf("%d arguments", f.min)
	case f.max < 0:
		return fmt.Sprintf("at least %d argument(s)", f.min)
	}
	return fmt.Sprintf("%d to %d arguments", f.min, f.max)
}

// funcs are the functions pgbench documents, by lower-case name.
var funcs = map[string]*fnSpec{
	"abs":                {min: 1, max: 1, call: fnAbs},
	"debug":              {min: 1, max: 1, nullOK: true, call: fnDebug},
	"double":             {min: 1, max: 1, call: fnDouble},
	"exp":                {min: 1, max: 1, call: dbl1(math.Exp)},
	"greatest":           {min: 1, max: -1, call: fnGreatest},
	"hash":               {min: 1, max: 2, call: fnMurmur2},
	"hash_fnv1a":         {min: 1, max: 2, call: fnFNV1a},
	"hash_murmur2":       {min: 1, max: 2, call: fnMurmur2},
	"int":                {min: 1, max: 1, call: fnInt},
	"least":              {min: 1, max: -1, call: fnLeast},
	"ln":                 {min: 1, max: 1, call: dbl1(math.Log)},
	"mod":                {min: 2, max: 2, call: fnMod},
	"permute":            {min: 2, max: 3, call: fnPermute},
	"pi":                 {min: 0, max: 0, call: func(*state, []value) (value, error) { return dblVal(math.Pi), nil }},
	"pow":                {min: 2, max: 2, call: fnPow},
	"power":              {min: 2, max: 2, call: fnPow},
	"random":             {min: 2, max: 2, call: fnRandom},
	"random_exponential": {min: 3, max: 3, call: fnRandomExponential},
	"random_gaussian":    {min: 3, max: 3, call: fnRandomGaussian},
	"random_zipfian":     {min: 3, max: 3, call: fnRandomZipfian},
	"sqrt":               {min: 1, max: 1, call: dbl1(math.Sqrt)},
}

func funcNames() string {
	names := make([]string, 0, len(funcs))
	for n := range funcs {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

func dbl1(f func(float64) float64) func(*state, []value) (value, error) {
	return func(_ *state, a []value) (value, error) {
		x, err := toDouble(a[0])
		return dblVal(f(x)), err
	}
}

// fnAbs is abs as pgbench 15 computes it: abs of the smallest integer is itself (no
// error), and a boolean gives the double whose bits are the boolean's (true:
// 4.94065645841247e-324, false: 0).
func fnAbs(_ *state, a []value) (value, error) {
	switch a[0].K {
	case kDouble:
		return dblVal(math.Abs(a[0].F)), nil
	case kBool:
		if a[0].B {
			return dblVal(math.Float64frombits(1)), nil
		}
		return dblVal(0), nil
	}
	i := a[0].I
	if i < 0 {
		i = -i // MinInt64 stays as it is
	}
	return intVal(i), nil
}

func fnDebug(s *state, a []value) (value, error) {
	s.debugf(a[0])
	return a[0], nil
}

func fnDouble(_ *state, a []value) (value, error) {
	f, err := toDouble(a[0])
	return dblVal(f), err
}

func fnInt(_ *state, a []value) (value, error) {
	i, err := toInt(a[0])
	return intVal(i), err
}

func fnMod(_ *state, a []value) (value, error) {
	return operate(opMod, a[0], a[1])
}

func fnPow(_ *state, a []value) (value, error) {
	x, err := toDouble(a[0])
	if err != nil {
		return a[0], err
	}
	y, err := toDouble(a[1])
	return dblVal(math.Pow(x, y)), err
}

// fnGreatest and fnLeast: a double result if any argument is a double.
func fnGreatest(_ *state, a []value) (value, error) { return extreme(a, 1) }
func fnLeast(_ *state, a []value) (value, error)    { return extreme(a, -1) }

func extreme(a []value, sign int) (value, error) {
	dbl := false
	for _, v := range a {
		if v.K == kDouble {
			dbl = true
		}
	}
	if dbl {
		var best float64
		for i, v := range a {
			x, err := toDouble(v)
			if err != nil {
				return v, err
			}
			// As pgbench: keep best only while it compares strictly better, so a NaN
			// argument replaces it (and is replaced by the next one).
			if i == 0 || !(cmpF(best, x) == sign && !math.IsNaN(best) && !math.IsNaN(x)) {
				best = x
			}
		}
		return dblVal(best), nil
	}
	var best int64
	for i, v := range a {
		x, err := toInt(v)
		if err != nil {
			return v, err
		}
		if i == 0 || cmpI(x, best) == sign {
			best = x
		}
	}
	return intVal(best), nil
}

// ints reads integer arguments.
func ints2(a []value) (int64, int64, error) {
	x, err := toInt(a[0])
	if err != nil {
		return 0, 0, err
	}
	y, err := toInt(a[1])
	return x, y, err
}

// seedArg is the optional seed argument, default :default_seed.
func (s *state) seedArg(a []value, i int) (uint64, error) {
	if len(a) > i {
		v, err := toInt(a[i])
		return uint64(v), err
	}
	if s.seedSlot >= 0 && s.vars[s.seedSlot].set {
		v, err := toInt(s.vars[s.seedSlot].val)
		return uint64(v), err
	}
	return 0, evalErrf("undefined variable \"default_seed\"")
}

// Hash constants: 64-bit FNV-1a and MurmurHash64A.
const (
	fnvOffset = 0xcbf29ce484222325
	fnvPrime  = 0x100000001b3
	mm2Mul    = 0xc6a4a7935bd1e995
	mm2Rot    = 47
)

// hashFNV1a hashes the 8 bytes of v, least significant first, from the offset basis
// xor seed.
func hashFNV1a(v int64, seed uint64) int64 {
	h := uint64(fnvOffset) ^ seed
	x := uint64(v)
	for range 8 {
		h ^= x & 0xff
		h *= fnvPrime
		x >>= 8
	}
	return int64(h)
}

// hashMurmur2 is MurmurHash64A of the 8 bytes of v.
func hashMurmur2(v int64, seed uint64) int64 {
	m := uint64(mm2Mul)
	h := seed ^ (8 * m) // wraps, as the 64-bit original does
	k := uint64(v)
	k *= mm2Mul
	k ^= k >> mm2Rot
	k *= mm2Mul
	h ^= k
	h *= mm2Mul
	h ^= h >> mm2Rot
	h *= mm2Mul
	h ^= h >> mm2Rot
	return int64(h)
}

func fnFNV1a(s *state, a []value) (value, error) {
	v, err := toInt(a[0])
	if err != nil {
		return a[0], err
	}
	seed, err := s.seedArg(a, 1)
	return intVal(hashFNV1a(v, seed)), err
}

func fnMurmur2(s *state, a []value) (value, error) {
	v, err := toInt(a[0])
	if err != nil {
		return a[0], err
	}
	seed, err := s.seedArg(a, 1)
	return intVal(hashMurmur2(v, seed)), err
}

// randRange checks [lb, ub] as pgbench does: not empty, and its size fits an int64.
func randRange(a []value) (lb, ub int64, err error) {
	if lb, ub, err = ints2(a); err != nil {
		return
	}
	if lb > ub {
		return 0, 0, evalErrf("empty range given to random")
	}
	if ub-lb < 0 || ub-lb+1 <= 0 {
		return 0, 0, evalErrf("random range is too large")
	}
	return
}

func fnRandom(s *state, a []value) (value, error) {
	lb, ub, err := randRange(a)
	if err != nil {
		return a[0], err
	}
	return intVal(lb + int64(s.rng.Uint64N(uint64(ub-lb+1)))), nil
}

// uniformOpen1 is a double in (0, 1].
func (s *state) uniformOpen1() float64 { return 1 - s.rng.Float64() }

// fnRandomExponential: P(lb+k) is proportional to exp(-p*k/n) over the n values,
// drawn by inversion of the truncated exponential.
func fnRandomExponential(s *state, a []value) (value, error) {
	lb, ub, err := randRange(a)
	if err != nil {
		return a[0], err
	}
	p, err := toDouble(a[2])
	if err != nil {
		return a[2], err
	}
	if !(p > 0) {
		return a[2], evalErrf("exponential parameter must be greater than zero (not %g)", p)
	}
	return intVal(lb + expDraw(s.uniformOpen1(), float64(ub-lb+1), p)), nil
}

func expDraw(u, n, p float64) int64 {
	cut := math.Exp(-p)
	r := -math.Log(cut+(1-cut)*u) / p // in [0, 1)
	k := int64(n * r)
	if float64(k) >= n { // rounding at the top
		k = int64(n) - 1
	}
	return k
}

// minGaussian is the smallest parameter random_gaussian accepts.
const minGaussian = 2.0

// fnRandomGaussian: a normal draw (Box–Muller) truncated to [-p, p) standard
// deviations, mapped onto the range; p is the number of deviations at each end.
func fnRandomGaussian(s *state, a []value) (value, error) {
	lb, ub, err := randRange(a)
	if err != nil {
		return a[0], err
	}
	p, err := toDouble(a[2])
	if err != nil {
		return a[2], err
	}
	if !(p >= minGaussian) {
		return a[2], evalErrf("gaussian parameter must be at least %g (not %g)", minGaussian, p)
	}
	var z float64
	for {
		u1, u2 := s.uniformOpen1(), s.rng.Float64()
		z = math.Sqrt(-2*math.Log(u1)) * math.Sin(2*math.Pi*u2)
		if z >= -p && z < p {
			break
		}
	}
	r := (z + p) / (2 * p) // in [0, 1)
	n := float64(ub - lb + 1)
	k := int64(n * r)
	if float64(k) >= n {
		k = int64(n) - 1
	}
	return intVal(lb + k), nil
}

// Zipfian parameter bounds, as pgbench's.
const (
	minZipf = 1.001
	maxZipf = 1000.0
)

// fnRandomZipfian: P(lb+k-1) proportional to 1/k^s for k in 1..n, drawn by rejection
// (Devroye, Non-Uniform Random Variate Generation, X.6).
func fnRandomZipfian(s *state, a []value) (value, error) {
	lb, ub, err := randRange(a)
	if err != nil {
		return a[0], err
	}
	p, err := toDouble(a[2])
	if err != nil {
		return a[2], err
	}
	if !(p >= minZipf && p <= maxZipf) {
		return a[2], evalErrf("zipfian parameter must be in range [%g, %g] (not %g)", minZipf, maxZipf, p)
	}
	return intVal(lb + zipfDraw(s, float64(ub-lb+1), p) - 1), nil
}

func zipfDraw(s *state, n, p float64) int64 {
	b := math.Pow(2, p-1)
	for {
		u, v := s.uniformOpen1(), s.rng.Float64()
		x := math.Floor(math.Pow(u, -1/(p-1)))
		if x > n || x < 1 {
			continue
		}
		t := math.Pow(1+1/x, p-1)
		if v*x*(t-1)/(b-1) <= t/b {
			return int64(x)
		}
	}
}

// fnPermute maps i (taken modulo size) to a pseudorandom position in [0, size): a
// bijection chosen by the seed. Values differ from pgbench's own permute (which uses
// its own generator); the property — a permutation for each seed and size — holds.
func fnPermute(s *state, a []value) (value, error) {
	i, size, err := ints2(a)
	if err != nil {
		return a[0], err
	}
	if size <= 0 {
		return a[1], evalErrf("permute size parameter must be greater than zero")
	}
	seed, err := s.seedArg(a, 2)
	if err != nil {
		return a[2], err
	}
	v := i % size
	if v < 0 {
		v += size
	}
	return intVal(permute(uint64(v), uint64(size), seed)), nil
}

// permute is a keyed bijection on [0, n): a bijection on the smallest power of two
// covering n, applied until the value falls inside (cycle walking).
func permute(v, n, seed uint64) int64 {
	if n == 1 {
		return 0
	}
	w := uint(64 - countLeadingZeros(n-1))
	mask := uint64(1)<<w - 1
	if w == 64 {
		mask = ^uint64(0)
	}
	k1 := gen.Mix64(seed ^ 0x9e3779b97f4a7c15)
	k2 := gen.Mix64(k1 + n)
	for {
		for r := range 4 {
			key := k1
			if r&1 == 1 {
				key = k2
			}
			v = (v + key) & mask
			v = (v * (key | 1)) & mask
			if sh := w / 2; sh > 0 {
				v ^= v >> sh
			}
		}
		if v < n {
			return int64(v)
		}
	}
}

func countLeadingZeros(x uint64) int {
	n := 0
	for x&(1<<63) == 0 && n < 64 {
		x <<= 1
		n++
	}
	return n
}
