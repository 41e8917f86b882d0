// Package mysql is the MySQL/MariaDB kind's bundle: targets (target/), the server
// collectors, the check source, connection capacity and throwaway MariaDB instances.
package mysql

import (
	"github.com/fathom-lab/fathom/internal/check"
	"github.com/fathom-lab/fathom/internal/collect"
	myinstance "github.com/fathom-lab/fathom/internal/db/mysql/instance"
	my "github.com/fathom-lab/fathom/internal/db/mysql/target"
	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/target"
)

// Kind is the MySQL/MariaDB bundle.
type Kind struct{}

func (Kind) Name() string             { return "mysql" }
func (Kind) Title() string            { return "MySQL/MariaDB" }
func (Kind) Schemes() []string        { return []string{"mysql://", "mariadb://"} }
func (Kind) Dialect() *target.Dialect { return my.SQLDialect }
func (Kind) DSNExample() string       { return "mysql://user@host/db" }

// OptionFileParam is the DSN parameter that names a client option file to read.
func (Kind) OptionFileParam() string { return "defaults-file" }

// InstanceDriver is the driver of the kind's throwaway servers (instance/).
func (Kind) InstanceDriver() instance.Driver { return myinstance.Driver{} }

// Open opens a MySQL/MariaDB target.
func (Kind) Open(dsn string, cfg target.Config) (target.Target, error) { return my.Open(dsn, cfg) }

// Collect is the server side for collect: collectors, discovery, snapshot sections.
func (Kind) Collect() collect.Database { return collectSide{} }

// CheckDialect is how check reads and talks to MySQL and MariaDB.
func (Kind) CheckDialect() *check.Dialect {
	return checkDialect
}
