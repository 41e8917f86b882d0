package collect

import (
	"context"

	"github.com/prometheus/procfs"

	"github.com/fathom-lab/fathom/internal/sample"
	"github.com/fathom-lab/fathom/internal/target"
)

// Database is what collect needs to know about a database kind: its server collectors, how
// to learn about its server, and its sections of a review snapshot. Each kind's bundle
// in internal/db hands its Database to the sampler and the snapshot; collect itself never
// branches on a kind's name. Each kind's is in its directory (internal/db/KIND).
type Database interface {
	// Name is the target kind ("postgres"): the source of its collectors' results.
	Name() string
	// Title names the server for people ("PostgreSQL").
	Title() string
	// Collectors returns fresh instances of the kind's server collectors.
	Collectors() []Collector
	// Discover fills in what the server says about itself over conn: flavor, version,
	// data directory, governing settings, its process. conn is nil when the server
	// cannot be reached or the kind has no server; dsn is the target's (a file's
	// location); haveProc says fs can be read.
	Discover(ctx context.Context, s *sample.Server, conn target.Conn, dsn string, fs procfs.FS, haveProc bool)
	// Snapshot adds the kind's sources to a review snapshot.
	Snapshot(sn *Snap)
}

// Embedded is a Database whose database is a file opened in this process: the sampler and
// the snapshot open no connection of their own to learn about it.
type Embedded interface {
	Embedded() bool
}

// SessionSetup is a Database that prepares the sampler's own connection (naming the
// session, keeping the planner quick).
type SessionSetup interface {
	SessionSetup() string
}

// FlavorTitle is a Database whose flavors have their own names (MariaDB, MySQL), for
// messages about versions.
type FlavorTitle interface {
	FlavorTitle(flavor string) string
}

func embedded(k Database) bool {
	e, ok := k.(Embedded)
	return ok && e.Embedded()
}

// kindName is k's name, or "" for none.
func kindName(k Database) string {
	if k == nil {
		return ""
	}
	return k.Name()
}

// Fresh makes one collector with each constructor.
func Fresh(mks ...func() Collector) []Collector {
	out := make([]Collector, len(mks))
	for i, mk := range mks {
		out[i] = mk()
	}
	return out
}
