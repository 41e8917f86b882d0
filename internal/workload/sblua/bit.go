package sblua

import (
	"math"
	"math/bits"
	"strings"

	"github.com/fathom-lab/fathom/internal/lua"
)

// registerBit provides LuaJIT's bit module (the BitOp API: tobit, tohex, bnot, band,
// bor, bxor, lshift, rshift, arshift, rol, ror, bswap), which sysbench scripts reach
// as a global or through require("bit"): the community's TPC-C scripts use bit.bor in
// their NURand. As in LuaJIT, every argument is taken modulo 2^32 (a fraction rounded
// to the nearest integer, ties to even), results are signed 32-bit numbers, and shift
// counts use their low five bits.
func (e *env) registerBit() {
	L := e.L
	fold := func(op func(a, b uint32) uint32) lua.LGFunction {
		return func(L *lua.LState) int {
			acc := toBit(L, 1)
			for i := 2; i <= L.GetTop(); i++ {
				acc = op(acc, toBit(L, i))
			}
			L.Push(bitResult(acc))
			return 1
		}
	}
	shift := func(op func(x uint32, n uint) uint32) lua.LGFunction {
		return func(L *lua.LState) int {
			L.Push(bitResult(op(toBit(L, 1), uint(toBit(L, 2)&31))))
			return 1
		}
	}
	fns := map[string]lua.LGFunction{
		"tobit":  func(L *lua.LState) int { L.Push(bitResult(toBit(L, 1))); return 1 },
		"bnot":   func(L *lua.LState) int { L.Push(bitResult(^toBit(L, 1))); return 1 },
		"bswap":  func(L *lua.LState) int { L.Push(bitResult(bits.ReverseBytes32(toBit(L, 1)))); return 1 },
		"band":   fold(func(a, b uint32) uint32 { return a & b }),
		"bor":    fold(func(a, b uint32) uint32 { return a | b }),
		"bxor":   fold(func(a, b uint32) uint32 { return a ^ b }),
		"lshift": shift(func(x uint32, n uint) uint32 { return x << n }),
		"rshift": shift(func(x uint32, n uint) uint32 { return x >> n }),
		"arshift": shift(func(x uint32, n uint) uint32 {
			return uint32(int32(x) >> n)
		}),
		"rol":   shift(func(x uint32, n uint) uint32 { return bits.RotateLeft32(x, int(n)) }),
		"ror":   shift(func(x uint32, n uint) uint32 { return bits.RotateLeft32(x, -int(n)) }),
		"tohex": bitToHex,
	}
	mod := L.NewTable()
	for name, f := range fns {
		L.SetField(mod, name, L.NewFunction(f))
	}
	L.SetGlobal("bit", mod)
	if pkg, ok := L.GetGlobal("package").(*lua.LTable); ok {
		if pre, ok := pkg.RawGetString("preload").(*lua.LTable); ok {
			L.SetField(pre, "bit", L.NewFunction(func(L *lua.LState) int { L.Push(mod); return 1 }))
		}
	}
}

// toBit is argument n as BitOp normalises it: rounded to an integer, modulo 2^32.
func toBit(L *lua.LState, n int) uint32 {
	v := math.RoundToEven(float64(L.CheckNumber(n)))
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return 0
	}
	m := math.Mod(v, 1<<32)
	if m < 0 {
		m += 1 << 32
	}
	return uint32(m)
}

// bitResult is x as BitOp returns it: a signed 32-bit number.
func bitResult(x uint32) lua.LNumber { return lua.LNumber(int32(x)) }

// bitToHex is bit.tohex(x [, n]): the low |n| hex digits of x (default 8), upper case
// when n is negative.
func bitToHex(L *lua.LState) int {
	x := toBit(L, 1)
	n := int(L.OptNumber(2, 8))
	upper := n < 0
	if upper {
		n = -n
	}
	n = min(n, 8)
	digits := "0123456789abcdef"
	if upper {
		digits = strings.ToUpper(digits)
	}
	buf := make([]byte, n)
	for i := n - 1; i >= 0; i-- {
		buf[i] = digits[x&15]
		x >>= 4
	}
	L.Push(lua.LString(buf))
	return 1
}
