package sblua

import (
	"context"
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/fathom-lab/fathom/internal/workload/gen"
)

func newTestGen() *gen.Rand { return gen.New(1, 2) }

// BenchmarkEventCall is the interpreter's cost per event() of a script shaped like
// oltp_point_select without the server: ten draws of sysbench.rand.default and
// ten param:set calls (the statement's execute is the server's time).
func BenchmarkEventCall(b *testing.B) {
	s := &Script{Path: "bench.lua", searchDirs: SearchDirs, mods: &modules{}}
	src := `
local t = {}
local p = {}
function event()
   for i = 1, 10 do
      local id = sysbench.rand.default(1, 10000)
      t[i] = id
   end
   return t[1]
end`
	var err error
	if s.proto, err = compileString(src, "bench.lua"); err != nil {
		b.Fatal(err)
	}
	opts, kinds := defaults(s)
	e, err := newEnv(context.Background(), envConfig{s: s, opts: opts, kinds: kinds, driver: "mysql",
		rp: randParams{kind: "special", iter: 12, pct: 1, res: 75, paretoH: 0.2, zipfExp: 0.8}, seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer e.close()
	ev := e.L.GetGlobal("event").(*lua.LFunction)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := e.L.CallByParam(lua.P{Fn: ev, NRet: 0, Protect: true}, lua.LNumber(0)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEmptyCall is the interpreter's fixed cost of calling event().
func BenchmarkEmptyCall(b *testing.B) {
	s := &Script{Path: "bench.lua", searchDirs: SearchDirs, mods: &modules{}}
	var err error
	if s.proto, err = compileString("function event() end", "bench.lua"); err != nil {
		b.Fatal(err)
	}
	opts, kinds := defaults(s)
	e, err := newEnv(context.Background(), envConfig{s: s, opts: opts, kinds: kinds, driver: "mysql",
		rp: randParams{kind: "uniform", iter: 12, paretoH: 0.2, zipfExp: 0.8}, seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer e.close()
	ev := e.L.GetGlobal("event").(*lua.LFunction)
	b.ReportAllocs()
	for range b.N {
		if err := e.L.CallByParam(lua.P{Fn: ev, NRet: 0, Protect: true}, lua.LNumber(0)); err != nil {
			b.Fatal(err)
		}
	}
}
