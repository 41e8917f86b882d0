package kv

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
	"github.com/fathom-lab/fathom/internal/workload/gen"
)

// YCSB operation types, in TxnTypes order.
const (
	opRead = iota
	opReadLatest
	opUpdate
	opInsert
	opRMW
	opScan
	numOps
)

var opNames = [numOps]string{"read", "read_latest", "update", "insert", "rmw", "scan"}

// ycsbMixes are YCSB's core workloads as proportions of the operations.
var ycsbMixes = map[string][numOps]float64{
	"a": {opRead: 50, opUpdate: 50},
	"b": {opRead: 95, opUpdate: 5},
	"c": {opRead: 100},
	"d": {opReadLatest: 95, opInsert: 5},
	"e": {opScan: 95, opInsert: 5},
	"f": {opRead: 50, opRMW: 50},
}

// YCSBSpec is redis-ycsb: YCSB's core mixes on hashes of ten fields.
func YCSBSpec() *workload.Spec {
	s := &workload.Spec{
		Name:        "redis-ycsb",
		Description: "YCSB core mixes a–f (--set mix=…) on Redis hashes of ten fields (user<N>): HGETALL reads, HSET updates and inserts, read-modify-writes, and (e) short scans through a sorted-set index of the record keys (ZRANGEBYLEX, then HGETALL of each record in one pipeline); zipfian keys scrambled over the key space",
	}
	s.Options = append(commonOptions("fathom:ycsb:", "10000", "100"),
		workload.Option{Name: "mix", Default: "a", Help: "YCSB core workload: a (50/50 read/update), b (95/5), c (read only), d (read latest, 5% inserts), e (95% short scans, 5% inserts), f (50% read-modify-write)"},
		workload.Option{Name: "zipf_exp", Default: "0.99", Help: "exponent of the zipfian key distribution"},
		workload.Option{Name: "scan_length", Default: "100", Help: "mix e: a scan reads 1 to this many records, uniformly (YCSB's maxscanlength)"})
	s.New = func(p workload.Params) (workload.Workload, error) { return newYCSB(s, p) }
	return s
}

// ycsb is a configured redis-ycsb. value_size is the length of each field.
type ycsb struct {
	*base
	cum    [numOps]float64 // cumulative proportions, last = 1
	zipf   gen.Zipf
	next   atomic.Int64 // the next record number an insert takes
	fields [10]string
	user   string // prefix + "user"
	// index is the sorted set of every record key (score 0, so in byte order): what
	// a scan walks, as YCSB's Redis binding keeps one. Prepare and inserts maintain it.
	index    string
	scanFrom string // "[" + user: ZRANGEBYLEX's inclusive start, before the number
	scanMax  int64
}

func newYCSB(s *workload.Spec, p workload.Params) (*ycsb, error) {
	b, err := newBase(s, p)
	if err != nil {
		return nil, err
	}
	mix, ok := ycsbMixes[b.opts["mix"]]
	if !ok {
		return nil, fmt.Errorf("option mix: %q is not one of a, b, c, d, e, f", b.opts["mix"])
	}
	scanMax, err := strconv.ParseInt(b.opts["scan_length"], 10, 64)
	if err != nil || scanMax < 1 || scanMax > 100000 {
		return nil, errOption("scan_length", b.opts["scan_length"], "a whole number from 1 to 100000")
	}
	e, err := strconv.ParseFloat(b.opts["zipf_exp"], 64)
	if err != nil || e < 0 || e > 10 {
		return nil, errOption("zipf_exp", b.opts["zipf_exp"], "a number from 0 to 10")
	}
	w := &ycsb{base: b, zipf: gen.NewZipf(b.keys, e), index: b.prefix + "index", scanFrom: "[" + b.prefix + "user", scanMax: scanMax}
	total, sum := 0.0, 0.0
	for _, v := range mix {
		total += v
	}
	for i, v := range mix {
		sum += v
		w.cum[i] = sum / total
	}
	b.txnTypes = opNames[:]
	for i := range w.fields {
		w.fields[i] = "field" + strconv.Itoa(i)
	}
	w.user = b.prefix + "user"
	w.next.Store(b.keys)
	return w, nil
}

// record writes record n and adds its key to the index (two commands).
func (w *ycsb) record(bt target.Batch, n int64, val []byte) {
	bt.Cmd("HSET").Concat(w.user, n)
	for i := range w.fields {
		bt.Arg(w.fields[i]).Bytes(val)
	}
	bt.End()
	bt.Cmd("ZADD").Arg(w.index).Arg("0").Concat(w.user, n).End()
}

// Prepare writes records 0 … keys-1 and their index.
func (w *ycsb) Prepare(ctx context.Context, t target.Target, p workload.Progress) error {
	val := value(gen.New(1, 0), w.valueSize)
	c, err := t.Connect(ctx)
	if err != nil {
		return err
	}
	err = c.Exec(ctx, "DEL "+w.index)
	c.Close()
	if err != nil {
		return err
	}
	return w.load(ctx, t, p, w.prefix+"user*", w.keys, func(bt target.Batch, i int64) { w.record(bt, i, val) })
}

// Setup checks that prepare ran and starts inserts after the records earlier runs
// inserted (numbered on from keys): the first missing one, found by EXISTS with an
// exponential then a binary search.
func (w *ycsb) Setup(ctx context.Context, c target.Conn) error {
	if err := w.setup(ctx, c); err != nil {
		return err
	}
	exists := func(n int64) (bool, error) {
		rows, err := c.Query(ctx, "EXISTS ?", target.Text([]byte(w.user+strconv.FormatInt(n, 10))))
		return err == nil && len(rows) == 1 && rows[0][0] == "1", err
	}
	lo, step := w.keys-1, int64(1) // lo exists (prepare made it)
	hi := lo + step
	for {
		ok, err := exists(hi)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		lo, step = hi, step*2
		hi = lo + step
	}
	for hi-lo > 1 { // lo exists, hi does not
		mid := lo + (hi-lo)/2
		ok, err := exists(mid)
		if err != nil {
			return err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	w.next.Store(hi)
	if w.cum[opScan] > w.cum[opScan-1] {
		rows, err := c.Query(ctx, "ZCARD ?", target.Text([]byte(w.index)))
		if err != nil {
			return err
		}
		if n, _ := strconv.ParseInt(rows[0][0], 10, 64); n < hi {
			return fmt.Errorf("%w: the index %s of the records that scans walk has %d keys, there are %d records (prepared by an older fathom? prepare again)",
				workload.ErrNotPrepared, w.index, n, hi)
		}
	}
	return nil
}

// NewWorker returns a client's worker.
func (w *ycsb) NewWorker(id int, seed uint64) workload.Worker {
	g := gen.New(seed, uint64(id))
	return &ycsbWorker{w: w, g: g, val: value(g, w.valueSize)}
}

type ycsbWorker struct {
	w     *ycsb
	g     *gen.Rand
	conn  target.Batcher
	b, b2 target.Batch
	val   []byte
	typ   int
	fill  func(key string) // a scan's HGETALL of each key the index gave
}

func (k *ycsbWorker) Bind(_ context.Context, c target.Conn) error {
	rc, err := conn(c, k.w.name)
	if err != nil {
		return err
	}
	k.conn, k.b, k.b2 = rc, rc.NewBatch(), rc.NewBatch()
	k.fill = func(key string) { k.b2.Cmd("HGETALL").Arg(key).End() }
	return nil
}

// key draws an existing record, zipfian and scrambled.
func (k *ycsbWorker) key() int64 {
	return int64(mix(uint64(k.w.zipf.Next(k.g)-1)) % uint64(k.w.keys))
}

func (k *ycsbWorker) Next() int {
	u := k.g.Float64()
	k.typ = 0
	for k.typ < numOps-1 && u >= k.w.cum[k.typ] {
		k.typ++
	}
	k.b.Reset()
	k.b2.Reset()
	for i := 0; i < k.w.pipeline; i++ {
		switch k.typ {
		case opRead:
			k.b.Cmd("HGETALL").Concat(k.w.user, k.key()).End()
		case opReadLatest:
			latest := k.w.next.Load() - 1
			n := max(0, latest-(k.w.zipf.Next(k.g)-1))
			k.b.Cmd("HGETALL").Concat(k.w.user, n).End()
		case opUpdate:
			k.b.Cmd("HSET").Concat(k.w.user, k.key()).Arg(k.w.fields[k.g.Uniform(0, 9)]).Bytes(k.val).End()
		case opInsert:
			k.w.record(k.b, k.w.next.Add(1)-1, k.val)
		case opRMW:
			n := k.key()
			k.b.Cmd("HGETALL").Concat(k.w.user, n).End()
			k.b2.Cmd("HSET").Concat(k.w.user, n).Arg(k.w.fields[k.g.Uniform(0, 9)]).Bytes(k.val).End()
		case opScan:
			// From a zipfian record, up to scan_length keys on in the index's order;
			// Do then reads each record. A scan is not pipelined: its second round
			// trip needs the first's reply.
			k.b.Cmd("ZRANGEBYLEX").Arg(k.w.index).Concat(k.w.scanFrom, k.key()).Arg("+").Arg("LIMIT").Arg("0").Int(k.g.Uniform(1, k.w.scanMax)).End()
			return k.typ
		}
	}
	return k.typ
}

// Do sends the batch; a read-modify-write sends its writes after its reads returned,
// a scan the reads of the records its index range named.
func (k *ycsbWorker) Do(ctx context.Context) (int, error) {
	if k.typ == opScan {
		k.b2.Reset()
		if err := k.conn.SendEach(ctx, k.b, k.fill); err != nil || k.b2.Len() == 0 {
			return 1, err
		}
		return 1 + k.b2.Len(), k.conn.SendKeep(ctx, k.b2)
	}
	n := k.b.Len()
	if err := k.conn.SendKeep(ctx, k.b); err != nil {
		return n, err
	}
	if k.b2.Len() == 0 {
		return n, nil
	}
	return n + k.b2.Len(), k.conn.SendKeep(ctx, k.b2)
}
