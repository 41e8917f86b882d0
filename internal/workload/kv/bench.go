package kv

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
	"github.com/fathom-lab/fathom/internal/workload/gen"
)

// benchCmd is one of redis-benchmark's tests: its name (-t) and how one command is
// built, with r a random key number in [0, keys).
type benchCmd struct {
	name  string
	build func(b target.Batch, p *names, r int64, val []byte)
}

// benchCmds are redis-benchmark's tests, with the same commands and key names under
// the workload's prefix ("key:N", "counter:N", "mylist", "myset", "myhash", "myzset").
var benchCmds = []benchCmd{
	{"ping", func(b target.Batch, p *names, r int64, val []byte) { b.Cmd("PING") }},
	{"set", func(b target.Batch, p *names, r int64, val []byte) { b.Cmd("SET").Concat(p.key, r).Bytes(val) }},
	{"get", func(b target.Batch, p *names, r int64, val []byte) { b.Cmd("GET").Concat(p.key, r) }},
	{"incr", func(b target.Batch, p *names, r int64, val []byte) { b.Cmd("INCR").Concat(p.counter, r) }},
	{"lpush", func(b target.Batch, p *names, r int64, val []byte) { b.Cmd("LPUSH").Arg(p.list).Bytes(val) }},
	{"rpush", func(b target.Batch, p *names, r int64, val []byte) { b.Cmd("RPUSH").Arg(p.list).Bytes(val) }},
	{"lpop", func(b target.Batch, p *names, r int64, val []byte) { b.Cmd("LPOP").Arg(p.list) }},
	{"rpop", func(b target.Batch, p *names, r int64, val []byte) { b.Cmd("RPOP").Arg(p.list) }},
	{"sadd", func(b target.Batch, p *names, r int64, val []byte) { b.Cmd("SADD").Arg(p.set).Concat("element:", r) }},
	{"hset", func(b target.Batch, p *names, r int64, val []byte) {
		b.Cmd("HSET").Arg(p.hash).Concat("element:", r).Bytes(val)
	}},
	{"spop", func(b target.Batch, p *names, r int64, val []byte) { b.Cmd("SPOP").Arg(p.set) }},
	{"zadd", func(b target.Batch, p *names, r int64, val []byte) {
		b.Cmd("ZADD").Arg(p.zset).Int(r).Concat("element:", r)
	}},
	{"zpopmin", func(b target.Batch, p *names, r int64, val []byte) { b.Cmd("ZPOPMIN").Arg(p.zset) }},
	{"lrange_100", func(b target.Batch, p *names, r int64, val []byte) { b.Cmd("LRANGE").Arg(p.list).Arg("0").Arg("99") }},
	{"lrange_300", func(b target.Batch, p *names, r int64, val []byte) { b.Cmd("LRANGE").Arg(p.list).Arg("0").Arg("299") }},
	{"mset", nil}, // ten keys: built in Next
}

func benchNames() []string {
	var n []string
	for _, c := range benchCmds {
		n = append(n, c.name)
	}
	return n
}

// names are the keys of the tests, with the prefix: built once, not per command.
type names struct{ key, counter, list, set, hash, zset string }

// BenchSpec is redis-bench: redis-benchmark's commands chosen by name.
func BenchSpec() *workload.Spec {
	s := &workload.Spec{
		Name:        "redis-bench",
		Description: "redis-benchmark's command set chosen by name (--set tests=set,get,incr,lpush,…): each transaction is one command (or a pipeline of them) of a test drawn at random",
	}
	s.Options = append(commonOptions("fathom:bench:", "100000", "3"),
		workload.Option{Name: "tests", Default: "set,get", Help: "comma-separated tests (redis-benchmark -t): " + strings.Join(benchNames(), ", ")})
	s.New = func(p workload.Params) (workload.Workload, error) { return newBench(s, p) }
	return s
}

// bench is a configured redis-bench.
type bench struct {
	*base
	tests []int // indexes into benchCmds
	names names
}

func newBench(s *workload.Spec, p workload.Params) (*bench, error) {
	b, err := newBase(s, p)
	if err != nil {
		return nil, err
	}
	w := &bench{base: b}
	pf := b.prefix
	w.names = names{key: pf + "key:", counter: pf + "counter:", list: pf + "mylist", set: pf + "myset", hash: pf + "myhash", zset: pf + "myzset"}
	for _, name := range strings.Split(b.opts["tests"], ",") {
		name = strings.ToLower(strings.TrimSpace(name))
		i := slices.IndexFunc(benchCmds, func(c benchCmd) bool { return c.name == name })
		if i < 0 {
			return nil, fmt.Errorf("option tests: %q is not a test (tests: %s)", name, strings.Join(benchNames(), ", "))
		}
		if !slices.Contains(w.tests, i) {
			w.tests = append(w.tests, i)
			b.txnTypes = append(b.txnTypes, name)
		}
	}
	return w, nil
}

// Prepare SETs key:0 … key:keys-1, so that get finds values (redis-benchmark reads
// whatever is there; prepare is optional for this workload).
func (w *bench) Prepare(ctx context.Context, t target.Target, p workload.Progress) error {
	val := value(gen.New(1, 0), w.valueSize)
	return w.load(ctx, t, p, w.prefix+"key:*", w.keys, func(bt target.Batch, i int64) {
		bt.Cmd("SET").Concat(w.names.key, i).Bytes(val).End()
	})
}

// Setup checks the target only: like redis-benchmark, redis-bench runs on an empty
// database too.
func (w *bench) Setup(_ context.Context, c target.Conn) error {
	_, err := conn(c, w.name)
	return err
}

// NewWorker returns a client's worker.
func (w *bench) NewWorker(id int, seed uint64) workload.Worker {
	g := gen.New(seed, uint64(id))
	return &benchWorker{w: w, g: g, val: value(g, w.valueSize)}
}

type benchWorker struct {
	batchClient
	w   *bench
	g   *gen.Rand
	val []byte
}

func (k *benchWorker) Bind(_ context.Context, c target.Conn) error { return k.bind(c, k.w.name) }

func (k *benchWorker) Next() int {
	typ := 0
	if len(k.w.tests) > 1 {
		typ = int(k.g.Uniform(0, int64(len(k.w.tests)-1)))
	}
	c := &benchCmds[k.w.tests[typ]]
	k.b.Reset()
	for i := 0; i < k.w.pipeline; i++ {
		if c.build == nil { // mset
			k.b.Cmd("MSET")
			for j := 0; j < 10; j++ {
				k.b.Concat(k.w.names.key, k.g.Uniform(0, k.w.keys-1)).Bytes(k.val)
			}
		} else {
			c.build(k.b, &k.w.names, k.g.Uniform(0, k.w.keys-1), k.val)
		}
		k.b.End()
	}
	return typ
}
