// Package postgres is the PostgreSQL kind's bundle: targets (target/), the
// server collectors, the check source, connection capacity and throwaway instances.
package postgres

import (
	"strings"

	"github.com/fathom-lab/fathom/internal/check"
	"github.com/fathom-lab/fathom/internal/collect"
	pginstance "github.com/fathom-lab/fathom/internal/db/postgres/instance"
	pg "github.com/fathom-lab/fathom/internal/db/postgres/target"
	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/target"
)

// Kind is the PostgreSQL bundle.
type Kind struct{}

func (Kind) Name() string             { return "postgres" }
func (Kind) Title() string            { return "PostgreSQL" }
func (Kind) Schemes() []string        { return []string{"postgres://", "postgresql://"} }
func (Kind) Dialect() *target.Dialect { return pg.SQLDialect }
func (Kind) DSNExample() string       { return "postgres://user@host/db (or libpq's host=… dbname=…)" }
func (Kind) MatchDSN(dsn string) bool { return isKeyValue(dsn) }

// InstanceDriver is the driver of the kind's throwaway servers (instance/).
func (Kind) InstanceDriver() instance.Driver { return pginstance.Driver{} }

// Open opens a PostgreSQL target (a URL or a libpq key=value string).
func (Kind) Open(dsn string, cfg target.Config) (target.Target, error) { return pg.Open(dsn, cfg) }

// Collect is the server side for collect: collectors, discovery, snapshot sections.
func (Kind) Collect() collect.Database { return collectSide{} }

// CheckDialect is how check reads and talks to PostgreSQL.
func (Kind) CheckDialect() *check.Dialect {
	return checkDialect
}

// isKeyValue reports whether s looks like a libpq key=value connection string.
func isKeyValue(s string) bool {
	if !strings.Contains(s, "=") || strings.Contains(s, "://") {
		return false
	}
	key, _, _ := strings.Cut(s, "=")
	switch strings.TrimSpace(strings.ToLower(key)) {
	case "host", "hostaddr", "port", "dbname", "user", "password", "passfile", "service",
		"sslmode", "application_name", "connect_timeout", "options":
		return true
	}
	return false
}
