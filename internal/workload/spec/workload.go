package spec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
	"github.com/fathom-lab/fathom/internal/workload/gen"
)

// Workload is a resolved workload file: parameters applied, generators built, SQL
// compiled. It implements workload.Workload and, when the file has groups,
// workload.Grouped.
type Workload struct {
	file     *file
	opts     map[string]string
	optNames []string
	seqs     map[string]*seqState
	seqList  []*seqState
	tables   []*table
	txns     []*txn
	groups   []*group // one unnamed group with every transaction when !grouped
	grouped  bool
	types    []string
	// dialect is the target's dialect name once Prepare or Setup has seen it; workers
	// whose Bind comes first find out from their connection.
	dialect string
}

type table struct {
	def      target.Table
	ddl      map[string]string
	rows     int64
	loadCols []string
	loadGens []valueGen
	line     int
}

type txn struct {
	name       string
	line       int
	weight     float64
	autocommit bool
	values     []valueGen // drawn once per transaction
	valueNames []string
	stmts      []*stmt
	body       []node
	nvars      int
	varNames   []string
}

// stmt is one SQL step. It is prepared once per worker, whatever its repeats.
type stmt struct {
	line       int
	label      string
	variants   map[string]*variant // by dialect, "" the default
	locals     []valueGen          // drawn for each execution
	localNames []string
	consts     []target.Value // parameters used as :name
	keep       []int          // variables set from the first row's columns
	insertID   int            // variable set to the generated id, or -1
	idColumn   string
}

// variant is a statement's SQL for one dialect with '?' placeholders and where each
// argument comes from.
type variant struct {
	sql   string
	args  []argSrc
	names []string // of the arguments, for show
}

type srcKind uint8

const (
	srcLocal srcKind = iota // a value of the statement, drawn for each execution
	srcTxn                  // a value of the transaction, drawn once
	srcVar                  // a result of an earlier statement, known only in Do
	srcConst                // a parameter
)

type argSrc struct {
	kind srcKind
	idx  int
}

type nodeKind uint8

const (
	nodeStmt nodeKind = iota
	nodeRepeat
	nodeBranch
)

// node is one step of a transaction's program.
type node struct {
	kind   nodeKind
	stmt   int
	repeat valueGen
	body   []node
	arms   []arm
}

type arm struct {
	cum  float64 // cumulative probability
	body []node
}

type group struct {
	name      string
	line      int
	clients   int
	rate      float64
	perClient int64
	txns      []int     // indexes into Workload.txns
	types     []int     // transaction type index of each
	cum       []float64 // cumulative weights
}

var (
	_ workload.Workload    = (*Workload)(nil)
	_ workload.Grouped     = (*Workload)(nil)
	_ workload.Thresholder = (*Workload)(nil)
)

// Load decodes a workload file's content into a spec that the registry and the CLI
// use like a built-in's: Options lists the file's parameters, New resolves them.
func Load(path string, data []byte) (*workload.Spec, error) {
	f, err := checkFile(path, data)
	if err != nil {
		return nil, err
	}
	return newSpec(f), nil
}

// CheckFile reads a workload file and checks it with its defaults (Check), returning
// the resolved workload when it has no problems.
func CheckFile(path string) (*Workload, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("workload file: %w", err)
	}
	f, err := checkFile(path, data)
	if err != nil {
		return nil, err
	}
	return resolve(f, nil)
}

// LoadFile reads and loads a workload file.
func LoadFile(path string) (*workload.Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("workload file: %w", err)
	}
	return Load(path, data)
}

// newSpec returns the spec of a decoded file.
func newSpec(f *file) *workload.Spec {
	s := &workload.Spec{Name: f.Name, Description: f.Description}
	if s.Description == "" {
		s.Description = "workload file " + f.Path
	}
	for _, p := range f.Params {
		help := p.Help
		if help == "" {
			help = "parameter of " + f.Name
		}
		if len(p.Presets) > 0 {
			var names []string
			for _, ps := range p.Presets {
				names = append(names, ps.Name)
			}
			help += " (" + strings.Join(names, ", ") + ")"
		}
		s.Options = append(s.Options, workload.Option{Name: p.Name, Default: p.Default, Help: help})
	}
	s.New = func(p workload.Params) (workload.Workload, error) {
		w, err := resolve(f, p)
		if err != nil {
			return nil, err
		}
		return w, nil
	}
	return s
}

// Name is the file's name.
func (w *Workload) Name() string { return w.file.Name }

// Thresholds are the file's pass/fail bars (workload.Thresholder).
func (w *Workload) Thresholds() []measure.Threshold { return w.file.Thresholds }

// Tables names the file's tables (the prepare marker's keys).
func (w *Workload) Tables() []string {
	names := make([]string, len(w.tables))
	for i, tb := range w.tables {
		names[i] = tb.def.Name
	}
	return names
}

// Options returns every parameter with its effective value.
func (w *Workload) Options() map[string]string {
	out := make(map[string]string, len(w.opts))
	for k, v := range w.opts {
		out[k] = v
	}
	return out
}

// TxnTypes names the transaction types: "group/transaction" with groups, the
// transaction names without.
func (w *Workload) TxnTypes() []string { return append([]string(nil), w.types...) }

// Groups returns the client groups, or nil when the file has none (the run's -c
// clients then each draw from every transaction).
func (w *Workload) Groups() []workload.Group {
	if !w.grouped {
		return nil
	}
	out := make([]workload.Group, len(w.groups))
	for i, g := range w.groups {
		out[i] = workload.Group{Name: g.name, Clients: g.clients, Rate: g.rate, Transactions: g.perClient}
	}
	return out
}

// progressEvery is how many rows pass between progress reports while loading.
const progressEvery = 10_000

// loadSeed seeds the generators of loaded data, so that a prepare is reproducible.
const loadSeed = 0x6c6f6164

// Prepare drops the file's tables, creates them (with the dialect's own statement
// where the file gives one), loads each table's rows with its column generators
// through the target's bulk path, then adds primary keys and indexes and refreshes
// the planner statistics.
func (w *Workload) Prepare(ctx context.Context, t target.Target, p workload.Progress) error {
	if p == nil {
		p = func(string, int64, int64) {}
	}
	d := t.Dialect()
	w.dialect = d.Name
	conn, err := t.Connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := w.Cleanup(ctx, conn); err != nil {
		return err
	}
	for _, tb := range w.tables {
		sql := ddlFor(tb.ddl, &d)
		if sql == "" {
			if sql, err = d.CreateTable(tb.def, false); err != nil {
				return err
			}
		}
		if err := conn.Exec(ctx, sql); err != nil {
			return fmt.Errorf("creating %s: %w", tb.def.Name, err)
		}
	}
	for ti, tb := range w.tables {
		if tb.rows == 0 {
			continue
		}
		if len(tb.loadCols) == 0 {
			return fmt.Errorf("table %s: rows %d but no load generators", tb.def.Name, tb.rows)
		}
		if err := w.load(ctx, conn, ti, tb, p); err != nil {
			return err
		}
	}
	for _, tb := range w.tables {
		if ddlFor(tb.ddl, &d) != "" {
			continue // the user's statement declares its own keys
		}
		if sql := d.AddPrimaryKey(tb.def); sql != "" {
			if err := conn.Exec(ctx, sql); err != nil {
				return fmt.Errorf("adding the primary key of %s: %w", tb.def.Name, err)
			}
		}
	}
	for _, tb := range w.tables {
		for _, sql := range d.CreateIndexes(tb.def) {
			if err := conn.Exec(ctx, sql); err != nil {
				return fmt.Errorf("indexing %s: %w", tb.def.Name, err)
			}
		}
	}
	if d.AnalyzeSQL != "" {
		for _, tb := range w.tables {
			if err := conn.Exec(ctx, fmt.Sprintf(d.AnalyzeSQL, tb.def.Name)); err != nil {
				return fmt.Errorf("analyzing %s: %w", tb.def.Name, err)
			}
		}
	}
	return nil
}

func (w *Workload) load(ctx context.Context, conn target.Conn, ti int, tb *table, p workload.Progress) error {
	dr := &drawer{r: gen.New(loadSeed, uint64(ti))}
	var n int64
	name := tb.def.Name
	p(name, 0, tb.rows)
	_, err := conn.Load(ctx, name, tb.loadCols, func(row []target.Value) bool {
		if n == tb.rows {
			return false
		}
		dr.text = dr.text[:0]
		for i, g := range tb.loadGens {
			g.draw(dr, &row[i])
		}
		n++
		if n%progressEvery == 0 {
			p(name, n, tb.rows)
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("loading %s: %w", name, err)
	}
	p(name, tb.rows, tb.rows)
	return nil
}

// Cleanup drops the file's tables, last first.
func (w *Workload) Cleanup(ctx context.Context, conn target.Conn) error {
	var d target.Dialect
	for i := len(w.tables) - 1; i >= 0; i-- {
		name := w.tables[i].def.Name
		if err := conn.Exec(ctx, d.DropTable(name)); err != nil {
			return fmt.Errorf("dropping %s: %w", name, err)
		}
	}
	return nil
}

// Setup checks that the tables exist, finds out the target's dialect and moves the
// sequences that continue after a column's maximum past it.
func (w *Workload) Setup(ctx context.Context, conn target.Conn) error {
	var missing []string
	for _, tb := range w.tables {
		ok, err := tableExists(ctx, conn, tb.def.Name)
		if err != nil {
			return err
		}
		if !ok {
			missing = append(missing, tb.def.Name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %s", workload.ErrNotPrepared, strings.Join(missing, ", "))
	}
	d, err := detectDialect(ctx, conn)
	if err != nil {
		return err
	}
	w.dialect = d
	for _, s := range w.seqList {
		if s.after == "" {
			continue
		}
		tn, cn, _ := strings.Cut(s.after, ".")
		rows, err := conn.Query(ctx, "SELECT max("+cn+") FROM "+tn)
		if err != nil {
			return fmt.Errorf("reading the largest %s: %w", s.after, err)
		}
		if len(rows) == 1 && len(rows[0]) == 1 && strings.TrimSpace(rows[0][0]) != "" {
			v, err := strconv.ParseInt(strings.TrimSpace(rows[0][0]), 10, 64)
			if err != nil {
				return fmt.Errorf("the largest %s is %q, not a whole number", s.after, rows[0][0])
			}
			s.continueAfter(v)
		}
	}
	return nil
}

// ddlFor is a table's own CREATE TABLE statement for dialect d: the file's for d,
// else for the dialect d reads like (Dialect.Like); "" to render the portable one.
func ddlFor(ddl map[string]string, d *target.Dialect) string {
	if sql := ddl[d.Name]; sql != "" || d.Like == "" {
		return sql
	}
	return ddl[d.Like]
}

// tableExists probes a table with a query that reads no rows (as tpcb does: Setup has
// no Dialect to ask).
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

// detectDialect finds out which kind of server conn talks to. A Conn that knows its
// dialect says so; otherwise the server is asked: version() answers on PostgreSQL
// ("PostgreSQL …") and MySQL/MariaDB, sqlite_version() only on SQLite.
func detectDialect(ctx context.Context, conn target.Conn) (string, error) {
	switch c := conn.(type) {
	case interface{ Dialect() target.Dialect }:
		return c.Dialect().Name, nil
	case interface{ Dialect() *target.Dialect }:
		return c.Dialect().Name, nil
	}
	rows, err := conn.Query(ctx, "SELECT version()")
	if err == nil && len(rows) == 1 && len(rows[0]) == 1 {
		if strings.Contains(strings.ToLower(rows[0][0]), "postgres") {
			return "postgres", nil
		}
		return "mysql", nil
	}
	if err != nil {
		switch target.ClassOf(err) {
		case target.ClassConnection, target.ClassCanceled, target.ClassTimeout, target.ClassAuth:
			return "", err
		}
	}
	if _, err2 := conn.Query(ctx, "SELECT sqlite_version()"); err2 == nil {
		return "sqlite", nil
	}
	return "", errors.New("cannot tell whether the target is PostgreSQL, MySQL or SQLite")
}

// insertID is how a dialect reports the id an INSERT generated: from the INSERT itself
// (RETURNING: PostgreSQL, SQLite and dialects fathom does not know), or from a second
// statement on the same session (Dialect.InsertIDSQL: MySQL/MariaDB's
// LAST_INSERT_ID()).
type insertID struct {
	returning bool
	query     string
}

func insertIDOf(dialect string) insertID {
	if d := target.DialectNamed(dialect); d != nil && d.InsertIDSQL != "" {
		return insertID{query: d.InsertIDSQL}
	}
	return insertID{returning: true}
}
