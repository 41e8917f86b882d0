package sqlite

import "github.com/fathom-lab/fathom/internal/target"

// SQLDialect is SQLite's SQL dialect: how workloads' portable tables and
// statements are written for it. It is the kind's bundle's Dialect (internal/db hands it to target).
var SQLDialect = &target.Dialect{
	Name:         "sqlite",
	Title:        "SQLite",
	SingleWriter: true,
	RowidSerial:  true,
	Types: map[string]string{
		"int": "INTEGER", "integer": "INTEGER", "bigint": "INTEGER", "serial": "INTEGER", "bigserial": "INTEGER",
		"char": "CHAR", "varchar": "VARCHAR", "text": "TEXT", "timestamp": "TIMESTAMP", "decimal": "DECIMAL",
		"boolean": "BOOLEAN", "bytes": "BLOB", "double": "REAL",
	},
	TableExistsSQL:  "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?",
	AnalyzeSQL:      "ANALYZE %s",
	NoAddForeignKey: true,
}
