package check

import (
	"context"

	"github.com/fathom-lab/fathom/internal/target"
)

// Dialect is all that check knows of one kind of server: how to read its sample and
// what differs between kinds in the modes, the heartbeat and the words. A kind's
// bundle in internal/db hands one out (db.CheckOf); check itself never asks which
// kind a target is. Each kind's is in its directory (internal/db/KIND/check.go).
type Dialect struct {
	Fetch       Source // reads a sample
	DefaultPort string // for state and cache file names (ServerKey)
	// Connections is the connections mode's expression, Used the variable it shows
	// as the connections in use.
	Connections, Used string
	Max               string // the limit Connections divides by (default max_connections)
	StatsReset        string // what resets the statistics, as the user would type it
	// AuthHint replaces the hint after a refused login ("" for the usual one: user and
	// password from the DSN, ~/.my.cnf, .pgpass or PG* variables).
	AuthHint string
	// Replication runs the replication-lag and seconds-behind-master modes (nil:
	// refused): the kind's reader, in its directory (internal/db/KIND).
	Replication Replication
	// HeartbeatDDL creates the heartbeat table (nil: no heartbeat); ServerID reads
	// the server's own id.
	HeartbeatDDL func(table string) string
	ServerID     string
	// HeartbeatAge reads, on a replica, the age of the primary's heartbeat row in
	// seconds (one parameter: the primary's server id).
	HeartbeatAge func(table string) string
	// Beat writes the heartbeat row.
	Beat func(ctx context.Context, conn target.Conn, table string, id, ms target.Value, host target.Value) error
}
