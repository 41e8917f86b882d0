package mysql

import (
	"context"
	"errors"
	"github.com/fathom-lab/fathom/internal/check"
	"strconv"
	"strings"
	"time"

	"github.com/fathom-lab/fathom/internal/target"
)

// checkDialect is how `fathom check` and `fathom heartbeat` read and talk to MySQL
// and MariaDB servers.
var checkDialect = &check.Dialect{
	Fetch: fetchMySQL, DefaultPort: "3306",
	Connections: "Threads_connected / max_connections * 100", Used: "Threads_connected",
	StatsReset:  "FLUSH STATUS",
	Replication: replication{},
	HeartbeatDDL: func(table string) string {
		return "CREATE TABLE IF NOT EXISTS " + table + ` (
			server_id BIGINT UNSIGNED NOT NULL PRIMARY KEY,
			ts DATETIME(6) NOT NULL COMMENT 'UTC, the primary''s clock',
			interval_ms INT UNSIGNED NOT NULL,
			host VARCHAR(255) NOT NULL DEFAULT '',
			seq BIGINT UNSIGNED NOT NULL DEFAULT 0
		) ENGINE=InnoDB`
	},
	ServerID: "SELECT @@server_id",
	HeartbeatAge: func(table string) string {
		return "SELECT TIMESTAMPDIFF(MICROSECOND, ts, UTC_TIMESTAMP(6)) / 1e6 FROM " + table + " WHERE server_id = ?"
	},
	Beat: func(ctx context.Context, conn target.Conn, table string, id, ms, host target.Value) error {
		q := "INSERT INTO " + table + ` (server_id, ts, interval_ms, host, seq) VALUES (?, UTC_TIMESTAMP(6), ?, ?, 1)
			ON DUPLICATE KEY UPDATE ts = UTC_TIMESTAMP(6), interval_ms = ?, host = ?, seq = seq + 1`
		_, err := conn.Query(ctx, q, id, ms, host, ms, host)
		return err
	},
}

// columnQuerier is the optional ability of a connection to report column names, which
// SHOW REPLICA STATUS needs: its columns differ between MySQL and MariaDB versions.
type columnQuerier interface {
	QueryColumns(ctx context.Context, sql string) ([]string, [][]string, error)
}

func fetchMySQL(ctx context.Context, conn target.Conn, s *check.Sample, now func() time.Time) error {
	rows, err := conn.Query(ctx, "SELECT UNIX_TIMESTAMP(NOW(6)), VERSION(), CONNECTION_ID()")
	if err != nil {
		return err
	}
	if len(rows) != 1 || len(rows[0]) != 3 {
		return errors.New("unexpected answer to SELECT UNIX_TIMESTAMP(NOW(6))")
	}
	serverNow, _ := strconv.ParseFloat(rows[0][0], 64)
	version := rows[0][1]
	self, _ := strconv.ParseInt(rows[0][2], 10, 64)
	mariadb := strings.Contains(strings.ToLower(version), "mariadb")

	rows, err = conn.Query(ctx, "SHOW GLOBAL VARIABLES")
	if err != nil {
		return err
	}
	for _, r := range rows {
		if len(r) == 2 && !check.SecretSetting(r[0]) {
			s.Vars.Set(r[0], r[1], false)
		}
	}
	before := now()
	rows, err = readMySQLStatus(ctx, conn)
	if err != nil {
		return err
	}
	s.Time = check.Midpoint(before, now())
	for _, r := range rows {
		if len(r) == 2 {
			s.Vars.Set(r[0], r[1], true) // status wins over a variable of the same name
		}
	}
	if up, ok := s.Vars.Get("Uptime"); ok && up.IsNum {
		s.Started = serverNow - up.Num
	}
	if up, ok := s.Vars.Get("Uptime_since_flush_status"); ok && up.IsNum {
		s.StatsReset = serverNow - up.Num
	}

	if err := check.Optional(s, "replica status", mysqlReplicas(ctx, conn, s, mariadb)); err != nil {
		return err
	}
	if err := check.Optional(s, "processlist", mysqlSessions(ctx, conn, s, self, mariadb)); err != nil {
		return err
	}
	if err := check.Optional(s, "InnoDB lock waits", mysqlLockWaits(ctx, conn, s, self)); err != nil {
		return err
	}
	text, err := readInnoDBStatus(ctx, conn)
	if err == nil {
		for name, v := range parseInnoDBStatus(text) {
			s.Vars.Set(name, strconv.FormatFloat(v, 'f', -1, 64), false)
		}
	}
	return check.Optional(s, "ENGINE INNODB STATUS", err)
}

// mysqlReplicas reads every replication channel.
func mysqlReplicas(ctx context.Context, conn target.Conn, s *check.Sample, mariadb bool) error {
	cq, ok := conn.(columnQuerier)
	if !ok {
		return errors.New("this connection cannot report column names")
	}
	stmts := []string{"SHOW REPLICA STATUS", "SHOW SLAVE STATUS"}
	if mariadb {
		stmts = []string{"SHOW ALL SLAVES STATUS"}
	}
	var (
		cols []string
		rows [][]string
		err  error
	)
	for _, q := range stmts {
		cols, rows, err = cq.QueryColumns(ctx, q)
		if err == nil || target.ClassOf(err) != target.ClassOther {
			break
		}
	}
	if err != nil {
		return err
	}
	idx := map[string]int{}
	for i, c := range cols {
		idx[strings.ToLower(c)] = i
	}
	get := func(r []string, names ...string) string {
		for _, n := range names {
			if i, ok := idx[strings.ToLower(n)]; ok && i < len(r) {
				return r[i]
			}
		}
		return ""
	}
	for i, r := range rows {
		ch := check.Channel{
			Name:         get(r, "Connection_name", "Channel_Name"),
			IORunning:    get(r, "Slave_IO_Running", "Replica_IO_Running"),
			SQLRunning:   get(r, "Slave_SQL_Running", "Replica_SQL_Running"),
			LastIOError:  check.OneLine(get(r, "Last_IO_Error")),
			LastSQLError: check.OneLine(get(r, "Last_SQL_Error")),
			PrimaryHost:  get(r, "Master_Host", "Source_Host"),
			PrimaryPort:  get(r, "Master_Port", "Source_Port"),
		}
		if v, ok := check.ParseNumber(get(r, "Seconds_Behind_Master", "Seconds_Behind_Source")); ok {
			ch.SecondsBehind = &v
		}
		ch.PrimaryServerID, _ = strconv.ParseInt(get(r, "Master_Server_Id", "Source_Server_Id"), 10, 64)
		ch.SQLDelay, _ = strconv.ParseFloat(get(r, "SQL_Delay"), 64)
		s.Channels = append(s.Channels, ch)
		if i == 0 {
			// The first channel's columns join the namespace, as the original plugin
			// did with SHOW SLAVE STATUS; status and variables win on a clash.
			for j, c := range cols {
				if j < len(r) && !check.SecretSetting(c) {
					s.Vars.Set(c, r[j], false)
				}
			}
		}
	}
	s.Vars.SetNum("replication_channels", float64(len(rows)))
	return nil
}

// mysqlSessions aggregates the processlist: sessions by command and by state, the
// longest-running statement, and statements waiting for a lock.
func mysqlSessions(ctx context.Context, conn target.Conn, s *check.Sample, self int64, mariadb bool) error {
	secs := "TIME"
	if mariadb {
		secs = "TIME_MS / 1000" // MariaDB has milliseconds
	}
	rows, err := conn.Query(ctx, "SELECT ID, USER, COALESCE(DB, ''), COMMAND, "+secs+", COALESCE(STATE, ''), COALESCE(INFO, '') FROM information_schema.PROCESSLIST")
	if err != nil {
		return err
	}
	byCommand, byState := map[string]float64{}, map[string]float64{}
	var sessions, locked float64
	for _, r := range rows {
		if len(r) != 7 {
			continue
		}
		id, _ := strconv.ParseInt(r[0], 10, 64)
		user, db, command, state, info := r[1], r[2], r[3], r[5], r[6]
		secs, _ := strconv.ParseFloat(r[4], 64)
		system := user == "system user" || user == "event_scheduler" || command == "Daemon" ||
			strings.HasPrefix(command, "Binlog Dump") || strings.HasPrefix(command, "Slave_") || strings.HasPrefix(command, "Connect")
		if system {
			continue
		}
		sessions++
		byCommand[check.IdentName(command)]++
		if state != "" {
			byState[check.IdentName(state)]++
		}
		if id == self {
			continue
		}
		if command == "Query" || command == "Execute" {
			sess := &check.Session{ID: id, User: user, DB: db, Seconds: secs, State: state, Query: check.MaskQuery(info)}
			if s.LongestQuery == nil || secs > s.LongestQuery.Seconds {
				s.LongestQuery = sess
			}
			if waitingForLock(state) {
				locked++
				if s.LongestLockWait == nil || secs > s.LongestLockWait.Seconds {
					s.LongestLockWait = sess
				}
			}
		}
	}
	s.Vars.SetNum("sessions", sessions)
	for c, n := range byCommand {
		s.Vars.SetNum("sessions_command_"+c, n)
	}
	for st, n := range byState {
		s.Vars.SetNum("sessions_state_"+st, n)
	}
	longest := 0.0
	if s.LongestQuery != nil {
		longest = s.LongestQuery.Seconds
	}
	s.Vars.SetNum("longest_query_seconds", longest)
	s.LockWaits = int(locked)
	return nil
}

// waitingForLock recognises processlist states of a statement blocked on a lock:
// "Locked" (MyISAM), "Waiting for table metadata lock", "Waiting for table level lock",
// "Waiting for … lock", "Waiting for table flush".
func waitingForLock(state string) bool {
	st := strings.ToLower(state)
	return st == "locked" || strings.HasPrefix(st, "waiting for") && (strings.HasSuffix(st, " lock") || strings.Contains(st, "table flush"))
}

// mysqlLockWaits adds InnoDB row lock waits (INNODB_TRX) to the processlist's lock
// waits, and the age of the oldest transaction.
func mysqlLockWaits(ctx context.Context, conn target.Conn, s *check.Sample, self int64) error {
	rows, err := conn.Query(ctx, `SELECT trx_mysql_thread_id, trx_state,
		TIMESTAMPDIFF(MICROSECOND, trx_started, NOW(6)) / 1e6,
		COALESCE(TIMESTAMPDIFF(MICROSECOND, trx_wait_started, NOW(6)) / 1e6, 0),
		COALESCE(trx_query, '')
		FROM information_schema.INNODB_TRX`)
	defer func() {
		longestWait := 0.0
		if s.LongestLockWait != nil {
			longestWait = s.LongestLockWait.Seconds
		}
		s.Vars.SetNum("lock_waits", float64(s.LockWaits))
		s.Vars.SetNum("longest_lock_wait_seconds", longestWait)
	}()
	if err != nil {
		return err
	}
	longestTrx := 0.0
	for _, r := range rows {
		if len(r) != 5 {
			continue
		}
		id, _ := strconv.ParseInt(r[0], 10, 64)
		age, _ := strconv.ParseFloat(r[2], 64)
		wait, _ := strconv.ParseFloat(r[3], 64)
		if id != self && age > longestTrx {
			longestTrx = age
		}
		if r[1] != "LOCK WAIT" || id == self {
			continue
		}
		s.LockWaits++
		if s.LongestLockWait == nil || wait > s.LongestLockWait.Seconds {
			s.LongestLockWait = &check.Session{ID: id, Seconds: wait, State: "waiting for a row lock", Query: check.MaskQuery(r[4])}
		}
	}
	s.Vars.SetNum("longest_transaction_seconds", longestTrx)
	return nil
}

// parseInnoDBStatus names the values fathom exposes from SHOW ENGINE INNODB STATUS
// (history list length, LSNs and checkpoint age, pending I/O), read by the same parser
// as the metrics collectors use. Absent values are left out.
func parseInnoDBStatus(text string) map[string]float64 {
	st := parseInnoDBEngineStatus(text)
	out := map[string]float64{}
	if st.HasHistory {
		out["innodb_history_list_length"] = float64(st.HistoryListLength)
	}
	if st.HasLSN {
		out["innodb_lsn"] = float64(st.LSN)
		out["innodb_last_checkpoint_lsn"] = float64(st.Checkpoint)
		if st.LSN >= st.Checkpoint {
			out["innodb_checkpoint_age"] = float64(st.LSN - st.Checkpoint)
		}
	}
	if st.HasAIO {
		out["innodb_pending_aio_reads"] = float64(st.PendingAIOReads)
		out["innodb_pending_aio_writes"] = float64(st.PendingAIOWrites)
	}
	if st.HasFsyncSplit {
		out["innodb_pending_log_fsyncs"] = float64(st.PendingLogFlushes)
		out["innodb_pending_buffer_pool_fsyncs"] = float64(st.PendingPoolFlushes)
	}
	if st.HasFsyncs {
		out["innodb_pending_fsyncs"] = float64(st.PendingFsyncs)
	}
	if st.HasReads {
		out["innodb_pending_reads"] = float64(st.PendingReads)
	}
	if st.HasPW {
		out["innodb_pending_writes"] = float64(st.PendingLRU + st.PendingFlush + st.PendingSinglePage)
	}
	return out
}
