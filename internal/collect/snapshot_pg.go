package collect

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// PostgreSQL sources of a snapshot.

func (s *snap) postgres() {
	s.source("server", func() error {
		rows, err := s.query(`SELECT version(), pg_postmaster_start_time()::text, date_trunc('second', now() - pg_postmaster_start_time())::text,
			pg_is_in_recovery()::text, current_database(), pg_encoding_to_char(encoding), pg_conf_load_time()::text
			FROM pg_catalog.pg_database WHERE datname = current_database()`)
		if err != nil {
			return err
		}
		if len(rows) != 1 {
			return fmt.Errorf("no row")
		}
		r := rows[0]
		var b bytes.Buffer
		for i, l := range []string{"version", "started", "uptime", "in recovery", "database", "encoding", "configuration loaded"} {
			fmt.Fprintf(&b, "%-22s %s\n", l+":", r[i])
		}
		fmt.Fprintf(&b, "%-22s %s\n", "data directory:", s.srv.DataDir)
		where := "remote (OS facts below describe the machine fathom ran on)"
		if s.srv.Local {
			where = fmt.Sprintf("this host, postmaster pid %d", s.srv.PID)
		}
		fmt.Fprintf(&b, "%-22s %s\n", "runs on:", where)
		if ext, err := s.query(`SELECT extname, extversion FROM pg_catalog.pg_extension ORDER BY 1`); err == nil {
			var names []string
			for _, e := range ext {
				names = append(names, e[0]+" "+e[1])
			}
			fmt.Fprintf(&b, "%-22s %s\n", "extensions:", strings.Join(names, ", "))
		}
		s.add("server.txt", "version, uptime, data directory, extensions", b.Bytes())
		role := "primary"
		if r[3] == "true" {
			role = "replica (in recovery)"
		}
		s.fact("Server", "Version", "%s", firstWords(r[0], 2))
		s.fact("Server", "Up", "%s since %s, %s", r[2], r[1], role)
		s.fact("Server", "Data dir", "%s%s", orUnknown(s.srv.DataDir), s.diskText())
		return nil
	})
	s.source("settings", func() error {
		rows, err := s.query(`SELECT name, setting, coalesce(unit, ''), source, coalesce(sourcefile || ':' || sourceline, ''),
			CASE WHEN setting IS DISTINCT FROM boot_val THEN 'changed' ELSE '' END, pending_restart::text
			FROM pg_catalog.pg_settings ORDER BY name`)
		if err != nil {
			return err
		}
		s.add("settings.tsv", "every setting with its unit, source and file (changed: differs from the built-in default)",
			table([]string{"name", "setting", "unit", "source", "file", "changed", "pending_restart"}, rows))
		var changed []string
		for _, r := range rows {
			if r[5] == "changed" && r[3] != "default" && r[3] != "override" && r[3] != "client" && r[3] != "session" {
				changed = append(changed, r[0]+"="+pgSettingText(r[1], r[2]))
			}
		}
		s.fact("Server", "Changed", "%d settings differ from the defaults (settings.tsv)", len(changed))
		get := map[string]string{}
		for _, r := range rows {
			get[r[0]] = pgSettingText(r[1], r[2])
		}
		s.fact("Server", "Memory", "shared_buffers %s, work_mem %s, maintenance_work_mem %s, effective_cache_size %s",
			get["shared_buffers"], get["work_mem"], get["maintenance_work_mem"], get["effective_cache_size"])
		s.fact("Server", "Durability", "fsync %s, synchronous_commit %s, full_page_writes %s, wal_sync_method %s",
			get["fsync"], get["synchronous_commit"], get["full_page_writes"], get["wal_sync_method"])
		s.fact("Server", "Checkpoints", "max_wal_size %s, checkpoint_timeout %s, checkpoint_completion_target %s",
			get["max_wal_size"], get["checkpoint_timeout"], get["checkpoint_completion_target"])
		return nil
	})
	s.source("configuration files", func() error {
		rows, err := s.query(`SELECT name, setting FROM pg_catalog.pg_settings WHERE name IN ('config_file', 'hba_file', 'ident_file', 'data_directory', 'external_pid_file') ORDER BY name`)
		if err != nil {
			return err
		}
		var b bytes.Buffer
		for _, r := range rows {
			fmt.Fprintf(&b, "%-18s %s%s\n", r[0]+":", r[1], s.existsText(r[1]))
		}
		if s.srv.DataDir != "" {
			auto := s.srv.DataDir + "/postgresql.auto.conf"
			fmt.Fprintf(&b, "%-18s %s%s\n", "auto.conf:", auto, s.existsText(auto))
		}
		if errs, err := s.query(`SELECT sourcefile, sourceline::text, name, coalesce(error, '') FROM pg_catalog.pg_file_settings WHERE error IS NOT NULL`); err == nil && len(errs) > 0 {
			b.WriteString("\nerrors in configuration files (pg_file_settings):\n")
			b.Write(aligned([]string{"file", "line", "name", "error"}, errs))
		}
		if len(rows) == 0 {
			b.WriteString("(file locations need superuser or pg_read_all_settings)\n")
		}
		s.add("config_files.txt", "configuration file locations (and errors in them)", b.Bytes())
		return nil
	})
	s.source("sessions", func() error {
		long := strconv.Itoa(int(s.opts.LongRunning.Seconds()))
		cols := `pid::text, coalesce(usename, ''), coalesce(datname, ''), coalesce(application_name, ''), coalesce(client_addr::text, ''),
			backend_type, coalesce(state, ''), coalesce(wait_event_type || ':' || wait_event, ''),
			coalesce(date_trunc('second', now() - xact_start)::text, ''), coalesce(date_trunc('second', now() - query_start)::text, ''),
			coalesce(array_to_string(pg_blocking_pids(pid), ','), ''), left(regexp_replace(coalesce(query, ''), '\s+', ' ', 'g'), 500)`
		head := []string{"pid", "user", "database", "application", "client", "backend_type", "state", "wait", "xact_age", "query_age", "blocked_by", "query"}
		all, err := s.query(`SELECT ` + cols + ` FROM pg_catalog.pg_stat_activity WHERE pid <> pg_backend_pid() ORDER BY backend_type, pid`)
		if err != nil {
			return err
		}
		s.add("activity.tsv", "pg_stat_activity: every session and background process", table(head, all))
		blocked, err := s.query(`SELECT ` + cols + ` FROM pg_catalog.pg_stat_activity WHERE cardinality(pg_blocking_pids(pid)) > 0 ORDER BY pid`)
		if err != nil {
			return err
		}
		s.add("blocked.txt", "sessions waiting for a lock, and who blocks them", aligned(head, blocked))
		longRows, err := s.query(`SELECT ` + cols + ` FROM pg_catalog.pg_stat_activity WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'
			AND (state <> 'idle' AND query_start < now() - interval '` + long + ` seconds' OR xact_start < now() - interval '` + long + ` seconds') ORDER BY xact_start`)
		if err != nil {
			return err
		}
		s.add("long_running.txt", fmt.Sprintf("statements or transactions older than %s", s.opts.LongRunning), aligned(head, longRows))
		states := map[string]int{}
		clients := 0
		for _, r := range all {
			if r[5] == "client backend" {
				clients++
				states[r[6]]++
			}
		}
		s.fact("Sessions", "Clients", "%d (%d active, %d idle, %d idle in transaction)", clients, states["active"], states["idle"], states["idle in transaction"]+states["idle in transaction (aborted)"])
		s.fact("Sessions", "Blocked", "%d waiting for locks (blocked.txt), %d long-running over %s (long_running.txt)", len(blocked), len(longRows), s.opts.LongRunning)
		return nil
	})
	s.source("locks", func() error {
		rows, err := s.query(`SELECT locktype, mode, granted::text, count(*)::text FROM pg_catalog.pg_locks GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`)
		if err != nil {
			return err
		}
		s.add("locks.txt", "pg_locks by type, mode and granted", aligned([]string{"locktype", "mode", "granted", "count"}, rows))
		return nil
	})
	s.source("replication", func() error {
		var b bytes.Buffer
		rec, err := s.query(`SELECT pg_is_in_recovery()::text`)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "in recovery (replica): %s\n\n", rec[0][0])
		repl, err := s.query(`SELECT coalesce(application_name, ''), coalesce(client_addr::text, ''), state, coalesce(sync_state, ''),
			coalesce((pg_current_wal_lsn() - replay_lsn)::text, ''), coalesce(write_lag::text, ''), coalesce(flush_lag::text, ''), coalesce(replay_lag::text, '')
			FROM pg_catalog.pg_stat_replication`)
		if err == nil {
			b.WriteString("replicas (pg_stat_replication):\n")
			b.Write(aligned([]string{"application", "client", "state", "sync", "replay_bytes_behind", "write_lag", "flush_lag", "replay_lag"}, repl))
		} else if rec[0][0] == "false" {
			fmt.Fprintf(&b, "pg_stat_replication: %v\n", oneLine(err))
		}
		slots, err := s.query(`SELECT slot_name, slot_type, coalesce(database, ''), active::text, coalesce(restart_lsn::text, '') FROM pg_catalog.pg_replication_slots`)
		if err == nil {
			b.WriteString("\nreplication slots:\n")
			b.Write(aligned([]string{"slot", "type", "database", "active", "restart_lsn"}, slots))
		}
		if rec[0][0] == "true" {
			if rx, err := s.query(`SELECT status, coalesce(sender_host, ''), coalesce(latest_end_lsn::text, ''), coalesce(date_trunc('second', now() - last_msg_receipt_time)::text, '') FROM pg_catalog.pg_stat_wal_receiver`); err == nil {
				b.WriteString("\nWAL receiver:\n")
				b.Write(aligned([]string{"status", "sender", "latest_end_lsn", "since_last_message"}, rx))
			}
			if lag, err := s.query(`SELECT coalesce(date_trunc('second', now() - pg_last_xact_replay_timestamp())::text, 'unknown')`); err == nil {
				fmt.Fprintf(&b, "\nreplay delay (now - last replayed commit): %s\n", lag[0][0])
			}
			s.fact("Replication", "Role", "replica")
		} else {
			s.fact("Replication", "Role", "primary with %d connected replicas and %d slots", len(repl), len(slots))
		}
		s.add("replication.txt", "role, replicas and their lag, replication slots", b.Bytes())
		return nil
	})
	s.source("sizes", func() error {
		dbs, err := s.query(`SELECT datname, pg_database_size(datname)::text FROM pg_catalog.pg_database WHERE datallowconn ORDER BY pg_database_size(datname) DESC`)
		if err != nil {
			return err
		}
		var total int64
		rows := make([][]string, len(dbs))
		for i, d := range dbs {
			n, _ := strconv.ParseInt(d[1], 10, 64)
			total += n
			rows[i] = []string{d[0], d[1], sizeText(n)}
		}
		s.add("databases.txt", "databases by size", aligned([]string{"database", "bytes", "size"}, rows))
		s.fact("Data", "Databases", "%d, %s in all", len(dbs), sizeText(total))
		tables, err := s.query(fmt.Sprintf(`SELECT n.nspname, c.relname, pg_total_relation_size(c.oid)::text, pg_relation_size(c.oid)::text, pg_indexes_size(c.oid)::text,
			coalesce(st.n_live_tup, 0)::text, coalesce(st.n_dead_tup, 0)::text, coalesce(st.last_autovacuum::text, ''), coalesce(st.last_autoanalyze::text, '')
			FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
			LEFT JOIN pg_catalog.pg_stat_all_tables st ON st.relid = c.oid
			WHERE c.relkind IN ('r', 'm', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%%'
			ORDER BY pg_total_relation_size(c.oid) DESC LIMIT %d`, s.opts.TopTables))
		if err != nil {
			return err
		}
		var top []string
		for i, t := range tables {
			total, _ := strconv.ParseInt(t[2], 10, 64)
			t[2] = sizeText(total)
			for _, j := range []int{3, 4} {
				n, _ := strconv.ParseInt(t[j], 10, 64)
				t[j] = sizeText(n)
			}
			if i < 3 {
				top = append(top, fmt.Sprintf("%s.%s %s", t[0], t[1], t[2]))
			}
		}
		s.add("tables.txt", fmt.Sprintf("the %d largest tables of database %s with live and dead rows and last autovacuum", s.opts.TopTables, s.dbName()),
			aligned([]string{"schema", "table", "total", "heap", "indexes", "live_rows", "dead_rows", "last_autovacuum", "last_autoanalyze"}, tables))
		if len(top) > 0 {
			s.fact("Data", "Largest", "%s", strings.Join(top, ", "))
		}
		return nil
	})
	s.source("schema", func() error {
		var b bytes.Buffer
		tabs, err := s.query(fmt.Sprintf(`SELECT c.oid::text, n.nspname, c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
			WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%%'
			ORDER BY 2, 3 LIMIT %d`, s.opts.MaxSchemaTables+1))
		if err != nil {
			return err
		}
		if len(tabs) > s.opts.MaxSchemaTables {
			fmt.Fprintf(&b, "-- only the first %d tables\n\n", s.opts.MaxSchemaTables)
			tabs = tabs[:s.opts.MaxSchemaTables]
		}
		for _, t := range tabs {
			cols, err := s.query(`SELECT a.attname, format_type(a.atttypid, a.atttypmod), CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END,
				coalesce(' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid), '')
				FROM pg_catalog.pg_attribute a LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
				WHERE a.attrelid = ` + t[0] + ` AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, "CREATE TABLE %s.%s (\n", quoteIdent(t[1]), quoteIdent(t[2]))
			var defs []string
			for _, c := range cols {
				defs = append(defs, "    "+quoteIdent(c[0])+" "+c[1]+c[2]+c[3])
			}
			cons, _ := s.query(`SELECT conname, pg_get_constraintdef(oid) FROM pg_catalog.pg_constraint WHERE conrelid = ` + t[0] + ` ORDER BY contype, conname`)
			for _, c := range cons {
				defs = append(defs, "    CONSTRAINT "+quoteIdent(c[0])+" "+c[1])
			}
			b.WriteString(strings.Join(defs, ",\n"))
			b.WriteString("\n);\n")
			idx, _ := s.query(`SELECT pg_get_indexdef(indexrelid) FROM pg_catalog.pg_index WHERE indrelid = ` + t[0] + ` AND NOT indisprimary ORDER BY indexrelid`)
			for _, i := range idx {
				b.WriteString(i[0] + ";\n")
			}
			b.WriteString("\n")
		}
		s.add("schema.sql", fmt.Sprintf("table definitions of database %s (columns, constraints, indexes)", s.dbName()), b.Bytes())
		return nil
	})
	s.source("logs", func() error {
		rows, err := s.query(`SELECT name, setting FROM pg_catalog.pg_settings WHERE name IN ('logging_collector', 'log_directory', 'log_filename',
			'log_destination', 'log_min_duration_statement', 'log_checkpoints', 'log_lock_waits', 'log_autovacuum_min_duration',
			'log_temp_files', 'log_min_messages') ORDER BY name`)
		if err != nil {
			return err
		}
		var b bytes.Buffer
		b.Write(aligned([]string{"setting", "value"}, rows))
		if cur, err := s.query(`SELECT coalesce(pg_current_logfile(), '')`); err == nil && len(cur) == 1 && cur[0][0] != "" {
			f := cur[0][0]
			if !strings.HasPrefix(f, "/") && s.srv.DataDir != "" {
				f = s.srv.DataDir + "/" + f
			}
			fmt.Fprintf(&b, "\ncurrent log file: %s%s\n", f, s.existsText(f))
			s.fact("Server", "Log", "%s", f)
		} else {
			b.WriteString("\ncurrent log file: none known (logging_collector off: the log goes to stderr, often the service manager's journal or /var/log/postgresql)\n")
		}
		b.WriteString("slow queries: logged when log_min_duration_statement >= 0 (milliseconds)\n")
		s.add("logs.txt", "error and slow query log settings and locations", b.Bytes())
		return nil
	})
}

func (s *snap) dbName() string {
	if rows, err := s.query(`SELECT current_database()`); err == nil && len(rows) == 1 {
		return rows[0][0]
	}
	return "?"
}

func quoteIdent(s string) string {
	plain := s != ""
	for i, r := range s {
		if !(r >= 'a' && r <= 'z' || r == '_' || i > 0 && r >= '0' && r <= '9') {
			plain = false
		}
	}
	if plain {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

func firstWords(s string, n int) string {
	f := strings.Fields(s)
	if len(f) > n {
		f = f[:n]
	}
	return strings.TrimSuffix(strings.Join(f, " "), ",")
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
