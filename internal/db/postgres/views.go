package postgres

import "github.com/fathom-lab/fathom/internal/collect"

// DefaultCharts are the charts a report draws for a PostgreSQL run, in order: the server's
// throughput and the work stalls are made of.
func (Kind) DefaultCharts() []collect.Chart {
	return []collect.Chart{
		{Title: "Commits and rollbacks", Metrics: []string{PgXactCommit, PgXactRollback}},
		{Title: "Blocks read", Metrics: []string{PgBlksRead}},
		{Title: "Checkpoints", Metrics: []string{PgCheckpointsTimed, PgCheckpointsReq}},
		{Title: "Buffers written", Metrics: []string{PgBuffersCheckpoint, PgBuffersClean, PgBuffersBackend}},
		{Title: "WAL written", Metrics: []string{PgWALBytes}},
		{Title: "WAL since the last checkpoint (% of max_wal_size)", Metrics: []string{PgWALSinceCheckpointPct}},
		{Title: "Sessions by state", Metrics: []string{PrefixPgSessions + "*"}},
		{Title: "Sessions waiting, by wait class", Metrics: []string{PrefixPgWaiting + "*"}},
		{Title: "Lock waits", Metrics: []string{PgLockWaits, PgBlockedSessions}},
		{Title: "Autovacuum workers", Metrics: []string{PgAutovacuumWorkers}},
	}
}

// WatchColumns are the key figures of `fathom watch` for a PostgreSQL server.
func (Kind) WatchColumns() []collect.WatchColumn {
	return []collect.WatchColumn{
		{Head: "commit/s", Metrics: []string{PgXactCommit}, Unit: ""},
		{Head: "rollbk/s", Metrics: []string{PgXactRollback}, Unit: ""},
		{Head: "read/s", Metrics: []string{PgBlksRead}, Unit: ""},
		{Head: "wal/s", Metrics: []string{PgWALBytes}, Unit: "bytes"},
		{Head: "fpi/s", Metrics: []string{PgWALFPI}, Unit: ""},
		{Head: "ckpt", Metrics: []string{PgCheckpointsReq, PgCheckpointsTimed}, Unit: "events"},
		{Head: "ckbuf/s", Metrics: []string{PgBuffersCheckpoint}, Unit: ""},
		{Head: "active", Metrics: []string{PgSessionsActive}, Unit: ""},
		{Head: "lockw", Metrics: []string{PgWaitingLock}, Unit: ""},
		{Head: "autovac", Metrics: []string{PgAutovacuumWorkers}, Unit: ""},
	}
}
