package postgres

import (
	"bytes"
	"fmt"
	"github.com/fathom-lab/fathom/internal/collect"
	"slices"
	"strconv"
	"strings"
)

// PostgreSQL sources of a snapshot.

func snapshot(s *collect.Snap) {
	s.Source("server", func() error { return snapshotServer(s) })
	s.Source("settings", func() error { return snapshotSettings(s) })
	s.Source("configuration files", func() error { return snapshotConfigurationFiles(s) })
	s.Source("sessions", func() error { return snapshotSessions(s) })
	s.Source("locks", func() error { return snapshotLocks(s) })
	s.Source("replication", func() error { return snapshotReplication(s) })
	s.Source("sizes", func() error { return snapshotSizes(s) })
	s.Source("schema", func() error { return snapshotSchema(s) })
	s.Source("logs", func() error { return snapshotLogs(s) })
	s.Source("error log", func() error { return snapshotErrorLog(s) })
	s.Source("slow query digest", func() error { return pgStatementDigest(s) })
	s.Source("roles", func() error { return snapshotRoles(s) })
}

// snapshotServer is the snapshot's "server" source.
func snapshotServer(s *collect.Snap) error {
	rows, err := s.Query(`SELECT version(), pg_postmaster_start_time()::text, date_trunc('second', now() - pg_postmaster_start_time())::text,
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
	fmt.Fprintf(&b, "%-22s %s\n", "data directory:", s.Server().DataDir)
	where := "remote (OS facts below describe the machine fathom ran on)"
	if s.Server().Local {
		where = fmt.Sprintf("this host, postmaster pid %d", s.Server().PID)
	}
	fmt.Fprintf(&b, "%-22s %s\n", "runs on:", where)
	if ext, err := s.Query(`SELECT extname, extversion FROM pg_catalog.pg_extension ORDER BY 1`); err == nil {
		var names []string
		for _, e := range ext {
			names = append(names, e[0]+" "+e[1])
		}
		fmt.Fprintf(&b, "%-22s %s\n", "extensions:", strings.Join(names, ", "))
	}
	s.Add("server.txt", "version, uptime, data directory, extensions", b.Bytes())
	role := "primary"
	if r[3] == "true" {
		role = "replica (in recovery)"
	}
	s.Fact("Server", "Version", "%s", collect.FirstWords(r[0], 2))
	s.Fact("Server", "Up", "%s since %s, %s", r[2], r[1], role)
	s.Fact("Server", "Data dir", "%s%s", collect.OrUnknown(s.Server().DataDir), s.DiskText())
	return nil
}

// snapshotSettings is the snapshot's "settings" source.
func snapshotSettings(s *collect.Snap) error {
	rows, err := s.Query(`SELECT name, setting, coalesce(unit, ''), source, coalesce(sourcefile || ':' || sourceline, ''),
		CASE WHEN setting IS DISTINCT FROM boot_val THEN 'changed' ELSE '' END, pending_restart::text
		FROM pg_catalog.pg_settings ORDER BY name`)
	if err != nil {
		return err
	}
	s.Add("settings.tsv", "every setting with its unit, source and file (changed: differs from the built-in default)",
		collect.Table([]string{"name", "setting", "unit", "source", "file", "changed", "pending_restart"}, rows))
	var changed []string
	for _, r := range rows {
		if r[5] == "changed" && r[3] != "default" && r[3] != "override" && r[3] != "client" && r[3] != "session" {
			changed = append(changed, r[0]+"="+pgSettingText(r[1], r[2]))
		}
	}
	s.Fact("Server", "Changed", "%d settings differ from the defaults (settings.tsv)", len(changed))
	get := map[string]string{}
	for _, r := range rows {
		get[r[0]] = pgSettingText(r[1], r[2])
	}
	s.Fact("Server", "Memory", "shared_buffers %s, work_mem %s, maintenance_work_mem %s, effective_cache_size %s",
		get["shared_buffers"], get["work_mem"], get["maintenance_work_mem"], get["effective_cache_size"])
	s.Fact("Server", "Durability", "fsync %s, synchronous_commit %s, full_page_writes %s, wal_sync_method %s",
		get["fsync"], get["synchronous_commit"], get["full_page_writes"], get["wal_sync_method"])
	s.Fact("Server", "Checkpoints", "max_wal_size %s, checkpoint_timeout %s, checkpoint_completion_target %s",
		get["max_wal_size"], get["checkpoint_timeout"], get["checkpoint_completion_target"])
	return nil
}

// snapshotConfigurationFiles is the snapshot's "configuration files" source.
func snapshotConfigurationFiles(s *collect.Snap) error {
	rows, err := s.Query(`SELECT name, setting FROM pg_catalog.pg_settings WHERE name IN ('config_file', 'hba_file', 'ident_file', 'data_directory', 'external_pid_file') ORDER BY name`)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	for _, r := range rows {
		fmt.Fprintf(&b, "%-18s %s%s\n", r[0]+":", r[1], s.ExistsText(r[1]))
	}
	if s.Server().DataDir != "" {
		auto := s.Server().DataDir + "/postgresql.auto.conf"
		fmt.Fprintf(&b, "%-18s %s%s\n", "auto.conf:", auto, s.ExistsText(auto))
	}
	if errs, err := s.Query(`SELECT sourcefile, sourceline::text, name, coalesce(error, '') FROM pg_catalog.pg_file_settings WHERE error IS NOT NULL`); err == nil && len(errs) > 0 {
		b.WriteString("\nerrors in configuration files (pg_file_settings):\n")
		b.Write(collect.Aligned([]string{"file", "line", "name", "error"}, errs))
	}
	if len(rows) == 0 {
		b.WriteString("(file locations need superuser or pg_read_all_settings)\n")
	}
	if applied, err := s.Query(`SELECT sourcefile, count(*)::text, count(*) FILTER (WHERE applied)::text FROM pg_catalog.pg_file_settings GROUP BY sourcefile ORDER BY min(seqno)`); err == nil {
		b.WriteString("\nfiles read, in order, with the settings each holds and how many are in effect (pg_file_settings):\n")
		b.Write(collect.Aligned([]string{"file", "settings", "applied"}, applied))
	}
	s.Add("config_files.txt", "configuration file locations, which files were read (and errors in them)", b.Bytes())
	// The files as read: postgresql.conf and what it includes, postgresql.auto.conf,
	// pg_hba.conf and pg_ident.conf. From disk when the server is on this host,
	// else through pg_read_file (superuser or pg_read_server_files).
	var files []string
	for _, r := range rows {
		if r[0] == "config_file" || r[0] == "hba_file" || r[0] == "ident_file" {
			files = append(files, r[1])
		}
	}
	if s.Server().DataDir != "" {
		files = append(files, s.Server().DataDir+"/postgresql.auto.conf")
	}
	if inc, err := s.Query(`SELECT DISTINCT sourcefile FROM pg_catalog.pg_file_settings WHERE sourcefile IS NOT NULL`); err == nil {
		for _, r := range inc {
			if !slices.Contains(files, r[0]) {
				files = append(files, r[0])
			}
		}
	}
	var out bytes.Buffer
	var read []string
	for _, f := range files {
		data, err := s.LocalFile(f)
		if err != nil {
			if r, qerr := s.Query(`SELECT pg_read_file('` + strings.ReplaceAll(f, "'", "''") + `')`); qerr == nil && len(r) == 1 {
				data, err = []byte(r[0][0]), nil
			}
		}
		if err != nil {
			fmt.Fprintf(&out, "##### %s: not read (%s)\n\n", f, collect.OneLine(err))
			continue
		}
		read = append(read, f)
		fmt.Fprintf(&out, "##### %s (%s)\n%s\n\n", f, collect.SizeText(int64(len(data))), strings.TrimRight(string(data), "\n"))
	}
	if len(files) > 0 {
		s.Add("config_contents.txt", "the configuration files as read (postgresql.conf and includes, auto.conf, pg_hba.conf, pg_ident.conf)", out.Bytes())
	}
	if len(read) > 0 {
		s.Fact("Server", "Config files", "%d read: %s (config_contents.txt)", len(read), strings.Join(read, ", "))
	}
	if hba, err := s.Query(`SELECT line_number::text, type, array_to_string(database, ','), array_to_string(user_name, ','), coalesce(address, ''), coalesce(netmask, ''), coalesce(auth_method, ''), coalesce(error, '') FROM pg_catalog.pg_hba_file_rules ORDER BY line_number`); err == nil {
		var hb bytes.Buffer
		hb.WriteString("client authentication rules as the server parsed them (pg_hba_file_rules):\n")
		hb.Write(collect.Aligned([]string{"line", "type", "database", "user", "address", "netmask", "method", "error"}, hba))
		s.Add("hba_rules.txt", "pg_hba.conf as the server parsed it", hb.Bytes())
	}
	return nil
}

// snapshotSessions is the snapshot's "sessions" source.
func snapshotSessions(s *collect.Snap) error {
	long := strconv.Itoa(int(s.Options().LongRunning.Seconds()))
	cols := `pid::text, coalesce(usename, ''), coalesce(datname, ''), coalesce(application_name, ''), coalesce(client_addr::text, ''),
		backend_type, coalesce(state, ''), coalesce(wait_event_type || ':' || wait_event, ''),
		coalesce(date_trunc('second', now() - xact_start)::text, ''), coalesce(date_trunc('second', now() - query_start)::text, ''),
		coalesce(array_to_string(pg_blocking_pids(pid), ','), ''), left(regexp_replace(coalesce(query, ''), '\s+', ' ', 'g'), 500)`
	head := []string{"pid", "user", "database", "application", "client", "backend_type", "state", "wait", "xact_age", "query_age", "blocked_by", "query"}
	all, err := s.Query(`SELECT ` + cols + ` FROM pg_catalog.pg_stat_activity WHERE pid <> pg_backend_pid() ORDER BY backend_type, pid`)
	if err != nil {
		return err
	}
	s.Add("activity.tsv", "pg_stat_activity: every session and background process", collect.Table(head, all))
	blocked, err := s.Query(`SELECT ` + cols + ` FROM pg_catalog.pg_stat_activity WHERE cardinality(pg_blocking_pids(pid)) > 0 ORDER BY pid`)
	if err != nil {
		return err
	}
	s.Add("blocked.txt", "sessions waiting for a lock, and who blocks them", collect.Aligned(head, blocked))
	longRows, err := s.Query(`SELECT ` + cols + ` FROM pg_catalog.pg_stat_activity WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'
		AND (state <> 'idle' AND query_start < now() - interval '` + long + ` seconds' OR xact_start < now() - interval '` + long + ` seconds') ORDER BY xact_start`)
	if err != nil {
		return err
	}
	s.Add("long_running.txt", fmt.Sprintf("statements or transactions older than %s", s.Options().LongRunning), collect.Aligned(head, longRows))
	states := map[string]int{}
	clients := 0
	for _, r := range all {
		if r[5] == "client backend" {
			clients++
			states[r[6]]++
		}
	}
	s.Fact("Sessions", "Clients", "%d (%d active, %d idle, %d idle in transaction)", clients, states["active"], states["idle"], states["idle in transaction"]+states["idle in transaction (aborted)"])
	s.Fact("Sessions", "Blocked", "%d waiting for locks (blocked.txt), %d long-running over %s (long_running.txt)", len(blocked), len(longRows), s.Options().LongRunning)
	return nil
}

// snapshotLocks is the snapshot's "locks" source.
func snapshotLocks(s *collect.Snap) error {
	rows, err := s.Query(`SELECT locktype, mode, granted::text, count(*)::text FROM pg_catalog.pg_locks GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`)
	if err != nil {
		return err
	}
	s.Add("locks.txt", "pg_locks by type, mode and granted", collect.Aligned([]string{"locktype", "mode", "granted", "count"}, rows))
	return nil
}

// snapshotReplication is the snapshot's "replication" source.
func snapshotReplication(s *collect.Snap) error {
	var b bytes.Buffer
	rec, err := s.Query(`SELECT pg_is_in_recovery()::text`)
	if err != nil {
		return err
	}
	fmt.Fprintf(&b, "in recovery (replica): %s\n\n", rec[0][0])
	repl, err := s.Query(`SELECT coalesce(application_name, ''), coalesce(client_addr::text, ''), state, coalesce(sync_state, ''),
		coalesce((pg_current_wal_lsn() - replay_lsn)::text, ''), coalesce(write_lag::text, ''), coalesce(flush_lag::text, ''), coalesce(replay_lag::text, '')
		FROM pg_catalog.pg_stat_replication`)
	if err == nil {
		b.WriteString("replicas (pg_stat_replication):\n")
		b.Write(collect.Aligned([]string{"application", "client", "state", "sync", "replay_bytes_behind", "write_lag", "flush_lag", "replay_lag"}, repl))
	} else if rec[0][0] == "false" {
		fmt.Fprintf(&b, "pg_stat_replication: %v\n", collect.OneLine(err))
	}
	slots, err := s.Query(`SELECT slot_name, slot_type, coalesce(database, ''), active::text, coalesce(restart_lsn::text, '') FROM pg_catalog.pg_replication_slots`)
	if err == nil {
		b.WriteString("\nreplication slots:\n")
		b.Write(collect.Aligned([]string{"slot", "type", "database", "active", "restart_lsn"}, slots))
	}
	if rec[0][0] == "true" {
		if rx, err := s.Query(`SELECT status, coalesce(sender_host, ''), coalesce(latest_end_lsn::text, ''), coalesce(date_trunc('second', now() - last_msg_receipt_time)::text, '') FROM pg_catalog.pg_stat_wal_receiver`); err == nil {
			b.WriteString("\nWAL receiver:\n")
			b.Write(collect.Aligned([]string{"status", "sender", "latest_end_lsn", "since_last_message"}, rx))
		}
		if lag, err := s.Query(`SELECT coalesce(date_trunc('second', now() - pg_last_xact_replay_timestamp())::text, 'unknown')`); err == nil {
			fmt.Fprintf(&b, "\nreplay delay (now - last replayed commit): %s\n", lag[0][0])
		}
		s.Fact("Replication", "Role", "replica")
	} else {
		s.Fact("Replication", "Role", "primary with %d connected replicas and %d slots", len(repl), len(slots))
	}
	s.Add("replication.txt", "role, replicas and their lag, replication slots", b.Bytes())
	return nil
}

// snapshotSizes is the snapshot's "sizes" source.
func snapshotSizes(s *collect.Snap) error {
	dbs, err := s.Query(`SELECT datname, pg_database_size(datname)::text FROM pg_catalog.pg_database WHERE datallowconn ORDER BY pg_database_size(datname) DESC`)
	if err != nil {
		return err
	}
	var total int64
	rows := make([][]string, len(dbs))
	for i, d := range dbs {
		n, _ := strconv.ParseInt(d[1], 10, 64)
		total += n
		rows[i] = []string{d[0], d[1], collect.SizeText(n)}
	}
	s.Add("databases.txt", "databases by size", collect.Aligned([]string{"database", "bytes", "size"}, rows))
	s.Fact("Data", "Databases", "%d, %s in all", len(dbs), collect.SizeText(total))
	tables, err := s.Query(fmt.Sprintf(`SELECT n.nspname, c.relname, pg_total_relation_size(c.oid)::text, pg_relation_size(c.oid)::text, pg_indexes_size(c.oid)::text,
		coalesce(st.n_live_tup, 0)::text, coalesce(st.n_dead_tup, 0)::text, coalesce(st.last_autovacuum::text, ''), coalesce(st.last_autoanalyze::text, '')
		FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
		LEFT JOIN pg_catalog.pg_stat_all_tables st ON st.relid = c.oid
		WHERE c.relkind IN ('r', 'm', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%%'
		ORDER BY pg_total_relation_size(c.oid) DESC LIMIT %d`, s.Options().TopTables))
	if err != nil {
		return err
	}
	var top []string
	for i, t := range tables {
		total, _ := strconv.ParseInt(t[2], 10, 64)
		t[2] = collect.SizeText(total)
		for _, j := range []int{3, 4} {
			n, _ := strconv.ParseInt(t[j], 10, 64)
			t[j] = collect.SizeText(n)
		}
		if i < 3 {
			top = append(top, fmt.Sprintf("%s.%s %s", t[0], t[1], t[2]))
		}
	}
	s.Add("tables.txt", fmt.Sprintf("the %d largest tables of database %s with live and dead rows and last autovacuum", s.Options().TopTables, dbName(s)),
		collect.Aligned([]string{"schema", "table", "total", "heap", "indexes", "live_rows", "dead_rows", "last_autovacuum", "last_autoanalyze"}, tables))
	if len(top) > 0 {
		s.Fact("Data", "Largest", "%s", strings.Join(top, ", "))
	}
	return nil
}

// snapshotSchema is the snapshot's "schema" source.
func snapshotSchema(s *collect.Snap) error {
	var b bytes.Buffer
	tabs, err := s.Query(fmt.Sprintf(`SELECT c.oid::text, n.nspname, c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%%'
		ORDER BY 2, 3 LIMIT %d`, s.Options().MaxSchemaTables+1))
	if err != nil {
		return err
	}
	if len(tabs) > s.Options().MaxSchemaTables {
		fmt.Fprintf(&b, "-- only the first %d tables\n\n", s.Options().MaxSchemaTables)
		tabs = tabs[:s.Options().MaxSchemaTables]
	}
	for _, t := range tabs {
		cols, err := s.Query(`SELECT a.attname, format_type(a.atttypid, a.atttypmod), CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END,
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
		cons, _ := s.Query(`SELECT conname, pg_get_constraintdef(oid) FROM pg_catalog.pg_constraint WHERE conrelid = ` + t[0] + ` ORDER BY contype, conname`)
		for _, c := range cons {
			defs = append(defs, "    CONSTRAINT "+quoteIdent(c[0])+" "+c[1])
		}
		b.WriteString(strings.Join(defs, ",\n"))
		b.WriteString("\n);\n")
		idx, _ := s.Query(`SELECT pg_get_indexdef(indexrelid) FROM pg_catalog.pg_index WHERE indrelid = ` + t[0] + ` AND NOT indisprimary ORDER BY indexrelid`)
		for _, i := range idx {
			b.WriteString(i[0] + ";\n")
		}
		b.WriteString("\n")
	}
	s.Add("schema.sql", fmt.Sprintf("table definitions of database %s (columns, constraints, indexes)", dbName(s)), b.Bytes())
	return nil
}

// snapshotLogs is the snapshot's "logs" source.
func snapshotLogs(s *collect.Snap) error {
	rows, err := s.Query(`SELECT name, setting FROM pg_catalog.pg_settings WHERE name IN ('logging_collector', 'log_directory', 'log_filename',
		'log_destination', 'log_min_duration_statement', 'log_checkpoints', 'log_lock_waits', 'log_autovacuum_min_duration',
		'log_temp_files', 'log_min_messages') ORDER BY name`)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	b.Write(collect.Aligned([]string{"setting", "value"}, rows))
	if cur, err := s.Query(`SELECT coalesce(pg_current_logfile(), '')`); err == nil && len(cur) == 1 && cur[0][0] != "" {
		f := cur[0][0]
		if !strings.HasPrefix(f, "/") && s.Server().DataDir != "" {
			f = s.Server().DataDir + "/" + f
		}
		fmt.Fprintf(&b, "\ncurrent log file: %s%s\n", f, s.ExistsText(f))
		s.Fact("Server", "Log", "%s", f)
	} else {
		b.WriteString("\ncurrent log file: none known (logging_collector off: the log goes to stderr, often the service manager's journal or /var/log/postgresql)\n")
	}
	b.WriteString("slow queries: logged when log_min_duration_statement >= 0 (milliseconds)\n")
	s.Add("logs.txt", "error and slow query log settings and locations", b.Bytes())
	return nil
}

// snapshotErrorLog is the snapshot's "error log" source.
func snapshotErrorLog(s *collect.Snap) error {
	var paths []string
	if cur, err := s.Query(`SELECT coalesce(pg_current_logfile(), '')`); err == nil && len(cur) == 1 && cur[0][0] != "" {
		f := cur[0][0]
		if !strings.HasPrefix(f, "/") && s.Server().DataDir != "" {
			f = s.Server().DataDir + "/" + f
		}
		paths = append(paths, f)
	}
	paths = append(paths, s.StderrFile())
	return s.LogTail("server's log", paths, s.Options().LogLines)
}

// snapshotRoles is the snapshot's "roles" source.
func snapshotRoles(s *collect.Snap) error {
	rows, err := s.Query(`SELECT r.rolname, r.rolsuper::text, r.rolcreaterole::text, r.rolcreatedb::text, r.rolcanlogin::text, r.rolreplication::text,
		r.rolbypassrls::text, r.rolconnlimit::text, coalesce(r.rolvaliduntil::text, ''),
		coalesce((SELECT string_agg(g.rolname, ',' ORDER BY g.rolname) FROM pg_catalog.pg_auth_members m JOIN pg_catalog.pg_roles g ON g.oid = m.roleid WHERE m.member = r.oid), '')
		FROM pg_catalog.pg_roles r WHERE r.rolname NOT LIKE 'pg\_%' ORDER BY 1`)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	b.WriteString("roles (pg_roles; passwords are never read):\n")
	b.Write(collect.Aligned([]string{"role", "superuser", "createrole", "createdb", "login", "replication", "bypassrls", "connlimit", "valid_until", "member_of"}, rows))
	if dbs, err := s.Query(`SELECT datname, coalesce(array_to_string(datacl, ' '), '(default)') FROM pg_catalog.pg_database ORDER BY 1`); err == nil {
		b.WriteString("\ndatabase privileges (datacl):\n")
		b.Write(collect.Aligned([]string{"database", "acl"}, dbs))
	}
	s.Add("users.txt", "roles, their attributes and memberships, database privileges (no passwords)", b.Bytes())
	supers, logins := 0, 0
	for _, r := range rows {
		if r[1] == "true" {
			supers++
		}
		if r[4] == "true" {
			logins++
		}
	}
	s.Fact("Security", "Roles", "%d, %d can log in, %d superusers (users.txt)", len(rows), logins, supers)
	return nil
}

// pgStatementDigest writes slow_digest.txt from pg_stat_statements when the
// extension is installed in the database fathom connected to.
func pgStatementDigest(s *collect.Snap) error {
	ext, err := s.Query(`SELECT n.nspname FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_stat_statements'`)
	if err != nil {
		return err
	}
	if len(ext) == 0 {
		s.Add("slow_digest.txt", "statement digest", []byte("pg_stat_statements is not installed in this database (CREATE EXTENSION pg_stat_statements, with it in shared_preload_libraries):\nslow statements are only in the server log when log_min_duration_statement >= 0 (logs.txt)\n"))
		return nil
	}
	total, mean, max := "total_exec_time", "mean_exec_time", "max_exec_time"
	if v := s.Server().Version; v.Major > 0 && v.Major < 13 {
		total, mean, max = "total_time", "mean_time", "max_time"
	}
	rows, err := s.Query(fmt.Sprintf(`SELECT coalesce(d.datname, ''), calls::text, round((%[1]s / 1000)::numeric, 3)::text, round(%[2]s::numeric, 3)::text, round(%[3]s::numeric, 3)::text,
		rows::text, (shared_blks_hit + shared_blks_read)::text, left(regexp_replace(query, '\s+', ' ', 'g'), 300)
		FROM %[4]s.pg_stat_statements s LEFT JOIN pg_catalog.pg_database d ON d.oid = s.dbid
		ORDER BY %[1]s DESC LIMIT %[5]d`, total, mean, max, quoteIdent(ext[0][0]), s.Options().TopStatements))
	if err != nil {
		return err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "top %d statements by total execution time, from pg_stat_statements (since its last reset):\n\n", s.Options().TopStatements)
	b.Write(collect.Aligned([]string{"database", "calls", "total_s", "mean_ms", "max_ms", "rows", "shared_blocks", "statement"}, rows))
	s.Add("slow_digest.txt", fmt.Sprintf("the %d statements that took the most time in all (pg_stat_statements)", s.Options().TopStatements), b.Bytes())
	if len(rows) > 0 {
		s.Fact("Logs", "Slowest in all", "%s s over %s calls: %s (slow_digest.txt)", rows[0][2], rows[0][1], collect.FirstWords(rows[0][7], 8))
	}
	return nil
}

func dbName(s *collect.Snap) string {
	if rows, err := s.Query(`SELECT current_database()`); err == nil && len(rows) == 1 {
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

// Activity sums up the key rates for a snapshot's Activity section: commits and WAL
// on the activity line, checkpoints that happened during the sampling after it.
func (collectSide) Activity(rate map[string]float64) (parts []string, facts [][2]string) {
	if v, ok := rate[pgXactCommit]; ok {
		parts = append(parts, fmt.Sprintf("%.0f commits/s", v))
	}
	if v, ok := rate[pgWALBytes]; ok {
		parts = append(parts, fmt.Sprintf("WAL %s/s", collect.SizeText(int64(v))))
	}
	for _, n := range []string{pgCheckpointsReq, pgCheckpointsTimed} {
		if v, ok := rate[n]; ok && v > 0 {
			facts = append(facts, [2]string{"checkpoints", fmt.Sprintf("%s during the sampling (%.2f/s)", strings.TrimPrefix(n, "pg."), v)})
		}
	}
	return parts, facts
}
