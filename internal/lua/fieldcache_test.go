package lua

import (
	"strings"
	"testing"
)

// TestFieldCacheFollowsWrites: a field site's cached value is never served once
// the table it came from (or, for a userdata, its metatable or __index table)
// has been written, replaced or swapped; every case below reads at the same
// sites before and after the change.
func TestFieldCacheFollowsWrites(t *testing.T) {
	for name, src := range map[string]string{
		"global rewritten": `
			x = 1
			local seen = {}
			for i = 1, 4 do seen[i] = x; x = x * 2 end
			assert(table.concat(seen, ",") == "1,2,4,8", table.concat(seen, ","))`,
		"field rewritten": `
			local t = {a = 1}
			local s = 0
			for i = 1, 5 do s = s + t.a; t.a = t.a + 1 end
			assert(s == 15, s)`,
		"field removed, __index answers": `
			local t = {a = 1}
			local function get() return t.a end
			assert(get() == 1)
			t.a = nil
			assert(get() == nil)
			setmetatable(t, {__index = {a = 5}})
			assert(get() == 5)
			getmetatable(t).__index = {a = 6}
			assert(get() == 6)
			t.a = 7
			assert(get() == 7)`,
		"one site, many tables": `
			local function get(t) return t.x end
			local ts = {{x = 1}, {x = 2}, setmetatable({}, {__index = {x = 3}}), {x = 4}}
			for round = 1, 3 do
				for i, t in ipairs(ts) do assert(get(t) == i, i) end
			end
			ts[2].x = 20
			assert(get(ts[2]) == 20 and get(ts[1]) == 1)`,
		"one site, more tables than it keeps": `
			local function get(t) return t.x end
			local ts = {}
			for i = 1, 12 do ts[i] = {x = i} end
			for round = 1, 4 do
				for i = 1, 12 do
					local j = (i * 5 + round) % 12 + 1
					assert(get(ts[j]) == j * round, j)
				end
				for i = 1, 12 do ts[i].x = i * (round + 1) end
			end`,
		"one method site, several metatables": `
			local function call(o) return o:v() end
			local objs = {}
			for i = 1, 10 do
				local C = {}
				C.__index = C
				C.v = function() return i end
				objs[i] = setmetatable({}, C)
			end
			for round = 1, 3 do
				for i = 10, 1, -1 do assert(call(objs[i]) == i * (round == 3 and 2 or 1)) end
				if round == 2 then
					for i = 1, 10 do getmetatable(objs[i]).v = function() return i * 2 end end
				end
			end`,
		"method replaced": `
			local C = {}
			C.__index = C
			function C:v() return 1 end
			local o = setmetatable({}, C)
			local function call() return o:v() end
			assert(call() == 1)
			function C:v() return 2 end
			assert(call() == 2)
			o.v = function() return 3 end
			assert(call() == 3)`,
		"setfenv": `
			local function f() return g end
			g = "global"
			assert(f() == "global")
			setfenv(f, {g = "env"})
			assert(f() == "env")`,
		"__index function": `
			local n = 0
			local t = setmetatable({}, {__index = function(t, k) n = n + 1; return n end})
			local function get() return t.k end
			assert(get() == 1 and get() == 2 and get() == 3)`,
		"coroutine shares the closure": `
			local t = {v = 1}
			local function get() return t.v end
			local co = coroutine.wrap(function() while true do coroutine.yield(get()) end end)
			assert(co() == 1)
			t.v = 2
			assert(get() == 2 and co() == 2)`,
		"rawset and table.insert": `
			local t = {k = 1}
			local function get() return t.k end
			assert(get() == 1)
			rawset(t, "k", 2)
			assert(get() == 2)
			rawset(t, "k", nil)
			assert(get() == nil)`,
	} {
		t.Run(name, func(t *testing.T) {
			L := NewState()
			defer L.Close()
			if err := L.DoString(src); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestFieldCacheUserdata: a method read through a userdata's metatable follows a
// change of the method, of the metatable's __index and of the userdata's
// metatable.
func TestFieldCacheUserdata(t *testing.T) {
	L := NewState()
	defer L.Close()
	method := func(v int) LValue {
		return L.NewFunction(func(L *LState) int { L.Push(LNumber(v)); return 1 })
	}
	idx := L.NewTable()
	idx.RawSetString("m", method(1))
	mt := L.NewTable()
	mt.RawSetString("__index", idx)
	ud := L.NewUserData()
	ud.Metatable = mt
	L.SetGlobal("ud", ud)
	if err := L.DoString(`function call() return ud:m() end`); err != nil {
		t.Fatal(err)
	}
	call := func() int {
		t.Helper()
		if err := L.CallByParam(P{Fn: L.GetGlobal("call"), NRet: 1, Protect: true}); err != nil {
			t.Fatal(err)
		}
		v := L.Get(-1)
		L.Pop(1)
		return int(v.(LNumber))
	}
	steps := []struct {
		change func()
		want   int
	}{
		{func() {}, 1},
		{func() {}, 1},
		{func() { idx.RawSetString("m", method(2)) }, 2},
		{func() {
			idx2 := L.NewTable()
			idx2.RawSetString("m", method(3))
			mt.RawSetString("__index", idx2)
		}, 3},
		{func() { // a second userdata at the same site, then the first again
			other := L.NewUserData()
			omt, oidx := L.NewTable(), L.NewTable()
			oidx.RawSetString("m", method(9))
			omt.RawSetString("__index", oidx)
			other.Metatable = omt
			L.SetGlobal("ud", other)
			if got := call(); got != 9 {
				t.Fatalf("other userdata: ud:m() = %d, want 9", got)
			}
			oidx.RawSetString("m", method(10))
			if got := call(); got != 10 {
				t.Fatalf("other userdata, method replaced: ud:m() = %d, want 10", got)
			}
			L.SetGlobal("ud", ud)
		}, 3},
		{func() {
			mt2 := L.NewTable()
			idx3 := L.NewTable()
			idx3.RawSetString("m", method(4))
			mt2.RawSetString("__index", idx3)
			ud.Metatable = mt2
		}, 4},
		{func() { // __index a function: nothing cached against the old table answers
			mt2 := ud.Metatable.(*LTable)
			mt2.RawSetString("__index", L.NewFunction(func(L *LState) int { L.Push(method(5)); return 1 }))
		}, 5},
		{func() { // and a table again
			mt2 := ud.Metatable.(*LTable)
			idx4 := L.NewTable()
			idx4.RawSetString("m", method(6))
			mt2.RawSetString("__index", idx4)
		}, 6},
	}
	for i, s := range steps {
		s.change()
		if got := call(); got != s.want {
			t.Fatalf("step %d: ud:m() = %d, want %d", i, got, s.want)
		}
	}
	// The method read is cached, against the __index table it came from.
	idx4 := ud.Metatable.(*LTable).index
	fn := L.GetGlobal("call").(*LFunction)
	cached := false
	for site := range fn.fieldCache {
		_, ok := fn.lookupMore(site, idx4)
		cached = cached || ok || fn.fieldCache[site].hit(idx4)
	}
	if idx4 == nil || !cached {
		t.Fatalf("ud:m() is not cached: index %p, entries %+v", idx4, fn.fieldCache)
	}
}

// TestErrorMessageWithPercent: error() and assert() keep a message with % signs as
// written, now that their messages go to RaiseError as an argument of "%s" (for go
// vet) rather than as the format.
func TestErrorMessageWithPercent(t *testing.T) {
	for _, src := range []string{`error("100% done", 0)`, `assert(false, "100% done")`} {
		L := NewState()
		err := L.DoString(src)
		L.Close()
		if err == nil || !strings.Contains(err.Error(), "100% done") {
			t.Errorf("%s: error %v, want one holding %q", src, err, "100% done")
		}
	}
}
