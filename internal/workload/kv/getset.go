package kv

import (
	"context"
	"strconv"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
	"github.com/fathom-lab/fathom/internal/workload/gen"
)

// KVSpec is redis-kv: GETs and SETs of existing keys, read share and key distribution
// as options.
func KVSpec() *workload.Spec {
	s := &workload.Spec{
		Name:        "redis-kv",
		Description: "Redis GET/SET mix over a prepared key space: value size, key count, key distribution uniform|zipfian|hotspot, read share, pipelining",
	}
	s.Options = append(commonOptions("fathom:kv:", "100000", "100"), distOptions("uniform")...)
	s.Options = append(s.Options, workload.Option{Name: "read", Default: "90", Help: "percentage of transactions that are GETs (the rest SETs)"})
	s.New = func(p workload.Params) (workload.Workload, error) { return newKV(s, p) }
	return s
}

// kv is a configured redis-kv.
type kv struct {
	*base
	dist *keyDist
	read float64
}

func newKV(s *workload.Spec, p workload.Params) (*kv, error) {
	b, err := newBase(s, p)
	if err != nil {
		return nil, err
	}
	b.txnTypes = []string{"get", "set"}
	w := &kv{base: b}
	if w.dist, err = newKeyDist(b.opts, b.keys, false); err != nil {
		return nil, err
	}
	r, err := strconv.ParseFloat(b.opts["read"], 64)
	if err != nil || r < 0 || r > 100 {
		return nil, errOption("read", b.opts["read"], "a percentage from 0 to 100")
	}
	w.read = r / 100
	return w, nil
}

// Prepare SETs every key to a value of value_size bytes.
func (w *kv) Prepare(ctx context.Context, t target.Target, p workload.Progress) error {
	g := gen.New(1, 0)
	val := value(g, w.valueSize)
	return w.load(ctx, t, p, w.prefix+"*", w.keys, func(bt target.Batch, i int64) {
		bt.Cmd("SET").Concat(w.prefix, i).Bytes(val).End()
	})
}

// Setup checks that prepare ran.
func (w *kv) Setup(ctx context.Context, c target.Conn) error { return w.setup(ctx, c) }

// NewWorker returns a client's worker.
func (w *kv) NewWorker(id int, seed uint64) workload.Worker {
	g := gen.New(seed, uint64(id))
	return &kvWorker{w: w, g: g, val: value(g, w.valueSize)}
}

type kvWorker struct {
	batchClient
	w   *kv
	g   *gen.Rand
	val []byte
	typ int
}

func (k *kvWorker) Bind(_ context.Context, c target.Conn) error { return k.bind(c, k.w.name) }

func (k *kvWorker) Next() int {
	k.typ = 1
	if k.g.Float64() < k.w.read {
		k.typ = 0
	}
	k.b.Reset()
	for i := 0; i < k.w.pipeline; i++ {
		key := k.w.dist.next(k.g)
		if k.typ == 0 {
			k.b.Cmd("GET").Concat(k.w.prefix, key).End()
		} else {
			k.b.Cmd("SET").Concat(k.w.prefix, key).Bytes(k.val).End()
		}
	}
	return k.typ
}
