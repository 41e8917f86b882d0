// Package oltp is sysbench's OLTP family (oltp_point_select, oltp_read_only,
// oltp_read_write, oltp_write_only, oltp_update_index, oltp_update_non_index,
// oltp_insert, oltp_delete) on sysbench's tables sbtest1 … sbtestN, with its options,
// defaults and statement texts, so that data prepared by `sysbench … prepare` can be
// run by fathom and the other way round.
package oltp

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
	"github.com/fathom-lab/fathom/internal/workload/gen"
)

// defaultTableSize is sysbench's --table-size default, used by Prepare when no size is given.
const defaultTableSize = 10_000

// groupKind is one of sysbench's execute_* steps: a run of statements on one table,
// drawn at random for the step (sysbench draws the table per step, not per
// transaction, so one read/write transaction may touch several tables).
type groupKind uint8

const (
	gPointSelects groupKind = iota
	gSimpleRanges
	gSumRanges
	gOrderRanges
	gDistinctRanges
	gIndexUpdates
	gNonIndexUpdates
	gDeleteInserts
	gInsert // oltp_insert: one row, id from the auto-increment
	gDelete // oltp_delete: one row
)

type step struct {
	kind  groupKind
	count int
}

// script is one of the sysbench scripts.
type script struct {
	name    string
	txnType string
	help    string
	options []string
	// steps lists the transaction's steps; trx says whether it runs in BEGIN/COMMIT.
	steps func(c *config) []step
	trx   func(c *config) bool
}

func readSteps(c *config) []step {
	s := []step{{gPointSelects, c.pointSelects}}
	if c.rangeSelects {
		s = append(s, step{gSimpleRanges, c.simpleRanges}, step{gSumRanges, c.sumRanges},
			step{gOrderRanges, c.orderRanges}, step{gDistinctRanges, c.distinctRanges})
	}
	return s
}

func writeSteps(c *config) []step {
	return []step{{gIndexUpdates, c.indexUpdates}, {gNonIndexUpdates, c.nonIndexUpd}, {gDeleteInserts, c.deleteInserts}}
}

func explicitTrx(c *config) bool { return !c.skipTrx }
func autocommit(*config) bool    { return false }

var readOptions = []string{"range_size", "point_selects", "simple_ranges", "sum_ranges", "order_ranges", "distinct_ranges", "range_selects"}
var writeOptions = []string{"index_updates", "non_index_updates", "delete_inserts"}

var scripts = []script{
	{
		name: "oltp_point_select", txnType: "point_select",
		help:    "sysbench oltp_point_select: one primary-key SELECT c, no explicit transaction",
		options: nil,
		steps:   func(*config) []step { return []step{{gPointSelects, 1}} },
		trx:     autocommit,
	},
	{
		name: "oltp_read_only", txnType: "read_only",
		help:    "sysbench oltp_read_only: point SELECTs and range SELECTs (plain, SUM, ORDER BY, DISTINCT) in one transaction",
		options: append(append([]string(nil), readOptions...), "skip_trx"),
		steps:   readSteps,
		trx:     explicitTrx,
	},
	{
		name: "oltp_read_write", txnType: "read_write",
		help:    "sysbench oltp_read_write: oltp_read_only's SELECTs plus index and non-index UPDATEs and a DELETE/INSERT pair in one transaction",
		options: append(append(append([]string(nil), readOptions...), writeOptions...), "skip_trx"),
		steps:   func(c *config) []step { return append(readSteps(c), writeSteps(c)...) },
		trx:     explicitTrx,
	},
	{
		name: "oltp_write_only", txnType: "write_only",
		help:    "sysbench oltp_write_only: index and non-index UPDATEs and a DELETE/INSERT pair in one transaction",
		options: append(append([]string(nil), writeOptions...), "skip_trx"),
		steps:   writeSteps,
		trx:     explicitTrx,
	},
	{
		name: "oltp_update_index", txnType: "update_index",
		help:    "sysbench oltp_update_index: UPDATE … SET k=k+1 by primary key, autocommit",
		options: []string{"index_updates"},
		steps:   func(c *config) []step { return []step{{gIndexUpdates, c.indexUpdates}} },
		trx:     autocommit,
	},
	{
		name: "oltp_update_non_index", txnType: "update_non_index",
		help:    "sysbench oltp_update_non_index: UPDATE … SET c=? by primary key, autocommit",
		options: []string{"non_index_updates"},
		steps:   func(c *config) []step { return []step{{gNonIndexUpdates, c.nonIndexUpd}} },
		trx:     autocommit,
	},
	{
		name: "oltp_insert", txnType: "insert",
		help:    "sysbench oltp_insert: one INSERT of (k, c, pad) with an auto-increment id, autocommit",
		options: nil,
		steps:   func(*config) []step { return []step{{gInsert, 1}} },
		trx:     autocommit,
	},
	{
		name: "oltp_delete", txnType: "delete",
		help:    "sysbench oltp_delete: one DELETE by primary key, autocommit",
		options: nil,
		steps:   func(*config) []step { return []step{{gDelete, 1}} },
		trx:     autocommit,
	},
}

// names lists the scripts.
func names() []string {
	out := make([]string, len(scripts))
	for i, s := range scripts {
		out[i] = s.name
	}
	return out
}

// Spec returns the spec of the named script, or nil.
func Spec(name string) *workload.Spec {
	for i := range scripts {
		if scripts[i].name == name {
			s := &scripts[i]
			return &workload.Spec{
				Name:        s.name,
				Description: s.help,
				Options:     optionList(s.options...),
				New:         func(p workload.Params) (workload.Workload, error) { return newWorkload(s, p) },
			}
		}
	}
	return nil
}

// oltpWorkload is one configured script.
type oltpWorkload struct {
	s          *script
	spec       *workload.Spec
	opts       map[string]string // resolved options of the script
	cfg        config
	lay        workload.Layout
	autoIncKey bool // the target needs an auto-increment column to be a key (Dialect.AutoIncKey), given with the layout
	// tablesGiven: the user gave tables; otherwise Setup detects it from the data.
	tablesGiven bool
}

// resolveScript resolves the options of the named script.
func resolveScript(name string, p workload.Params) (*oltpWorkload, error) {
	for i := range scripts {
		if scripts[i].name == name {
			return newWorkload(&scripts[i], p)
		}
	}
	return nil, fmt.Errorf("unknown oltp workload %q", name)
}

func newWorkload(s *script, p workload.Params) (*oltpWorkload, error) {
	spec := Spec(s.name)
	opts, err := spec.Resolve(p)
	if err != nil {
		return nil, err
	}
	cfg, err := parseConfig(opts)
	if err != nil {
		return nil, err
	}
	_, given := p["tables"]
	return &oltpWorkload{s: s, spec: spec, opts: opts, cfg: cfg, tablesGiven: given}, nil
}

// Name is the script's name.
func (w *oltpWorkload) Name() string { return w.s.name }

// Tables names sbtest1 … sbtestN (the prepare marker's keys).
func (w *oltpWorkload) Tables() []string {
	names := make([]string, w.cfg.tables)
	for i := range names {
		names[i] = tableName(i + 1)
	}
	return names
}

// Options reports the script's options, table_size as detected once known.
func (w *oltpWorkload) Options() map[string]string {
	out := maps.Clone(w.opts)
	if w.cfg.tableSize > 0 {
		out["table_size"] = strconv.FormatInt(w.cfg.tableSize, 10)
	}
	return out
}

// TxnTypes has the one transaction type of the script.
func (w *oltpWorkload) TxnTypes() []string { return []string{w.s.txnType} }

func tableName(n int) string { return "sbtest" + strconv.Itoa(n) }

// tableDef is sysbench's sbtestN with its secondary index k_N.
func tableDef(n int) target.Table {
	return target.Table{
		Name: tableName(n),
		Columns: []target.Column{
			{Name: "id", Type: "serial"},
			{Name: "k", Type: "int", NotNull: true, Default: "0"},
			{Name: "c", Type: "char(120)", NotNull: true, Default: "''"},
			{Name: "pad", Type: "char(60)", NotNull: true, Default: "''"},
		},
		PrimaryKey: []string{"id"},
		Indexes:    []target.Index{{Name: "k_" + strconv.Itoa(n), Columns: []string{"k"}}},
	}
}

// maxLoaders bounds the connections Prepare loads tables on at once.
const maxLoaders = 8

// Prepare creates and loads sbtest1 … sbtestN, several tables at a time on their own
// connections. Rows are loaded as sysbench loads them: (k, c, pad) with the id left to
// the auto-increment, so ids run 1 … table_size and the sequence (PostgreSQL) or
// AUTO_INCREMENT (MySQL) continues after them for oltp_insert; k is drawn from
// rand_type over [1, table_size] as sysbench does. The index k_N is built after loading,
// then statistics are refreshed.
func (w *oltpWorkload) Prepare(ctx context.Context, t target.Target, p workload.Progress) error {
	size := w.cfg.tableSize
	if size == 0 {
		size = defaultTableSize
	}
	var pmu sync.Mutex
	progress := func(table string, done, total int64) {
		if p != nil {
			pmu.Lock()
			p(table, done, total)
			pmu.Unlock()
		}
	}
	loaders := min(w.cfg.tables, maxLoaders)
	if t.Dialect().SingleWriter {
		// SQLite has one writer per database: loaders in parallel would only queue on
		// its lock (and risk SQLITE_BUSY).
		loaders = 1
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan int)
	errs := make([]error, loaders)
	var wg sync.WaitGroup
	for i := range loaders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := t.Connect(ctx)
			if err != nil {
				errs[i] = err
				cancel()
				return
			}
			defer conn.Close()
			d := t.Dialect()
			for n := range jobs {
				if err := w.prepareTable(ctx, conn, &d, n, size, progress); err != nil {
					errs[i] = err
					cancel()
					return
				}
			}
		}()
	}
feed:
	for n := 1; n <= w.cfg.tables; n++ {
		select {
		case jobs <- n:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if w.cfg.tableSize == 0 {
		w.cfg.tableSize = size
	}
	return ctx.Err()
}

func (w *oltpWorkload) prepareTable(ctx context.Context, conn target.Conn, d *target.Dialect, n int, size int64, progress workload.Progress) error {
	tb := w.layoutTable(tableDef(n))
	if err := conn.Exec(ctx, d.DropTable(tb.Name)); err != nil {
		return fmt.Errorf("dropping %s: %w", tb.Name, err)
	}
	sql, err := w.createSQL(d, tb)
	if err != nil {
		return err
	}
	if err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("creating %s: %w", tb.Name, err)
	}
	// The same data every time: the generator is seeded by the table number.
	r := gen.New(0, uint64(n))
	ks, err := gen.NewDistKind(w.cfg.randType, 1, size, w.cfg.params)
	if err != nil {
		return err
	}
	var cbuf [gen.CLen]byte
	var pbuf [gen.PadLen]byte
	progress(tb.Name, 0, size)
	var i int64
	cols, o := []string{"k", "c", "pad"}, 0
	if !w.autoInc() {
		cols, o = []string{"id", "k", "c", "pad"}, 1
	}
	_, err = conn.Load(ctx, tb.Name, cols, func(row []target.Value) bool {
		if i == size {
			return false
		}
		i++
		if o == 1 {
			row[0] = target.Int64(i)
		}
		row[o] = target.Int64(ks.Next(r))
		row[o+1] = target.Text(r.C(cbuf[:]))
		row[o+2] = target.Text(r.Pad(pbuf[:]))
		if i%progressEvery == 0 {
			progress(tb.Name, i, size)
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("loading %s: %w", tb.Name, err)
	}
	rows, err := conn.Query(ctx, "SELECT max(id) FROM "+tb.Name)
	if err != nil {
		return fmt.Errorf("checking %s: %w", tb.Name, err)
	}
	if top, err := oneInt(rows); err != nil || top != size {
		return fmt.Errorf("%s: the auto-increment gave ids up to %d for %d rows (is auto_increment_increment or the sequence's increment not 1?); the workloads draw ids from 1 to table_size", tb.Name, top, size)
	}
	if sql := d.AddPrimaryKey(tb); sql != "" {
		if err := conn.Exec(ctx, sql); err != nil {
			return fmt.Errorf("adding the primary key of %s: %w", tb.Name, err)
		}
	}
	for _, sql := range d.CreateIndexes(tb) {
		if err := conn.Exec(ctx, sql); err != nil {
			return fmt.Errorf("indexing %s: %w", tb.Name, err)
		}
	}
	if d.AnalyzeSQL != "" {
		if err := conn.Exec(ctx, fmt.Sprintf(d.AnalyzeSQL, tb.Name)); err != nil {
			return fmt.Errorf("analyzing %s: %w", tb.Name, err)
		}
	}
	progress(tb.Name, size, size)
	return nil
}

const progressEvery = 10_000

// Cleanup drops sbtest1 … sbtestN, and any further sbtest tables that follow without a
// gap (left by an earlier prepare with more tables).
func (w *oltpWorkload) Cleanup(ctx context.Context, conn target.Conn) error {
	var d target.Dialect // DROP TABLE IF EXISTS is the same in every dialect
	for n := 1; ; n++ {
		name := tableName(n)
		if n > w.cfg.tables {
			ok, err := tableExists(ctx, conn, name)
			if err != nil {
				return err
			}
			if !ok {
				return nil
			}
		}
		if err := conn.Exec(ctx, d.DropTable(name)); err != nil {
			return fmt.Errorf("dropping %s: %w", name, err)
		}
	}
}

// Setup checks that sbtest1 … sbtestN exist and, when table_size is not given, reads
// it from max(id) of sbtest1 (one primary-key lookup).
func (w *oltpWorkload) Setup(ctx context.Context, conn target.Conn) error {
	want := w.cfg.tables
	if !w.tablesGiven {
		want = 1
	}
	var missing []string
	for n := 1; n <= want; n++ {
		ok, err := tableExists(ctx, conn, tableName(n))
		if err != nil {
			return err
		}
		if !ok {
			missing = append(missing, tableName(n))
		}
	}
	if len(missing) > 0 {
		if len(missing) > 5 {
			missing = append(missing[:5], fmt.Sprintf("and %d more", len(missing)-5))
		}
		return fmt.Errorf("%w: %s", workload.ErrNotPrepared, strings.Join(missing, ", "))
	}
	// Not given: the tables that follow without a gap are the prepared ones, as
	// Cleanup counts them. Given: fewer than prepared run on the first ones (as a
	// smaller pgbench scale does); more are missing tables, refused above.
	if !w.tablesGiven {
		have := want
		for have < maxTables {
			ok, err := tableExists(ctx, conn, tableName(have+1))
			if err != nil {
				return err
			}
			if !ok {
				break
			}
			have++
		}
		w.cfg.tables = have
		w.opts["tables"] = strconv.Itoa(have)
	}
	rows, err := conn.Query(ctx, "SELECT max(id) FROM sbtest1")
	if err != nil {
		return fmt.Errorf("reading the size of sbtest1: %w", err)
	}
	n, err := oneInt(rows)
	if err != nil {
		return fmt.Errorf("reading the size of sbtest1: %w", err)
	}
	if n < 1 {
		return fmt.Errorf("%w: sbtest1 is empty", workload.ErrNotPrepared)
	}
	if n > maxTableSize {
		n = maxTableSize
	}
	if w.cfg.sizeGiven {
		// A smaller size runs on the first rows (as a smaller pgbench scale does); a
		// larger one would draw ids that are not there.
		if w.cfg.tableSize > n {
			return fmt.Errorf("%w: option table_size: %d given, but sbtest1 has ids up to %d; leave --table-size out (detected) or prepare again with --table-size %d", workload.ErrMismatch, w.cfg.tableSize, n, w.cfg.tableSize)
		}
		return nil
	}
	w.cfg.tableSize = n
	return nil
}

// tableExists probes the table with a query that reads no rows. Setup and Cleanup get
// a Conn but no Dialect, so Dialect.TableExistsSQL is out of reach; the probe is
// portable. A failure that is not about the session (connection, authentication,
// timeout, cancellation) means the table cannot be read: SQLite reports a missing
// table with a generic result code, so "undefined" alone would not catch it there.
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
		return 0, nil // NULL: no rows
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("not a whole number: %q", v)
	}
	return n, nil
}

// optionNames lists a spec's option names, sorted; for tests and help.
func optionNames(s *workload.Spec) []string {
	var out []string
	for _, o := range s.Options {
		out = append(out, o.Name)
	}
	sort.Strings(out)
	return out
}
