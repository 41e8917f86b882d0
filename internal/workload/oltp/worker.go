package oltp

import (
	"context"
	"fmt"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
	"github.com/fathom-lab/fathom/internal/workload/gen"
)

// stmtKind is one of sysbench's statements.
type stmtKind uint8

const (
	sPointSelect stmtKind = iota
	sSimpleRange
	sSumRange
	sOrderRange
	sDistinctRange
	sIndexUpdate
	sNonIndexUpdate
	sDelete
	sInsert     // delete_inserts: the deleted id again
	sInsertAuto // oltp_insert: id from the auto-increment
	numStmtKinds
)

// stmtSQL are sysbench's statement texts; %d is the table number.
var stmtSQL = [numStmtKinds]string{
	sPointSelect:    "SELECT c FROM sbtest%d WHERE id=?",
	sSimpleRange:    "SELECT c FROM sbtest%d WHERE id BETWEEN ? AND ?",
	sSumRange:       "SELECT SUM(k) FROM sbtest%d WHERE id BETWEEN ? AND ?",
	sOrderRange:     "SELECT c FROM sbtest%d WHERE id BETWEEN ? AND ? ORDER BY c",
	sDistinctRange:  "SELECT DISTINCT c FROM sbtest%d WHERE id BETWEEN ? AND ? ORDER BY c",
	sIndexUpdate:    "UPDATE sbtest%d SET k=k+1 WHERE id=?",
	sNonIndexUpdate: "UPDATE sbtest%d SET c=? WHERE id=?",
	sDelete:         "DELETE FROM sbtest%d WHERE id=?",
	sInsert:         "INSERT INTO sbtest%d (id, k, c, pad) VALUES (?, ?, ?, ?)",
	sInsertAuto:     "INSERT INTO sbtest%d (k, c, pad) VALUES (?, ?, ?)",
}

// The statements of each step.
var stepStmts = map[groupKind][]stmtKind{
	gPointSelects:    {sPointSelect},
	gSimpleRanges:    {sSimpleRange},
	gSumRanges:       {sSumRange},
	gOrderRanges:     {sOrderRange},
	gDistinctRanges:  {sDistinctRange},
	gIndexUpdates:    {sIndexUpdate},
	gNonIndexUpdates: {sNonIndexUpdate},
	gDeleteInserts:   {sDelete, sInsert},
	gInsert:          {sInsertAuto},
	gDelete:          {sDelete},
}

// op is one statement of the transaction with its arguments, filled by Next.
type op struct {
	kind  stmtKind
	table int // 0-based
	args  []target.Value
	c     []byte // c value buffer (non-index updates, inserts)
	pad   []byte
}

// span is the ops of one step, which share a table.
type span struct{ first, end int }

type worker struct {
	r         *gen.Rand
	ids       *gen.Dist
	tables    int64
	rangeSize int64
	trx       bool

	ops   []op
	steps []span
	used  [numStmtKinds]bool

	conn  target.Conn
	stmts [][numStmtKinds]target.Stmt // by table
	res   target.Result
}

// NewWorker returns the state of client id: the transaction's statements laid out once,
// with their argument slices and string buffers, so that Next and Do allocate nothing.
func (w *oltpWorkload) NewWorker(id int, seed uint64) workload.Worker {
	size := w.cfg.tableSize
	if size == 0 {
		size = defaultTableSize
	}
	ids, err := gen.NewDistKind(w.cfg.randType, 1, size, w.cfg.params)
	if err != nil {
		panic("oltp: options were validated: " + err.Error())
	}
	k := &worker{
		r:         gen.New(seed, uint64(id)),
		ids:       ids,
		tables:    int64(w.cfg.tables),
		rangeSize: w.cfg.rangeSize,
		trx:       w.s.trx(&w.cfg),
	}
	for _, st := range w.s.steps(&w.cfg) {
		if st.count <= 0 {
			continue
		}
		sp := span{first: len(k.ops)}
		for range st.count {
			for _, kind := range stepStmts[st.kind] {
				k.ops = append(k.ops, newOp(kind))
				k.used[kind] = true
			}
		}
		sp.end = len(k.ops)
		k.steps = append(k.steps, sp)
	}
	return k
}

func newOp(kind stmtKind) op {
	o := op{kind: kind}
	i := target.Int64(0)
	switch kind {
	case sSimpleRange, sSumRange, sOrderRange, sDistinctRange:
		o.args = []target.Value{i, i}
	case sNonIndexUpdate:
		o.c = make([]byte, gen.CLen)
		o.args = []target.Value{target.Text(o.c), i}
	case sInsert:
		o.c, o.pad = make([]byte, gen.CLen), make([]byte, gen.PadLen)
		o.args = []target.Value{i, i, target.Text(o.c), target.Text(o.pad)}
	case sInsertAuto:
		o.c, o.pad = make([]byte, gen.CLen), make([]byte, gen.PadLen)
		o.args = []target.Value{i, target.Text(o.c), target.Text(o.pad)}
	default:
		o.args = []target.Value{i}
	}
	return o
}

// Bind prepares the statements the script uses, on every table.
func (k *worker) Bind(ctx context.Context, conn target.Conn) error {
	stmts := make([][numStmtKinds]target.Stmt, k.tables)
	for t := range stmts {
		for kind := range numStmtKinds {
			if !k.used[kind] {
				continue
			}
			sql := fmt.Sprintf(stmtSQL[kind], t+1)
			s, err := conn.Prepare(ctx, sql)
			if err != nil {
				return fmt.Errorf("preparing %q: %w", sql, err)
			}
			stmts[t][kind] = s
		}
	}
	k.conn, k.stmts = conn, stmts
	return nil
}

// Next draws the transaction: a table per step, uniformly, and ids, k values and
// strings as sysbench does (ids and k from rand_type over [1, table_size]; a range
// runs from its id to id+range_size-1).
func (k *worker) Next() int {
	for _, sp := range k.steps {
		t := int(k.r.Uniform(0, k.tables-1))
		for i := sp.first; i < sp.end; i++ {
			o := &k.ops[i]
			o.table = t
			a := o.args
			switch o.kind {
			case sSimpleRange, sSumRange, sOrderRange, sDistinctRange:
				id := k.ids.Next(k.r)
				a[0].Int, a[1].Int = id, id+k.rangeSize-1
			case sNonIndexUpdate:
				a[0].Text = k.r.C(o.c)
				a[1].Int = k.ids.Next(k.r)
			case sInsert:
				// The row the preceding DELETE removed comes back with new values.
				a[0].Int = k.ops[i-1].args[0].Int
				a[1].Int = k.ids.Next(k.r)
				a[2].Text = k.r.C(o.c)
				a[3].Text = k.r.Pad(o.pad)
			case sInsertAuto:
				a[0].Int = k.ids.Next(k.r)
				a[1].Text = k.r.C(o.c)
				a[2].Text = k.r.Pad(o.pad)
			default:
				a[0].Int = k.ids.Next(k.r)
			}
		}
	}
	return 0
}

// Do runs the drawn transaction and returns the statements sent, BEGIN and COMMIT
// included. A unique violation on the INSERT of a DELETE/INSERT pair is reported as a
// serialization failure, so that it is retried: it happens when another client deleted
// and re-inserted the same id concurrently (under PostgreSQL's READ COMMITTED the
// DELETE then finds nothing and the INSERT collides), and sysbench likewise restarts
// the transaction on it.
func (k *worker) Do(ctx context.Context) (int, error) {
	n := 0
	if k.trx {
		n++
		if err := k.conn.Begin(ctx); err != nil {
			return n, err
		}
	}
	for i := range k.ops {
		o := &k.ops[i]
		n++
		if err := k.stmts[o.table][o.kind].Run(ctx, o.args, &k.res); err != nil {
			if o.kind == sInsert && target.ClassOf(err) == target.ClassConstraint {
				err = conflict(err)
			}
			return n, err
		}
	}
	if k.trx {
		n++
		return n, k.conn.Commit(ctx)
	}
	return n, nil
}

func conflict(err error) error {
	e := &target.Error{Class: target.ClassSerialization, Msg: "concurrent DELETE/INSERT of the same id: " + err.Error(), Err: err}
	if te, ok := err.(*target.Error); ok {
		e.Code, e.Msg = te.Code, "concurrent DELETE/INSERT of the same id: "+te.Msg
	}
	return e
}

// Single implements workload.Single: a script of one statement that is not an
// INSERT (whose unique violation Do turns into a retry) and no BEGIN/COMMIT, such as
// oltp_point_select.
func (k *worker) Single() bool {
	return !k.trx && len(k.ops) == 1 && k.ops[0].kind != sInsert
}

// Statement implements workload.Single.
func (k *worker) Statement() (target.Stmt, []target.Value) {
	o := &k.ops[0]
	return k.stmts[o.table][o.kind], o.args
}
