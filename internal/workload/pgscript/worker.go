package pgscript

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
	"github.com/fathom-lab/fathom/internal/workload/gen"
)

// worker runs one client's scripts. Next draws the script and keeps the random state;
// Do runs the script's commands from that state, so that a retried transaction draws
// the same values. Once every statement has run once, a transaction allocates nothing
// in -M prepared and extended (-M simple builds each statement's text, as pgbench).
type worker struct {
	w      *scriptWorkload
	id     int
	st     *state
	conn   target.Conn
	txnSQL bool          // BEGIN, COMMIT, ROLLBACK go as SQL (Dialect.TxnStatements)
	stmts  []target.Stmt // by statement id; nil until first run on this connection
	cols   [][]int       // by statement id: the variable slot of each result column
	args   []target.Value
	abuf   [][]byte // per-argument text of doubles and booleans
	res    target.Result
	text   []byte // -M simple: the statement with its variables substituted
	cur    int
	saved  rand.PCG
	timer  *time.Timer
	// -r: the times of the commands the current attempt completed, by command index
	// over all scripts, until the runner flushes them into its interval's recorder.
	lat []cmdTime

	// \startpipeline … \endpipeline: the open pipeline, and the command of each
	// statement sent in it (for the error's line).
	pipe     target.Pipeline
	pipeCmds []int
	pipeAt   int // the \startpipeline's command

	// inTxn: a BEGIN went through the connection's Begin and no COMMIT or ROLLBACK
	// yet (targets whose transactions are not SQL; PostgreSQL's connection knows).
	inTxn bool
}

type cmdTime struct {
	cmd int
	ns  int64
}

// NewWorker returns client id's worker; its random stream comes from seed and id.
func (w *scriptWorkload) NewWorker(id int, seed uint64) workload.Worker {
	k := &worker{
		w:     w,
		id:    id,
		st:    newState(w.vars, seed, gen.Mix64(uint64(id)^0x6a09e667f3bcc909), w.debug),
		stmts: make([]target.Stmt, w.nStmts),
		cols:  make([][]int, w.nStmts),
		args:  make([]target.Value, w.maxArgs),
		abuf:  make([][]byte, w.maxArgs),
	}
	vars := k.st.vars
	vars[w.slots.scale].setValue(intVal(w.scale))
	vars[w.slots.randomSeed].setValue(intVal(int64(seed)))
	vars[w.slots.defaultSeed].setValue(intVal(int64(gen.Mix64(seed ^ 0x3c6ef372fe94f82b))))
	vars[w.slots.clientID].setValue(intVal(int64(id)))
	// -D comes last: it takes precedence over the automatic variables, as in pgbench.
	for _, d := range w.defines {
		vars[d.slot].setText([]byte(d.text))
	}
	if w.timed {
		k.lat = make([]cmdTime, 0, w.maxCmds)
	}
	return k
}

// FlushCommands records the command times of the last attempt into rec (-r).
func (k *worker) FlushCommands(rec *measure.Recorder) {
	for _, t := range k.lat {
		rec.Command(t.cmd, t.ns)
	}
	k.lat = k.lat[:0]
}

// Bind keeps conn; statements are prepared on it when first run (as pgbench 15+).
func (k *worker) Bind(ctx context.Context, conn target.Conn) error {
	if conn != k.conn {
		clear(k.stmts)
	}
	k.conn = conn
	k.txnSQL = k.w.dialect.TxnStatements
	if d, ok := conn.(interface{ Dialect() target.Dialect }); ok {
		k.txnSQL = d.Dialect().TxnStatements
	}
	return nil
}

// Next draws a script by weight (pgbench's rule) and keeps the random state.
func (k *worker) Next() int {
	if len(k.w.scripts) > 1 {
		r := int64(k.st.rng.Uint64N(uint64(k.w.total)))
		i := 0
		for ; i < len(k.w.scripts)-1; i++ {
			r -= int64(k.w.scripts[i].Weight)
			if r < 0 {
				break
			}
		}
		k.cur = i
	}
	k.saved = k.st.pcg
	return k.cur
}

// Do runs the drawn script and returns how many SQL statements it sent.
func (k *worker) Do(ctx context.Context) (n int, err error) {
	k.st.pcg = k.saved
	s := k.w.scripts[k.cur]
	cmds := s.commands
	// -r: each command's time runs until the next command starts (as in pgbench, a
	// false \if's time includes the \elif conditions it evaluates). A command that
	// fails is not timed, as pgbench times only the commands that completed.
	var t0 time.Time
	prev := -1
	timed := k.lat != nil
	if timed {
		k.lat = k.lat[:0] // an attempt the runner did not flush is not counted
		defer func() {
			if prev >= 0 && err == nil {
				k.lat = append(k.lat, cmdTime{prev, int64(time.Since(t0))})
			}
		}()
	}
	base := 0
	if timed {
		base = k.w.base[k.cur]
	}
	if s.pipeline {
		// A pipeline left open by an error or a stop is abandoned unsent.
		defer func() {
			if k.pipe != nil {
				k.pipe.Abandon()
				k.pipe = nil
			}
		}()
	}
	for pc := 0; pc < len(cmds); {
		c := &cmds[pc]
		k.st.script, k.st.command = k.cur, pc+1
		if timed {
			now := time.Now()
			if prev >= 0 {
				k.lat = append(k.lat, cmdTime{prev, int64(now.Sub(t0))})
			}
			t0, prev = now, base+pc
		}
		next, m, err := k.step(ctx, s, c, pc)
		n += m
		if err != nil {
			return n, err
		}
		pc = next
	}
	if k.pipe != nil {
		return n, k.abort(s, &cmds[k.pipeAt], evalErrf("the script ended inside this pipeline (its \\endpipeline was skipped by an \\if)"))
	}
	if k.inTransaction() {
		last := &cmds[len(cmds)-1]
		return n, k.abort(s, last, evalErrf("end of script reached with a transaction still open: pgbench aborts the client there; end the script's transaction with COMMIT or END"))
	}
	return n, nil
}

// step runs command c (at pc in script s) and returns the next command's index
// and how many SQL statements it sent; an error is placed in the script already.
func (k *worker) step(ctx context.Context, s *script, c *command, pc int) (next, n int, err error) {
	switch c.kind {
	case cSQL:
		if k.pipe != nil {
			err = k.queue(s, c, pc)
		} else {
			n, err = k.sql(ctx, s, c)
		}
		if err != nil {
			return pc, n, k.fail(ctx, s, c, err)
		}
	case cStartPipeline:
		if err := k.startPipeline(ctx, s, pc); err != nil {
			return pc, 0, k.fail(ctx, s, c, err)
		}
	case cSyncPipeline:
		if k.pipe == nil {
			return pc, 0, k.abort(s, c, evalErrf("\\syncpipeline outside a pipeline (its \\startpipeline was skipped by an \\if)"))
		}
		k.pipe.Sync()
	case cEndPipeline:
		n, err = k.endPipeline(ctx, s, c)
		if err != nil {
			return pc, n, k.fail(ctx, s, c, err)
		}
	case cSet:
		if err := k.set(c); err != nil {
			return pc, 0, k.abort(s, c, err)
		}
	case cIf:
		v, err := k.st.eval(c.expr)
		if err != nil {
			return pc, 0, k.abort(s, c, err)
		}
		if !truth(v) {
			next, err = k.branch(s, c.jump)
			return next, 0, err
		}
	case cElif, cElse:
		return c.end + 1, 0, nil // the end of a branch that was taken
	case cSleep:
		if err := k.sleep(ctx, s, c); err != nil {
			return pc, 0, err
		}
	case cShell, cSetShell:
		if err := k.shell(ctx, s, c); err != nil {
			return pc, 0, err
		}
	}
	return pc + 1, n, nil // and \endif
}

// set runs \set: the expression's value into its variable.
func (k *worker) set(c *command) error {
	v, err := k.st.eval(c.expr)
	if err != nil {
		return err
	}
	if c.slot < 0 {
		return evalErrf("invalid variable name %q", c.badName)
	}
	k.st.vars[c.slot].setValue(v)
	return nil
}

// inTransaction reports whether the script left a transaction open.
func (k *worker) inTransaction() bool {
	if !k.txnSQL {
		return k.inTxn
	}
	if c, ok := k.conn.(interface{ InTransaction() bool }); ok {
		return c.InTransaction()
	}
	return false
}

// fail places an SQL command's error in the script. As pgbench does, a serialization
// failure or a deadlock is left to the runner's retries, and any other error of the
// server aborts the client; a lost connection is left to the runner's reconnects,
// and a stop (the run's end) stays what it is.
func (k *worker) fail(ctx context.Context, s *script, c *command, err error) error {
	var ab *workload.AbortError
	if ctx.Err() != nil || errors.As(err, &ab) {
		return err
	}
	se := &workload.ScriptError{Client: k.id, Script: s.Name, Line: c.line, Command: c.text, Err: err}
	switch target.ClassOf(err) {
	case target.ClassSerialization, target.ClassDeadlock, target.ClassConnection, target.ClassCanceled:
		return se
	}
	return &workload.AbortError{Err: se}
}

// startPipeline prepares the pipeline's statements that are not yet prepared on this
// connection (as pgbench does before a pipeline) and enters pipeline mode.
func (k *worker) startPipeline(ctx context.Context, s *script, at int) error {
	pl, ok := k.conn.(target.Pipeliner)
	if !ok {
		return k.abort(s, &s.commands[at], evalErrf("this connection has no pipeline mode (PostgreSQL only)"))
	}
	for i := at + 1; i < s.commands[at].end; i++ {
		c := &s.commands[i]
		for j := range c.parts {
			if _, err := k.prepared(ctx, &c.parts[j]); err != nil {
				return err
			}
		}
	}
	p, err := pl.StartPipeline(ctx)
	if err != nil {
		return err
	}
	k.pipe, k.pipeAt, k.pipeCmds = p, at, k.pipeCmds[:0]
	return nil
}

// queue sends an SQL command's statements into the open pipeline.
func (k *worker) queue(s *script, c *command, at int) error {
	for i := range c.parts {
		p := &c.parts[i]
		args, err := k.bind(s, c, p)
		if err != nil {
			return err
		}
		if err := k.pipe.Send(k.stmts[p.id], args); err != nil {
			return err
		}
		k.pipeCmds = append(k.pipeCmds, at)
	}
	return nil
}

// endPipeline sends the pipeline and reads its results. A statement's error keeps its
// class (a serialization failure is retried) and names the script line it came from.
func (k *worker) endPipeline(ctx context.Context, s *script, c *command) (int, error) {
	if k.pipe == nil {
		return 0, k.abort(s, c, evalErrf("\\endpipeline outside a pipeline (its \\startpipeline was skipped by an \\if)"))
	}
	p := k.pipe
	k.pipe = nil
	ran, err := p.End(ctx)
	var pe *target.PipelineError
	if errors.As(err, &pe) && pe.Index < len(k.pipeCmds) {
		fc := &s.commands[k.pipeCmds[pe.Index]]
		return ran, fmt.Errorf("%s line %d (%s), in the pipeline of line %d: %w; the server skipped the %d statements after it up to the next sync point",
			s.Name, fc.line, fc.text, s.commands[k.pipeAt].line, pe.Err, pe.Skipped)
	}
	return ran, err
}

// branch finds where a false \if or \elif continues: the first \elif whose condition
// holds, an \else, or the \endif.
func (k *worker) branch(s *script, j int) (int, error) {
	for {
		c := &s.commands[j]
		if c.kind != cElif {
			return j + 1, nil
		}
		k.st.command = j + 1
		v, err := k.st.eval(c.expr)
		if err != nil {
			return 0, k.abort(s, c, err)
		}
		if truth(v) {
			return j + 1, nil
		}
		j = c.jump
	}
}

// abort makes a script mistake found while running abort the client, with its place.
func (k *worker) abort(s *script, c *command, err error) error {
	return &workload.AbortError{Err: &workload.ScriptError{Client: k.id, Script: s.Name, Line: c.line, Command: c.text, Err: err}}
}

// sql runs an SQL command's statements.
func (k *worker) sql(ctx context.Context, s *script, c *command) (int, error) {
	n := 0
	for i := range c.parts {
		p := &c.parts[i]
		want := c.aset || (c.gset && i == len(c.parts)-1)
		n++
		if p.txn != txNone && !k.txnSQL {
			var err error
			switch p.txn {
			case txBegin:
				err = k.conn.Begin(ctx)
				k.inTxn = err == nil
			case txCommit:
				err = k.conn.Commit(ctx)
				k.inTxn = false
			default:
				err = k.conn.Rollback(ctx)
				k.inTxn = false
			}
			if err != nil {
				return n, err
			}
			continue
		}
		var err error
		if k.w.mode == "simple" {
			err = k.runText(ctx, c, p, want)
		} else {
			err = k.runBound(ctx, s, c, p, want)
		}
		if err != nil {
			return n, err
		}
		if want {
			if err := k.store(s, c, p); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// runBound runs a statement with its variables as parameters (-M extended, prepared).
func (k *worker) runBound(ctx context.Context, s *script, c *command, p *sqlPart, want bool) error {
	st, err := k.prepared(ctx, p)
	if err != nil {
		return err
	}
	args, err := k.bind(s, c, p)
	if err != nil {
		return err
	}
	k.res.Keep, k.res.KeepLast = want, c.aset
	k.res.Names = want && k.cols[p.id] == nil
	return st.Run(ctx, args, &k.res)
}

// prepared returns the statement prepared on this connection, preparing it the first
// time.
func (k *worker) prepared(ctx context.Context, p *sqlPart) (target.Stmt, error) {
	if st := k.stmts[p.id]; st != nil {
		return st, nil
	}
	st, err := k.conn.Prepare(ctx, p.bound)
	if err != nil {
		return nil, err
	}
	k.stmts[p.id] = st
	return st, nil
}

// bind returns the statement's arguments: its variables' values. An undefined
// variable is sent as NULL, as pgbench sends it in -M extended and prepared.
func (k *worker) bind(s *script, c *command, p *sqlPart) ([]target.Value, error) {
	args := k.args[:len(p.params)]
	for i, slot := range p.params {
		v := &k.st.vars[slot]
		if !v.set {
			args[i] = target.Null()
			continue
		}
		args[i] = k.arg(v, i)
	}
	return args, nil
}

// arg is a variable as a statement argument: text as it came, numbers as numbers.
func (k *worker) arg(v *variable, i int) target.Value {
	if v.isText {
		return target.Text(v.text)
	}
	if v.val.K == kInt {
		return target.Int64(v.val.I)
	}
	// Doubles, booleans and NULL go as pgbench's text of them ("NULL" included).
	k.abuf[i] = v.val.appendText(k.abuf[i][:0])
	return target.Text(k.abuf[i])
}

// runText substitutes the variables into the statement's text and sends it (-M
// simple). A name that is not a variable stays as written, as in pgbench.
func (k *worker) runText(ctx context.Context, c *command, p *sqlPart, want bool) error {
	b := k.text[:0]
	for _, sg := range p.segs {
		if sg.slot >= 0 && k.st.vars[sg.slot].set {
			b = k.st.vars[sg.slot].appendSQL(b)
		} else {
			b = append(b, sg.lit...)
		}
	}
	k.text = b
	if !want {
		return k.conn.Exec(ctx, string(b))
	}
	st, err := k.conn.Prepare(ctx, string(b))
	if err != nil {
		return err
	}
	k.res.Keep, k.res.KeepLast = true, c.aset
	k.res.Names = k.cols[p.id] == nil
	err = st.Run(ctx, nil, &k.res)
	_ = st.Close()
	return err
}

// store assigns a result's row to variables as pgbench does: \gset needs exactly one
// row; \aset takes the last row and assigns nothing without one. A column whose
// name (with the prefix) is not a variable name aborts the client; NULL is stored
// as an empty text.
func (k *worker) store(s *script, c *command, p *sqlPart) error {
	if k.res.Rows != 1 {
		if c.aset {
			if k.res.Rows == 0 {
				return nil
			}
		} else {
			return k.abort(s, c, evalErrf("\\gset expects one row, the query returned %d", k.res.Rows))
		}
	}
	cols := k.cols[p.id]
	if cols == nil && k.res.Names {
		cols = make([]int, len(k.res.Columns))
		for i, name := range k.res.Columns {
			switch full := c.prefix + name; {
			case !legalName(full):
				cols[i] = badColumn
			default:
				cols[i] = k.w.vars.lookup(full)
			}
		}
		k.cols[p.id] = cols
	}
	for i, slot := range cols {
		if slot == badColumn {
			return k.abort(s, c, evalErrf("cannot store column %q into a variable: %q is not a variable name (name the column with AS)", k.res.Columns[i], c.prefix+k.res.Columns[i]))
		}
		if slot < 0 || i >= len(k.res.First) {
			continue
		}
		v := &k.st.vars[slot]
		switch f := &k.res.First[i]; f.Kind {
		case target.KindNull:
			v.setText(nil)
		case target.KindInt:
			v.setValue(intVal(f.Int))
		case target.KindFloat:
			v.setValue(dblVal(f.Float))
		case target.KindTime:
			v.setText(f.Time.AppendFormat(v.text[:0], "2006-01-02 15:04:05.999999"))
		default:
			v.setText(f.Text)
		}
	}
	return nil
}

// badColumn marks a result column whose name is not a variable name.
const badColumn = -2

// sleep waits as \sleep says, or until ctx ends.
func (k *worker) sleep(ctx context.Context, s *script, c *command) error {
	n := c.sleepN
	if c.sleepSlot >= 0 {
		v := &k.st.vars[c.sleepSlot]
		if !v.set {
			return k.abort(s, c, evalErrf("undefined variable %q", k.st.names[c.sleepSlot]))
		}
		// As pgbench: the value's text read as C's atoi does ("1.6" sleeps 1 unit).
		t := v.appendSQL(k.text[:0])
		k.text = t
		i, _, ok := atoiPrefix(string(t))
		if !ok {
			return k.abort(s, c, evalErrf("invalid sleep time %q for variable %q: must be an integer", t, k.st.names[c.sleepSlot]))
		}
		n = i
	}
	d := time.Duration(n * c.sleepUnit)
	if d <= 0 {
		return nil
	}
	if k.timer == nil {
		k.timer = time.NewTimer(d)
	} else {
		k.timer.Reset(d)
	}
	select {
	case <-k.timer.C:
		return nil
	case <-ctx.Done():
		k.timer.Stop()
		return ctx.Err()
	}
}
