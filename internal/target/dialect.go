package target

import (
	"fmt"
	"strconv"
	"strings"
)

// Dialect holds what differs in SQL between targets, so that workloads write one
// portable description and each target renders it.
type Dialect struct {
	Name string
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

// ColumnType renders a portable type, keeping any (n) or (p,s) suffix.
func (d *Dialect) ColumnType(portable string) (string, error) {
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
		typ, err := d.ColumnType(c.Type)
		if err != nil {
			return "", fmt.Errorf("table %s column %s: %w", t.Name, c.Name, err)
		}
		b.WriteString(c.Name + " " + typ)
		if isSerial(c.Type) {
			if d.Name == "sqlite" {
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
	if len(t.PrimaryKey) > 0 && (inlinePK || serialPK) && !(serialPK && d.Name == "sqlite") {
		fmt.Fprintf(&b, ", PRIMARY KEY (%s)", strings.Join(t.PrimaryKey, ", "))
	}
	b.WriteString(")")
	b.WriteString(d.TableOptions)
	return b.String(), nil
}

// HasInlinePK reports whether CreateTable(t, false) already declared the primary key.
func (d *Dialect) HasInlinePK(t Table) bool {
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
	if len(t.PrimaryKey) == 0 || d.HasInlinePK(t) {
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

// Postgres, MySQL and SQLite are the three dialects.
var (
	Postgres = &Dialect{
		Name:   "postgres",
		Dollar: true,
		Types: map[string]string{
			"int": "integer", "integer": "integer", "bigint": "bigint", "serial": "serial", "bigserial": "bigserial",
			"char": "char", "varchar": "varchar", "text": "text", "timestamp": "timestamp",
			"decimal": "numeric", "boolean": "boolean", "bytes": "bytea", "double": "double precision",
		},
		PrimaryKeyAfterLoad: true,
		TableExistsSQL:      "SELECT count(*) FROM pg_catalog.pg_tables WHERE tablename = ? AND schemaname = ANY (current_schemas(false))",
		AnalyzeSQL:          "ANALYZE %s",
	}
	MySQL = &Dialect{
		Name: "mysql",
		Types: map[string]string{
			"int": "INTEGER", "integer": "INTEGER", "bigint": "BIGINT", "serial": "INTEGER NOT NULL AUTO_INCREMENT",
			"bigserial": "BIGINT NOT NULL AUTO_INCREMENT", "char": "CHAR", "varchar": "VARCHAR", "text": "TEXT",
			"timestamp": "DATETIME(6)", "decimal": "DECIMAL", "boolean": "BOOLEAN", "bytes": "LONGBLOB", "double": "DOUBLE",
		},
		TableOptions:        " ENGINE=InnoDB",
		PrimaryKeyAfterLoad: true,
		TableExistsSQL:      "SELECT count(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?",
		AnalyzeSQL:          "ANALYZE TABLE %s",
	}
	SQLite = &Dialect{
		Name: "sqlite",
		Types: map[string]string{
			"int": "INTEGER", "integer": "INTEGER", "bigint": "INTEGER", "serial": "INTEGER", "bigserial": "INTEGER",
			"char": "CHAR", "varchar": "VARCHAR", "text": "TEXT", "timestamp": "TIMESTAMP", "decimal": "DECIMAL",
			"boolean": "BOOLEAN", "bytes": "BLOB", "double": "REAL",
		},
		TableExistsSQL: "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?",
		AnalyzeSQL:     "ANALYZE %s",
	}
)
