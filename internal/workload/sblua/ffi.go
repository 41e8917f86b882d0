package sblua

import (
	"time"

	"github.com/fathom-lab/fathom/internal/lua"
)

// registerFFI provides the part of LuaJIT's ffi that sysbench scripts use to reach
// sysbench's own C functions: ffi.cdef is accepted (it only declares), and ffi.C has
// sysbench's random number functions and usleep. Anything else that needs LuaJIT's
// C data (ffi.new, ffi.C.other) is refused with one line naming the call.
func (e *env) registerFFI() {
	L := e.L
	r := e.rng
	two := func(f func(a, b int64) int64) *lua.LFunction {
		return L.NewFunction(func(L *lua.LState) int {
			L.PushNumber(float64(f(toU32(L, 1), toU32(L, 2))))
			return 1
		})
	}
	cfuncs := map[string]lua.LValue{
		"sb_rand_default":  two(func(a, b int64) int64 { return r.def(a, b) }),
		"sb_rand_uniform":  two(r.uniform),
		"sb_rand_gaussian": two(r.gaussian),
		"sb_rand_special":  two(r.special),
		"sb_rand_pareto":   two(r.pareto),
		"sb_rand_zipfian":  two(r.zipfian),
		"sb_rand_unique": L.NewFunction(func(L *lua.LState) int {
			L.PushNumber(float64(r.uniq.draw()))
			return 1
		}),
		"sb_rand_uniform_double": L.NewFunction(func(L *lua.LState) int {
			L.PushNumber(r.g.Float64())
			return 1
		}),
		"usleep": L.NewFunction(func(L *lua.LState) int {
			e.sleep(time.Duration(L.CheckNumber(1)) * time.Microsecond)
			L.Push(lua.LNumber(0))
			return 1
		}),
		"sleep": L.NewFunction(func(L *lua.LState) int {
			e.sleep(time.Duration(float64(L.CheckNumber(1)) * float64(time.Second)))
			L.Push(lua.LNumber(0))
			return 1
		}),
		// sysbench 1.0's own counters (sb_counter.h): a script counts a statement it
		// sent some other way, or, most often, an error it handled itself (the
		// community TPC-C scripts count a New-Order's 1% rollback so).
		"sb_counter_inc": L.NewFunction(func(L *lua.LState) int {
			e.counterInc(int(L.CheckNumber(2)))
			return 0
		}),
	}
	for i, name := range sbCounters {
		cfuncs[name] = lua.LNumber(i)
	}
	C := L.NewTable()
	cmt := L.NewTable()
	L.SetField(cmt, "__index", L.NewFunction(func(L *lua.LState) int {
		name := L.CheckString(2)
		if f, ok := cfuncs[name]; ok {
			L.Push(f)
			return 1
		}
		L.RaiseError("ffi.C.%s is not available in fathom: sysbench's C functions reached through LuaJIT's ffi are provided for sb_rand_*, sb_counter_inc and usleep only", name)
		return 0
	}))
	L.SetMetatable(C, cmt)
	ffi := L.NewTable()
	L.SetField(ffi, "C", C)
	L.SetField(ffi, "cdef", L.NewFunction(func(L *lua.LState) int { return 0 }))
	for _, name := range []string{"new", "typeof", "metatype", "gc", "cast", "string", "copy", "fill", "sizeof", "load", "errno", "istype", "offsetof", "alignof", "abi"} {
		L.SetField(ffi, name, L.NewFunction(func(L *lua.LState) int {
			L.RaiseError("ffi.%s is not supported in fathom: LuaJIT's C data has no equivalent in its pure-Go Lua", name)
			return 0
		}))
	}
	L.SetGlobal("ffi", ffi)
	e.registerBit()
	if pkg, ok := L.GetGlobal("package").(*lua.LTable); ok {
		if pre, ok := pkg.RawGetString("preload").(*lua.LTable); ok {
			L.SetField(pre, "ffi", L.NewFunction(func(L *lua.LState) int { L.Push(ffi); return 1 }))
		}
	}
	if str, ok := L.GetGlobal("string").(*lua.LTable); ok {
		L.SetField(str, "format", L.NewFunction(strFormat))
	}
	// LuaJIT and sysbench provide these beside Lua 5.1's standard library.
	if tbl, ok := L.GetGlobal("table").(*lua.LTable); ok && tbl.RawGetString("getn") == lua.LNil {
		L.SetField(tbl, "getn", L.NewFunction(func(L *lua.LState) int { L.PushNumber(float64(L.CheckTable(1).Len())); return 1 }))
	}
}

// sbCounters are sysbench 1.0's counter types, by their value in its sb_counter_type.
var sbCounters = []string{"SB_CNT_OTHER", "SB_CNT_READ", "SB_CNT_WRITE", "SB_CNT_EVENT", "SB_CNT_ERROR", "SB_CNT_RECONNECT"}

// counterInc is ffi.C.sb_counter_inc(tid, typ) in the event running: a read, write or
// other statement counts as one of the event's statements; an error marks the event
// as one whose script counted an error (it is then measured as the transaction type
// "event-error", beside "event"); events and reconnects are fathom's own counts, so
// the script's are not added to them.
func (e *env) counterInc(typ int) {
	switch typ {
	case 0, 1, 2:
		e.sentClass(typ)
	case 4:
		e.eventErr = true
	}
}
