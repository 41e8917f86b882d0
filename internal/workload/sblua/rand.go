package sblua

import (
	"math"
	"strings"
	"sync/atomic"

	"github.com/fathom-lab/fathom/internal/lua"

	"github.com/fathom-lab/fathom/internal/workload/gen"
)

// randParams are sysbench's --rand-* options.
type randParams struct {
	kind    string // --rand-type: uniform, gaussian, special, pareto, zipfian
	iter    int    // --rand-spec-iter
	pct     float64
	res     float64
	paretoH float64
	zipfExp float64
}

// uniqueSeq is sysbench.rand.unique's sequence, shared by every client as in
// sysbench (one counter for the whole run, walked through a permutation of 2^32).
type uniqueSeq struct {
	index, offset uint32
	next          atomic.Uint32
}

const uniquePrime = 4294967291 // the largest prime below 2^32

// permute is a bijection on [0, 2^32) built on quadratic residues of uniquePrime
// (the values at and above it map to themselves).
func permute(x uint32) uint32 {
	if x >= uniquePrime {
		return x
	}
	r := uint32(uint64(x) * uint64(x) % uniquePrime)
	if x <= uniquePrime/2 {
		return r
	}
	return uniquePrime - r
}

func newUniqueSeq(seed uint64) *uniqueSeq {
	s := &uniqueSeq{}
	s.index = permute(permute(uint32(seed)) + 0x682f0161)
	s.offset = permute(permute(uint32(seed>>32)) + 0x46790905)
	return s
}

func (s *uniqueSeq) draw() uint32 {
	i := s.index + s.next.Add(1) - 1
	return permute((permute(i) + s.offset) ^ 0x5bf03635)
}

// rng is one Lua state's random numbers: a gen.Rand and the distributions of
// sysbench.rand, with its --rand-* options.
type rng struct {
	g       *gen.Rand
	p       randParams
	paretoP float64
	zipfs   map[int64]*gen.Zipf
	def     func(a, b int64) int64
	uniq    *uniqueSeq
}

func newRNG(g *gen.Rand, p randParams, uniq *uniqueSeq) *rng {
	r := &rng{g: g, p: p, zipfs: map[int64]*gen.Zipf{}, uniq: uniq}
	r.paretoP = math.Log(p.paretoH) / math.Log(1-p.paretoH)
	switch p.kind {
	case "uniform":
		r.def = r.uniform
	case "gaussian":
		r.def = r.gaussian
	case "pareto":
		r.def = r.pareto
	case "zipfian":
		r.def = r.zipfian
	default:
		r.def = r.special
	}
	return r
}

// The distributions follow sysbench's arithmetic on the range [a, b] (a > b is
// given back as a, where sysbench's unsigned arithmetic would wrap).

func (r *rng) uniform(a, b int64) int64 {
	if b <= a {
		return a
	}
	return a + int64(r.g.Float64()*float64(b-a+1))
}

func (r *rng) gaussian(a, b int64) int64 {
	if b <= a {
		return a
	}
	return r.g.Gaussian(a, b, r.p.iter)
}

func (r *rng) special(a, b int64) int64 {
	if b <= a {
		return a
	}
	return r.g.Special(a, b, r.p.pct, r.p.res, r.p.iter)
}

func (r *rng) pareto(a, b int64) int64 {
	if b <= a {
		return a
	}
	return a + int64(float64(b-a+1)*math.Pow(r.g.Float64(), r.paretoP))
}

func (r *rng) zipfian(a, b int64) int64 {
	if b <= a {
		return a
	}
	n := b - a + 1
	z := r.zipfs[n]
	if z == nil {
		zz := gen.NewZipf(n, r.p.zipfExp)
		z = &zz
		r.zipfs[n] = z
	}
	return a + z.Next(r.g) - 1
}

// fill writes sysbench's random string for the template into dst: '#' a digit,
// '@' a lower-case letter, anything else itself.
func (r *rng) fill(dst []byte, tmpl string) []byte {
	dst = dst[:0]
	for i := 0; i < len(tmpl); i++ {
		switch tmpl[i] {
		case '#':
			dst = append(dst, byte(r.uniform('0', '9')))
		case '@':
			dst = append(dst, byte(r.uniform('a', 'z')))
		default:
			dst = append(dst, tmpl[i])
		}
	}
	return dst
}

// toU32 reads a Lua number as sysbench's uint32 arguments do (truncated).
func toU32(L *lua.LState, n int) int64 {
	v := L.CheckNumber(n)
	return int64(float64(v))
}

// register puts sysbench.rand into tbl and the legacy sb_rand* globals.
func (r *rng) register(L *lua.LState, sb *lua.LTable) {
	t := L.NewTable()
	two := func(f func(a, b int64) int64) lua.LGFunction {
		return func(L *lua.LState) int {
			L.PushNumber(float64(f(toU32(L, 1), toU32(L, 2))))
			return 1
		}
	}
	fns := map[string]lua.LGFunction{
		"default":  two(func(a, b int64) int64 { return r.def(a, b) }),
		"uniform":  two(r.uniform),
		"gaussian": two(r.gaussian),
		"special":  two(r.special),
		"pareto":   two(r.pareto),
		"zipfian":  two(r.zipfian),
		"unique": func(L *lua.LState) int {
			L.PushNumber(float64(r.uniq.draw()))
			return 1
		},
		"uniform_uint64": func(L *lua.LState) int {
			// A Lua 5.1 number holds 53 bits exactly; sysbench's LuaJIT gives a
			// 64-bit cdata. Scripts take it modulo 2^32 (sb_rnd), which this keeps.
			L.PushNumber(float64(r.g.Uint64() >> 11))
			return 1
		},
		"uniform_double": func(L *lua.LState) int {
			L.PushNumber(r.g.Float64())
			return 1
		},
		"string": func(L *lua.LState) int {
			tmpl := L.CheckString(1)
			L.Push(lua.LString(r.fill(make([]byte, 0, len(tmpl)), tmpl)))
			return 1
		},
		"varstring": func(L *lua.LState) int {
			lo, hi := toU32(L, 1), toU32(L, 2)
			if lo > hi {
				L.ArgError(1, "min_len must not be above max_len")
			}
			if hi <= 0 {
				L.ArgError(2, "max_len must be above 0")
			}
			n := r.uniform(lo, hi)
			var b strings.Builder
			b.Grow(int(n))
			for range n {
				b.WriteByte(byte(r.uniform('0', 'z')))
			}
			L.Push(lua.LString(b.String()))
			return 1
		},
	}
	L.SetFuncs(t, fns)
	L.SetField(sb, "rand", t)
	// sysbench 1.0's compatibility globals (sysbench.compat).
	L.SetGlobal("sb_rand", t.RawGetString("default"))
	L.SetGlobal("sb_rand_str", t.RawGetString("string"))
	L.SetGlobal("sb_rand_uniform", t.RawGetString("uniform"))
	L.SetGlobal("sb_rand_gaussian", t.RawGetString("gaussian"))
	L.SetGlobal("sb_rand_special", t.RawGetString("special"))
	L.SetGlobal("sb_rnd", L.NewFunction(func(L *lua.LState) int {
		L.PushNumber(float64(r.g.Uint64() & math.MaxUint32))
		return 1
	}))
	L.SetGlobal("sb_rand_uniq", L.NewFunction(func(L *lua.LState) int {
		lo, hi := int64(0), int64(math.MaxUint32)
		if L.Get(1) != lua.LNil {
			lo = toU32(L, 1)
		}
		if L.Get(2) != lua.LNil {
			hi = toU32(L, 2)
		}
		if lo > hi {
			L.ArgError(1, "the range is empty")
		}
		for {
			v := int64(r.uniq.draw())
			if v >= lo && v <= hi {
				L.PushNumber(float64(v))
				return 1
			}
		}
	}))
}
