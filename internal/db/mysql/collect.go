package mysql

import (
	"context"
	"fmt"
	"github.com/fathom-lab/fathom/internal/collect"
	"regexp"
	"strconv"
	"strings"

	"github.com/fathom-lab/fathom/internal/sample"
	"github.com/fathom-lab/fathom/internal/target"
)

// MySQL and MariaDB collectors. Status variables keep the names the server gives them
// ("mysql.Innodb_log_waits"), so they can be looked up in the manual.

// readMySQLStatus reads SHOW GLOBAL STATUS as the server prints it (name, value), for
// the collector and for `fathom check`, whose expressions may use any variable.
func readMySQLStatus(ctx context.Context, conn target.Conn) ([][]string, error) {
	if conn == nil {
		return nil, collect.ErrNoConn
	}
	return conn.Query(ctx, "SHOW GLOBAL STATUS")
}

// readInnoDBStatus runs SHOW ENGINE INNODB STATUS and returns its text.
func readInnoDBStatus(ctx context.Context, conn target.Conn) (string, error) {
	if conn == nil {
		return "", collect.ErrNoConn
	}
	rows, err := conn.Query(ctx, "SHOW ENGINE INNODB STATUS")
	if err != nil {
		return "", err
	}
	if len(rows) != 1 || len(rows[0]) < 3 {
		return "", fmt.Errorf("SHOW ENGINE INNODB STATUS: unexpected result (is InnoDB enabled?)")
	}
	return rows[0][2], nil
}

func newMySQLGlobalStatus() collect.Collector {
	return collect.Func{
		Name:    "mysql_global_status",
		Metrics: declared["mysql_global_status"],
		Help:    "SHOW GLOBAL STATUS: every numeric variable (Com_*, Questions, Threads_running, Innodb_*, …)",
		Collect: func(ctx context.Context, s *collect.Scrape) error {
			rows, err := readMySQLStatus(ctx, s.Conn)
			if err != nil {
				return err
			}
			var up, upFlush float64
			hasFlush := false
			for _, r := range rows {
				if len(r) != 2 {
					continue
				}
				v, ok := collect.Num(r[1])
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
				if mySQLStatusKind(name) == sample.Counter {
					s.Counter("mysql."+name, mySQLStatusUnit(name), v)
				} else {
					s.Gauge("mysql."+name, mySQLStatusUnit(name), v)
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
						age, _ = collect.Num(r[1])
					case "Innodb_checkpoint_max_age":
						maxAge, _ = collect.Num(r[1])
					}
				}
			}
			if maxAge > 0 {
				s.Gauge("mysql.innodb.checkpoint_age_pct", "%", age/maxAge*100)
			}
			return nil
		},
	}.Collector()
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

// innoDBStatus is what fathom reads from SHOW ENGINE INNODB STATUS, for the
// collectors, snapshots and `fathom check`. A Has field says its values were found.
type innoDBStatus struct {
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

// parseInnoDBEngineStatus reads the numbers fathom uses from the text of SHOW ENGINE
// INNODB STATUS (MySQL 5.6 to 8.x and MariaDB print them the same way).
func parseInnoDBEngineStatus(text string) innoDBStatus {
	var st innoDBStatus
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
func newMySQLInnoDBStatus() collect.Collector {
	var capacity float64
	var capRead bool
	return collect.Func{
		Name:    "mysql_innodb_status",
		Metrics: declared["mysql_innodb_status"],
		Help:    "SHOW ENGINE INNODB STATUS: redo LSN, checkpoint age and its share of the redo log, history list length, pending flushes",
		Collect: func(ctx context.Context, s *collect.Scrape) error {
			text, err := readInnoDBStatus(ctx, s.Conn)
			if err != nil {
				return err
			}
			st := parseInnoDBEngineStatus(text)
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
	}.Collector()
}

// redoCapacity is the redo log's size: innodb_redo_log_capacity (MySQL 8.0.30+) or
// innodb_log_file_size × innodb_log_files_in_group (MariaDB has one file since 10.5).
func redoCapacity(ctx context.Context, s *collect.Scrape) float64 {
	rows, err := s.Query(ctx, "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('innodb_redo_log_capacity', 'innodb_log_file_size', 'innodb_log_files_in_group')")
	if err != nil {
		return 0
	}
	v := map[string]float64{}
	for _, r := range rows {
		if len(r) == 2 {
			v[r[0]], _ = collect.Num(r[1])
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
func newMySQLBinlog() collect.Collector {
	stmt := "SHOW MASTER STATUS"
	return collect.Func{
		Name:    "mysql_binlog",
		Metrics: declared["mysql_binlog"],
		Help:    "binary log: current file number (a step is a rotation) and position",
		Collect: func(ctx context.Context, s *collect.Scrape) error {
			on, err := s.Query(ctx, "SELECT @@log_bin")
			if err != nil {
				return err
			}
			if len(on) != 1 || on[0][0] != "1" {
				s.Gauge("mysql.binlog.enabled", "bool", 0)
				return nil
			}
			s.Gauge("mysql.binlog.enabled", "bool", 1)
			rows, err := s.Query(ctx, stmt)
			if err != nil && stmt == "SHOW MASTER STATUS" {
				// MySQL 8.4 only knows the new name.
				stmt = "SHOW BINARY LOG STATUS"
				rows, err = s.Query(ctx, stmt)
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
			if pos, ok := collect.Num(rows[0][1]); ok {
				s.Gauge("mysql.binlog.position", "bytes", pos)
			}
			return nil
		},
	}.Collector()
}

// newMySQLProcesslist counts threads by command and state, threads waiting for locks,
// and the longest-running statement.
func newMySQLProcesslist() collect.Collector {
	return collect.Func{
		Name:    "mysql_processlist",
		Metrics: declared["mysql_processlist"],
		Help:    "threads by command and by state, threads waiting for a lock, longest running statement",
		Collect: func(ctx context.Context, s *collect.Scrape) error {
			rows, err := s.Query(ctx, `SELECT COMMAND, coalesce(STATE, ''), COUNT(*), MAX(TIME) FROM information_schema.PROCESSLIST
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
				n, _ := collect.Num(r[2])
				t, _ := collect.Num(r[3])
				cmds[r[0]] += n
				if r[0] != "Sleep" && r[0] != "Daemon" && r[0] != "Binlog Dump" && r[0] != "Binlog Dump GTID" && !strings.HasPrefix(r[0], "Slave") {
					active += n
					if t > longest && r[0] == "Query" {
						longest = t
					}
					if r[1] != "" {
						s.SparseGauge("mysql.threads.state."+collect.MetricPart(r[1]), "threads", n)
					}
					if l := strings.ToLower(r[1]); strings.Contains(l, "lock") && strings.HasPrefix(l, "waiting") || strings.Contains(l, "lock wait") {
						lockWait += n
					}
				}
			}
			for c, n := range cmds {
				s.SparseGauge("mysql.threads.command."+collect.MetricPart(c), "threads", n)
			}
			s.Gauge("mysql.threads.active", "threads", active)
			s.Gauge("mysql.threads.waiting_for_lock", "threads", lockWait)
			s.Gauge("mysql.longest_query_seconds", "seconds", longest)
			return nil
		},
	}.Collector()
}
