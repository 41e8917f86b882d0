package postgres

import (
	"strings"

	"github.com/fathom-lab/fathom/internal/collect"
)

// PostgreSQL's metrics, declared as data: what each of its collectors (collect.go)
// emits. Consumers (stall rules, charts, watch, check, snapshot) refer to them through
// these constants.

// Metric names the code of this package refers to (no other package does). A test
// fails for a constant no collector declares.
const (
	pgAutovacuumWorkers       = "pg.autovacuum_workers"
	pgBlksRead                = "pg.blks_read"
	pgBlockedSessions         = "pg.blocked_sessions"
	pgBuffersBackend          = "pg.buffers_backend"
	pgBuffersCheckpoint       = "pg.buffers_checkpoint"
	pgBuffersClean            = "pg.buffers_clean"
	pgCheckpointAgeSeconds    = "pg.checkpoint_age_seconds"
	pgCheckpointSyncTime      = "pg.checkpoint_sync_time"
	pgCheckpointWriteTime     = "pg.checkpoint_write_time"
	pgCheckpointerBusy        = "pg.checkpointer_busy"
	pgCheckpointsReq          = "pg.checkpoints_req"
	pgCheckpointsTimed        = "pg.checkpoints_timed"
	pgDeadlocks               = "pg.deadlocks"
	pgLockWaits               = "pg.lock_waits"
	pgLockWaitsAdvisory       = "pg.lock_waits.advisory"
	pgLockWaitsObject         = "pg.lock_waits.object"
	pgLockWaitsRelation       = "pg.lock_waits.relation"
	pgLockWaitsTransactionid  = "pg.lock_waits.transactionid"
	pgLockWaitsTuple          = "pg.lock_waits.tuple"
	pgMaxWALSizeBytes         = "pg.max_wal_size_bytes"
	pgSessionsActive          = "pg.sessions.active"
	pgTempBytes               = "pg.temp_bytes"
	pgTupUpdated              = "pg.tup_updated"
	pgWaitEventIOWalsync      = "pg.wait_event.io.walsync"
	pgWaitEventIOWalwrite     = "pg.wait_event.io.walwrite"
	pgWaitEventLWLockWalwrite = "pg.wait_event.lwlock.walwrite"
	pgWaitingIO               = "pg.waiting.io"
	pgWaitingLock             = "pg.waiting.lock"
	pgWaitingLWLock           = "pg.waiting.lwlock"
	pgWALBuffersFull          = "pg.wal_buffers_full"
	pgWALBytes                = "pg.wal_bytes"
	pgWALFPI                  = "pg.wal_fpi"
	pgWALSinceCheckpointPct   = "pg.wal_since_checkpoint_pct"
	pgWALSyncTime             = "pg.wal_sync_time"
	pgWALWriteTime            = "pg.wal_write_time"
	pgXactCommit              = "pg.xact_commit"
	pgXactRollback            = "pg.xact_rollback"
	prefixPgSessions          = "pg.sessions."
	prefixPgWaiting           = "pg.waiting."
	familyPgWaitEvent         = "pg.wait_event."
	familyPgLockWaits         = "pg.lock_waits."
)

var checkpointDescs = []collect.Desc{
	collect.Counter(pgCheckpointsTimed, "checkpoints", "checkpoints started by checkpoint_timeout"),
	collect.Counter(pgCheckpointsReq, "checkpoints", "checkpoints requested (WAL reached max_wal_size, CHECKPOINT, shutdown)"),
	collect.Counter(pgCheckpointWriteTime, "ms", "time checkpoints spent writing buffers"),
	collect.Counter(pgCheckpointSyncTime, "ms", "time checkpoints spent syncing files"),
	collect.Counter(pgBuffersCheckpoint, "buffers", "buffers written by checkpoints"),
}

// declared lists, per collector, the metrics it emits.
var declared = map[string][]collect.Desc{
	"pg_stat_database": {
		collect.Counter(pgXactCommit, "transactions", "transactions committed, all databases"),
		collect.Counter(pgXactRollback, "transactions", "transactions rolled back, all databases"),
		collect.Counter(pgBlksRead, "blocks", "blocks read from outside shared_buffers"),
		collect.Counter("pg.blks_hit", "blocks", "blocks found in shared_buffers"),
		collect.Counter("pg.tup_returned", "rows", "rows returned by scans"),
		collect.Counter("pg.tup_fetched", "rows", "rows fetched by index scans"),
		collect.Counter("pg.tup_inserted", "rows", "rows inserted"),
		collect.Counter(pgTupUpdated, "rows", "rows updated"),
		collect.Counter("pg.tup_deleted", "rows", "rows deleted"),
		collect.Counter("pg.conflicts", "queries", "queries cancelled by recovery conflicts"),
		collect.Counter("pg.temp_files", "files", "temporary files created"),
		collect.Counter(pgTempBytes, "bytes", "bytes written to temporary files"),
		collect.Counter(pgDeadlocks, "deadlocks", "deadlocks detected"),
		collect.Counter("pg.blk_read_time", "ms", "time reading blocks (track_io_timing)"),
		collect.Counter("pg.blk_write_time", "ms", "time writing blocks (track_io_timing)"),
		collect.Gauge("pg.backends", "sessions", "sessions connected"),
		collect.Counter("pg.session_time", "ms", "time spent in sessions (14+)"),
		collect.Counter("pg.active_time", "ms", "time spent running statements (14+)"),
		collect.Counter("pg.idle_in_transaction_time", "ms", "time spent idle in a transaction (14+)"),
		collect.Counter("pg.sessions_opened", "sessions", "sessions opened (14+)"),
	},
	"pg_stat_bgwriter": append([]collect.Desc{
		collect.Counter(pgBuffersClean, "buffers", "buffers written by the background writer"),
		collect.Counter("pg.maxwritten_clean", "times", "background writer stopped at bgwriter_lru_maxpages"),
		collect.Counter("pg.buffers_alloc", "buffers", "buffers allocated"),
		collect.Counter(pgBuffersBackend, "buffers", "buffers written by backends themselves (before 17)"),
		collect.Counter("pg.buffers_backend_fsync", "fsyncs", "fsyncs backends had to do themselves (before 17)"),
	}, checkpointDescs...),
	"pg_stat_checkpointer": checkpointDescs,
	"pg_stat_wal": {
		collect.Counter("pg.wal_records", "records", "WAL records generated"),
		collect.Counter(pgWALFPI, "pages", "full-page images written to WAL"),
		collect.Counter(pgWALBuffersFull, "times", "WAL written because wal_buffers was full"),
		collect.Counter("pg.wal_write", "writes", "WAL writes (before 18)"),
		collect.Counter("pg.wal_sync", "syncs", "WAL syncs (before 18)"),
		collect.Counter(pgWALWriteTime, "ms", "time writing WAL (track_wal_io_timing, before 18)"),
		collect.Counter(pgWALSyncTime, "ms", "time syncing WAL (track_wal_io_timing, before 18)"),
	},
	"pg_wal": {
		collect.Counter(pgWALBytes, "bytes", "WAL position: its rate is WAL bytes written per second"),
		collect.Gauge(pgMaxWALSizeBytes, "bytes", "max_wal_size"),
		collect.Gauge(pgCheckpointerBusy, "bool", "1 while the checkpointer is doing a checkpoint"),
		collect.Gauge("pg.wal_since_checkpoint_bytes", "bytes", "WAL written since the last checkpoint's redo point"),
		collect.Gauge(pgCheckpointAgeSeconds, "seconds", "time since the last checkpoint"),
		collect.Gauge(pgWALSinceCheckpointPct, "%", "WAL since the last checkpoint's redo point as a share of max_wal_size"),
	},
	"pg_stat_activity": append(append(pgStateDescs(), pgWaitDescs()...),
		collect.Gauge("pg.sessions.running", "sessions", "active sessions not waiting"),
		collect.Family(familyPgWaitEvent, "sessions", "active sessions by wait event (type.event)"),
		collect.Gauge(pgAutovacuumWorkers, "workers", "autovacuum workers running"),
		collect.Gauge("pg.walsenders", "processes", "WAL senders"),
		collect.Gauge("pg.oldest_xact_seconds", "seconds", "age of the oldest open transaction"),
		collect.Gauge("pg.longest_query_seconds", "seconds", "run time of the longest running statement"),
	),
	"pg_locks": {
		collect.Gauge(pgLockWaits, "locks", "lock requests not granted"),
		collect.Family(familyPgLockWaits, "locks", "lock requests not granted, by lock type"),
		collect.Gauge(pgBlockedSessions, "sessions", "sessions waiting for a lock"),
	},
	"pg_stat_progress_vacuum": {
		collect.Gauge("pg.vacuums", "vacuums", "vacuums in progress"),
		collect.Gauge("pg.vacuum_heap_blocks_left", "blocks", "heap blocks the running vacuums have left to scan"),
	},
}

func pgStateDescs() []collect.Desc {
	var out []collect.Desc
	for _, st := range pgStates {
		out = append(out, collect.Gauge(prefixPgSessions+collect.MetricPart(st), "sessions", "client sessions "+st))
	}
	return out
}

func pgWaitDescs() []collect.Desc {
	var out []collect.Desc
	for _, w := range pgWaitTypes {
		out = append(out, collect.Gauge(prefixPgWaiting+strings.ToLower(w), "sessions", "active sessions waiting on "+w))
	}
	return out
}

// pgStates are the session states pg_stat_activity reports (pg.sessions.<state>).
var pgStates = []string{"active", "idle", "idle in transaction", "idle in transaction (aborted)", "fastpath function call", "disabled"}

// pgWaitTypes are the wait event types (pg.waiting.<type>).
var pgWaitTypes = []string{"Activity", "BufferPin", "Client", "Extension", "IO", "IPC", "Lock", "LWLock", "Timeout", "InjectionPoint"}
