package postgres

import "github.com/fathom-lab/fathom/internal/collect"

// DefaultCharts are the charts a report draws for a PostgreSQL run, in order: the server's
// throughput and the work stalls are made of.
func (Kind) DefaultCharts() []collect.Chart {
	return []collect.Chart{
		{Title: "Commits and rollbacks", Metrics: []string{pgXactCommit, pgXactRollback}},
		{Title: "Blocks read", Metrics: []string{pgBlksRead}},
		{Title: "Checkpoints", Metrics: []string{pgCheckpointsTimed, pgCheckpointsReq}},
		{Title: "Buffers written", Metrics: []string{pgBuffersCheckpoint, pgBuffersClean, pgBuffersBackend}},
		{Title: "WAL written", Metrics: []string{pgWALBytes}},
		{Title: "WAL since the last checkpoint (% of max_wal_size)", Metrics: []string{pgWALSinceCheckpointPct}},
		{Title: "Sessions by state", Metrics: []string{prefixPgSessions + "*"}},
		{Title: "Sessions waiting, by wait class", Metrics: []string{prefixPgWaiting + "*"}},
		{Title: "Lock waits", Metrics: []string{pgLockWaits, pgBlockedSessions}},
		{Title: "Autovacuum workers", Metrics: []string{pgAutovacuumWorkers}},
	}
}

// WatchColumns are the key figures of `fathom watch` for a PostgreSQL server.
func (Kind) WatchColumns() []collect.WatchColumn {
	return []collect.WatchColumn{
		{Head: "commit/s", Metrics: []string{pgXactCommit}, Unit: ""},
		{Head: "rollbk/s", Metrics: []string{pgXactRollback}, Unit: ""},
		{Head: "read/s", Metrics: []string{pgBlksRead}, Unit: ""},
		{Head: "wal/s", Metrics: []string{pgWALBytes}, Unit: "bytes"},
		{Head: "fpi/s", Metrics: []string{pgWALFPI}, Unit: ""},
		{Head: "ckpt", Metrics: []string{pgCheckpointsReq, pgCheckpointsTimed}, Unit: "events"},
		{Head: "ckbuf/s", Metrics: []string{pgBuffersCheckpoint}, Unit: ""},
		{Head: "active", Metrics: []string{pgSessionsActive}, Unit: ""},
		{Head: "lockw", Metrics: []string{pgWaitingLock}, Unit: ""},
		{Head: "autovac", Metrics: []string{pgAutovacuumWorkers}, Unit: ""},
	}
}
