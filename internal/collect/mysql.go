package collect

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// MySQL and MariaDB collectors. Status variables keep the names the server gives them
// ("mysql.Innodb_log_waits"), so they can be looked up in the manual.

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

// mysqlKind classifies a status variable.
func mysqlKind(name string) Kind {
	if g, ok := mysqlGauges[name]; ok {
		if g {
			return Gauge
		}
		return Counter
	}
	if strings.HasPrefix(name, "Innodb_buffer_pool_pages_") {
		if mysqlPoolCounters[name] {
			return Counter
		}
		return Gauge
	}
	if strings.HasPrefix(name, "Performance_schema_") && strings.HasSuffix(name, "_lost") {
		return Counter
	}
	for _, p := range mysqlGaugePrefixes {
		if strings.HasPrefix(name, p) {
			return Gauge
		}
	}
	return Counter
}

func mysqlUnit(name string) string {
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

func newMySQLGlobalStatus() Collector {
	return &fn{
		name: "mysql_global_status",
		help: "SHOW GLOBAL STATUS: every numeric variable (Com_*, Questions, Threads_running, Innodb_*, …)",
		collect: func(ctx context.Context, s *Scrape) error {
			rows, err := s.query(ctx, "SHOW GLOBAL STATUS")
			if err != nil {
				return err
			}
			var up, upFlush float64
			hasFlush := false
			for _, r := range rows {
				if len(r) != 2 {
					continue
				}
				v, ok := num(r[1])
				if !ok {
					switch strings.ToUpper(r[1]) {
					case "ON":
						v, ok = 1, true
					case "OFF":
						v, ok = 0, true
					}
				}
				if !ok {
					continue
				}
				name := r[0]
				switch name {
				case "Uptime":
					up = v
				case "Uptime_since_flush_status":
					upFlush, hasFlush = v, true
				}
				if mysqlKind(name) == Counter {
					s.Counter("mysql."+name, mysqlUnit(name), v)
				} else {
					s.Gauge("mysql."+name, mysqlUnit(name), v)
				}
			}
			if hasFlush {
				s.Uptime(upFlush)
			} else {
				s.Uptime(up)
			}
			// MariaDB reports the checkpoint age and its limit directly.
			var age, maxAge float64
			for _, r := range rows {
				if len(r) == 2 {
					switch r[0] {
					case "Innodb_checkpoint_age":
						age, _ = num(r[1])
					case "Innodb_checkpoint_max_age":
						maxAge, _ = num(r[1])
					}
				}
			}
			if maxAge > 0 {
				s.Gauge("mysql.innodb.checkpoint_age_pct", "%", age/maxAge*100)
			}
			return nil
		},
	}
}

var (
	reLSN        = regexp.MustCompile(`(?m)^Log sequence number\s+(\d+)`)
	reFlushed    = regexp.MustCompile(`(?m)^Log flushed up to\s+(\d+)`)
	reCheckpoint = regexp.MustCompile(`(?m)^Last checkpoint at\s+(\d+)`)
	reHistory    = regexp.MustCompile(`(?m)^History list length\s+(\d+)`)
	rePendFlush  = regexp.MustCompile(`(?m)^Pending flushes \(fsync\) log: (\d+); buffer pool: (\d+)`)
	rePendFsync  = regexp.MustCompile(`(?m)^Pending flushes \(fsync\):\s*(\d+)`) // MariaDB 10.5+: one total
	rePendWrites = regexp.MustCompile(`(?m)^Pending writes: LRU (\d+), flush list (\d+)(?:, single page (\d+))?`)
	rePendReads  = regexp.MustCompile(`(?m)^Pending reads\s+(\d+)`)
	reAIOReads   = regexp.MustCompile(`(?m)^Pending normal aio reads:\s*(?:\[([\d, ]*)\]|(\d+))`)
	reAIOWrites  = regexp.MustCompile(`(?m)^Pending normal aio reads:.*?aio writes:\s*(?:\[([\d, ]*)\]|(\d+))`)
	reModified   = regexp.MustCompile(`(?m)^Modified db pages\s+(\d+)`)
	reLockWaits  = regexp.MustCompile(`(?m)LOCK WAIT`)
)

// InnoDBStatus is what fathom reads from SHOW ENGINE INNODB STATUS, for the
// collectors, snapshots and `fathom check`. A Has field says its values were found.
type InnoDBStatus struct {
	LSN, Flushed, Checkpoint  int64
	HistoryListLength         int64
	PendingLogFlushes         int64 // MySQL prints log and buffer pool fsyncs apart
	PendingPoolFlushes        int64
	PendingFsyncs             int64 // their sum; MariaDB 10.5+ prints only this
	PendingLRU, PendingFlush  int64
	PendingSinglePage         int64
	PendingReads              int64
	PendingAIOReads           int64
	PendingAIOWrites          int64
	ModifiedPages             int64
	LockWaits                 int64
	HasLSN, HasHistory, HasPW bool
	HasFsyncs, HasFsyncSplit  bool
	HasReads, HasAIO          bool
}

// ParseInnoDBStatus reads the numbers fathom uses from the text of SHOW ENGINE
// INNODB STATUS (MySQL 5.6 to 8.x and MariaDB print them the same way).
func ParseInnoDBStatus(text string) InnoDBStatus {
	var st InnoDBStatus
	i64 := func(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n }
	if m := reLSN.FindStringSubmatch(text); m != nil {
		st.LSN, st.HasLSN = i64(m[1]), true
	}
	if m := reFlushed.FindStringSubmatch(text); m != nil {
		st.Flushed = i64(m[1])
	}
	if m := reCheckpoint.FindStringSubmatch(text); m != nil {
		st.Checkpoint = i64(m[1])
	} else {
		st.HasLSN = false
	}
	if m := reHistory.FindStringSubmatch(text); m != nil {
		st.HistoryListLength, st.HasHistory = i64(m[1]), true
	}
	if m := rePendFlush.FindStringSubmatch(text); m != nil {
		st.PendingLogFlushes, st.PendingPoolFlushes = i64(m[1]), i64(m[2])
		st.PendingFsyncs, st.HasFsyncs, st.HasFsyncSplit = st.PendingLogFlushes+st.PendingPoolFlushes, true, true
	} else if m := rePendFsync.FindStringSubmatch(text); m != nil {
		st.PendingFsyncs, st.HasFsyncs = i64(m[1]), true
	}
	if m := rePendWrites.FindStringSubmatch(text); m != nil {
		st.PendingLRU, st.PendingFlush, st.PendingSinglePage, st.HasPW = i64(m[1]), i64(m[2]), i64(m[3]), true
	}
	if m := rePendReads.FindStringSubmatch(text); m != nil {
		st.PendingReads, st.HasReads = i64(m[1]), true
	}
	// Pending AIO counts are a number or a list, one per I/O thread.
	sum := func(list, single string) int64 {
		if single != "" {
			return i64(single)
		}
		var t int64
		for _, p := range strings.Split(list, ",") {
			t += i64(strings.TrimSpace(p))
		}
		return t
	}
	if m := reAIOReads.FindStringSubmatch(text); m != nil {
		st.PendingAIOReads, st.HasAIO = sum(m[1], m[2]), true
		if m := reAIOWrites.FindStringSubmatch(text); m != nil {
			st.PendingAIOWrites = sum(m[1], m[2])
		}
	}
	if m := reModified.FindStringSubmatch(text); m != nil {
		st.ModifiedPages = i64(m[1])
	}
	st.LockWaits = int64(len(reLockWaits.FindAllStringIndex(text, -1)))
	return st
}

// newMySQLInnoDBStatus reads the redo log position, the checkpoint age (how much redo
// the last checkpoint is behind) against the redo log's capacity, the history list
// length and pending flushes.
func newMySQLInnoDBStatus() Collector {
	var capacity float64
	var capRead bool
	return &fn{
		name: "mysql_innodb_status",
		help: "SHOW ENGINE INNODB STATUS: redo LSN, checkpoint age and its share of the redo log, history list length, pending flushes",
		collect: func(ctx context.Context, s *Scrape) error {
			rows, err := s.query(ctx, "SHOW ENGINE INNODB STATUS")
			if err != nil {
				return err
			}
			if len(rows) != 1 || len(rows[0]) < 3 {
				return fmt.Errorf("SHOW ENGINE INNODB STATUS: unexpected result (is InnoDB enabled?)")
			}
			st := ParseInnoDBStatus(rows[0][2])
			if st.HasLSN {
				s.Counter("mysql.innodb.lsn", "bytes", float64(st.LSN))
				age := float64(st.LSN - st.Checkpoint)
				s.Gauge("mysql.innodb.checkpoint_age_bytes", "bytes", age)
				if !capRead {
					capacity, capRead = redoCapacity(ctx, s), true
				}
				if capacity > 0 {
					s.Gauge("mysql.innodb.redo_capacity_bytes", "bytes", capacity)
					s.Gauge("mysql.innodb.checkpoint_age_capacity_pct", "%", age/capacity*100)
				}
				s.Gauge("mysql.innodb.log_unflushed_bytes", "bytes", float64(st.LSN-st.Flushed))
			}
			if st.HasHistory {
				s.Gauge("mysql.innodb.history_list_length", "undo logs", float64(st.HistoryListLength))
			}
			if st.HasFsyncSplit {
				s.Gauge("mysql.innodb.pending_log_flushes", "flushes", float64(st.PendingLogFlushes))
				s.Gauge("mysql.innodb.pending_pool_flushes", "flushes", float64(st.PendingPoolFlushes))
			}
			if st.HasFsyncs {
				s.Gauge("mysql.innodb.pending_fsyncs", "flushes", float64(st.PendingFsyncs))
			}
			if st.HasPW {
				s.Gauge("mysql.innodb.pending_writes_lru", "pages", float64(st.PendingLRU))
				s.Gauge("mysql.innodb.pending_writes_flush_list", "pages", float64(st.PendingFlush))
			}
			s.Gauge("mysql.innodb.modified_pages", "pages", float64(st.ModifiedPages))
			s.Gauge("mysql.innodb.transactions_in_lock_wait", "transactions", float64(st.LockWaits))
			return nil
		},
	}
}

// redoCapacity is the redo log's size: innodb_redo_log_capacity (MySQL 8.0.30+) or
// innodb_log_file_size × innodb_log_files_in_group (MariaDB has one file since 10.5).
func redoCapacity(ctx context.Context, s *Scrape) float64 {
	rows, err := s.query(ctx, "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('innodb_redo_log_capacity', 'innodb_log_file_size', 'innodb_log_files_in_group')")
	if err != nil {
		return 0
	}
	v := map[string]float64{}
	for _, r := range rows {
		if len(r) == 2 {
			v[r[0]], _ = num(r[1])
		}
	}
	if c := v["innodb_redo_log_capacity"]; c > 0 {
		return c
	}
	files := v["innodb_log_files_in_group"]
	if files == 0 {
		files = 1
	}
	return v["innodb_log_file_size"] * files
}

var reBinlogSeq = regexp.MustCompile(`\.(\d+)$`)

// newMySQLBinlog reads the current binary log file: its sequence number is a counter
// whose every step is a rotation (the file changed), and its position.
func newMySQLBinlog() Collector {
	stmt := "SHOW MASTER STATUS"
	return &fn{
		name: "mysql_binlog",
		help: "binary log: current file number (a step is a rotation) and position",
		collect: func(ctx context.Context, s *Scrape) error {
			on, err := s.query(ctx, "SELECT @@log_bin")
			if err != nil {
				return err
			}
			if len(on) != 1 || on[0][0] != "1" {
				s.Gauge("mysql.binlog.enabled", "bool", 0)
				return nil
			}
			s.Gauge("mysql.binlog.enabled", "bool", 1)
			rows, err := s.query(ctx, stmt)
			if err != nil && stmt == "SHOW MASTER STATUS" {
				// MySQL 8.4 only knows the new name.
				stmt = "SHOW BINARY LOG STATUS"
				rows, err = s.query(ctx, stmt)
			}
			if err != nil {
				return err
			}
			if len(rows) == 0 || len(rows[0]) < 2 {
				return nil
			}
			if m := reBinlogSeq.FindStringSubmatch(rows[0][0]); m != nil {
				seq, _ := strconv.ParseFloat(m[1], 64)
				s.Counter("mysql.binlog.file_seq", "files", seq)
			}
			if pos, ok := num(rows[0][1]); ok {
				s.Gauge("mysql.binlog.position", "bytes", pos)
			}
			return nil
		},
	}
}

// newMySQLProcesslist counts threads by command and state, threads waiting for locks,
// and the longest-running statement.
func newMySQLProcesslist() Collector {
	return &fn{
		name: "mysql_processlist",
		help: "threads by command and by state, threads waiting for a lock, longest running statement",
		collect: func(ctx context.Context, s *Scrape) error {
			rows, err := s.query(ctx, `SELECT COMMAND, coalesce(STATE, ''), COUNT(*), MAX(TIME) FROM information_schema.PROCESSLIST
				WHERE ID <> CONNECTION_ID() GROUP BY COMMAND, STATE`)
			if err != nil {
				return err
			}
			var longest, lockWait, active float64
			cmds := map[string]float64{}
			for _, r := range rows {
				if len(r) != 4 {
					continue
				}
				n, _ := num(r[2])
				t, _ := num(r[3])
				cmds[r[0]] += n
				if r[0] != "Sleep" && r[0] != "Daemon" && r[0] != "Binlog Dump" && r[0] != "Binlog Dump GTID" && !strings.HasPrefix(r[0], "Slave") {
					active += n
					if t > longest && r[0] == "Query" {
						longest = t
					}
					if r[1] != "" {
						s.SparseGauge("mysql.threads.state."+metricPart(r[1]), "threads", n)
					}
					if l := strings.ToLower(r[1]); strings.Contains(l, "lock") && strings.HasPrefix(l, "waiting") || strings.Contains(l, "lock wait") {
						lockWait += n
					}
				}
			}
			for c, n := range cmds {
				s.SparseGauge("mysql.threads.command."+metricPart(c), "threads", n)
			}
			s.Gauge("mysql.threads.active", "threads", active)
			s.Gauge("mysql.threads.waiting_for_lock", "threads", lockWait)
			s.Gauge("mysql.longest_query_seconds", "seconds", longest)
			return nil
		},
	}
}
