package mysql

import "github.com/fathom-lab/fathom/internal/target"

// SQLDialect is MySQL/MariaDB's SQL dialect: how workloads' portable tables and
// statements are written for it. It is the kind's bundle's Dialect (internal/db hands it to target).
var SQLDialect = &target.Dialect{
	Name:  "mysql",
	Title: "MySQL",
	Types: map[string]string{
		"int": "INTEGER", "integer": "INTEGER", "bigint": "BIGINT", "serial": "INTEGER NOT NULL AUTO_INCREMENT",
		"bigserial": "BIGINT NOT NULL AUTO_INCREMENT", "char": "CHAR", "varchar": "VARCHAR", "text": "TEXT",
		"timestamp": "DATETIME(6)", "decimal": "DECIMAL", "boolean": "BOOLEAN", "bytes": "LONGBLOB", "double": "DOUBLE",
	},
	TableOptions:        " ENGINE=InnoDB",
	PrimaryKeyAfterLoad: true,
	TableExistsSQL:      "SELECT count(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?",
	AnalyzeSQL:          "ANALYZE TABLE %s",
	InsertIDSQL:         "SELECT LAST_INSERT_ID()",
	TableEngine:         true,
	AutoIncKey:          true,
	TruncateSQL:         "TRUNCATE TABLE %s",
}
