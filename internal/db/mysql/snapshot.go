package mysql

import (
	"bufio"
	"bytes"
	"fmt"
	"github.com/fathom-lab/fathom/internal/collect"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// MySQL and MariaDB sources of a snapshot.

func snapshot(s *collect.Snap) {
	vars := map[string]string{}
	s.Source("server", func() error { return snapshotServer(s) })
	s.Source("variables", func() error { return snapshotVariables(s, vars) })
	s.Source("configuration files", func() error { return snapshotConfigurationFiles(s, vars) })
	s.PerSample(func(i, n int) { snapshotInnoDBStatus(s, vars, i, n) })
	s.Source("sessions", func() error { return snapshotSessions(s) })
	s.Source("replication", func() error { return snapshotReplication(s, vars) })
	s.Source("sizes", func() error { return snapshotSizes(s) })
	s.Source("schema", func() error { return snapshotSchema(s) })
	s.Source("logs", func() error { return snapshotLogs(s, vars) })
	s.Source("error log", func() error { return snapshotErrorLog(s, vars) })
	s.Source("slow query digest", func() error { return mysqlSlowDigest(s, vars, dataDirPath(vars, vars["slow_query_log_file"])) })
	s.Source("binary log digest", func() error { return mysqlBinlogDigest(s, vars) })
	s.Source("users", func() error { return snapshotUsers(s) })
}

// snapshotServer is the snapshot's "server" source.
func snapshotServer(s *collect.Snap) error {
	rows, err := s.Query(`SELECT VERSION(), @@version_comment, @@hostname, @@port, @@socket, @@datadir, @@pid_file, @@character_set_server`)
	if err != nil {
		return err
	}
	r := rows[0]
	up, _ := s.Query(`SHOW GLOBAL STATUS LIKE 'Uptime'`)
	uptime := ""
	if len(up) == 1 {
		if sec, err := strconv.Atoi(up[0][1]); err == nil {
			uptime = (time.Duration(sec) * time.Second).String()
		}
	}
	var b bytes.Buffer
	for i, l := range []string{"version", "comment", "hostname", "port", "socket", "data directory", "pid file", "charset"} {
		fmt.Fprintf(&b, "%-16s %s\n", l+":", r[i])
	}
	fmt.Fprintf(&b, "%-16s %s\n", "uptime:", uptime)
	where := "remote (OS facts below describe the machine fathom ran on)"
	if s.Server().Local {
		where = fmt.Sprintf("this host, pid %d", s.Server().PID)
	}
	fmt.Fprintf(&b, "%-16s %s\n", "runs on:", where)
	if eng, err := s.Query(`SELECT ENGINE, SUPPORT FROM information_schema.ENGINES WHERE SUPPORT IN ('YES', 'DEFAULT') ORDER BY ENGINE`); err == nil {
		var names []string
		for _, e := range eng {
			n := e[0]
			if e[1] == "DEFAULT" {
				n += " (default)"
			}
			names = append(names, n)
		}
		fmt.Fprintf(&b, "%-16s %s\n", "engines:", strings.Join(names, ", "))
	}
	s.Add("server.txt", "version, uptime, data directory, engines", b.Bytes())
	s.Fact("Server", "Version", "%s (%s)", r[0], r[1])
	s.Fact("Server", "Up", "%s", uptime)
	s.Fact("Server", "Data dir", "%s%s", r[5], s.DiskText())
	return nil
}

// snapshotVariables is the snapshot's "variables" source.
func snapshotVariables(s *collect.Snap, vars map[string]string) error {
	rows, err := s.Query(`SHOW GLOBAL VARIABLES`)
	if err != nil {
		return err
	}
	for _, r := range rows {
		vars[r[0]] = r[1]
	}
	s.Add("variables.tsv", "SHOW GLOBAL VARIABLES", collect.Table([]string{"variable", "value"}, rows))
	s.Fact("Server", "InnoDB", "buffer pool %s, redo %s, flush_log_at_trx_commit %s, flush_method %s, io_capacity %s/%s",
		byteSetting(vars["innodb_buffer_pool_size"]), redoText(vars), vars["innodb_flush_log_at_trx_commit"], vars["innodb_flush_method"],
		vars["innodb_io_capacity"], vars["innodb_io_capacity_max"])
	s.Fact("Server", "Binary log", "log_bin %s, sync_binlog %s, max_binlog_size %s, format %s",
		vars["log_bin"], vars["sync_binlog"], byteSetting(vars["max_binlog_size"]), vars["binlog_format"])
	return nil
}

// snapshotConfigurationFiles is the snapshot's "configuration files" source.
func snapshotConfigurationFiles(s *collect.Snap, vars map[string]string) error {
	var b bytes.Buffer
	var args []string
	if s.Server().Local && s.Server().PID > 0 {
		args = readArgs(s.Server().PID)
	}
	var files []string
	var how string
	switch {
	case len(args) == 0:
		how = "the server's command line could not be read (not on this host, or not permitted): these are the usual option files, which it may or may not read"
		files = []string{"/etc/my.cnf", "/etc/mysql/my.cnf", "/usr/etc/my.cnf"}
	case containsArg(args, "--no-defaults"):
		how = "the server was started with --no-defaults: it reads no option file"
	case cmdlineOption(args, "defaults-file") != "":
		f := cmdlineOption(args, "defaults-file")
		how = "the server was started with --defaults-file=" + f + ": it reads only that file (and what it includes)"
		files = []string{f}
	default:
		how = "the server reads the default option files, in this order"
		files = []string{"/etc/my.cnf", "/etc/mysql/my.cnf", "/usr/etc/my.cnf"}
	}
	if extra := cmdlineOption(args, "defaults-extra-file"); extra != "" {
		files = append(files, extra)
	}
	var all []string
	seen := map[string]bool{}
	for _, f := range files {
		if s.Server().Local {
			all = append(all, myOptionFiles(f, 0, seen)...)
		} else {
			all = append(all, f)
		}
	}
	b.WriteString(how + ":\n")
	for _, f := range all {
		fmt.Fprintf(&b, "  %s%s\n", f, s.ExistsText(f))
	}
	if d := vars["datadir"]; d != "" {
		for _, f := range []string{strings.TrimSuffix(d, "/") + "/mysqld-auto.cnf"} {
			if s.ExistsText(f) != "  (not here)" && s.ExistsText(f) != "" {
				fmt.Fprintf(&b, "  %s%s (settings persisted with SET PERSIST)\n", f, s.ExistsText(f))
				all = append(all, f)
			}
		}
	}
	if len(args) > 0 {
		fmt.Fprintf(&b, "\nserver command line: %s\n", strings.Join(args, " "))
	}
	s.Add("config_files.txt", "which option files the server reads (from its command line), and the command line", b.Bytes())
	if len(all) > 0 {
		data, read := s.FileContents(all)
		s.Add("config_contents.txt", "the option files as read, one after the other (passwords masked)", data)
		s.Fact("Server", "Option files", "%d read: %s (config_contents.txt)", len(read), strings.Join(read, ", "))
	} else {
		s.Fact("Server", "Option files", "%s", how)
	}
	return nil
}

// snapshotInnoDBStatus adds SHOW ENGINE INNODB STATUS to status sample i of n.
func snapshotInnoDBStatus(s *collect.Snap, vars map[string]string, i, n int) {
	rows, err := s.Query(`SHOW ENGINE INNODB STATUS`)
	if err != nil {
		s.Fail(fmt.Sprintf("innodb status %d", i), err)
		return
	}
	if len(rows) == 1 && len(rows[0]) >= 3 {
		s.Add(fmt.Sprintf("innodb_status_%d.txt", i), fmt.Sprintf("SHOW ENGINE INNODB STATUS (%d of %d, with status sample %d)", i, n, i), []byte(rows[0][2]))
		if i == 1 {
			st := parseInnoDBEngineStatus(rows[0][2])
			if st.HasLSN {
				s.Fact("InnoDB", "Checkpoint age", "%s behind the redo log head (%s)", collect.SizeText(st.LSN-st.Checkpoint), redoText(vars))
			}
			if st.HasHistory {
				s.Fact("InnoDB", "History list", "%d undo log entries not yet purged", st.HistoryListLength)
			}
		}
	}
}

// snapshotSessions is the snapshot's "sessions" source.
func snapshotSessions(s *collect.Snap) error {
	head := []string{"id", "user", "host", "db", "command", "time", "state", "info"}
	q := `SELECT ID, USER, HOST, coalesce(DB, ''), COMMAND, TIME, coalesce(STATE, ''), left(coalesce(INFO, ''), 500) FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID()`
	all, err := s.Query(q + ` ORDER BY TIME DESC`)
	if err != nil {
		return err
	}
	s.Add("processlist.tsv", "every thread (information_schema.PROCESSLIST)", collect.Table(head, all))
	long, err := s.Query(q + fmt.Sprintf(` AND COMMAND NOT IN ('Sleep', 'Daemon', 'Binlog Dump', 'Binlog Dump GTID') AND TIME >= %d ORDER BY TIME DESC`, int(s.Options().LongRunning.Seconds())))
	if err != nil {
		return err
	}
	s.Add("long_running.txt", fmt.Sprintf("statements running for %s or more", s.Options().LongRunning), collect.Aligned(head, long))
	var blocked [][]string
	bhead := []string{"waiting_thread", "waiting_query", "blocking_thread", "blocking_query", "wait_seconds"}
	blocked, err = s.Query(`SELECT r.trx_mysql_thread_id, left(coalesce(r.trx_query, ''), 300), b.trx_mysql_thread_id, left(coalesce(b.trx_query, ''), 300),
		TIMESTAMPDIFF(SECOND, r.trx_wait_started, NOW())
		FROM information_schema.INNODB_LOCK_WAITS w JOIN information_schema.INNODB_TRX r ON r.trx_id = w.requesting_trx_id
		JOIN information_schema.INNODB_TRX b ON b.trx_id = w.blocking_trx_id`)
	if err != nil {
		// MySQL 8 moved lock waits to performance_schema.
		blocked, err = s.Query(`SELECT r.trx_mysql_thread_id, left(coalesce(r.trx_query, ''), 300), b.trx_mysql_thread_id, left(coalesce(b.trx_query, ''), 300),
			TIMESTAMPDIFF(SECOND, r.trx_wait_started, NOW())
			FROM performance_schema.data_lock_waits w JOIN information_schema.INNODB_TRX r ON r.trx_id = w.REQUESTING_ENGINE_TRANSACTION_ID
			JOIN information_schema.INNODB_TRX b ON b.trx_id = w.BLOCKING_ENGINE_TRANSACTION_ID`)
	}
	if err != nil {
		return fmt.Errorf("lock waits: %w", err)
	}
	s.Add("blocked.txt", "transactions waiting for row locks, and who blocks them", collect.Aligned(bhead, blocked))
	active := 0
	for _, r := range all {
		if r[4] != "Sleep" && r[4] != "Daemon" {
			active++
		}
	}
	s.Fact("Sessions", "Threads", "%d (%d not sleeping)", len(all), active)
	s.Fact("Sessions", "Blocked", "%d waiting for row locks (blocked.txt), %d long-running over %s (long_running.txt)", len(blocked), len(long), s.Options().LongRunning)
	return nil
}

// snapshotReplication is the snapshot's "replication" source.
func snapshotReplication(s *collect.Snap, vars map[string]string) error {
	var b bytes.Buffer
	role := snapshotReplicaStatus(s, &b, []string{})
	role = snapshotPrimaryStatus(s, vars, &b, role)
	if len(role) == 0 {
		role = append(role, "standalone (not a replica, binary log off)")
	}
	s.Fact("Replication", "Role", "%s", strings.Join(role, ", "))
	s.Add("replication.txt", "replica status, binary log position and files, GTIDs", b.Bytes())
	return nil
}

// snapshotReplicaStatus writes the server's own replica status to b (and
// replica_status.txt) and returns role with "replica" added when it is one.
func snapshotReplicaStatus(s *collect.Snap, b *bytes.Buffer, role []string) []string {
	cols, rep, err := s.QueryColumns(`SHOW REPLICA STATUS`)
	if err != nil {
		cols, rep, err = s.QueryColumns(`SHOW SLAVE STATUS`)
	}
	if err != nil {
		fmt.Fprintf(b, "replica status: %v\n", collect.OneLine(err))
	} else if len(rep) == 0 {
		b.WriteString("replica status: not a replica\n")
	} else {
		b.WriteString("replica status: see replica_status.txt\n")
		role = append(role, "replica")
		var out bytes.Buffer
		for i, r := range rep {
			if len(rep) > 1 {
				fmt.Fprintf(&out, "channel %d of %d:\n", i+1, len(rep))
			}
			out.Write(collect.Aligned([]string{"column", "value"}, collect.NamedRows(cols, r, replicaColumns)))
		}
		s.Add("replica_status.txt", "SHOW REPLICA STATUS, every column by name", out.Bytes())
		get := func(names ...string) string {
			for _, n := range names {
				for i, c := range cols {
					if strings.EqualFold(c, n) && i < len(rep[0]) {
						return rep[0][i]
					}
				}
			}
			return ""
		}
		if cols == nil && len(rep[0]) > 32 {
			cols = replicaColumns
		}
		s.Fact("Replication", "Lag", "Seconds_Behind_Master %s, IO thread %s, SQL thread %s (a starved IO thread also shows 0: check Read_Master_Log_Pos against the primary)",
			collect.OrUnknown(get("Seconds_Behind_Master", "Seconds_Behind_Source")), get("Slave_IO_Running", "Replica_IO_Running"), get("Slave_SQL_Running", "Replica_SQL_Running"))
		if e := get("Last_IO_Error"); e != "" {
			s.Fact("Replication", "IO error", "%s", e)
		}
		if e := get("Last_SQL_Error"); e != "" {
			s.Fact("Replication", "SQL error", "%s", e)
		}
	}
	return role
}

// snapshotPrimaryStatus writes to b what the server serves as a primary: its
// connected replicas, binary log position and files, and GTIDs; it returns role with
// what it found added.
func snapshotPrimaryStatus(s *collect.Snap, vars map[string]string, b *bytes.Buffer, role []string) []string {
	// A primary's connected replicas: the ones that registered (SHOW SLAVE HOSTS)
	// and the binary log dump threads serving them.
	hcols, hosts, herr := s.QueryColumns(`SHOW REPLICA HOSTS`)
	if herr != nil {
		hcols, hosts, herr = s.QueryColumns(`SHOW SLAVE HOSTS`)
	}
	dumps, derr := s.Query(`SELECT ID, USER, HOST, COMMAND, TIME, coalesce(STATE, '') FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%' ORDER BY ID`)
	if derr == nil && len(dumps) > 0 || herr == nil && len(hosts) > 0 {
		role = append(role, fmt.Sprintf("primary with %d connected replicas", len(dumps)))
	}
	b.WriteString("\nconnected replicas (binary log dump threads):\n")
	if derr != nil {
		fmt.Fprintf(b, "  %v\n", collect.OneLine(derr))
	} else {
		b.Write(collect.Aligned([]string{"thread", "user", "replica", "command", "seconds", "state"}, dumps))
	}
	b.WriteString("\nregistered replicas (SHOW SLAVE HOSTS):\n")
	if herr != nil {
		fmt.Fprintf(b, "  %v\n", collect.OneLine(herr))
	} else {
		if hcols == nil {
			hcols = []string{"Server_id", "Host", "Port", "Master_id"}
		}
		b.Write(collect.Aligned(hcols, hosts))
	}
	if vars["log_bin"] == "ON" || vars["log_bin"] == "1" {
		role = append(role, "binary log on")
		if ms, err := s.Query(`SHOW MASTER STATUS`); err == nil {
			b.WriteString("\nbinary log position (SHOW MASTER STATUS):\n")
			b.Write(collect.Aligned([]string{"file", "position", "do_db", "ignore_db"}, firstCols(ms, 4)))
		}
		if logs, err := s.Query(`SHOW BINARY LOGS`); err == nil {
			var total int64
			for _, l := range logs {
				n, _ := strconv.ParseInt(l[1], 10, 64)
				total += n
			}
			fmt.Fprintf(b, "\nbinary logs: %d files, %s (each with its size and rotation rate in binlog_digest.txt)\n", len(logs), collect.SizeText(total))
			s.Fact("Replication", "Binary logs", "%d files, %s", len(logs), collect.SizeText(total))
		}
	} else {
		b.WriteString("\nbinary log: off\n")
	}
	if gtid, err := s.Query(`SHOW GLOBAL VARIABLES WHERE Variable_name IN ('gtid_mode', 'gtid_executed', 'gtid_current_pos', 'gtid_slave_pos', 'server_id', 'read_only')`); err == nil {
		b.WriteString("\n")
		b.Write(collect.Aligned([]string{"variable", "value"}, gtid))
	}
	return role
}

// snapshotSizes is the snapshot's "sizes" source.
func snapshotSizes(s *collect.Snap) error {
	dbs, err := s.Query(`SELECT table_schema, coalesce(SUM(data_length + index_length), 0), COUNT(*) FROM information_schema.TABLES GROUP BY table_schema ORDER BY 2 DESC`)
	if err != nil {
		return err
	}
	var total int64
	for _, d := range dbs {
		n, _ := strconv.ParseInt(d[1], 10, 64)
		total += n
		d[1] = collect.SizeText(n)
	}
	s.Add("databases.txt", "schemas by size (data + indexes)", collect.Aligned([]string{"schema", "size", "tables"}, dbs))
	s.Fact("Data", "Schemas", "%d, %s in all", len(dbs), collect.SizeText(total))
	tables, err := s.Query(fmt.Sprintf(`SELECT table_schema, table_name, coalesce(engine, ''), coalesce(table_rows, 0), coalesce(data_length, 0), coalesce(index_length, 0), coalesce(data_free, 0)
		FROM information_schema.TABLES WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys')
		ORDER BY data_length + index_length DESC LIMIT %d`, s.Options().TopTables))
	if err != nil {
		return err
	}
	var top []string
	for i, t := range tables {
		for _, j := range []int{4, 5, 6} {
			n, _ := strconv.ParseInt(t[j], 10, 64)
			t[j] = collect.SizeText(n)
		}
		if i < 3 {
			top = append(top, fmt.Sprintf("%s.%s %s", t[0], t[1], t[4]))
		}
	}
	s.Add("tables.txt", fmt.Sprintf("the %d largest tables", s.Options().TopTables), collect.Aligned([]string{"schema", "table", "engine", "rows(est)", "data", "indexes", "free"}, tables))
	if len(top) > 0 {
		s.Fact("Data", "Largest", "%s", strings.Join(top, ", "))
	}
	return nil
}

// snapshotSchema is the snapshot's "schema" source.
func snapshotSchema(s *collect.Snap) error {
	tabs, err := s.Query(fmt.Sprintf(`SELECT table_schema, table_name FROM information_schema.TABLES WHERE table_type = 'BASE TABLE'
		AND table_schema NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys') ORDER BY 1, 2 LIMIT %d`, s.Options().MaxSchemaTables+1))
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if len(tabs) > s.Options().MaxSchemaTables {
		fmt.Fprintf(&b, "-- only the first %d tables\n\n", s.Options().MaxSchemaTables)
		tabs = tabs[:s.Options().MaxSchemaTables]
	}
	for _, t := range tabs {
		rows, err := s.Query("SHOW CREATE TABLE `" + strings.ReplaceAll(t[0], "`", "``") + "`.`" + strings.ReplaceAll(t[1], "`", "``") + "`")
		if err != nil {
			fmt.Fprintf(&b, "-- %s.%s: %v\n\n", t[0], t[1], collect.OneLine(err))
			continue
		}
		if len(rows) == 1 && len(rows[0]) >= 2 {
			fmt.Fprintf(&b, "-- %s\n%s;\n\n", t[0], rows[0][1])
		}
	}
	s.Add("schema.sql", "SHOW CREATE TABLE of every user table", b.Bytes())
	return nil
}

// snapshotLogs is the snapshot's "logs" source.
func snapshotLogs(s *collect.Snap, vars map[string]string) error {
	rows, err := s.Query(`SHOW GLOBAL VARIABLES WHERE Variable_name IN ('log_error', 'slow_query_log', 'slow_query_log_file', 'long_query_time',
		'log_output', 'general_log', 'general_log_file', 'log_bin_basename', 'log_queries_not_using_indexes', 'log_slow_verbosity')`)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	b.Write(collect.Aligned([]string{"variable", "value"}, rows))
	b.WriteString("\n")
	for _, r := range rows {
		if strings.HasSuffix(r[0], "_file") || r[0] == "log_error" {
			f := r[1]
			if f != "" && !strings.HasPrefix(f, "/") && vars["datadir"] != "" {
				f = strings.TrimSuffix(vars["datadir"], "/") + "/" + strings.TrimPrefix(f, "./")
			}
			if f != "" {
				fmt.Fprintf(&b, "%s: %s%s\n", r[0], f, s.ExistsText(f))
			}
		}
		if r[0] == "log_error" {
			s.Fact("Server", "Error log", "%s", collect.OrUnknown(r[1]))
		}
		if r[0] == "slow_query_log" {
			s.Fact("Server", "Slow log", "%s (slow_query_log_file, long_query_time in logs.txt)", r[1])
		}
	}
	s.Add("logs.txt", "error, slow and general log settings and locations", b.Bytes())
	return nil
}

// dataDirPath resolves a file name relative to the data directory, as the server does.
func dataDirPath(vars map[string]string, f string) string {
	if f != "" && !strings.HasPrefix(f, "/") && vars["datadir"] != "" {
		return strings.TrimSuffix(vars["datadir"], "/") + "/" + strings.TrimPrefix(f, "./")
	}
	return f
}

// snapshotErrorLog is the snapshot's "error log" source.
func snapshotErrorLog(s *collect.Snap, vars map[string]string) error {
	f := vars["log_error"]
	if f == "" || f == "stderr" {
		f = ""
	}
	return s.LogTail("server's error log", []string{dataDirPath(vars, f), s.StderrFile()}, s.Options().LogLines)
}

// snapshotUsers is the snapshot's "users" source.
func snapshotUsers(s *collect.Snap) error {
	users, err := s.Query(`SELECT User, Host FROM mysql.user ORDER BY User, Host`)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%d accounts (password hashes are never read; grants with passwords are masked)\n\n", len(users))
	for _, u := range users {
		grants, err := s.Query("SHOW GRANTS FOR '" + strings.ReplaceAll(u[0], "'", "''") + "'@'" + strings.ReplaceAll(u[1], "'", "''") + "'")
		fmt.Fprintf(&b, "-- '%s'@'%s'\n", u[0], u[1])
		if err != nil {
			fmt.Fprintf(&b, "   %v\n", collect.OneLine(err))
		}
		for _, g := range grants {
			if len(g) > 0 {
				b.WriteString(g[0] + ";\n")
			}
		}
		b.WriteString("\n")
	}
	s.Add("users.txt", "accounts and their grants (no password hashes)", b.Bytes())
	anyHost := 0
	for _, u := range users {
		if u[1] == "%" {
			anyHost++
		}
	}
	s.Fact("Security", "Accounts", "%d, %d of them from any host ('%%') (users.txt)", len(users), anyHost)
	return nil
}

// mysqlSlowDigest writes slow_digest.txt: the statements that took the most time in
// all, from performance_schema's digest summary when it is on, else from the slow log.
func mysqlSlowDigest(s *collect.Snap, vars map[string]string, slowFile string) error {
	var b bytes.Buffer
	top := s.Options().TopStatements
	if vars["performance_schema"] == "ON" {
		rows, err := s.Query(fmt.Sprintf(`SELECT coalesce(SCHEMA_NAME, ''), COUNT_STAR, round(SUM_TIMER_WAIT / 1e12, 3), round(AVG_TIMER_WAIT / 1e9, 3),
			round(MAX_TIMER_WAIT / 1e9, 3), SUM_ROWS_EXAMINED, SUM_ROWS_SENT, left(coalesce(DIGEST_TEXT, ''), 300)
			FROM performance_schema.events_statements_summary_by_digest ORDER BY SUM_TIMER_WAIT DESC LIMIT %d`, top))
		if err == nil {
			fmt.Fprintf(&b, "top %d statements by total time, from performance_schema.events_statements_summary_by_digest (since %s):\n\n", top, "the server started or the summary was truncated")
			b.Write(collect.Aligned([]string{"schema", "calls", "total_s", "avg_ms", "max_ms", "rows_examined", "rows_sent", "statement"}, rows))
			s.Add("slow_digest.txt", fmt.Sprintf("the %d statements that took the most time in all", top), b.Bytes())
			if len(rows) > 0 {
				s.Fact("Logs", "Slowest in all", "%s s over %s calls: %s (slow_digest.txt)", rows[0][2], rows[0][1], collect.FirstWords(rows[0][7], 8))
			}
			return nil
		}
		fmt.Fprintf(&b, "performance_schema digest summary not readable: %v\n", collect.OneLine(err))
	} else {
		b.WriteString("performance_schema is off: digest of the slow query log file instead\n")
	}
	if vars["slow_query_log"] != "ON" && vars["slow_query_log"] != "1" {
		if _, err := os.Stat(slowFile); slowFile == "" || err != nil {
			b.WriteString("slow_query_log is OFF and there is no slow log file: no statement times were kept (turn on performance_schema, or slow_query_log with long_query_time)\n")
			s.Add("slow_digest.txt", "statement digest: none kept by the server", b.Bytes())
			s.Fact("Logs", "Slow statements", "not kept: performance_schema and slow_query_log are off")
			return nil
		}
	}
	if slowFile == "" || !s.Server().Local {
		return fmt.Errorf("no statement digest: performance_schema is off and the slow log file is not readable here")
	}
	digest, err := slowLogDigest(slowFile, top)
	if err != nil {
		return err
	}
	fmt.Fprintf(&b, "top %d statements by total time in %s (slow_query_log %s, long_query_time %s: only statements over it are logged):\n\n", top, slowFile, vars["slow_query_log"], vars["long_query_time"])
	b.Write(collect.Aligned([]string{"calls", "total_s", "avg_s", "max_s", "rows_examined", "statement"}, digest))
	s.Add("slow_digest.txt", fmt.Sprintf("the %d statements that took the most time in all (slow log)", top), b.Bytes())
	return nil
}

var (
	reSlowTime = regexp.MustCompile(`^# Query_time: ([0-9.]+)\s+Lock_time: [0-9.]+\s+Rows_sent: \d+\s+Rows_examined: (\d+)`)
	reLiteral  = regexp.MustCompile(`'(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*"|\b\d+(?:\.\d+)?\b`)
	reInList   = regexp.MustCompile(`\((?:\s*\?\s*,)+\s*\?\s*\)`)
)

// slowLogDigest groups a slow query log's statements by their text with literals
// replaced by ?, and returns the top ones by total time.
func slowLogDigest(path string, top int) ([][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	type agg struct {
		calls            int
		total, max, exam float64
		text             string
	}
	groups := map[string]*agg{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var qt, rows float64
	var stmt []string
	in := false
	flush := func() {
		if !in || len(stmt) == 0 {
			stmt, in = nil, false
			return
		}
		text := strings.Join(strings.Fields(strings.Join(stmt, " ")), " ")
		key := reInList.ReplaceAllString(reLiteral.ReplaceAllString(text, "?"), "(?+)")
		g := groups[key]
		if g == nil {
			g = &agg{text: key}
			groups[key] = g
		}
		g.calls++
		g.total += qt
		g.max = max(g.max, qt)
		g.exam += rows
		stmt, in = nil, false
	}
	for sc.Scan() {
		line := sc.Text()
		if m := reSlowTime.FindStringSubmatch(line); m != nil {
			flush()
			qt, _ = strconv.ParseFloat(m[1], 64)
			rows, _ = strconv.ParseFloat(m[2], 64)
			in = true
			continue
		}
		if !in || strings.HasPrefix(line, "#") || strings.HasPrefix(strings.ToUpper(line), "SET TIMESTAMP=") || strings.HasPrefix(strings.ToLower(line), "use ") {
			continue
		}
		stmt = append(stmt, line)
	}
	flush()
	if err := sc.Err(); err != nil {
		return nil, err
	}
	list := make([]*agg, 0, len(groups))
	for _, g := range groups {
		list = append(list, g)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].total > list[j].total })
	if len(list) > top {
		list = list[:top]
	}
	var out [][]string
	for _, g := range list {
		text := g.text
		if len(text) > 300 {
			text = text[:300] + "…"
		}
		out = append(out, []string{strconv.Itoa(g.calls), fmt.Sprintf("%.3f", g.total), fmt.Sprintf("%.3f", g.total/float64(g.calls)),
			fmt.Sprintf("%.3f", g.max), strconv.FormatFloat(g.exam, 'f', 0, 64), text})
	}
	return out, nil
}

// mysqlBinlogDigest writes binlog_digest.txt: the binary logs with their sizes and,
// when the files are on this host, when each was last written, so that the rotation
// rate shows.
func mysqlBinlogDigest(s *collect.Snap, vars map[string]string) error {
	if vars["log_bin"] != "ON" && vars["log_bin"] != "1" {
		s.Add("binlog_digest.txt", "binary log digest", []byte("binary log: off\n"))
		return nil
	}
	logs, err := s.Query(`SHOW BINARY LOGS`)
	if err != nil {
		return err
	}
	dir := filepath.Dir(vars["log_bin_basename"])
	var rows [][]string
	var total int64
	var times []time.Time
	for _, l := range logs {
		n, _ := strconv.ParseInt(l[1], 10, 64)
		total += n
		written := ""
		if s.Server().Local && vars["log_bin_basename"] != "" {
			if st, err := os.Stat(filepath.Join(dir, l[0])); err == nil {
				written = st.ModTime().UTC().Format(time.RFC3339)
				times = append(times, st.ModTime())
			}
		}
		rows = append(rows, []string{l[0], l[1], collect.SizeText(n), written})
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%d binary logs, %s in all; max_binlog_size %s, binlog_format %s, sync_binlog %s, expire: %s\n\n", len(logs), collect.SizeText(total),
		byteSetting(vars["max_binlog_size"]), vars["binlog_format"], vars["sync_binlog"], binlogExpiry(vars))
	b.Write(collect.Aligned([]string{"file", "bytes", "size", "last_written"}, rows))
	rate := ""
	if len(times) >= 3 {
		sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
		// Files that were closed (all but the current one) over the time they span.
		span := times[len(times)-2].Sub(times[0])
		if span > 0 {
			perHour := float64(len(times)-2) / span.Hours()
			rate = fmt.Sprintf("%.1f rotations/hour (over the %s the closed files span)", perHour, span.Round(time.Minute))
			fmt.Fprintf(&b, "\nrotation rate: %s\n", rate)
		}
	} else if !s.Server().Local {
		b.WriteString("\nrotation rate: not known (the files are not on this host)\n")
	}
	s.Add("binlog_digest.txt", "binary logs: sizes, when each was written, rotation rate", b.Bytes())
	if rate != "" {
		s.Fact("Replication", "Binlog rotation", "%s", rate)
	}
	return nil
}

func binlogExpiry(vars map[string]string) string {
	if v, _ := strconv.ParseFloat(vars["binlog_expire_logs_seconds"], 64); v > 0 {
		return (time.Duration(v) * time.Second).String()
	}
	if v, _ := strconv.ParseFloat(vars["expire_logs_days"], 64); v > 0 {
		return strconv.FormatFloat(v, 'f', -1, 64) + " days"
	}
	return "never (binlog_expire_logs_seconds and expire_logs_days are 0)"
}

func firstCols(rows [][]string, n int) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		if len(r) > n {
			r = r[:n]
		}
		out[i] = r
	}
	return out
}

func byteSetting(v string) string {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return v
	}
	return collect.SizeText(n)
}

func redoText(vars map[string]string) string {
	if c := vars["innodb_redo_log_capacity"]; c != "" {
		return byteSetting(c)
	}
	size, _ := strconv.ParseInt(vars["innodb_log_file_size"], 10, 64)
	files, _ := strconv.ParseInt(vars["innodb_log_files_in_group"], 10, 64)
	if files == 0 {
		files = 1
	}
	if size == 0 {
		return "unknown size"
	}
	return collect.SizeText(size * files)
}

// replicaColumns are the first columns of SHOW SLAVE STATUS, the same in MySQL 5.x–8.x
// (renamed Replica_*/Source_* from 8.0.22, same order) and MariaDB.
var replicaColumns = []string{"Slave_IO_State", "Master_Host", "Master_User", "Master_Port", "Connect_Retry",
	"Master_Log_File", "Read_Master_Log_Pos", "Relay_Log_File", "Relay_Log_Pos", "Relay_Master_Log_File",
	"Slave_IO_Running", "Slave_SQL_Running", "Replicate_Do_DB", "Replicate_Ignore_DB", "Replicate_Do_Table",
	"Replicate_Ignore_Table", "Replicate_Wild_Do_Table", "Replicate_Wild_Ignore_Table", "Last_Errno", "Last_Error",
	"Skip_Counter", "Exec_Master_Log_Pos", "Relay_Log_Space", "Until_Condition", "Until_Log_File", "Until_Log_Pos",
	"Master_SSL_Allowed", "Master_SSL_CA_File", "Master_SSL_CA_Path", "Master_SSL_Cert", "Master_SSL_Cipher",
	"Master_SSL_Key", "Seconds_Behind_Master"}

// cmdlineOption returns the value of --name=value or --name value in a command line.
func cmdlineOption(args []string, name string) string {
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
		if a == "--"+name && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

func readArgs(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
}

var reInclude = regexp.MustCompile(`^\s*!(include|includedir)\s+(.+?)\s*$`)

// myOptionFiles follows an option file's !include and !includedir lines, in the
// order the server reads them.
func myOptionFiles(path string, depth int, seen map[string]bool) []string {
	if depth > 10 || seen[path] {
		return nil
	}
	seen[path] = true
	out := []string{path}
	b, err := os.ReadFile(path)
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		m := reInclude.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if m[1] == "include" {
			out = append(out, myOptionFiles(m[2], depth+1, seen)...)
			continue
		}
		matches, _ := filepath.Glob(filepath.Join(m[2], "*.cnf"))
		sort.Strings(matches)
		for _, f := range matches {
			out = append(out, myOptionFiles(f, depth+1, seen)...)
		}
	}
	return out
}

func containsArg(args []string, a string) bool {
	for _, x := range args {
		if x == a {
			return true
		}
	}
	return false
}

// Activity sums up the key rates for a snapshot's Activity line: statements, redo
// written and rows read.
func (collectSide) Activity(rate map[string]float64) (parts []string, _ [][2]string) {
	if v, ok := rate[mySQLQuestions]; ok {
		parts = append(parts, fmt.Sprintf("%.0f statements/s", v))
	}
	if v, ok := rate[mySQLInnoDBOsLogWritten]; ok {
		parts = append(parts, fmt.Sprintf("redo %s/s", collect.SizeText(int64(v))))
	}
	if v, ok := rate[mySQLInnoDBRowsRead]; ok {
		parts = append(parts, fmt.Sprintf("%.0f rows read/s", v))
	}
	return parts, nil
}
