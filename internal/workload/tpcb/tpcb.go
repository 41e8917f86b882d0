// Package tpcb is pgbench's built-in TPC-B-like workload and its select-only and
// simple-update variants, on pgbench's own tables (pgbench_accounts …), so that data
// prepared by `pgbench -i` can be run by fathom and the other way round.
package tpcb

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
	"github.com/fathom-lab/fathom/internal/workload/gen"
)

// Rows per unit of scale, as in pgbench.
const (
	branchesPerScale = 1
	tellersPerScale  = 10
	accountsPerScale = 100_000
)

const (
	// maxScale bounds the scale option: 10^11 accounts.
	maxScale = 1_000_000
	// bigintScale is the scale from which aid no longer fits an int column; from
	// there pgbench makes aid bigint in pgbench_accounts and pgbench_history.
	bigintScale = 20_000
)

// variant is one of pgbench's built-in scripts.
type variant uint8

const (
	TPCBLike variant = iota
	SelectOnly
	SimpleUpdate
)

// variants: workload name, pgbench's script name (the transaction type), description.
var variants = [...]struct{ name, script, help string }{
	TPCBLike:     {"tpcb", "tpcb-like", "pgbench's default TPC-B-like transaction: update an account, read it back, update its teller and branch, append to history"},
	SelectOnly:   {"tpcb-select", "select-only", "pgbench -S: one primary-key SELECT of an account balance, no explicit transaction"},
	SimpleUpdate: {"tpcb-simple-update", "simple-update", "pgbench -N: update an account, read it back, append to history (no teller or branch updates)"},
}

// Spec returns the spec of a variant.
func Spec(v variant) *workload.Spec {
	return &workload.Spec{
		Name:        variants[v].name,
		Description: variants[v].help,
		Options: []workload.Option{{
			Name: "scale",
			Help: "scale factor: 1 branch, 10 tellers and 100,000 accounts per unit (prepare: default 1; run: detected from pgbench_branches when not given)",
		}},
		New: func(p workload.Params) (workload.Workload, error) { return New(v, p) },
	}
}

// Workload is a configured tpcb variant.
type Workload struct {
	v      variant
	scale  int64 // 0 until given or detected
	given  bool
	layout workload.Layout
}

// New resolves the options of a variant.
func New(v variant, p workload.Params) (*Workload, error) {
	if int(v) >= len(variants) {
		return nil, fmt.Errorf("unknown tpcb variant %d", v)
	}
	opts, err := Spec(v).Resolve(p)
	if err != nil {
		return nil, err
	}
	w := &Workload{v: v}
	if strings.TrimSpace(opts["scale"]) != "" {
		if w.scale, err = workload.Int(opts, "scale", 1, maxScale); err != nil {
			return nil, err
		}
		w.given = true
	}
	return w, nil
}

// Name is the workload's name.
func (w *Workload) Name() string { return variants[w.v].name }

// Tables names the four pgbench tables (the prepare marker's keys).
func (w *Workload) Tables() []string { return slices.Clone(tableNames) }

// scaleInEffect is the scale in effect: given, detected by Setup, or 0 before either.
func (w *Workload) scaleInEffect() int64 { return w.scale }

// Options reports the scale; it is empty until given or detected.
func (w *Workload) Options() map[string]string {
	s := ""
	if w.scale > 0 {
		s = strconv.FormatInt(w.scale, 10)
	}
	return map[string]string{"scale": s}
}

// TxnTypes has the one transaction type, named as pgbench names its script.
func (w *Workload) TxnTypes() []string { return []string{variants[w.v].script} }

// Table names, in pgbench's loading order.
const (
	branches = "pgbench_branches"
	tellers  = "pgbench_tellers"
	accounts = "pgbench_accounts"
	history  = "pgbench_history"
)

var tableNames = []string{branches, tellers, accounts, history}

// tables are pgbench's definitions. Primary keys are added after loading where the
// dialect allows; pgbench_history has none.
func tables(scale int64) []target.Table {
	aid := "int"
	if scale >= bigintScale {
		aid = "bigint"
	}
	return []target.Table{
		{Name: branches, PrimaryKey: []string{"bid"}, Columns: []target.Column{
			{Name: "bid", Type: "int", NotNull: true}, {Name: "bbalance", Type: "int"}, {Name: "filler", Type: "char(88)"}}},
		{Name: tellers, PrimaryKey: []string{"tid"}, Columns: []target.Column{
			{Name: "tid", Type: "int", NotNull: true}, {Name: "bid", Type: "int"}, {Name: "tbalance", Type: "int"}, {Name: "filler", Type: "char(84)"}}},
		{Name: accounts, PrimaryKey: []string{"aid"}, Columns: []target.Column{
			{Name: "aid", Type: aid, NotNull: true}, {Name: "bid", Type: "int"}, {Name: "abalance", Type: "int"}, {Name: "filler", Type: "char(84)"}}},
		{Name: history, Columns: []target.Column{
			{Name: "tid", Type: "int"}, {Name: "bid", Type: "int"}, {Name: "aid", Type: aid}, {Name: "delta", Type: "int"},
			{Name: "mtime", Type: "timestamp"}, {Name: "filler", Type: "char(22)"}}},
	}
}

// progressEvery is how many rows pass between progress reports.
const progressEvery = 10_000

// Prepare drops and recreates the four tables and loads them as `pgbench -i` does: all
// balances 0, tellers and accounts spread evenly over the branches, the history empty,
// pgbench_accounts.filler an empty string and the other fillers NULL. Then it adds the
// primary keys and refreshes the planner statistics.
func (w *Workload) Prepare(ctx context.Context, t target.Target, p workload.Progress) error {
	scale := w.scale
	if scale == 0 {
		scale = 1
	}
	if p == nil {
		p = func(string, int64, int64) {}
	}
	conn, err := t.Connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	d := t.Dialect()
	if err := w.Cleanup(ctx, conn); err != nil {
		return err
	}
	defs := tables(scale)
	for _, tb := range defs {
		sqls, err := w.createSQL(&d, tb, scale)
		if err != nil {
			return err
		}
		for _, sql := range sqls {
			if err := conn.Exec(ctx, sql); err != nil {
				return fmt.Errorf("creating %s: %w", tb.Name, err)
			}
		}
	}

	// pgbench's layout: teller tid and account aid belong to branch (id-1)/per+1.
	empty := []byte{}
	loads := []struct {
		table string
		cols  []string
		n     int64
		fill  func(row []target.Value, id int64)
	}{
		{branches, []string{"bid", "bbalance"}, branchesPerScale * scale, func(row []target.Value, id int64) {
			row[0], row[1] = target.Int64(id), target.Int64(0)
		}},
		{tellers, []string{"tid", "bid", "tbalance"}, tellersPerScale * scale, func(row []target.Value, id int64) {
			row[0], row[1], row[2] = target.Int64(id), target.Int64((id-1)/tellersPerScale+1), target.Int64(0)
		}},
		{accounts, []string{"aid", "bid", "abalance", "filler"}, accountsPerScale * scale, func(row []target.Value, id int64) {
			row[0], row[1], row[2], row[3] = target.Int64(id), target.Int64((id-1)/accountsPerScale+1), target.Int64(0), target.Text(empty)
		}},
	}
	for _, l := range loads {
		p(l.table, 0, l.n)
		var id int64
		_, err := conn.Load(ctx, l.table, l.cols, func(row []target.Value) bool {
			if id == l.n {
				return false
			}
			id++
			l.fill(row, id)
			if id%progressEvery == 0 {
				p(l.table, id, l.n)
			}
			return true
		})
		if err != nil {
			return fmt.Errorf("loading %s: %w", l.table, err)
		}
		p(l.table, l.n, l.n)
	}

	for _, tb := range defs {
		if sql := d.AddPrimaryKey(tb); sql != "" {
			if err := conn.Exec(ctx, sql); err != nil {
				return fmt.Errorf("adding the primary key of %s: %w", tb.Name, err)
			}
		}
	}
	if w.layout.ForeignKeys {
		for _, fk := range foreignKeys {
			if err := conn.Exec(ctx, fk); err != nil {
				return fmt.Errorf("adding a foreign key (%s): %w", fk, err)
			}
		}
	}
	if d.AnalyzeSQL != "" {
		for _, tb := range defs {
			if err := conn.Exec(ctx, fmt.Sprintf(d.AnalyzeSQL, tb.Name)); err != nil {
				return fmt.Errorf("analyzing %s: %w", tb.Name, err)
			}
		}
	}
	if scale != w.scale {
		w.scale = scale
	}
	return nil
}

// Cleanup drops the four tables, the referencing ones first (--foreign-keys).
func (w *Workload) Cleanup(ctx context.Context, conn target.Conn) error {
	var d target.Dialect // DROP TABLE IF EXISTS is the same in every dialect
	for _, name := range slices.Backward(tableNames) {
		if err := conn.Exec(ctx, d.DropTable(name)); err != nil {
			return fmt.Errorf("dropping %s: %w", name, err)
		}
	}
	return nil
}

// Setup checks that the four tables exist and reads the scale from the number of
// branches, as pgbench does. A scale given as an option may be smaller than the
// prepared one (the run then touches only the first branches), never larger.
func (w *Workload) Setup(ctx context.Context, conn target.Conn) error {
	var missing []string
	for _, name := range tableNames {
		ok, err := tableExists(ctx, conn, name)
		if err != nil {
			return err
		}
		if !ok {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %s", workload.ErrNotPrepared, strings.Join(missing, ", "))
	}
	rows, err := conn.Query(ctx, "SELECT count(*) FROM "+branches)
	if err != nil {
		return fmt.Errorf("counting %s: %w", branches, err)
	}
	n, err := oneInt(rows)
	if err != nil {
		return fmt.Errorf("counting %s: %w", branches, err)
	}
	if n == 0 {
		return fmt.Errorf("%w: %s is empty", workload.ErrNotPrepared, branches)
	}
	if w.given {
		if w.scale > n {
			return fmt.Errorf("%w: option scale: %d is larger than the prepared scale %d (%s has %d rows); prepare again with --scale %d or leave --scale out", workload.ErrMismatch, w.scale, n, branches, n, w.scale)
		}
		return nil
	}
	w.scale = n
	return nil
}

// PreRun does what pgbench does before a run unless -n is given
// (workload.PgbenchVacuum): on PostgreSQL it vacuums pgbench_branches and
// pgbench_tellers and truncates pgbench_history, so that runs start from the same
// state. MySQL and SQLite have no VACUUM of a table: there the history is emptied
// only.
func (w *Workload) PreRun(ctx context.Context, conn target.Conn, d *target.Dialect, all bool) (string, error) {
	return workload.PgbenchVacuum(ctx, conn, d, all)
}

// tableExists probes the table with a query that reads no rows. Setup gets a Conn but
// no Dialect, so Dialect.TableExistsSQL is out of reach; the probe is portable. A
// failure that is not about the session (connection, authentication, timeout,
// cancellation) means the table cannot be read: SQLite reports a missing table with
// a generic result code, so "undefined" alone would not catch it there.
func tableExists(ctx context.Context, conn target.Conn, name string) (bool, error) {
	_, err := conn.Query(ctx, "SELECT 1 FROM "+name+" WHERE 1 = 0")
	if err == nil {
		return true, nil
	}
	switch target.ClassOf(err) {
	case target.ClassUndefined, target.ClassOther:
		return false, nil
	}
	return false, fmt.Errorf("checking table %s: %w", name, err)
}

func oneInt(rows [][]string) (int64, error) {
	if len(rows) != 1 || len(rows[0]) != 1 {
		return 0, errors.New("expected one value")
	}
	v := strings.TrimSpace(rows[0][0])
	if v == "" {
		return 0, nil // NULL
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("not a whole number: %q", v)
	}
	return n, nil
}

// The statements of pgbench's built-in scripts, with '?' for its variables.
const (
	sqlUpdateAccount = "UPDATE pgbench_accounts SET abalance = abalance + ? WHERE aid = ?"
	sqlSelectAccount = "SELECT abalance FROM pgbench_accounts WHERE aid = ?"
	sqlUpdateTeller  = "UPDATE pgbench_tellers SET tbalance = tbalance + ? WHERE tid = ?"
	sqlUpdateBranch  = "UPDATE pgbench_branches SET bbalance = bbalance + ? WHERE bid = ?"
	sqlInsertHistory = "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP)"
)

// NewWorker returns the state of client id. Its random values depend only on seed and id.
func (w *Workload) NewWorker(id int, seed uint64) workload.Worker {
	scale := w.scale
	if scale == 0 {
		scale = 1
	}
	k := &worker{
		v:         w.v,
		r:         gen.New(seed, uint64(id)),
		naccounts: accountsPerScale * scale,
		ntellers:  tellersPerScale * scale,
		nbranches: branchesPerScale * scale,
	}
	// Every argument is an integer; Next only sets the numbers.
	for _, args := range [][]target.Value{k.aUpdAcc[:], k.aUpdTel[:], k.aUpdBr[:], k.aSelAcc[:], k.aInsHist[:]} {
		for i := range args {
			args[i] = target.Int64(0)
		}
	}
	return k
}

type worker struct {
	v                              variant
	r                              *gen.Rand
	naccounts, ntellers, nbranches int64

	conn                                   target.Conn
	updAcc, selAcc, updTel, updBr, insHist target.Stmt

	// Arguments, filled by Next and reused by Do (and its retries).
	aUpdAcc, aUpdTel, aUpdBr [2]target.Value // delta, id
	aSelAcc                  [1]target.Value // aid
	aInsHist                 [4]target.Value // tid, bid, aid, delta
	res                      target.Result
}

// Bind prepares the variant's statements on conn.
func (k *worker) Bind(ctx context.Context, conn target.Conn) error {
	k.conn = conn
	prep := func(dst *target.Stmt, sql string) error {
		s, err := conn.Prepare(ctx, sql)
		if err != nil {
			return fmt.Errorf("preparing %q: %w", sql, err)
		}
		*dst = s
		return nil
	}
	if err := prep(&k.selAcc, sqlSelectAccount); err != nil {
		return err
	}
	if k.v == SelectOnly {
		return nil
	}
	for _, s := range []struct {
		dst *target.Stmt
		sql string
	}{{&k.updAcc, sqlUpdateAccount}, {&k.insHist, sqlInsertHistory}} {
		if err := prep(s.dst, s.sql); err != nil {
			return err
		}
	}
	if k.v == SimpleUpdate {
		return nil
	}
	if err := prep(&k.updTel, sqlUpdateTeller); err != nil {
		return err
	}
	return prep(&k.updBr, sqlUpdateBranch)
}

// Next draws aid, bid, tid and delta as pgbench's scripts do: uniformly over
// [1, 100000*scale], [1, scale], [1, 10*scale] and [-5000, 5000].
func (k *worker) Next() int {
	aid := k.r.Uniform(1, k.naccounts)
	k.aSelAcc[0].Int = aid
	if k.v == SelectOnly {
		return 0
	}
	bid := k.r.Uniform(1, k.nbranches)
	tid := k.r.Uniform(1, k.ntellers)
	delta := k.r.Uniform(-5000, 5000)
	k.aUpdAcc[0].Int, k.aUpdAcc[1].Int = delta, aid
	k.aUpdTel[0].Int, k.aUpdTel[1].Int = delta, tid
	k.aUpdBr[0].Int, k.aUpdBr[1].Int = delta, bid
	h := &k.aInsHist
	h[0].Int, h[1].Int, h[2].Int, h[3].Int = tid, bid, aid, delta
	return 0
}

// Do runs the drawn transaction. BEGIN and END count as statements, as in pgbench's
// per-statement report; on an error the count includes the statement that failed.
func (k *worker) Do(ctx context.Context) (int, error) {
	if k.v == SelectOnly {
		return 1, k.selAcc.Run(ctx, k.aSelAcc[:], &k.res)
	}
	n := 1
	if err := k.conn.Begin(ctx); err != nil {
		return n, err
	}
	if err := k.run(ctx, &n, k.updAcc, k.aUpdAcc[:]); err != nil {
		return n, err
	}
	if err := k.run(ctx, &n, k.selAcc, k.aSelAcc[:]); err != nil {
		return n, err
	}
	if k.v == TPCBLike {
		if err := k.run(ctx, &n, k.updTel, k.aUpdTel[:]); err != nil {
			return n, err
		}
		if err := k.run(ctx, &n, k.updBr, k.aUpdBr[:]); err != nil {
			return n, err
		}
	}
	if err := k.run(ctx, &n, k.insHist, k.aInsHist[:]); err != nil {
		return n, err
	}
	n++
	return n, k.conn.Commit(ctx)
}

func (k *worker) run(ctx context.Context, n *int, s target.Stmt, args []target.Value) error {
	*n++
	return s.Run(ctx, args, &k.res)
}

// Single implements workload.Single: select-only is one prepared SELECT.
func (k *worker) Single() bool { return k.v == SelectOnly }

// Statement implements workload.Single.
func (k *worker) Statement() (target.Stmt, []target.Value) { return k.selAcc, k.aSelAcc[:] }
