package sblua

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fathom-lab/fathom/internal/lua"
)

// strFormat is string.format with C's conversions as Lua 5.1 and LuaJIT have them
// (%u, %i, %d of a whole float, %c, %q): gopher-lua hands the format to Go's fmt,
// which prints %u as %!u and a float given to %d as %!d.
func strFormat(L *lua.LState) int {
	f := L.CheckString(1)
	var b strings.Builder
	arg := 2
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(f) {
			L.RaiseError("invalid option '%%' to 'format'")
		}
		if f[i] == '%' {
			b.WriteByte('%')
			continue
		}
		j := i
		for j < len(f) && strings.IndexByte("-+ #0", f[j]) >= 0 {
			j++
		}
		for j < len(f) && (f[j] >= '0' && f[j] <= '9' || f[j] == '.') {
			j++
		}
		if j >= len(f) {
			L.RaiseError("invalid option to 'format'")
		}
		spec, conv := f[i:j], f[j]
		i = j
		switch conv {
		case 'd', 'i', 'u':
			n := L.CheckNumber(arg)
			fmt.Fprintf(&b, "%"+spec+"d", int64(n))
		case 'c':
			b.WriteByte(byte(int64(L.CheckNumber(arg))))
		case 'x', 'X', 'o':
			n := L.CheckNumber(arg)
			fmt.Fprintf(&b, "%"+spec+string(conv), int64(n))
		case 'e', 'E', 'f', 'g', 'G':
			n := L.CheckNumber(arg)
			fmt.Fprintf(&b, "%"+spec+string(conv), float64(n))
		case 's':
			s := L.ToStringMeta(L.CheckAny(arg)).String()
			fmt.Fprintf(&b, "%"+spec+"s", s)
		case 'q':
			b.WriteString(strconv.Quote(L.CheckString(arg)))
		default:
			L.RaiseError("invalid option '%%%c' to 'format'", conv)
		}
		arg++
	}
	L.Push(lua.LString(b.String()))
	return 1
}
