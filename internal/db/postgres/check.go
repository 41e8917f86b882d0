package postgres

import (
	"context"
	"errors"
	"github.com/fathom-lab/fathom/internal/check"
	"strconv"
	"strings"
	"time"

	"github.com/fathom-lab/fathom/internal/collect"
	"github.com/fathom-lab/fathom/internal/sample"
	"github.com/fathom-lab/fathom/internal/target"
)

// checkDialect is how `fathom check` and `fathom heartbeat` read and talk to
// PostgreSQL servers.
var checkDialect = &check.Dialect{
	Fetch: fetchPostgres, DefaultPort: "5432",
	Connections: "connections / max_connections * 100", Used: "connections",
	StatsReset:  "pg_stat_reset()",
	Replication: replication{},
	HeartbeatDDL: func(table string) string {
		return "CREATE TABLE IF NOT EXISTS " + table + ` (
			server_id bigint PRIMARY KEY,
			ts timestamptz NOT NULL,
			interval_ms integer NOT NULL,
			host text NOT NULL DEFAULT '',
			seq bigint NOT NULL DEFAULT 0
		)`
	},
	ServerID: "SELECT system_identifier FROM pg_control_system()",
	HeartbeatAge: func(table string) string {
		return "SELECT extract(epoch FROM clock_timestamp() - ts) FROM " + table + " WHERE server_id = $1"
	},
	Beat: func(ctx context.Context, conn target.Conn, table string, id, ms, host target.Value) error {
		q := "INSERT INTO " + table + ` (server_id, ts, interval_ms, host, seq) VALUES ($1, clock_timestamp(), $2, $3, 1)
		ON CONFLICT (server_id) DO UPDATE SET ts = EXCLUDED.ts, interval_ms = EXCLUDED.interval_ms, host = EXCLUDED.host, seq = ` + table + `.seq + 1`
		_, err := conn.Query(ctx, q, id, ms, host)
		return err
	},
}

func fetchPostgres(ctx context.Context, conn target.Conn, s *check.Sample, now func() time.Time) error {
	rows, err := conn.Query(ctx, `SELECT extract(epoch FROM clock_timestamp()),
		extract(epoch FROM pg_postmaster_start_time()),
		pg_is_in_recovery(),
		current_setting('server_version_num')::int,
		pg_backend_pid()`)
	if err != nil {
		return err
	}
	if len(rows) != 1 || len(rows[0]) != 5 {
		return errors.New("unexpected answer to the PostgreSQL status query")
	}
	serverNow, _ := strconv.ParseFloat(rows[0][0], 64)
	s.Started, _ = strconv.ParseFloat(rows[0][1], 64)
	s.InRecovery = rows[0][2] == "t"
	version, _ := strconv.Atoi(rows[0][3])
	self := rows[0][4]
	s.Vars.SetNum("uptime", serverNow-s.Started)
	s.Vars.SetNum("in_recovery", boolNum(s.InRecovery))

	// pg_stat_database and pg_stat_bgwriter first: their counters win over settings.
	// Every numeric column, summed over databases, read by collect like the sampler.
	before := now()
	db, err := readPgStatDatabase(ctx, conn, nil)
	if err != nil {
		return err
	}
	s.Time = check.Midpoint(before, now())
	for k, v := range db.Sums {
		s.Vars.Set(k, v, true)
	}
	s.StatsReset = db.StatsResetEpoch
	// Background writer and checkpoint counters through collect's collectors, which
	// read pg_stat_checkpointer on 17+ (where pg_stat_bgwriter lost them) and keep the
	// names DBAs know: checkpoints_timed, checkpoints_req, buffers_checkpoint …
	points, err := collect.ScrapeOnce(ctx, conn, collectSide{}, pgServerVersion(version), "pg_stat_bgwriter", "pg_stat_checkpointer")
	if err := check.Optional(s, "pg_stat_bgwriter", err); err != nil {
		return err
	}
	for _, p := range points {
		s.Vars.SetNum(strings.TrimPrefix(p.Name, "pg."), p.Value)
	}
	rows, err = conn.Query(ctx, "SELECT name, setting FROM pg_catalog.pg_settings")
	if err != nil {
		return err
	}
	for _, r := range rows {
		if len(r) == 2 && !check.SecretSetting(r[0]) {
			s.Vars.Set(r[0], r[1], false)
		}
	}

	if err := pgSessions(ctx, conn, s, version, self); err != nil {
		return err
	}
	rows, err = conn.Query(ctx, `SELECT max(age(datfrozenxid)), max(mxid_age(datminmxid)) FROM pg_database`)
	if err != nil {
		return err
	}
	if len(rows) == 1 && len(rows[0]) == 2 {
		s.Vars.Set("xid_wraparound_age", rows[0][0], true)
		s.Vars.Set("mxid_wraparound_age", rows[0][1], true)
		if v, ok := s.Vars.Get("xid_wraparound_age"); ok && v.IsNum {
			// Wraparound happens at 2^31 transactions; 100% is a forced shutdown.
			s.Vars.SetNum("xid_wraparound_percent", v.Num/2147483648*100)
		}
	}
	if s.InRecovery {
		return check.Optional(s, "standby status", pgStandby(ctx, conn, s))
	}
	return check.Optional(s, "pg_stat_replication", pgReplicas(ctx, conn, s))
}

// pgServerVersion turns server_version_num into collect's Version.
func pgServerVersion(n int) sample.Version {
	if n >= 100000 {
		return sample.Version{Major: n / 10000, Minor: n % 10000}
	}
	return sample.Version{Major: n / 10000, Minor: n / 100 % 100, Patch: n % 100}
}

func boolNum(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// pgSessions reads client connections by state, the longest transaction, query and
// idle-in-transaction, and lock waits.
func pgSessions(ctx context.Context, conn target.Conn, s *check.Sample, version int, self string) error {
	rows, err := conn.Query(ctx, `SELECT coalesce(state, 'unknown'), count(*),
		count(*) FILTER (WHERE wait_event_type = 'Lock')
		FROM pg_stat_activity WHERE backend_type = 'client backend' GROUP BY 1`)
	if err != nil {
		return err
	}
	var total float64
	for _, r := range rows {
		if len(r) != 3 {
			continue
		}
		n, _ := strconv.ParseFloat(r[1], 64)
		total += n
		s.Vars.SetNum("connections_"+check.IdentName(r[0]), n)
	}
	for _, st := range []string{"active", "idle", "idle_in_transaction", "idle_in_transaction_aborted"} {
		if _, ok := s.Vars.Get("connections_" + st); !ok {
			s.Vars.SetNum("connections_"+st, 0)
		}
	}
	s.Vars.SetNum("connections", total)
	if mc, ok := s.Vars.Get("max_connections"); ok && mc.IsNum && mc.Num > 0 {
		s.Vars.SetNum("connections_percent", total/mc.Num*100)
	}

	rows, err = conn.Query(ctx, `SELECT
		coalesce(extract(epoch FROM max(clock_timestamp() - xact_start)), 0),
		coalesce(extract(epoch FROM max(clock_timestamp() - state_change) FILTER (WHERE state LIKE 'idle in transaction%')), 0)
		FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()`)
	if err != nil {
		return err
	}
	if len(rows) == 1 && len(rows[0]) == 2 {
		s.Vars.Set("longest_transaction_seconds", rows[0][0], true)
		s.Vars.Set("longest_idle_in_transaction_seconds", rows[0][1], true)
	}
	rows, err = conn.Query(ctx, `SELECT pid, coalesce(usename, ''), coalesce(datname, ''),
		extract(epoch FROM clock_timestamp() - query_start), coalesce(wait_event_type, ''), left(query, 4000)
		FROM pg_stat_activity
		WHERE backend_type = 'client backend' AND state = 'active' AND pid <> pg_backend_pid() AND query_start IS NOT NULL
		ORDER BY query_start LIMIT 1`)
	if err != nil {
		return err
	}
	longest := 0.0
	if len(rows) == 1 && len(rows[0]) == 6 {
		r := rows[0]
		id, _ := strconv.ParseInt(r[0], 10, 64)
		secs, _ := strconv.ParseFloat(r[3], 64)
		s.LongestQuery = &check.Session{ID: id, User: r[1], DB: r[2], Seconds: secs, Query: check.MaskQuery(r[5])}
		if r[4] != "" {
			s.LongestQuery.State = "waiting on " + r[4]
		}
		longest = secs
	}
	s.Vars.SetNum("longest_query_seconds", longest)

	// Lock waits: pg_locks.waitstart (PostgreSQL 14+) says when each wait began;
	// before that, the statement's start is the best bound.
	waitStart := "a.query_start"
	if version >= 140000 {
		waitStart = "coalesce(l.waitstart, a.query_start)"
	}
	rows, err = conn.Query(ctx, `SELECT a.pid, coalesce(a.usename, ''), coalesce(a.datname, ''),
		extract(epoch FROM clock_timestamp() - `+waitStart+`), l.locktype || ' ' || l.mode, left(a.query, 4000)
		FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE NOT l.granted AND a.pid <> pg_backend_pid()
		ORDER BY 4 DESC`)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for i, r := range rows {
		if len(r) != 6 || seen[r[0]] {
			continue
		}
		seen[r[0]] = true
		if i == 0 {
			id, _ := strconv.ParseInt(r[0], 10, 64)
			secs, _ := strconv.ParseFloat(r[3], 64)
			s.LongestLockWait = &check.Session{ID: id, User: r[1], DB: r[2], Seconds: secs, State: "waiting for " + r[4] + " lock", Query: check.MaskQuery(r[5])}
		}
	}
	s.LockWaits = len(seen)
	s.Vars.SetNum("lock_waits", float64(s.LockWaits))
	wait := 0.0
	if s.LongestLockWait != nil {
		wait = s.LongestLockWait.Seconds
	}
	s.Vars.SetNum("longest_lock_wait_seconds", wait)
	_ = self
	return nil
}

// pgReplicas reads pg_stat_replication on a primary. A standby that has replayed
// everything the primary has written is not lagging, even though PostgreSQL reports
// NULL lag times for it once the primary is idle.
func pgReplicas(ctx context.Context, conn target.Conn, s *check.Sample) error {
	rows, err := conn.Query(ctx, `SELECT coalesce(application_name, ''), coalesce(host(client_addr), ''),
		coalesce(state, ''), coalesce(sync_state, ''),
		coalesce(extract(epoch FROM write_lag)::text, ''),
		coalesce(extract(epoch FROM flush_lag)::text, ''),
		coalesce(extract(epoch FROM replay_lag)::text, ''),
		coalesce(pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn), -1),
		coalesce(pg_wal_lsn_diff(flush_lsn, replay_lsn), 0),
		coalesce(extract(epoch FROM clock_timestamp() - reply_time)::text, '')
		FROM pg_stat_replication ORDER BY application_name`)
	if err != nil {
		return err
	}
	var streaming, maxLag, maxBehind float64
	for _, r := range rows {
		if len(r) != 10 {
			continue
		}
		rep := check.PGReplica{Name: r[0], Addr: r[1], State: r[2], SyncState: r[3]}
		rep.WriteLag = optNum(r[4])
		rep.FlushLag = optNum(r[5])
		rep.ReplayLag = optNum(r[6])
		rep.Behind, _ = strconv.ParseFloat(r[7], 64)
		rep.Unreplayed, _ = strconv.ParseFloat(r[8], 64)
		rep.ReplyAge = optNum(r[9])
		if rep.State == "streaming" {
			streaming++
		}
		if rep.ReplayLag != nil && *rep.ReplayLag > maxLag && rep.Behind != 0 {
			maxLag = *rep.ReplayLag
		}
		if rep.Behind > maxBehind {
			maxBehind = rep.Behind
		}
		s.Replicas = append(s.Replicas, rep)
	}
	s.Vars.SetNum("replicas", float64(len(s.Replicas)))
	s.Vars.SetNum("replicas_streaming", streaming)
	s.Vars.SetNum("replication_lag_seconds", maxLag)
	s.Vars.SetNum("replication_lag_bytes", maxBehind)
	return nil
}

func optNum(s string) *float64 {
	if f, ok := check.ParseNumber(strings.TrimSpace(s)); ok {
		return &f
	}
	return nil
}

// pgStandby reads a standby's own view: its WAL receiver, whether replay is paused,
// and how far replay is behind what was received.
func pgStandby(ctx context.Context, conn target.Conn, s *check.Sample) error {
	st := &check.Standby{}
	s.Standby = st
	rows, err := conn.Query(ctx, `SELECT pg_is_wal_replay_paused(),
		coalesce(pg_wal_lsn_diff(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn()), 0),
		coalesce(pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn(), false),
		coalesce(extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp())::text, '')`)
	if err != nil {
		return err
	}
	if len(rows) == 1 && len(rows[0]) == 4 {
		r := rows[0]
		st.ReplayPaused = r[0] == "t"
		st.ReplayBehind, _ = strconv.ParseFloat(r[1], 64)
		st.Caught = r[2] == "t"
		st.ReplayAge = optNum(r[3])
	}
	rows, err = conn.Query(ctx, `SELECT coalesce(status, ''), coalesce(sender_host, '') || ':' || coalesce(sender_port::text, '') FROM pg_stat_wal_receiver`)
	if err != nil {
		return err
	}
	if len(rows) == 1 && len(rows[0]) == 2 {
		st.ReceiverStatus = rows[0][0]
		st.Upstream = strings.TrimSuffix(rows[0][1], ":")
	}
	s.Vars.SetNum("replay_paused", boolNum(st.ReplayPaused))
	s.Vars.SetNum("replay_lag_bytes", st.ReplayBehind)
	s.Vars.SetNum("wal_receiver_streaming", boolNum(st.ReceiverStatus == "streaming"))
	if st.ReplayAge != nil {
		s.Vars.SetNum("replay_timestamp_age_seconds", *st.ReplayAge)
	}
	return nil
}
