package collect

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// MySQL and MariaDB sources of a snapshot.

func (s *snap) mysql() {
	vars := map[string]string{}
	s.source("server", func() error {
		rows, err := s.query(`SELECT VERSION(), @@version_comment, @@hostname, @@port, @@socket, @@datadir, @@pid_file, @@character_set_server`)
		if err != nil {
			return err
		}
		r := rows[0]
		up, _ := s.query(`SHOW GLOBAL STATUS LIKE 'Uptime'`)
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
		if s.srv.Local {
			where = fmt.Sprintf("this host, pid %d", s.srv.PID)
		}
		fmt.Fprintf(&b, "%-16s %s\n", "runs on:", where)
		if eng, err := s.query(`SELECT ENGINE, SUPPORT FROM information_schema.ENGINES WHERE SUPPORT IN ('YES', 'DEFAULT') ORDER BY ENGINE`); err == nil {
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
		s.add("server.txt", "version, uptime, data directory, engines", b.Bytes())
		s.fact("Server", "Version", "%s (%s)", r[0], r[1])
		s.fact("Server", "Up", "%s", uptime)
		s.fact("Server", "Data dir", "%s%s", r[5], s.diskText())
		return nil
	})
	s.source("variables", func() error {
		rows, err := s.query(`SHOW GLOBAL VARIABLES`)
		if err != nil {
			return err
		}
		for _, r := range rows {
			vars[r[0]] = r[1]
		}
		s.add("variables.tsv", "SHOW GLOBAL VARIABLES", table([]string{"variable", "value"}, rows))
		s.fact("Server", "InnoDB", "buffer pool %s, redo %s, flush_log_at_trx_commit %s, flush_method %s, io_capacity %s/%s",
			byteSetting(vars["innodb_buffer_pool_size"]), redoText(vars), vars["innodb_flush_log_at_trx_commit"], vars["innodb_flush_method"],
			vars["innodb_io_capacity"], vars["innodb_io_capacity_max"])
		s.fact("Server", "Binary log", "log_bin %s, sync_binlog %s, max_binlog_size %s, format %s",
			vars["log_bin"], vars["sync_binlog"], byteSetting(vars["max_binlog_size"]), vars["binlog_format"])
		return nil
	})
	s.source("configuration files", func() error {
		var b bytes.Buffer
		b.WriteString("option files the server reads, in order (a server started with --defaults-file reads only that one):\n")
		files := []string{"/etc/my.cnf", "/etc/mysql/my.cnf", "/etc/mysql/mariadb.cnf", "/etc/mysql/conf.d/", "/etc/mysql/mariadb.conf.d/", "/etc/mysql/mysql.conf.d/", "/usr/etc/my.cnf", "~/.my.cnf"}
		if d := vars["datadir"]; d != "" {
			files = append(files, strings.TrimSuffix(d, "/")+"/auto.cnf", strings.TrimSuffix(d, "/")+"/mysqld-auto.cnf")
		}
		for _, f := range files {
			fmt.Fprintf(&b, "  %s%s\n", f, s.existsText(f))
		}
		if s.srv.Local && s.srv.PID > 0 {
			if cmd, err := readCmdline(s.srv.PID); err == nil {
				fmt.Fprintf(&b, "\nserver command line: %s\n", cmd)
			}
		}
		s.add("config_files.txt", "option file locations and the server's command line", b.Bytes())
		return nil
	})
	s.source("innodb status", func() error {
		for i := 1; i <= 2; i++ {
			rows, err := s.query(`SHOW ENGINE INNODB STATUS`)
			if err != nil {
				return err
			}
			if len(rows) == 1 && len(rows[0]) >= 3 {
				s.add(fmt.Sprintf("innodb_status_%d.txt", i), fmt.Sprintf("SHOW ENGINE INNODB STATUS (%d of 2, a few seconds apart)", i), []byte(rows[0][2]))
				if i == 1 {
					st := ParseInnoDBStatus(rows[0][2])
					if st.HasLSN {
						s.fact("InnoDB", "Checkpoint age", "%s behind the redo log head (%s)", sizeText(st.LSN-st.Checkpoint), redoText(vars))
					}
					if st.HasHistory {
						s.fact("InnoDB", "History list", "%d undo log entries not yet purged", st.HistoryListLength)
					}
				}
			}
			if i == 1 {
				time.Sleep(min(3*time.Second, s.opts.Interval/2))
			}
		}
		return nil
	})
	s.source("sessions", func() error {
		head := []string{"id", "user", "host", "db", "command", "time", "state", "info"}
		q := `SELECT ID, USER, HOST, coalesce(DB, ''), COMMAND, TIME, coalesce(STATE, ''), left(coalesce(INFO, ''), 500) FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID()`
		all, err := s.query(q + ` ORDER BY TIME DESC`)
		if err != nil {
			return err
		}
		s.add("processlist.tsv", "every thread (information_schema.PROCESSLIST)", table(head, all))
		long, err := s.query(q + fmt.Sprintf(` AND COMMAND NOT IN ('Sleep', 'Daemon', 'Binlog Dump', 'Binlog Dump GTID') AND TIME >= %d ORDER BY TIME DESC`, int(s.opts.LongRunning.Seconds())))
		if err != nil {
			return err
		}
		s.add("long_running.txt", fmt.Sprintf("statements running for %s or more", s.opts.LongRunning), aligned(head, long))
		var blocked [][]string
		bhead := []string{"waiting_thread", "waiting_query", "blocking_thread", "blocking_query", "wait_seconds"}
		blocked, err = s.query(`SELECT r.trx_mysql_thread_id, left(coalesce(r.trx_query, ''), 300), b.trx_mysql_thread_id, left(coalesce(b.trx_query, ''), 300),
			TIMESTAMPDIFF(SECOND, r.trx_wait_started, NOW())
			FROM information_schema.INNODB_LOCK_WAITS w JOIN information_schema.INNODB_TRX r ON r.trx_id = w.requesting_trx_id
			JOIN information_schema.INNODB_TRX b ON b.trx_id = w.blocking_trx_id`)
		if err != nil {
			// MySQL 8 moved lock waits to performance_schema.
			blocked, err = s.query(`SELECT r.trx_mysql_thread_id, left(coalesce(r.trx_query, ''), 300), b.trx_mysql_thread_id, left(coalesce(b.trx_query, ''), 300),
				TIMESTAMPDIFF(SECOND, r.trx_wait_started, NOW())
				FROM performance_schema.data_lock_waits w JOIN information_schema.INNODB_TRX r ON r.trx_id = w.REQUESTING_ENGINE_TRANSACTION_ID
				JOIN information_schema.INNODB_TRX b ON b.trx_id = w.BLOCKING_ENGINE_TRANSACTION_ID`)
		}
		if err != nil {
			return fmt.Errorf("lock waits: %w", err)
		}
		s.add("blocked.txt", "transactions waiting for row locks, and who blocks them", aligned(bhead, blocked))
		active := 0
		for _, r := range all {
			if r[4] != "Sleep" && r[4] != "Daemon" {
				active++
			}
		}
		s.fact("Sessions", "Threads", "%d (%d not sleeping)", len(all), active)
		s.fact("Sessions", "Blocked", "%d waiting for row locks (blocked.txt), %d long-running over %s (long_running.txt)", len(blocked), len(long), s.opts.LongRunning)
		return nil
	})
	s.source("replication", func() error {
		var b bytes.Buffer
		role := []string{}
		rep, err := s.query(`SHOW REPLICA STATUS`)
		if err != nil {
			rep, err = s.query(`SHOW SLAVE STATUS`)
		}
		if err != nil {
			fmt.Fprintf(&b, "replica status: %v\n", oneLine(err))
		} else if len(rep) == 0 {
			b.WriteString("replica status: not a replica\n")
		} else {
			b.WriteString("replica status: see replica_status.txt\n")
			role = append(role, "replica")
			var rows [][]string
			for i, v := range rep[0] {
				name := strconv.Itoa(i + 1)
				if i < len(replicaColumns) {
					name = replicaColumns[i]
				}
				rows = append(rows, []string{name, v})
			}
			s.add("replica_status.txt", "SHOW REPLICA STATUS (columns past the 33 every version shares are numbered)", aligned([]string{"column", "value"}, rows))
			if len(rep[0]) > 32 {
				s.fact("Replication", "Lag", "Seconds_Behind_Master %s, IO thread %s, SQL thread %s (a starved IO thread also shows 0: check Read_Master_Log_Pos against the primary)",
					orUnknown(rep[0][32]), rep[0][10], rep[0][11])
			}
		}
		if vars["log_bin"] == "ON" || vars["log_bin"] == "1" {
			role = append(role, "binary log on")
			if ms, err := s.query(`SHOW MASTER STATUS`); err == nil {
				b.WriteString("\nbinary log position (SHOW MASTER STATUS):\n")
				b.Write(aligned([]string{"file", "position", "do_db", "ignore_db"}, firstCols(ms, 4)))
			}
			if logs, err := s.query(`SHOW BINARY LOGS`); err == nil {
				var total int64
				for _, l := range logs {
					n, _ := strconv.ParseInt(l[1], 10, 64)
					total += n
				}
				fmt.Fprintf(&b, "\nbinary logs: %d files, %s (digest of SHOW BINARY LOGS):\n", len(logs), sizeText(total))
				b.Write(aligned([]string{"file", "bytes"}, firstCols(logs, 2)))
				s.fact("Replication", "Binary logs", "%d files, %s", len(logs), sizeText(total))
			}
		} else {
			b.WriteString("\nbinary log: off\n")
		}
		if gtid, err := s.query(`SHOW GLOBAL VARIABLES WHERE Variable_name IN ('gtid_mode', 'gtid_executed', 'gtid_current_pos', 'gtid_slave_pos', 'server_id', 'read_only')`); err == nil {
			b.WriteString("\n")
			b.Write(aligned([]string{"variable", "value"}, gtid))
		}
		if len(role) == 0 {
			role = append(role, "standalone (not a replica, binary log off)")
		}
		s.fact("Replication", "Role", "%s", strings.Join(role, ", "))
		s.add("replication.txt", "replica status, binary log position and files, GTIDs", b.Bytes())
		return nil
	})
	s.source("sizes", func() error {
		dbs, err := s.query(`SELECT table_schema, coalesce(SUM(data_length + index_length), 0), COUNT(*) FROM information_schema.TABLES GROUP BY table_schema ORDER BY 2 DESC`)
		if err != nil {
			return err
		}
		var total int64
		for _, d := range dbs {
			n, _ := strconv.ParseInt(d[1], 10, 64)
			total += n
			d[1] = sizeText(n)
		}
		s.add("databases.txt", "schemas by size (data + indexes)", aligned([]string{"schema", "size", "tables"}, dbs))
		s.fact("Data", "Schemas", "%d, %s in all", len(dbs), sizeText(total))
		tables, err := s.query(fmt.Sprintf(`SELECT table_schema, table_name, coalesce(engine, ''), coalesce(table_rows, 0), coalesce(data_length, 0), coalesce(index_length, 0), coalesce(data_free, 0)
			FROM information_schema.TABLES WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys')
			ORDER BY data_length + index_length DESC LIMIT %d`, s.opts.TopTables))
		if err != nil {
			return err
		}
		var top []string
		for i, t := range tables {
			for _, j := range []int{4, 5, 6} {
				n, _ := strconv.ParseInt(t[j], 10, 64)
				t[j] = sizeText(n)
			}
			if i < 3 {
				top = append(top, fmt.Sprintf("%s.%s %s", t[0], t[1], t[4]))
			}
		}
		s.add("tables.txt", fmt.Sprintf("the %d largest tables", s.opts.TopTables), aligned([]string{"schema", "table", "engine", "rows(est)", "data", "indexes", "free"}, tables))
		if len(top) > 0 {
			s.fact("Data", "Largest", "%s", strings.Join(top, ", "))
		}
		return nil
	})
	s.source("schema", func() error {
		tabs, err := s.query(fmt.Sprintf(`SELECT table_schema, table_name FROM information_schema.TABLES WHERE table_type = 'BASE TABLE'
			AND table_schema NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys') ORDER BY 1, 2 LIMIT %d`, s.opts.MaxSchemaTables+1))
		if err != nil {
			return err
		}
		var b bytes.Buffer
		if len(tabs) > s.opts.MaxSchemaTables {
			fmt.Fprintf(&b, "-- only the first %d tables\n\n", s.opts.MaxSchemaTables)
			tabs = tabs[:s.opts.MaxSchemaTables]
		}
		for _, t := range tabs {
			rows, err := s.query("SHOW CREATE TABLE `" + strings.ReplaceAll(t[0], "`", "``") + "`.`" + strings.ReplaceAll(t[1], "`", "``") + "`")
			if err != nil {
				fmt.Fprintf(&b, "-- %s.%s: %v\n\n", t[0], t[1], oneLine(err))
				continue
			}
			if len(rows) == 1 && len(rows[0]) >= 2 {
				fmt.Fprintf(&b, "-- %s\n%s;\n\n", t[0], rows[0][1])
			}
		}
		s.add("schema.sql", "SHOW CREATE TABLE of every user table", b.Bytes())
		return nil
	})
	s.source("logs", func() error {
		rows, err := s.query(`SHOW GLOBAL VARIABLES WHERE Variable_name IN ('log_error', 'slow_query_log', 'slow_query_log_file', 'long_query_time',
			'log_output', 'general_log', 'general_log_file', 'log_bin_basename', 'log_queries_not_using_indexes', 'log_slow_verbosity')`)
		if err != nil {
			return err
		}
		var b bytes.Buffer
		b.Write(aligned([]string{"variable", "value"}, rows))
		b.WriteString("\n")
		for _, r := range rows {
			if strings.HasSuffix(r[0], "_file") || r[0] == "log_error" {
				f := r[1]
				if f != "" && !strings.HasPrefix(f, "/") && vars["datadir"] != "" {
					f = strings.TrimSuffix(vars["datadir"], "/") + "/" + strings.TrimPrefix(f, "./")
				}
				if f != "" {
					fmt.Fprintf(&b, "%s: %s%s\n", r[0], f, s.existsText(f))
				}
			}
			if r[0] == "log_error" {
				s.fact("Server", "Error log", "%s", orUnknown(r[1]))
			}
			if r[0] == "slow_query_log" {
				s.fact("Server", "Slow log", "%s (slow_query_log_file, long_query_time in logs.txt)", r[1])
			}
		}
		s.add("logs.txt", "error, slow and general log settings and locations", b.Bytes())
		return nil
	})
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
	return sizeText(n)
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
	return sizeText(size * files)
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
