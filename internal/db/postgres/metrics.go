package postgres

import (
	"strings"

	"github.com/fathom-lab/fathom/internal/collect"
)

// PostgreSQL's metrics, declared as data: what each of its collectors (collect.go)
// emits. Consumers (stall rules, charts, watch, check, snapshot) refer to them through
// these constants.

// Metric names other packages refer to. A test fails for a constant no collector
// declares.
const (
	PgAutovacuumWorkers       = "pg.autovacuum_workers"
	PgBlksRead                = "pg.blks_read"
	PgBlockedSessions         = "pg.blocked_sessions"
	PgBuffersBackend          = "pg.buffers_backend"
	PgBuffersCheckpoint       = "pg.buffers_checkpoint"
	PgBuffersClean            = "pg.buffers_clean"
	PgCheckpointAgeSeconds    = "pg.checkpoint_age_seconds"
	PgCheckpointSyncTime      = "pg.checkpoint_sync_time"
	PgCheckpointWriteTime     = "pg.checkpoint_write_time"
	PgCheckpointerBusy        = "pg.checkpointer_busy"
	PgCheckpointsReq          = "pg.checkpoints_req"
	PgCheckpointsTimed        = "pg.checkpoints_timed"
	PgDeadlocks               = "pg.deadlocks"
	PgLockWaits               = "pg.lock_waits"
	PgLockWaitsAdvisory       = "pg.lock_waits.advisory"
	PgLockWaitsObject         = "pg.lock_waits.object"
	PgLockWaitsRelation       = "pg.lock_waits.relation"
	PgLockWaitsTransactionid  = "pg.lock_waits.transactionid"
	PgLockWaitsTuple          = "pg.lock_waits.tuple"
	PgMaxWALSizeBytes         = "pg.max_wal_size_bytes"
	PgSessionsActive          = "pg.sessions.active"
	PgTempBytes               = "pg.temp_bytes"
	PgTupUpdated              = "pg.tup_updated"
	PgWaitEventIOWalsync      = "pg.wait_event.io.walsync"
	PgWaitEventIOWalwrite     = "pg.wait_event.io.walwrite"
	PgWaitEventLWLockWalwrite = "pg.wait_event.lwlock.walwrite"
	PgWaitingIO               = "pg.waiting.io"
	PgWaitingLock             = "pg.waiting.lock"
	PgWaitingLWLock           = "pg.waiting.lwlock"
	PgWALBuffersFull          = "pg.wal_buffers_full"
	PgWALBytes                = "pg.wal_bytes"
	PgWALFPI                  = "pg.wal_fpi"
	PgWALSinceCheckpointPct   = "pg.wal_since_checkpoint_pct"
	PgWALSyncTime             = "pg.wal_sync_time"
	PgWALWriteTime            = "pg.wal_write_time"
	PgXactCommit              = "pg.xact_commit"
	PgXactRollback            = "pg.xact_rollback"
	PrefixPgSessions          = "pg.sessions."
	PrefixPgWaiting           = "pg.waiting."
	FamilyPgWaitEvent         = "pg.wait_event."
	FamilyPgLockWaits         = "pg.lock_waits."
)

var checkpointDescs = []collect.Desc{
	collect.Counter(PgCheckpointsTimed, "checkpoints", "checkpoints started by checkpoint_timeout"),
	collect.Counter(PgCheckpointsReq, "checkpoints", "checkpoints requested (WAL reached max_wal_size, CHECKPOINT, shutdown)"),
	collect.Counter(PgCheckpointWriteTime, "ms", "time checkpoints spent writing buffers"),
	collect.Counter(PgCheckpointSyncTime, "ms", "time checkpoints spent syncing files"),
	collect.Counter(PgBuffersCheckpoint, "buffers", "buffers written by checkpoints"),
}

// declared lists, per collector, the metrics it emits.
var declared = map[string][]collect.Desc{
	"pg_stat_database": {
		collect.Counter(PgXactCommit, "transactions", "transactions committed, all databases"),
		collect.Counter(PgXactRollback, "transactions", "transactions rolled back, all databases"),
		collect.Counter(PgBlksRead, "blocks", "blocks read from outside shared_buffers"),
		collect.Counter("pg.blks_hit", "blocks", "blocks found in shared_buffers"),
		collect.Counter("pg.tup_returned", "rows", "rows returned by scans"),
		collect.Counter("pg.tup_fetched", "rows", "rows fetched by index scans"),
		collect.Counter("pg.tup_inserted", "rows", "rows inserted"),
		collect.Counter(PgTupUpdated, "rows", "rows updated"),
		collect.Counter("pg.tup_deleted", "rows", "rows deleted"),
		collect.Counter("pg.conflicts", "queries", "queries cancelled by recovery conflicts"),
		collect.Counter("pg.temp_files", "files", "temporary files created"),
		collect.Counter(PgTempBytes, "bytes", "bytes written to temporary files"),
		collect.Counter(PgDeadlocks, "deadlocks", "deadlocks detected"),
		collect.Counter("pg.blk_read_time", "ms", "time reading blocks (track_io_timing)"),
		collect.Counter("pg.blk_write_time", "ms", "time writing blocks (track_io_timing)"),
		collect.Gauge("pg.backends", "sessions", "sessions connected"),
		collect.Counter("pg.session_time", "ms", "time spent in sessions (14+)"),
		collect.Counter("pg.active_time", "ms", "time spent running statements (14+)"),
		collect.Counter("pg.idle_in_transaction_time", "ms", "time spent idle in a transaction (14+)"),
		collect.Counter("pg.sessions_opened", "sessions", "sessions opened (14+)"),
	},
	"pg_stat_bgwriter": append([]collect.Desc{
		collect.Counter(PgBuffersClean, "buffers", "buffers written by the background writer"),
		collect.Counter("pg.maxwritten_clean", "times", "background writer stopped at bgwriter_lru_maxpages"),
		collect.Counter("pg.buffers_alloc", "buffers", "buffers allocated"),
		collect.Counter(PgBuffersBackend, "buffers", "buffers written by backends themselves (before 17)"),
		collect.Counter("pg.buffers_backend_fsync", "fsyncs", "fsyncs backends had to do themselves (before 17)"),
	}, checkpointDescs...),
	"pg_stat_checkpointer": checkpointDescs,
	"pg_stat_wal": {
		collect.Counter("pg.wal_records", "records", "WAL records generated"),
		collect.Counter(PgWALFPI, "pages", "full-page images written to WAL"),
		collect.Counter(PgWALBuffersFull, "times", "WAL written because wal_buffers was full"),
		collect.Counter("pg.wal_write", "writes", "WAL writes (before 18)"),
		collect.Counter("pg.wal_sync", "syncs", "WAL syncs (before 18)"),
		collect.Counter(PgWALWriteTime, "ms", "time writing WAL (track_wal_io_timing, before 18)"),
		collect.Counter(PgWALSyncTime, "ms", "time syncing WAL (track_wal_io_timing, before 18)"),
	},
	"pg_wal": {
		collect.Counter(PgWALBytes, "bytes", "WAL position: its rate is WAL bytes written per second"),
		collect.Gauge(PgMaxWALSizeBytes, "bytes", "max_wal_size"),
		collect.Gauge(PgCheckpointerBusy, "bool", "1 while the checkpointer is doing a checkpoint"),
		collect.Gauge("pg.wal_since_checkpoint_bytes", "bytes", "WAL written since the last checkpoint's redo point"),
		collect.Gauge(PgCheckpointAgeSeconds, "seconds", "time since the last checkpoint"),
		collect.Gauge(PgWALSinceCheckpointPct, "%", "WAL since the last checkpoint's redo point as a share of max_wal_size"),
	},
	"pg_stat_activity": append(append(pgStateDescs(), pgWaitDescs()...),
		collect.Gauge("pg.sessions.running", "sessions", "active sessions not waiting"),
		collect.Family(FamilyPgWaitEvent, "sessions", "active sessions by wait event (type.event)"),
		collect.Gauge(PgAutovacuumWorkers, "workers", "autovacuum workers running"),
		collect.Gauge("pg.walsenders", "processes", "WAL senders"),
		collect.Gauge("pg.oldest_xact_seconds", "seconds", "age of the oldest open transaction"),
		collect.Gauge("pg.longest_query_seconds", "seconds", "run time of the longest running statement"),
	),
	"pg_locks": {
		collect.Gauge(PgLockWaits, "locks", "lock requests not granted"),
		collect.Family(FamilyPgLockWaits, "locks", "lock requests not granted, by lock type"),
		collect.Gauge(PgBlockedSessions, "sessions", "sessions waiting for a lock"),
	},
	"pg_stat_progress_vacuum": {
		collect.Gauge("pg.vacuums", "vacuums", "vacuums in progress"),
		collect.Gauge("pg.vacuum_heap_blocks_left", "blocks", "heap blocks the running vacuums have left to scan"),
	},
}

func pgStateDescs() []collect.Desc {
	var out []collect.Desc
	for _, st := range PgStates {
		out = append(out, collect.Gauge(PrefixPgSessions+collect.MetricPart(st), "sessions", "client sessions "+st))
	}
	return out
}

func pgWaitDescs() []collect.Desc {
	var out []collect.Desc
	for _, w := range PgWaitTypes {
		out = append(out, collect.Gauge(PrefixPgWaiting+strings.ToLower(w), "sessions", "active sessions waiting on "+w))
	}
	return out
}

// PgStates are the session states pg_stat_activity reports (pg.sessions.<state>).
var PgStates = []string{"active", "idle", "idle in transaction", "idle in transaction (aborted)", "fastpath function call", "disabled"}

// PgWaitTypes are the wait event types (pg.waiting.<type>).
var PgWaitTypes = []string{"Activity", "BufferPin", "Client", "Extension", "IO", "IPC", "Lock", "LWLock", "Timeout", "InjectionPoint"}
