package db

import (
	"github.com/fathom-lab/fathom/internal/db/mysql"
	"github.com/fathom-lab/fathom/internal/db/postgres"
	"github.com/fathom-lab/fathom/internal/db/redis"
	"github.com/fathom-lab/fathom/internal/db/sqlite"
)

// registry is every database kind fathom knows, by name: one line per kind. A name
// must be its bundle's Name() (TestRegistry).
var registry = map[string]Kind{
	"postgres": postgres.Kind{},
	"mysql":    mysql.Kind{},
	"sqlite":   sqlite.Kind{},
	"redis":    redis.Kind{},
}
