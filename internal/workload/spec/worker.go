package spec

import (
	"context"
	"errors"
	"fmt"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
	"github.com/fathom-lab/fathom/internal/workload/gen"
)

// worker runs one client's transactions. Next draws a transaction and lays out every
// statement it will send, with its drawn arguments, in reused slices (repeats and
// branches are decided there too); Do sends them, filling in the arguments that come
// from earlier results, so that a retried Do sends the same values. After the first
// transactions have grown the slices, neither allocates.
type worker struct {
	w       *Workload
	g       *group
	r       *gen.Rand
	dr      drawer
	dialect string

	conn      target.Conn
	prepared  [][]target.Stmt // by transaction, by statement (nil: not in this group)
	variants  [][]*variant
	lastID    target.Stmt // MySQL: SELECT LAST_INSERT_ID()
	returning bool        // the dialect returns generated ids from the INSERT

	// The drawn transaction.
	cur     *txn
	curTI   int
	txnVals []target.Value
	locals  []target.Value
	ops     []op
	arena   []target.Value // the arguments of every op, back to back
	vars    []varSlot
	res     target.Result
	scratch target.Value // a repeat count (a local would escape through the interface)
}

// op is one statement to send and where its arguments start in the arena.
type op struct {
	stmt int
	off  int
}

// varSlot holds a result of an earlier statement, with its own copy of any text.
type varSlot struct {
	v   target.Value
	buf []byte
}

// NewWorker returns a worker for client id. With groups, client id belongs to group
// id modulo the number of groups (the runner uses NewGroupWorker instead).
func (w *Workload) NewWorker(id int, seed uint64) workload.Worker {
	return w.NewGroupWorker(id%len(w.groups), id, seed)
}

// NewGroupWorker returns a worker for client id of group gi.
func (w *Workload) NewGroupWorker(gi, id int, seed uint64) workload.Worker {
	if gi < 0 || gi >= len(w.groups) {
		gi = 0
	}
	k := &worker{
		w:        w,
		g:        w.groups[gi],
		r:        gen.New(seed, uint64(id)),
		prepared: make([][]target.Stmt, len(w.txns)),
		variants: make([][]*variant, len(w.txns)),
	}
	k.dr.r = k.r
	var nVals, nLocals, nVars int
	for _, ti := range k.g.txns {
		t := w.txns[ti]
		nVals = max(nVals, len(t.values))
		nVars = max(nVars, t.nvars)
		for _, st := range t.stmts {
			nLocals = max(nLocals, len(st.locals))
		}
	}
	k.txnVals = make([]target.Value, nVals)
	k.locals = make([]target.Value, nLocals)
	k.vars = make([]varSlot, nVars)
	k.ops = make([]op, 0, 16)
	k.arena = make([]target.Value, 0, 64)
	k.choose(w.dialect)
	return k
}

// choose picks each statement's SQL for a dialect.
func (k *worker) choose(dialect string) {
	k.dialect = dialect
	for _, ti := range k.g.txns {
		t := k.w.txns[ti]
		vs := make([]*variant, len(t.stmts))
		for si, st := range t.stmts {
			vs[si] = pickVariant(st, dialect)
		}
		k.variants[ti] = vs
	}
}

func pickVariant(st *stmt, dialect string) *variant {
	if v := st.variants[dialect]; v != nil {
		return v
	}
	if v := st.variants[""]; v != nil {
		return v
	}
	if d := target.DialectNamed(dialect); d != nil && d.Like != "" {
		if v := st.variants[d.Like]; v != nil {
			return v
		}
	}
	for _, d := range Dialects() {
		if v := st.variants[d]; v != nil {
			return v
		}
	}
	return &variant{}
}

// Bind prepares the statements of the worker's transactions on conn.
func (k *worker) Bind(ctx context.Context, conn target.Conn) error {
	dialect := k.w.dialect
	if dialect == "" {
		d, err := detectDialect(ctx, conn)
		if err != nil {
			return err
		}
		dialect = d
	}
	if dialect != k.dialect {
		k.choose(dialect)
	}
	id := insertIDOf(dialect)
	k.returning = id.returning
	needLastID := false
	prepared := make([][]target.Stmt, len(k.w.txns))
	for _, ti := range k.g.txns {
		t := k.w.txns[ti]
		ps := make([]target.Stmt, len(t.stmts))
		for si, st := range t.stmts {
			sql := k.variants[ti][si].sql
			if st.insertID >= 0 {
				if k.returning {
					sql += " RETURNING " + st.idColumn
				} else {
					needLastID = true
				}
			}
			s, err := conn.Prepare(ctx, sql)
			if err != nil {
				return fmt.Errorf("%s (line %d): preparing %q: %w", st.label, st.line, sql, err)
			}
			ps[si] = s
		}
		prepared[ti] = ps
	}
	k.lastID = nil
	if needLastID {
		s, err := conn.Prepare(ctx, id.query)
		if err != nil {
			return fmt.Errorf("preparing %q: %w", id.query, err)
		}
		k.lastID = s
	}
	k.conn, k.prepared = conn, prepared
	return nil
}

// Next draws a transaction of the worker's group by weight, then everything it will
// send: the transaction's values, the repeat counts, the branches and each
// statement's values.
func (k *worker) Next() int {
	g := k.g
	u := k.r.Float64() * g.cum[len(g.cum)-1]
	i := 0
	for i < len(g.cum)-1 && u >= g.cum[i] {
		i++
	}
	ti := g.txns[i]
	t := k.w.txns[ti]
	k.cur, k.curTI = t, ti
	k.ops = k.ops[:0]
	k.arena = k.arena[:0]
	k.dr.text = k.dr.text[:0]
	for j, vg := range t.values {
		vg.draw(&k.dr, &k.txnVals[j])
	}
	k.emit(t, ti, t.body)
	return g.types[i]
}

func (k *worker) emit(t *txn, ti int, body []node) {
	for i := range body {
		nd := &body[i]
		switch nd.kind {
		case nodeStmt:
			st := t.stmts[nd.stmt]
			v := k.variants[ti][nd.stmt]
			for j, lg := range st.locals {
				lg.draw(&k.dr, &k.locals[j])
			}
			off := len(k.arena)
			for _, a := range v.args {
				var val target.Value
				switch a.kind {
				case srcLocal:
					val = k.locals[a.idx]
				case srcTxn:
					val = k.txnVals[a.idx]
				case srcConst:
					val = st.consts[a.idx]
				}
				k.arena = append(k.arena, val)
			}
			k.ops = append(k.ops, op{stmt: nd.stmt, off: off})
		case nodeRepeat:
			nd.repeat.draw(&k.dr, &k.scratch)
			for range k.scratch.Int {
				k.emit(t, ti, nd.body)
			}
		case nodeBranch:
			u := k.r.Float64()
			for _, a := range nd.arms {
				if u < a.cum {
					k.emit(t, ti, a.body)
					break
				}
			}
		}
	}
}

// Do sends the drawn transaction and returns the number of statements sent, BEGIN,
// COMMIT and MySQL's LAST_INSERT_ID() included.
func (k *worker) Do(ctx context.Context) (int, error) {
	t := k.cur
	if t == nil {
		return 0, errors.New("spec: Do before Next")
	}
	if k.prepared[k.curTI] == nil {
		return 0, errors.New("spec: Do before Bind")
	}
	for i := range k.vars[:t.nvars] {
		k.vars[i].v = target.Value{}
	}
	n := 0
	if !t.autocommit {
		n++
		if err := k.conn.Begin(ctx); err != nil {
			return n, err
		}
	}
	stmts := k.prepared[k.curTI]
	variants := k.variants[k.curTI]
	for _, o := range k.ops {
		st := t.stmts[o.stmt]
		v := variants[o.stmt]
		args := k.arena[o.off : o.off+len(v.args)]
		for j, a := range v.args {
			if a.kind == srcVar {
				args[j] = k.vars[a.idx].v
			}
		}
		k.res.Keep = len(st.keep) > 0 || (st.insertID >= 0 && k.returning)
		n++
		if err := stmts[o.stmt].Run(ctx, args, &k.res); err != nil {
			return n, &stmtError{t: t, st: st, err: err}
		}
		for col, slot := range st.keep {
			k.setVar(slot, col)
		}
		if st.insertID >= 0 {
			if !k.returning {
				k.res.Keep = true
				n++
				if err := k.lastID.Run(ctx, nil, &k.res); err != nil {
					return n, &stmtError{t: t, st: st, err: err}
				}
			}
			k.setVar(st.insertID, 0)
		}
	}
	if !t.autocommit {
		n++
		return n, k.conn.Commit(ctx)
	}
	return n, nil
}

// setVar copies column col of the first row into a variable. Text that is a whole
// number becomes an integer (drivers return results as text), so that it binds to
// integer columns on every target; other text is copied, since the target reuses its
// buffers.
func (k *worker) setVar(slot, col int) {
	s := &k.vars[slot]
	if col >= len(k.res.First) {
		s.v = target.Value{}
		return
	}
	f := &k.res.First[col]
	if f.Kind != target.KindText {
		s.v = *f
		s.v.Text = nil
		return
	}
	if i, ok := parseInt(f.Text); ok {
		s.v = target.Int64(i)
		return
	}
	s.buf = append(s.buf[:0], f.Text...)
	s.v = target.Text(s.buf)
}

// parseInt parses a decimal integer without allocating.
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 19 || (len(b) == 19 && b[0] != '-' && b[0] != '+') {
		return 0, false
	}
	neg := false
	i := 0
	if b[0] == '-' || b[0] == '+' {
		neg = b[0] == '-'
		i++
		if len(b) == 1 {
			return 0, false
		}
	}
	var v int64
	for ; i < len(b); i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

// stmtError says which statement of which transaction failed; the target's error
// (and its class) is underneath.
type stmtError struct {
	t   *txn
	st  *stmt
	err error
}

func (e *stmtError) Error() string {
	return fmt.Sprintf("%s (line %d): %v", e.st.label, e.st.line, e.err)
}

func (e *stmtError) Unwrap() error { return e.err }
