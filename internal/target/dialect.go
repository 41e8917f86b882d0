package target

import (
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
)

// Dialect holds what differs in SQL between targets, so that workloads write one
// portable description and each target renders it.
type Dialect struct {
	Name string
	// Like is the dialect whose SQL this one reads where a workload file gives none of
	// its own ("postgres" for a kind on PostgreSQL's wire, such as CockroachDB); ""
	// for a dialect of its own, which files that spell SQL by dialect must cover.
	Like string
	// Title is the database's name for people ("SQLite").
	Title string
	// SingleWriter: the database takes one writer at a time (SQLite), so loading
	// tables in parallel would only queue on its lock.
	SingleWriter bool
	// RowidSerial: a serial column is the table's rowid and declares PRIMARY KEY
	// itself (SQLite's INTEGER PRIMARY KEY), so no separate primary key clause.
	RowidSerial bool
	// Dollar placeholders ($1, $2 …) instead of '?'.
	Dollar bool
	// Types maps portable column types to this dialect's. Portable types: int,
	// bigint, serial (auto-increment integer primary key), bigserial, char(n),
	// varchar(n), text, timestamp, decimal(p,s), boolean, bytes, double.
	Types map[string]string
	// TableOptions is appended to CREATE TABLE (e.g. " ENGINE=InnoDB").
	TableOptions string
	// PrimaryKeyAfterLoad: primary keys can be added with ALTER TABLE after loading,
	// which is faster (PostgreSQL, MySQL). SQLite declares them in CREATE TABLE.
	PrimaryKeyAfterLoad bool
	// TableExistsSQL counts tables named by its one argument.
	TableExistsSQL string
	// AnalyzeSQL is the statement that refreshes planner statistics for a table (%s).
	AnalyzeSQL string
	// InsertIDSQL reads, on the same session, the id an INSERT generated (MySQL's
	// LAST_INSERT_ID()); "" when INSERT … RETURNING gives it.
	InsertIDSQL string
	// TableEngine: CREATE TABLE takes a storage engine (ENGINE=…, MySQL).
	TableEngine bool
	// AutoIncKey: an auto-increment column must be a key of its own (MySQL), so an
	// index on it goes in CREATE TABLE.
	AutoIncKey bool
	// TableStorage: tables can be UNLOGGED, have a fill factor and be partitioned
	// (PostgreSQL's table options, as pgbench -i uses them).
	TableStorage bool
	// NoAddForeignKey: a foreign key cannot be added to a loaded table (SQLite).
	NoAddForeignKey bool
	// VacuumSQL vacuums a table (%s), as pgbench does before a run; "" for none.
	VacuumSQL string
	// TruncateSQL empties a table (%s); "" for DELETE FROM.
	TruncateSQL string
	// TxnStatements: BEGIN, COMMIT and ROLLBACK can be sent as SQL on a connection
	// (PostgreSQL); otherwise scripts' transaction commands use the Conn's calls.
	TxnStatements bool
	// Pipeline: the server takes pipelined statements (pgbench's \startpipeline).
	Pipeline bool
}

// Column is a portable column definition.
type Column struct {
	Name    string
	Type    string // portable type, see Dialect.Types
	NotNull bool
	Default string // SQL literal, used as written
}

// Index is a secondary index.
type Index struct {
	Name    string
	Columns []string
	Unique  bool
}

// Table is a portable table definition.
type Table struct {
	Name       string
	Columns    []Column
	PrimaryKey []string
	Indexes    []Index
}

// Rebind rewrites '?' placeholders for this dialect. Question marks inside quoted
// strings and identifiers are left alone.
func (d *Dialect) Rebind(sql string) string {
	if !d.Dollar || !strings.Contains(sql, "?") {
		return sql
	}
	var b strings.Builder
	n := 0
	var quote byte
	for i := 0; i < len(sql); i++ {
		c := sql[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"' || c == '`':
			quote = c
		case c == '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// columnType renders a portable type, keeping any (n) or (p,s) suffix.
func (d *Dialect) columnType(portable string) (string, error) {
	p := strings.ToLower(strings.TrimSpace(portable))
	base, args := p, ""
	if i := strings.IndexByte(p, '('); i >= 0 {
		base, args = strings.TrimSpace(p[:i]), p[i:]
	}
	t, ok := d.Types[base]
	if !ok {
		return "", fmt.Errorf("unknown column type %q (use int, bigint, serial, bigserial, char(n), varchar(n), text, timestamp, decimal(p,s), boolean, bytes, double)", portable)
	}
	if args != "" && !strings.Contains(t, "(") && base != "serial" && base != "bigserial" {
		t += args
	}
	return t, nil
}

func isSerial(t string) bool {
	t = strings.ToLower(t)
	return t == "serial" || t == "bigserial"
}

// CreateTable renders CREATE TABLE. withPK declares the primary key inline; the
// caller adds it later with AddPrimaryKey otherwise. A serial column always carries
// its primary key inline (auto-increment requires it on MySQL and SQLite).
func (d *Dialect) CreateTable(t Table, withPK bool) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s (", t.Name)
	inlinePK := withPK || !d.PrimaryKeyAfterLoad
	for i, c := range t.Columns {
		if i > 0 {
			b.WriteString(", ")
		}
		typ, err := d.columnType(c.Type)
		if err != nil {
			return "", fmt.Errorf("table %s column %s: %w", t.Name, c.Name, err)
		}
		b.WriteString(c.Name + " " + typ)
		if isSerial(c.Type) {
			if d.RowidSerial {
				// INTEGER PRIMARY KEY is SQLite's rowid alias and auto-increments.
				b.WriteString(" PRIMARY KEY")
			}
			continue
		}
		if c.NotNull {
			b.WriteString(" NOT NULL")
		}
		if c.Default != "" {
			b.WriteString(" DEFAULT " + c.Default)
		}
	}
	serialPK := false
	for _, c := range t.Columns {
		if isSerial(c.Type) {
			serialPK = true
		}
	}
	if len(t.PrimaryKey) > 0 && (inlinePK || serialPK) && !(serialPK && d.RowidSerial) {
		fmt.Fprintf(&b, ", PRIMARY KEY (%s)", strings.Join(t.PrimaryKey, ", "))
	}
	b.WriteString(")")
	b.WriteString(d.TableOptions)
	return b.String(), nil
}

// hasInlinePK reports whether CreateTable(t, false) already declared the primary key.
func (d *Dialect) hasInlinePK(t Table) bool {
	if !d.PrimaryKeyAfterLoad {
		return true
	}
	for _, c := range t.Columns {
		if isSerial(c.Type) {
			return true
		}
	}
	return false
}

// AddPrimaryKey renders the statement adding t's primary key after loading, or ""
// when CreateTable(t, false) already declared it.
func (d *Dialect) AddPrimaryKey(t Table) string {
	if len(t.PrimaryKey) == 0 || d.hasInlinePK(t) {
		return ""
	}
	return fmt.Sprintf("ALTER TABLE %s ADD PRIMARY KEY (%s)", t.Name, strings.Join(t.PrimaryKey, ", "))
}

// CreateIndexes renders CREATE INDEX statements for t's secondary indexes.
func (d *Dialect) CreateIndexes(t Table) []string {
	var out []string
	for _, ix := range t.Indexes {
		u := ""
		if ix.Unique {
			u = "UNIQUE "
		}
		out = append(out, fmt.Sprintf("CREATE %sINDEX %s ON %s (%s)", u, ix.Name, t.Name, strings.Join(ix.Columns, ", ")))
	}
	return out
}

// DropTable renders DROP TABLE IF EXISTS.
func (d *Dialect) DropTable(name string) string { return "DROP TABLE IF EXISTS " + name }

// dialectList gives the registered database kinds' dialects. Each is data of its
// kind's bundle (the kind's Dialect); internal/db hands its registry in with
// UseDialects, so that target keeps no list of its own and a kind registers nothing
// here.
var dialectList atomic.Pointer[func() []*Dialect]

// UseDialects makes list the source of Dialects and DialectNamed: internal/db calls
// it with its registry's, a test of a package below db with the dialects it needs
// (nil: not given, as before internal/db is initialized).
func UseDialects(list func() []*Dialect) {
	if list == nil {
		dialectList.Store(nil)
		return
	}
	dialectList.Store(&list)
}

// DialectsGiven reports whether UseDialects has been called: before it (a package's
// initialization that runs before internal/db's) the dialects are not known yet.
func DialectsGiven() bool { return dialectList.Load() != nil }

// Dialects lists the registered kinds' dialects (none before UseDialects).
func Dialects() []*Dialect {
	if f := dialectList.Load(); f != nil {
		return (*f)()
	}
	return nil
}

// SQLDialects lists the names of the registered dialects that render SQL (those that
// map portable column types), in the order Dialects gives them: the keys a workload
// file may give SQL or DDL for. With own set, only those of their own (Like "").
func SQLDialects(own bool) []string {
	var out []string
	for _, d := range Dialects() {
		if d != nil && d.Types != nil && (!own || d.Like == "") {
			out = append(out, d.Name)
		}
	}
	return out
}

// DialectNamed is the registered dialect called name (a workload file's SQL key), or
// nil.
func DialectNamed(name string) *Dialect {
	for _, d := range Dialects() {
		if d != nil && d.Name == name {
			return d
		}
	}
	return nil
}
