package collect

import (
	"context"
	"fmt"
	"strings"
)

// PostgreSQL collectors. Metric names are "pg." plus the column name DBAs know, the
// same whichever view holds the column in the server's version (checkpoint counters
// moved from pg_stat_bgwriter to pg_stat_checkpointer in 17).

func pgVersion(s *Scrape) Version {
	if s.Server == nil {
		return Version{}
	}
	return s.Server.Version
}

// pgCols reads one row of named numeric columns into metrics. cols maps column (or
// expression alias) to metric suffix, kind and unit.
type pgCol struct {
	expr, name string
	kind       Kind
	unit       string
}

func (s *Scrape) addRow(cols []pgCol, row []string) {
	for i, c := range cols {
		if i >= len(row) {
			return
		}
		v, ok := num(row[i])
		if !ok {
			continue
		}
		if c.kind == Counter {
			s.Counter("pg."+c.name, c.unit, v)
		} else {
			s.Gauge("pg."+c.name, c.unit, v)
		}
	}
}

func selectList(cols []pgCol) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = c.expr
	}
	return strings.Join(parts, ", ")
}

func newPgStatDatabase() Collector {
	return &fn{
		name: "pg_stat_database",
		help: "transactions, block reads and hits, tuples, temp files, deadlocks (summed over databases)",
		collect: func(ctx context.Context, s *Scrape) error {
			cols := []pgCol{
				{"sum(xact_commit)", "xact_commit", Counter, "transactions"},
				{"sum(xact_rollback)", "xact_rollback", Counter, "transactions"},
				{"sum(blks_read)", "blks_read", Counter, "blocks"},
				{"sum(blks_hit)", "blks_hit", Counter, "blocks"},
				{"sum(tup_returned)", "tup_returned", Counter, "rows"},
				{"sum(tup_fetched)", "tup_fetched", Counter, "rows"},
				{"sum(tup_inserted)", "tup_inserted", Counter, "rows"},
				{"sum(tup_updated)", "tup_updated", Counter, "rows"},
				{"sum(tup_deleted)", "tup_deleted", Counter, "rows"},
				{"sum(conflicts)", "conflicts", Counter, "queries"},
				{"sum(temp_files)", "temp_files", Counter, "files"},
				{"sum(temp_bytes)", "temp_bytes", Counter, "bytes"},
				{"sum(deadlocks)", "deadlocks", Counter, "deadlocks"},
				{"sum(blk_read_time)", "blk_read_time", Counter, "ms"},
				{"sum(blk_write_time)", "blk_write_time", Counter, "ms"},
				{"sum(numbackends)", "backends", Gauge, "sessions"},
			}
			if !pgVersion(s).Less(Version{Major: 14}) {
				cols = append(cols,
					pgCol{"sum(session_time)", "session_time", Counter, "ms"},
					pgCol{"sum(active_time)", "active_time", Counter, "ms"},
					pgCol{"sum(idle_in_transaction_time)", "idle_in_transaction_time", Counter, "ms"},
					pgCol{"sum(sessions)", "sessions_opened", Counter, "sessions"},
				)
			}
			// The epoch: the postmaster's start and the newest statistics reset.
			q := "SELECT " + selectList(cols) + ", pg_postmaster_start_time()::text, coalesce(max(stats_reset)::text, '') FROM pg_catalog.pg_stat_database"
			rows, err := s.query(ctx, q)
			if err != nil {
				return err
			}
			if len(rows) != 1 {
				return fmt.Errorf("pg_stat_database: %d rows", len(rows))
			}
			r := rows[0]
			s.addRow(cols, r)
			s.Epoch(r[len(cols)] + "|" + r[len(cols)+1])
			return nil
		},
	}
}

var bgwriterCols = []pgCol{
	{"buffers_clean", "buffers_clean", Counter, "buffers"},
	{"maxwritten_clean", "maxwritten_clean", Counter, "times"},
	{"buffers_alloc", "buffers_alloc", Counter, "buffers"},
}

var bgwriterCheckpointCols = []pgCol{
	{"checkpoints_timed", "checkpoints_timed", Counter, "checkpoints"},
	{"checkpoints_req", "checkpoints_req", Counter, "checkpoints"},
	{"checkpoint_write_time", "checkpoint_write_time", Counter, "ms"},
	{"checkpoint_sync_time", "checkpoint_sync_time", Counter, "ms"},
	{"buffers_checkpoint", "buffers_checkpoint", Counter, "buffers"},
	{"buffers_backend", "buffers_backend", Counter, "buffers"},
	{"buffers_backend_fsync", "buffers_backend_fsync", Counter, "fsyncs"},
}

func newPgStatBgwriter() Collector {
	return &fn{
		name: "pg_stat_bgwriter",
		help: "background writer (and before 17 checkpoint) buffers written and checkpoints started",
		collect: func(ctx context.Context, s *Scrape) error {
			cols := bgwriterCols
			if pgVersion(s).Less(Version{Major: 17}) {
				cols = append(append([]pgCol{}, bgwriterCheckpointCols...), bgwriterCols...)
			}
			rows, err := s.query(ctx, "SELECT "+selectList(cols)+", pg_postmaster_start_time()::text, coalesce(stats_reset::text, '') FROM pg_catalog.pg_stat_bgwriter")
			if err != nil {
				return err
			}
			if len(rows) != 1 {
				return fmt.Errorf("pg_stat_bgwriter: %d rows", len(rows))
			}
			s.addRow(cols, rows[0])
			s.Epoch(rows[0][len(cols)] + "|" + rows[0][len(cols)+1])
			return nil
		},
	}
}

func newPgStatCheckpointer() Collector {
	return &fn{
		name: "pg_stat_checkpointer",
		help: "checkpoints started (timed, requested) and buffers they wrote",
		min:  Version{Major: 17},
		collect: func(ctx context.Context, s *Scrape) error {
			cols := []pgCol{
				{"num_timed", "checkpoints_timed", Counter, "checkpoints"},
				{"num_requested", "checkpoints_req", Counter, "checkpoints"},
				{"write_time", "checkpoint_write_time", Counter, "ms"},
				{"sync_time", "checkpoint_sync_time", Counter, "ms"},
				{"buffers_written", "buffers_checkpoint", Counter, "buffers"},
			}
			rows, err := s.query(ctx, "SELECT "+selectList(cols)+", pg_postmaster_start_time()::text, coalesce(stats_reset::text, '') FROM pg_catalog.pg_stat_checkpointer")
			if err != nil {
				return err
			}
			if len(rows) != 1 {
				return fmt.Errorf("pg_stat_checkpointer: %d rows", len(rows))
			}
			s.addRow(cols, rows[0])
			s.Epoch(rows[0][len(cols)] + "|" + rows[0][len(cols)+1])
			return nil
		},
	}
}

func newPgStatWAL() Collector {
	return &fn{
		name: "pg_stat_wal",
		help: "WAL records, full-page images, bytes, buffer-full waits (and before 18 writes and syncs)",
		min:  Version{Major: 14},
		collect: func(ctx context.Context, s *Scrape) error {
			cols := []pgCol{
				{"wal_records", "wal_records", Counter, "records"},
				{"wal_fpi", "wal_fpi", Counter, "pages"},
				{"wal_buffers_full", "wal_buffers_full", Counter, "times"},
			}
			if pgVersion(s).Less(Version{Major: 18}) {
				cols = append(cols,
					pgCol{"wal_write", "wal_write", Counter, "writes"},
					pgCol{"wal_sync", "wal_sync", Counter, "syncs"},
					pgCol{"wal_write_time", "wal_write_time", Counter, "ms"},
					pgCol{"wal_sync_time", "wal_sync_time", Counter, "ms"},
				)
			}
			rows, err := s.query(ctx, "SELECT "+selectList(cols)+", pg_postmaster_start_time()::text, coalesce(stats_reset::text, '') FROM pg_catalog.pg_stat_wal")
			if err != nil {
				return err
			}
			if len(rows) != 1 {
				return fmt.Errorf("pg_stat_wal: %d rows", len(rows))
			}
			s.addRow(cols, rows[0])
			s.Epoch(rows[0][len(cols)] + "|" + rows[0][len(cols)+1])
			return nil
		},
	}
}

// pgWAL reads the WAL position (bytes written since the cluster began: a counter whose
// rate is WAL bytes per second) and how far it is past the last checkpoint's redo
// point, against max_wal_size: a requested checkpoint starts near
// max_wal_size / (1 + checkpoint_completion_target).
func newPgWAL() Collector {
	var maxWAL float64
	scrapes := 0
	return &fn{
		name: "pg_wal",
		help: "WAL position (bytes/s), WAL since the last checkpoint's redo point and its share of max_wal_size, checkpointer activity",
		min:  Version{Major: 10},
		collect: func(ctx context.Context, s *Scrape) error {
			// max_wal_size changes only with a reload: read it every 30th scrape.
			if scrapes%30 == 0 {
				if rows, err := s.query(ctx, `SELECT setting::numeric * 1048576 FROM pg_catalog.pg_settings WHERE name = 'max_wal_size'`); err == nil && len(rows) == 1 {
					maxWAL, _ = num(rows[0][0])
				}
			}
			scrapes++
			rows, err := s.query(ctx, `SELECT CASE WHEN pg_is_in_recovery() THEN coalesce(pg_last_wal_replay_lsn(), '0/0') ELSE pg_current_wal_lsn() END - '0/0'::pg_lsn,
				pg_postmaster_start_time()::text,
				(SELECT count(*) FROM pg_catalog.pg_stat_get_activity(NULL) a WHERE a.backend_type = 'checkpointer'
					AND a.wait_event IS DISTINCT FROM 'CheckpointerMain')`)
			if err != nil {
				return err
			}
			if len(rows) != 1 || len(rows[0]) != 3 {
				return fmt.Errorf("pg_wal: unexpected result")
			}
			r := rows[0]
			lsn, _ := num(r[0])
			s.Counter("pg.wal_bytes", "bytes", lsn)
			s.Epoch(r[1])
			if maxWAL > 0 {
				s.Gauge("pg.max_wal_size_bytes", "bytes", maxWAL)
			}
			if busy, ok := num(r[2]); ok {
				s.Gauge("pg.checkpointer_busy", "bool", busy)
			}
			// The last checkpoint's redo point needs pg_control_checkpoint(), which a
			// plain user may not run: then the rest is still recorded.
			cp, err := s.query(ctx, `SELECT pg_current_wal_lsn() - redo_lsn, extract(epoch FROM now() - checkpoint_time) FROM pg_control_checkpoint() WHERE NOT pg_is_in_recovery()`)
			if err != nil || len(cp) != 1 {
				return nil
			}
			since, _ := num(cp[0][0])
			s.Gauge("pg.wal_since_checkpoint_bytes", "bytes", since)
			if age, ok := num(cp[0][1]); ok {
				s.Gauge("pg.checkpoint_age_seconds", "seconds", age)
			}
			if maxWAL > 0 {
				s.Gauge("pg.wal_since_checkpoint_pct", "%", since/maxWAL*100)
			}
			return nil
		},
	}
}

var pgStates = []string{"active", "idle", "idle in transaction", "idle in transaction (aborted)", "fastpath function call", "disabled"}
var pgWaitTypes = []string{"Activity", "BufferPin", "Client", "Extension", "IO", "IPC", "Lock", "LWLock", "Timeout", "InjectionPoint"}

func metricPart(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	var b strings.Builder
	under := false
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' {
			b.WriteRune(r)
			under = false
		} else if !under && b.Len() > 0 {
			b.WriteByte('_')
			under = true
		}
	}
	return strings.TrimRight(b.String(), "_")
}

// newPgActivity counts client sessions by state and what active ones wait on, and
// background workers by type (autovacuum workers in particular).
func newPgActivity() Collector {
	return &fn{
		name: "pg_stat_activity",
		help: "sessions by state and by wait event, autovacuum workers, oldest transaction and query",
		min:  Version{Major: 10},
		collect: func(ctx context.Context, s *Scrape) error {
			rows, err := s.query(ctx, `SELECT backend_type, coalesce(state, ''), coalesce(wait_event_type, ''), coalesce(wait_event, ''), count(*),
				coalesce(max(extract(epoch FROM now() - xact_start)), 0), coalesce(max(extract(epoch FROM now() - query_start)) FILTER (WHERE state = 'active'), 0)
				FROM pg_catalog.pg_stat_get_activity(NULL) WHERE pid <> pg_backend_pid()
				GROUP BY 1, 2, 3, 4`)
			if err != nil {
				return err
			}
			states := map[string]float64{}
			waits := map[string]float64{}
			events := map[string]float64{}
			var autovac, walsenders, oldestXact, longestQuery, running float64
			for _, r := range rows {
				if len(r) != 7 {
					continue
				}
				n, _ := num(r[4])
				switch r[0] {
				case "client backend":
					states[r[1]] += n
					if r[1] == "active" {
						if r[2] == "" {
							running += n
						} else {
							waits[r[2]] += n
							events[r[2]+"."+r[3]] += n
						}
					}
					if x, _ := num(r[5]); x > oldestXact {
						oldestXact = x
					}
					if q, _ := num(r[6]); q > longestQuery {
						longestQuery = q
					}
				case "autovacuum worker":
					autovac += n
				case "walsender":
					walsenders += n
				}
			}
			for _, st := range pgStates {
				s.Gauge("pg.sessions."+metricPart(st), "sessions", states[st])
			}
			s.Gauge("pg.sessions.running", "sessions", running)
			for _, w := range pgWaitTypes {
				s.Gauge("pg.waiting."+strings.ToLower(w), "sessions", waits[w])
			}
			for e, n := range events {
				t, ev, _ := strings.Cut(e, ".")
				s.SparseGauge("pg.wait_event."+strings.ToLower(t)+"."+metricPart(ev), "sessions", n)
			}
			s.Gauge("pg.autovacuum_workers", "workers", autovac)
			s.Gauge("pg.walsenders", "processes", walsenders)
			s.Gauge("pg.oldest_xact_seconds", "seconds", oldestXact)
			s.Gauge("pg.longest_query_seconds", "seconds", longestQuery)
			return nil
		},
	}
}

// newPgLocks counts lock requests that wait, and the sessions waiting.
func newPgLocks() Collector {
	return &fn{
		name: "pg_locks",
		help: "lock requests not granted (by lock type) and sessions waiting for a lock",
		collect: func(ctx context.Context, s *Scrape) error {
			// One row per lock type, and the total (locktype NULL) from the rollup.
			rows, err := s.query(ctx, `SELECT coalesce(locktype, ''), count(*), count(DISTINCT pid), (locktype IS NULL)::text
				FROM pg_catalog.pg_locks WHERE NOT granted GROUP BY ROLLUP (locktype)`)
			if err != nil {
				return err
			}
			var total, blocked float64
			for _, r := range rows {
				if len(r) != 4 {
					continue
				}
				n, _ := num(r[1])
				if r[3] == "true" {
					total = n
					blocked, _ = num(r[2])
					continue
				}
				s.SparseGauge("pg.lock_waits."+metricPart(r[0]), "locks", n)
			}
			s.Gauge("pg.lock_waits", "locks", total)
			s.Gauge("pg.blocked_sessions", "sessions", blocked)
			return nil
		},
	}
}

// newPgVacuum counts vacuums in progress (manual and autovacuum) and the heap blocks
// they scanned.
func newPgVacuum() Collector {
	return &fn{
		name: "pg_stat_progress_vacuum",
		help: "vacuums in progress (autovacuum and manual) and the heap blocks they have left",
		min:  Version{Major: 9, Minor: 6},
		collect: func(ctx context.Context, s *Scrape) error {
			// Autovacuum workers are counted by pg_stat_activity; here every vacuum.
			rows, err := s.query(ctx, `SELECT count(*), coalesce(sum(heap_blks_total - heap_blks_scanned), 0) FROM pg_catalog.pg_stat_progress_vacuum`)
			if err != nil {
				return err
			}
			if len(rows) != 1 || len(rows[0]) != 2 {
				return fmt.Errorf("pg_stat_progress_vacuum: unexpected result")
			}
			n, _ := num(rows[0][0])
			left, _ := num(rows[0][1])
			s.Gauge("pg.vacuums", "vacuums", n)
			s.Gauge("pg.vacuum_heap_blocks_left", "blocks", left)
			return nil
		},
	}
}
