package postgres

import "github.com/fathom-lab/fathom/internal/target"

// SQLDialect is PostgreSQL's SQL dialect: how workloads' portable tables and
// statements are written for it. It is the kind's bundle's Dialect (internal/db hands it to target).
var SQLDialect = &target.Dialect{
	Name:   "postgres",
	Title:  "PostgreSQL",
	Dollar: true,
	Types: map[string]string{
		"int": "integer", "integer": "integer", "bigint": "bigint", "serial": "serial", "bigserial": "bigserial",
		"char": "char", "varchar": "varchar", "text": "text", "timestamp": "timestamp",
		"decimal": "numeric", "boolean": "boolean", "bytes": "bytea", "double": "double precision",
	},
	PrimaryKeyAfterLoad: true,
	TableExistsSQL:      "SELECT count(*) FROM pg_catalog.pg_tables WHERE tablename = ? AND schemaname = ANY (current_schemas(false))",
	AnalyzeSQL:          "ANALYZE %s",
	TableStorage:        true,
	VacuumSQL:           "VACUUM %s",
	TruncateSQL:         "TRUNCATE %s",
	TxnStatements:       true,
	Pipeline:            true,
}
