package collect

import "time"

// keyMetrics are the few metrics shown first (fathom show, fathom watch) for each
// kind of server, then for the host: the ones the stall patterns read.
var keyMetrics = map[string][]string{
	"postgres": {"pg.xact_commit", "pg.xact_rollback", "pg.blks_read", "pg.tup_updated", "pg.wal_bytes", "pg.wal_fpi",
		"pg.checkpoints_req", "pg.checkpoints_timed", "pg.buffers_checkpoint", "pg.buffers_backend", "pg.wal_since_checkpoint_pct",
		"pg.sessions.active", "pg.waiting.lock", "pg.waiting.lwlock", "pg.waiting.io", "pg.lock_waits", "pg.autovacuum_workers", "pg.deadlocks", "pg.temp_bytes"},
	"mysql": {"mysql.Questions", "mysql.Com_commit", "mysql.Innodb_rows_read", "mysql.Innodb_rows_updated", "mysql.Innodb_rows_inserted",
		"mysql.Threads_running", "mysql.Innodb_buffer_pool_pages_dirty", "mysql.Innodb_buffer_pool_pages_flushed",
		"mysql.innodb.checkpoint_age_capacity_pct", "mysql.innodb.checkpoint_age_pct", "mysql.Innodb_log_waits",
		"mysql.Innodb_buffer_pool_wait_free", "mysql.Innodb_os_log_written", "mysql.Innodb_data_fsyncs",
		"mysql.innodb.history_list_length", "mysql.Innodb_row_lock_current_waits", "mysql.binlog.file_seq"},
	"os": {"os.cpu.user_pct", "os.cpu.system_pct", "os.cpu.iowait_pct", "os.procs_blocked", "os.mem.dirty_bytes", "os.mem.writeback_bytes",
		"os.vm.dirty_background_threshold_pct", "os.disk.writes", "os.disk.write_bytes", "os.disk.reads", "os.disk.await_ms",
		"os.disk.util_pct", "os.disk.flushes", "os.pressure.io_some_pct", "os.server.cpu_pct", "os.server.memory_bytes"},
}

// KeyMetrics lists the key metrics of a target kind followed by the host's.
func KeyMetrics(kind string) []string {
	return append(append([]string(nil), keyMetrics[kind]...), keyMetrics["os"]...)
}

// Timeout is the sampler's default per-collector timeout.
func (s *Sampler) Timeout() time.Duration { return s.opts.Timeout }
