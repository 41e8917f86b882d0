package sblua

import (
	"context"
	"testing"

	"github.com/fathom-lab/fathom/internal/lua"

	"github.com/fathom-lab/fathom/internal/workload/gen"
)

func newTestGen() *gen.Rand { return gen.New(1, 2) }

// BenchmarkEventCall is the interpreter's cost per event() of a script shaped like
// oltp_point_select without the server: ten draws of sysbench.rand.default and
// ten param:set calls (the statement's execute is the server's time).
func BenchmarkEventCall(b *testing.B) {
	s := &script{Path: "bench.lua", searchDirs: SearchDirs, mods: &modules{}}
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
	s := &script{Path: "bench.lua", searchDirs: SearchDirs, mods: &modules{}}
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

// TestQueryClassAllocatesNothing: the class of every statement a script sends is
// found without allocating, whatever its case.
func TestQueryClassAllocatesNothing(t *testing.T) {
	for q, want := range map[string]int{"SELECT 1": classRead, "  select c FROM t": classRead, "(SELECT 1)": classRead,
		"update t set x=1": classWrite, "Replace INTO t VALUES (1)": classWrite, "BEGIN": classOther, "COMMIT": classOther, "": classOther} {
		if got := queryClass(q); got != want {
			t.Errorf("queryClass(%q) = %d, want %d", q, got, want)
		}
		if n := testing.AllocsPerRun(100, func() { queryClass(q) }); n != 0 {
			t.Errorf("queryClass(%q): %v allocations", q, n)
		}
	}
}

// BenchmarkLoad is reading a script sysbench ships: compiling it and oltp_common and
// running its main chunk once to learn its options (each run does it once).
func BenchmarkLoad(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		if _, err := Load(SearchDirs[0] + "/oltp_read_only.lua"); err != nil {
			b.Skip(err)
		}
	}
}

// BenchmarkNewEnv is a client's Lua state for a script sysbench ships: the state,
// sysbench's API and the script's main chunk (require of the compiled oltp_common).
func BenchmarkNewEnv(b *testing.B) {
	s, err := Load(SearchDirs[0] + "/oltp_read_only.lua")
	if err != nil {
		b.Skip(err)
	}
	opts, kinds := defaults(s)
	b.ReportAllocs()
	for range b.N {
		e, err := newEnv(context.Background(), envConfig{s: s, command: "run", opts: opts, kinds: kinds, driver: "mysql",
			rp: randParams{kind: "uniform", iter: 12, paretoH: 0.2, zipfExp: 0.8}, seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		e.close()
	}
}
