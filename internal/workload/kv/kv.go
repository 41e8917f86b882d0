// Package kv holds fathom's Redis workloads: redis-kv (a GET/SET mix over a key space
// with a chosen key distribution), redis-bench (redis-benchmark's command set, chosen
// by name) and redis-ycsb (YCSB's core mixes A–F on hashes).
//
// Every key starts with the workload's prefix (option prefix), so cleanup deletes
// exactly what prepare and the runs made. With option pipeline N (fathom run
// --pipeline N, redis-benchmark's -P) each transaction is a batch of N commands of its
// type sent in one round trip: throughput in commands is statements per second, and a
// transaction's latency is the batch's.
package kv

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
	"github.com/fathom-lab/fathom/internal/workload/gen"
)

// maxPipeline bounds the pipeline option.
const maxPipeline = 10000

// common options of the three workloads.
func commonOptions(prefix, keys, valueSize string) []workload.Option {
	return []workload.Option{
		{Name: "keys", Default: keys, Help: "number of keys prepare loads and the run draws from"},
		{Name: "value_size", Default: valueSize, Help: "bytes per value"},
		{Name: "pipeline", Default: "1", Help: "commands per round trip (redis-benchmark -P; also fathom run --pipeline)"},
		{Name: "prefix", Default: prefix, Help: "key prefix: every key of this workload starts with it, and cleanup deletes exactly those"},
	}
}

// base holds what the three workloads share.
type base struct {
	name      string
	opts      map[string]string
	keys      int64
	valueSize int
	pipeline  int
	prefix    string
	txnTypes  []string
}

func newBase(s *workload.Spec, p workload.Params) (*base, error) {
	opts, err := s.Resolve(p)
	if err != nil {
		return nil, err
	}
	b := &base{name: s.Name, opts: opts, prefix: opts["prefix"]}
	if b.keys, err = workload.Int(opts, "keys", 1, 1<<40); err != nil {
		return nil, err
	}
	vs, err := workload.Int(opts, "value_size", 0, 512<<20)
	if err != nil {
		return nil, err
	}
	b.valueSize = int(vs)
	pl, err := workload.Int(opts, "pipeline", 1, maxPipeline)
	if err != nil {
		return nil, err
	}
	b.pipeline = int(pl)
	if b.prefix == "" || strings.ContainsAny(b.prefix, "*?[]\\ \t\n") {
		return nil, fmt.Errorf("option prefix: %q must be non-empty and free of glob characters and spaces (it selects the keys cleanup deletes)", b.prefix)
	}
	return b, nil
}

// SelfMarked: the meta key is the record of a finished prepare (workload.SelfMarked).
func (b *base) SelfMarked() {}

func (b *base) Name() string               { return b.name }
func (b *base) Options() map[string]string { return b.opts }
func (b *base) TxnTypes() []string         { return b.txnTypes }

// conn is c as a connection that takes batches of commands (a Redis target's), or
// a usage error.
func conn(c target.Conn, name string) (target.Batcher, error) {
	rc, ok := c.(target.Batcher)
	if !ok {
		return nil, fmt.Errorf("workload %s needs a Redis target (--target redis://host:port/db)", name)
	}
	return rc, nil
}

// metaKey holds what prepare loaded: keys and value_size.
func (b *base) metaKey() string { return b.prefix + "meta" }

// setup checks that prepare ran with these options.
func (b *base) setup(ctx context.Context, c target.Conn) error {
	if _, err := conn(c, b.name); err != nil {
		return err
	}
	rows, err := c.Query(ctx, "HGET ? keys", target.Text([]byte(b.metaKey())))
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return fmt.Errorf("%w: no key %s (prepare writes it last)", workload.ErrNotPrepared, b.metaKey())
	}
	if n, _ := strconv.ParseInt(rows[0][0], 10, 64); n < b.keys {
		return fmt.Errorf("%w: option keys: the run draws from %d keys, but prepare loaded %d under %s; run with --set keys=%d, or prepare again with --set keys=%d", workload.ErrMismatch, b.keys, n, b.prefix, n, b.keys)
	}
	return nil
}

// load writes keys 0 … n-1 with put, in pipelines of 1000 on 4 connections, and
// records the meta key last.
func (b *base) load(ctx context.Context, t target.Target, p workload.Progress, what string, n int64, put func(bt target.Batch, i int64)) error {
	const conns, depth = 4, 1000
	c, err := t.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Exec(ctx, "DEL "+b.metaKey()); err != nil {
		return err
	}
	var done atomic.Int64
	errc := make(chan error, conns)
	for w := 0; w < conns; w++ {
		go func(w int) {
			c, err := t.Connect(ctx)
			if err != nil {
				errc <- err
				return
			}
			defer c.Close()
			rc, err := conn(c, b.name)
			if err != nil {
				errc <- err
				return
			}
			bt := rc.NewBatch()
			for lo := int64(w) * depth; lo < n; lo += conns * depth {
				hi := min(lo+depth, n)
				for i := lo; i < hi; i++ {
					put(bt, i)
				}
				if err := rc.Send(ctx, bt); err != nil {
					errc <- err
					return
				}
				if p != nil {
					p(what, done.Add(hi-lo), n)
				}
			}
			errc <- nil
		}(w)
	}
	var first error
	for w := 0; w < conns; w++ {
		if err := <-errc; err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		return first
	}
	_, err = c.Query(ctx, "HSET ? keys ? value_size ? workload ?", target.Text([]byte(b.metaKey())), target.Int64(b.keys), target.Int64(int64(b.valueSize)), target.Text([]byte(b.name)))
	return err
}

// Cleanup deletes every key that starts with the prefix (SCAN MATCH, then UNLINK).
func (b *base) Cleanup(ctx context.Context, c target.Conn) error {
	rc, err := conn(c, b.name)
	if err != nil {
		return err
	}
	cursor := "0"
	pattern := target.Text([]byte(b.prefix + "*"))
	for {
		rows, err := c.Query(ctx, "SCAN ? MATCH ? COUNT 1000", target.Text([]byte(cursor)), pattern)
		if err != nil {
			return err
		}
		if len(rows) < 1 || len(rows[0]) < 1 {
			return errors.New("SCAN gave an unexpected reply")
		}
		cursor = rows[0][0]
		if len(rows) > 1 && len(rows[1]) > 0 {
			bt := rc.NewBatch()
			bt.Cmd("UNLINK")
			for _, k := range rows[1] {
				bt.Arg(k)
			}
			bt.End()
			if err := rc.Send(ctx, bt); err != nil {
				return err
			}
		}
		if cursor == "0" {
			return nil
		}
	}
}

// value returns a value of n random printable bytes.
func value(g *gen.Rand, n int) []byte {
	v := make([]byte, n)
	for i := range v {
		v[i] = 'a' + byte(g.Uint64()%26)
	}
	return v
}

// keyDist draws key numbers in [0, n).
type keyDist struct {
	kind     string // uniform, zipfian, hotspot
	n        int64
	zipf     gen.Zipf
	scramble bool
	hot      int64   // hotspot: keys 0 … hot-1 are hot
	hotShare float64 // hotspot: share of draws that hit them
}

var distNames = []string{"uniform", "zipfian", "hotspot"}

func newKeyDist(opts map[string]string, n int64, scramble bool) (*keyDist, error) {
	d := &keyDist{kind: opts["dist"], n: n, scramble: scramble}
	switch d.kind {
	case "uniform":
	case "zipfian":
		e, err := strconv.ParseFloat(opts["zipf_exp"], 64)
		if err != nil || e < 0 || e > 10 || math.IsNaN(e) {
			return nil, fmt.Errorf("option zipf_exp: %q is not a number from 0 to 10", opts["zipf_exp"])
		}
		d.zipf = gen.NewZipf(n, e)
	case "hotspot":
		frac, err := strconv.ParseFloat(opts["hot_keys"], 64)
		if err != nil || frac <= 0 || frac >= 100 {
			return nil, fmt.Errorf("option hot_keys: %q is not a percentage between 0 and 100", opts["hot_keys"])
		}
		share, err := strconv.ParseFloat(opts["hot_share"], 64)
		if err != nil || share < 0 || share > 100 {
			return nil, fmt.Errorf("option hot_share: %q is not a percentage from 0 to 100", opts["hot_share"])
		}
		d.hot = max(1, int64(float64(n)*frac/100))
		d.hotShare = share / 100
	default:
		return nil, fmt.Errorf("option dist: %q is not one of %s", d.kind, strings.Join(distNames, ", "))
	}
	return d, nil
}

func (d *keyDist) next(g *gen.Rand) int64 {
	switch d.kind {
	case "zipfian":
		k := d.zipf.Next(g) - 1
		if d.scramble {
			k = int64(mix(uint64(k)) % uint64(d.n))
		}
		return k
	case "hotspot":
		if d.hot >= d.n || g.Float64() < d.hotShare {
			return g.Uniform(0, d.hot-1)
		}
		return g.Uniform(d.hot, d.n-1)
	}
	return g.Uniform(0, d.n-1)
}

// mix is the splitmix64 finalizer: YCSB scrambles zipfian keys over the key space so
// that the hot ones are not neighbours.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

func distOptions(def string) []workload.Option {
	return []workload.Option{
		{Name: "dist", Default: def, Help: "key distribution: uniform, zipfian or hotspot"},
		{Name: "zipf_exp", Default: "0.99", Help: "zipfian exponent"},
		{Name: "hot_keys", Default: "20", Help: "hotspot: percentage of the keys that are hot"},
		{Name: "hot_share", Default: "80", Help: "hotspot: percentage of draws that hit the hot keys"},
	}
}

func errOption(name, v, want string) error {
	return fmt.Errorf("option %s: %q is not %s", name, v, want)
}

// batchClient is the connection side of a worker whose every transaction is one batch
// of commands (redis-bench, redis-kv): its connection, its batch, and the batch as an
// Exchanger, so that the runner may multiplex it (workload.Single).
type batchClient struct {
	conn target.Batcher
	b    target.Batch
	x    target.Stmt
}

func (k *batchClient) bind(c target.Conn, name string) error {
	rc, err := conn(c, name)
	if err != nil {
		return err
	}
	k.conn, k.b = rc, rc.NewBatch()
	if k.x = rc.Exchange(k.b); k.x == nil {
		return fmt.Errorf("workload %s: the connection cannot send its own batches", name)
	}
	return nil
}

// Single implements workload.Single: every transaction is one batch, one request and
// its replies (the kind's Exchanger, from target.Batcher).
func (k *batchClient) Single() bool { return true }

// Statement implements workload.Single.
func (k *batchClient) Statement() (target.Stmt, []target.Value) { return k.x, nil }

// Do sends the drawn batch. After a retryable error it is sent again as drawn.
func (k *batchClient) Do(ctx context.Context) (int, error) {
	return k.b.Len(), k.conn.SendKeep(ctx, k.b)
}
