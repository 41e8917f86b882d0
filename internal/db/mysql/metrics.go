package mysql

import (
	"strings"

	"github.com/fathom-lab/fathom/internal/collect"
	"github.com/fathom-lab/fathom/internal/sample"
)

// MySQL's and MariaDB's metrics, declared as data: what each of its collectors
// (collect.go) emits. Consumers (stall rules, charts, watch, check, snapshot) refer to
// them through these constants.

// Metric names the code of this package refers to (no other package does). A test
// fails for a constant no collector declares.
const (
	mySQLBinlogFileSeq                  = "mysql.binlog.file_seq"
	mySQLComCommit                      = "mysql.Com_commit"
	mySQLInnoDBBufferPoolPagesDirty     = "mysql.Innodb_buffer_pool_pages_dirty"
	mySQLInnoDBBufferPoolPagesFlushed   = "mysql.Innodb_buffer_pool_pages_flushed"
	mySQLInnoDBBufferPoolPagesTotal     = "mysql.Innodb_buffer_pool_pages_total"
	mySQLInnoDBBufferPoolWaitFree       = "mysql.Innodb_buffer_pool_wait_free"
	mySQLInnoDBCheckpointAgeCapacityPct = "mysql.innodb.checkpoint_age_capacity_pct"
	mySQLInnoDBCheckpointAgePct         = "mysql.innodb.checkpoint_age_pct"
	mySQLInnoDBCheckpointMaxAge         = "mysql.Innodb_checkpoint_max_age"
	mySQLInnoDBDataFsyncs               = "mysql.Innodb_data_fsyncs"
	mySQLInnoDBDataPendingFsyncs        = "mysql.Innodb_data_pending_fsyncs"
	mySQLInnoDBHistoryListLength        = "mysql.innodb.history_list_length"
	mySQLInnoDBLogWaits                 = "mysql.Innodb_log_waits"
	mySQLInnoDBOsLogWritten             = "mysql.Innodb_os_log_written"
	mySQLInnoDBPageSize                 = "mysql.Innodb_page_size"
	mySQLInnoDBRedoCapacityBytes        = "mysql.innodb.redo_capacity_bytes"
	mySQLInnoDBRowLockCurrentWaits      = "mysql.Innodb_row_lock_current_waits"
	mySQLInnoDBRowLockTime              = "mysql.Innodb_row_lock_time"
	mySQLInnoDBRowsDeleted              = "mysql.Innodb_rows_deleted"
	mySQLInnoDBRowsInserted             = "mysql.Innodb_rows_inserted"
	mySQLInnoDBRowsRead                 = "mysql.Innodb_rows_read"
	mySQLInnoDBRowsUpdated              = "mysql.Innodb_rows_updated"
	mySQLInnoDBTransactionsInLockWait   = "mysql.innodb.transactions_in_lock_wait"
	mySQLQueries                        = "mysql.Queries"
	mySQLQuestions                      = "mysql.Questions"
	mySQLThreadsRunning                 = "mysql.Threads_running"
	mySQLThreadsWaitingForLock          = "mysql.threads.waiting_for_lock"
	mySQLUptime                         = "mysql.Uptime"
	familyMySQLStatus                   = "mysql."
	familyMySQLThreadState              = "mysql.threads.state."
	familyMySQLThreadCommand            = "mysql.threads.command."
)

// declared lists, per collector, the metrics it emits.
var declared = map[string][]collect.Desc{
	"mysql_global_status": append(mysqlStatusDescs(),
		collect.Desc{Name: familyMySQLStatus, Help: "SHOW GLOBAL STATUS variables under the server's names: levels are gauges, the rest counters",
			Family: true, Member: mysqlStatusMember},
		collect.Gauge(mySQLInnoDBCheckpointAgePct, "%", "checkpoint age as a share of its limit (MariaDB's Innodb_checkpoint_age / Innodb_checkpoint_max_age)"),
	),
	"mysql_innodb_status": {
		collect.Counter("mysql.innodb.lsn", "bytes", "redo log sequence number: its rate is redo bytes per second"),
		collect.Gauge("mysql.innodb.checkpoint_age_bytes", "bytes", "redo written since the last checkpoint"),
		collect.Gauge(mySQLInnoDBRedoCapacityBytes, "bytes", "redo log capacity"),
		collect.Gauge(mySQLInnoDBCheckpointAgeCapacityPct, "%", "checkpoint age as a share of the redo log capacity"),
		collect.Gauge("mysql.innodb.log_unflushed_bytes", "bytes", "redo written but not yet flushed"),
		collect.Gauge(mySQLInnoDBHistoryListLength, "undo logs", "history list length (undo not yet purged)"),
		collect.Gauge("mysql.innodb.pending_log_flushes", "flushes", "pending redo log fsyncs (MySQL)"),
		collect.Gauge("mysql.innodb.pending_pool_flushes", "flushes", "pending buffer pool fsyncs (MySQL)"),
		collect.Gauge("mysql.innodb.pending_fsyncs", "flushes", "pending fsyncs"),
		collect.Gauge("mysql.innodb.pending_writes_lru", "pages", "pending LRU page writes"),
		collect.Gauge("mysql.innodb.pending_writes_flush_list", "pages", "pending flush list page writes"),
		collect.Gauge("mysql.innodb.modified_pages", "pages", "modified pages in the buffer pool"),
		collect.Gauge(mySQLInnoDBTransactionsInLockWait, "transactions", "transactions in LOCK WAIT"),
	},
	"mysql_binlog": {
		collect.Gauge("mysql.binlog.enabled", "bool", "1 when the binary log is on"),
		collect.Counter(mySQLBinlogFileSeq, "files", "binary log file number: each step is a rotation"),
		collect.Gauge("mysql.binlog.position", "bytes", "position in the current binary log file"),
	},
	"mysql_processlist": {
		collect.Family(familyMySQLThreadState, "threads", "active threads by state"),
		collect.Family(familyMySQLThreadCommand, "threads", "threads by command"),
		collect.Gauge("mysql.threads.active", "threads", "threads doing something (not Sleep, Daemon, replication)"),
		collect.Gauge(mySQLThreadsWaitingForLock, "threads", "threads in a lock-wait state"),
		collect.Gauge("mysql.longest_query_seconds", "seconds", "run time of the longest running statement"),
	},
}

// mysqlStatusNamed are the status variables declared one by one (the ones fathom's
// charts, rules and watch read); the rest are members of the status family.
var mysqlStatusNamed = []struct{ name, help string }{
	{mySQLQuestions, "statements sent by clients"},
	{mySQLQueries, "statements run, including those inside stored programs"},
	{mySQLComCommit, "COMMIT statements"},
	{mySQLThreadsRunning, "threads running a statement"},
	{mySQLUptime, "seconds since the server started"},
	{mySQLInnoDBBufferPoolPagesDirty, "dirty pages in the buffer pool"},
	{mySQLInnoDBBufferPoolPagesFlushed, "buffer pool pages flushed"},
	{mySQLInnoDBBufferPoolPagesTotal, "buffer pool size in pages"},
	{mySQLInnoDBBufferPoolWaitFree, "waits for a free page (flushing could not keep up)"},
	{mySQLInnoDBCheckpointMaxAge, "checkpoint age limit (MariaDB)"},
	{mySQLInnoDBDataFsyncs, "fsyncs"},
	{mySQLInnoDBDataPendingFsyncs, "pending fsyncs"},
	{mySQLInnoDBLogWaits, "waits for the redo log buffer"},
	{mySQLInnoDBOsLogWritten, "bytes written to the redo log"},
	{mySQLInnoDBPageSize, "page size"},
	{mySQLInnoDBRowLockCurrentWaits, "row lock waits in progress"},
	{mySQLInnoDBRowLockTime, "time spent waiting for row locks"},
	{mySQLInnoDBRowsDeleted, "rows deleted"},
	{mySQLInnoDBRowsInserted, "rows inserted"},
	{mySQLInnoDBRowsRead, "rows read"},
	{mySQLInnoDBRowsUpdated, "rows updated"},
}

// mysqlStatusDescs declares the named status variables with the kind and unit the
// collector gives them (mysqlKind, mysqlUnit); TestMySQLNamedStatus checks them
// against literals so that a change of either shows.
func mysqlStatusDescs() []collect.Desc {
	var out []collect.Desc
	for _, v := range mysqlStatusNamed {
		d, _ := mysqlStatusMember(v.name)
		d.Help = v.help
		out = append(out, d)
	}
	return out
}

// mysqlStatusMember classifies a status variable: their names have no dot, while
// fathom's own MySQL metrics are grouped (mysql.innodb.*, mysql.binlog.*, …) or
// declared one by one, so a misspelt one of those is not taken for a variable.
func mysqlStatusMember(name string) (collect.Desc, bool) {
	v, ok := strings.CutPrefix(name, familyMySQLStatus)
	if !ok || v == "" || strings.Contains(v, ".") {
		return collect.Desc{}, false
	}
	return collect.Desc{Name: name, Kind: mySQLStatusKind(v), Unit: mySQLStatusUnit(v), Help: "SHOW GLOBAL STATUS " + v}, true
}

// MySQL's and MariaDB's status variables in the vocabulary: every numeric variable of
// SHOW GLOBAL STATUS is a metric under its own name ("mysql.Innodb_log_waits"); these
// tables say which are levels and what they count.

// mysqlGauges are the status variables that are levels, not counters. Everything else
// numeric in SHOW GLOBAL STATUS only grows until a restart or FLUSH STATUS.
var mysqlGauges = map[string]bool{
	"Threads_running": true, "Threads_connected": true, "Threads_cached": true,
	"Open_files": true, "Open_streams": true, "Open_table_definitions": true, "Open_tables": true,
	"Max_used_connections": true, "Memory_used": true, "Memory_used_initial": true, "Max_memory_used": true,
	"Uptime": true, "Uptime_since_flush_status": true,
	"Innodb_checkpoint_age": true, "Innodb_checkpoint_max_age": true,
	"Innodb_history_list_length": true, "Innodb_row_lock_current_waits": true,
	"Innodb_row_lock_time_avg": true, "Innodb_row_lock_time_max": true,
	"Innodb_num_open_files": true, "Innodb_page_size": true, "Innodb_buffer_pool_bytes_data": true,
	"Innodb_buffer_pool_bytes_dirty": true, "Innodb_have_atomic_builtins": true,
	"Innodb_available_undo_logs": true, "Innodb_undo_truncations": false,
	"Innodb_onlineddl_pct_progress": true, "Innodb_redo_log_capacity_resized": true,
	"Innodb_redo_log_logical_size": true, "Innodb_redo_log_physical_size": true,
	"Innodb_redo_log_enabled": true, "Innodb_redo_log_read_only": true, "Innodb_redo_log_resize_status": true,
	"Innodb_buffer_pool_load_incomplete": true, "Innodb_mem_adaptive_hash": true, "Innodb_mem_dictionary": true,
	"Innodb_encryption_num_key_requests": false,
	"Key_blocks_not_flushed":             true, "Key_blocks_unused": true, "Key_blocks_used": true,
	"Key_blocks_warm": true, "Key_blocks_blocks_used": true,
	"Qcache_free_blocks": true, "Qcache_free_memory": true, "Qcache_queries_in_cache": true, "Qcache_total_blocks": true,
	"Slave_open_temp_tables": true, "Replica_open_temp_tables": true, "Slave_running": true,
	"Slaves_connected": true, "Slaves_running": true, "Delayed_insert_threads": true,
	"Not_flushed_delayed_rows": true, "Threadpool_idle_threads": true, "Threadpool_threads": true,
	"Tc_log_max_pages_used": true, "Tc_log_page_size": true, "Table_open_cache_active_instances": true,
	"Aria_pagecache_blocks_not_flushed": true, "Aria_pagecache_blocks_unused": true, "Aria_pagecache_blocks_used": true,
	"Ssl_session_cache_size": true, "Ssl_verify_depth": true, "Ssl_verify_mode": true,
	"Ssl_ctx_verify_depth": true, "Ssl_ctx_verify_mode": true, "Ssl_default_timeout": true,
	"Ssl_session_cache_mode": true, "Ssl_sessions_reused": false, "Ssl_server_not_after": true,
	"Rpl_semi_sync_master_clients": true, "Rpl_semi_sync_master_status": true, "Rpl_semi_sync_slave_status": true,
	"Rpl_semi_sync_master_net_avg_wait_time": true, "Rpl_semi_sync_master_tx_avg_wait_time": true,
	"Rpl_semi_sync_source_clients": true, "Rpl_semi_sync_source_status": true, "Rpl_semi_sync_replica_status": true,
	"Innodb_lsn_current": false, "Innodb_lsn_flushed": false, "Innodb_lsn_last_checkpoint": false,
	"Mysqlx_worker_threads": true, "Mysqlx_worker_threads_active": true, "Mysqlx_sessions": true,
	"Binlog_snapshot_position": true, "Current_tls_version": true, "Feature_check_constraint": false,
	"Innodb_system_rows_read": false, "Innodb_buffer_pool_dump_status": true,
	"Wsrep_local_recv_queue": true, "Wsrep_local_send_queue": true, "Wsrep_flow_control_paused": true,
	"Wsrep_cluster_size": true, "Wsrep_local_state": true, "Wsrep_ready": true, "Wsrep_connected": true,
	"Wsrep_cert_deps_distance": true, "Wsrep_local_recv_queue_avg": true, "Wsrep_local_send_queue_avg": true,
}

// mysqlGaugePrefixes are families of level variables.
var mysqlGaugePrefixes = []string{
	"Innodb_data_pending_", "Innodb_os_log_pending_", "Innodb_mem_", "Innodb_buffer_pool_load_",
	"Innodb_buffer_pool_dump_", "Performance_schema_", "Innodb_num_open_", "Innodb_encryption_n_",
	"Innodb_defragment_", "Innodb_scrub_", "Innodb_secondary_index_", "Innodb_instant_alter_",
}

// mysqlPoolCounters are the Innodb_buffer_pool_pages_* variables that are counters;
// the rest (data, dirty, free, misc, old, total) are levels.
var mysqlPoolCounters = map[string]bool{
	"Innodb_buffer_pool_pages_flushed": true, "Innodb_buffer_pool_pages_made_not_young": true,
	"Innodb_buffer_pool_pages_made_young": true, "Innodb_buffer_pool_pages_lru_flushed": true,
	"Innodb_buffer_pool_pages_lru_freed": true, "Innodb_buffer_pool_pages_split": true,
	"Innodb_buffer_pool_pages_LRU_flushed": true, "Innodb_buffer_pool_pages_LRU_freed": true,
}

// mySQLStatusKind classifies a status variable.
func mySQLStatusKind(name string) sample.Kind {
	// MariaDB without Galera lists the wsrep_* variables in lower case.
	if name != "" && name[0] >= 'a' && name[0] <= 'z' {
		name = strings.ToUpper(name[:1]) + name[1:]
	}
	if g, ok := mysqlGauges[name]; ok {
		if g {
			return sample.Gauge
		}
		return sample.Counter
	}
	if strings.HasPrefix(name, "Innodb_buffer_pool_pages_") {
		if mysqlPoolCounters[name] {
			return sample.Counter
		}
		return sample.Gauge
	}
	if strings.HasPrefix(name, "Performance_schema_") && strings.HasSuffix(name, "_lost") {
		return sample.Counter
	}
	for _, p := range mysqlGaugePrefixes {
		if strings.HasPrefix(name, p) {
			return sample.Gauge
		}
	}
	return sample.Counter
}

// mySQLStatusUnit is a status variable's unit, "" when it has none known.
func mySQLStatusUnit(name string) string {
	l := strings.ToLower(name)
	switch {
	case strings.HasPrefix(l, "bytes_") || strings.HasSuffix(l, "_bytes") || strings.Contains(l, "_bytes_") ||
		strings.HasPrefix(l, "innodb_os_log_written") || strings.HasPrefix(l, "innodb_data_written") ||
		strings.HasPrefix(l, "innodb_data_read") && !strings.HasSuffix(l, "reads") || strings.HasPrefix(l, "innodb_lsn_") ||
		l == "innodb_checkpoint_age" || l == "innodb_checkpoint_max_age" || strings.HasPrefix(l, "memory_used") ||
		strings.HasPrefix(l, "binlog_bytes"):
		return "bytes"
	case strings.HasPrefix(l, "innodb_buffer_pool_pages") || strings.HasPrefix(l, "innodb_pages_") || strings.HasSuffix(l, "_pages_written"):
		return "pages"
	case strings.HasPrefix(l, "innodb_row_lock_time"):
		return "ms"
	case l == "uptime" || l == "uptime_since_flush_status":
		return "seconds"
	case strings.HasPrefix(l, "threads_") || strings.HasPrefix(l, "connections") || l == "max_used_connections":
		return "threads"
	case strings.HasPrefix(l, "com_") || l == "questions" || l == "queries":
		return "statements"
	case strings.HasPrefix(l, "innodb_rows_") || strings.HasPrefix(l, "handler_"):
		return "rows"
	}
	return ""
}
