package postgres

import (
	"context"
	"fmt"
	"github.com/fathom-lab/fathom/internal/collect"
	"strings"

	"github.com/fathom-lab/fathom/internal/sample"
	"github.com/fathom-lab/fathom/internal/target"
)

// PostgreSQL collectors. Metric names are "pg." plus the column name DBAs know, the
// same whichever view holds the column in the server's version (checkpoint counters
// moved from pg_stat_bgwriter to pg_stat_checkpointer in 17).

func pgVersion(s *collect.Scrape) sample.Version {
	if s.Server == nil {
		return sample.Version{}
	}
	return s.Server.Version
}

// pgCols reads one row of named numeric columns into metrics. cols maps column (or
// expression alias) to metric suffix, kind and unit.
type pgCol struct {
	expr, name string
	kind       sample.Kind
	unit       string
}

func addRow(s *collect.Scrape, cols []pgCol, row []string) {
	for i, c := range cols {
		if i >= len(row) {
			return
		}
		v, ok := collect.Num(row[i])
		if !ok {
			continue
		}
		if c.kind == sample.Counter {
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

// pgDatabaseCols maps pg_stat_database's columns to metric names (after "pg."):
// the server's name except numbackends and sessions, whose names say what they count.
var pgDatabaseCols = []pgCol{
	{"xact_commit", "xact_commit", sample.Counter, "transactions"},
	{"xact_rollback", "xact_rollback", sample.Counter, "transactions"},
	{"blks_read", "blks_read", sample.Counter, "blocks"},
	{"blks_hit", "blks_hit", sample.Counter, "blocks"},
	{"tup_returned", "tup_returned", sample.Counter, "rows"},
	{"tup_fetched", "tup_fetched", sample.Counter, "rows"},
	{"tup_inserted", "tup_inserted", sample.Counter, "rows"},
	{"tup_updated", "tup_updated", sample.Counter, "rows"},
	{"tup_deleted", "tup_deleted", sample.Counter, "rows"},
	{"conflicts", "conflicts", sample.Counter, "queries"},
	{"temp_files", "temp_files", sample.Counter, "files"},
	{"temp_bytes", "temp_bytes", sample.Counter, "bytes"},
	{"deadlocks", "deadlocks", sample.Counter, "deadlocks"},
	{"blk_read_time", "blk_read_time", sample.Counter, "ms"},
	{"blk_write_time", "blk_write_time", sample.Counter, "ms"},
	{"numbackends", "backends", sample.Gauge, "sessions"},
	// 14+
	{"session_time", "session_time", sample.Counter, "ms"},
	{"active_time", "active_time", sample.Counter, "ms"},
	{"idle_in_transaction_time", "idle_in_transaction_time", sample.Counter, "ms"},
	{"sessions", "sessions_opened", sample.Counter, "sessions"},
}

// pgStatDatabase is pg_stat_database summed over the databases: every numeric column
// the server's version has, under its own name, as the server printed the sum.
type pgStatDatabase struct {
	Sums map[string]string
	// PostmasterStart and StatsReset (the newest reset, "" when none) are the
	// server's text; StatsResetEpoch is the reset in Unix seconds, 0 when none.
	PostmasterStart, StatsReset string
	StatsResetEpoch             float64
	cols                        []string
}

// readPgStatDatabase reads pg_stat_database for the collector and for `fathom check`,
// whose expressions may name any of its columns. prev, when not nil, is an earlier
// reading of the same server whose column list is reused (one query instead of two).
func readPgStatDatabase(ctx context.Context, conn target.Conn, prev *pgStatDatabase) (*pgStatDatabase, error) {
	out := &pgStatDatabase{Sums: map[string]string{}}
	if prev != nil && len(prev.cols) > 0 {
		out.cols = prev.cols
	} else {
		rows, err := conn.Query(ctx, `SELECT attname FROM pg_catalog.pg_attribute
			WHERE attrelid = 'pg_catalog.pg_stat_database'::regclass AND attnum > 0 AND NOT attisdropped
			AND atttypid IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype, 'float4'::regtype, 'float8'::regtype, 'numeric'::regtype)
			ORDER BY attnum`)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			if len(r) == 1 {
				out.cols = append(out.cols, r[0])
			}
		}
		if len(out.cols) == 0 {
			return nil, fmt.Errorf("pg_stat_database: no numeric columns")
		}
	}
	parts := make([]string, len(out.cols))
	for i, c := range out.cols {
		parts[i] = "coalesce(sum(" + quoteIdent(c) + ")::text, '')"
	}
	rows, err := conn.Query(ctx, "SELECT "+strings.Join(parts, ", ")+
		", pg_postmaster_start_time()::text, coalesce(max(stats_reset)::text, ''), coalesce(extract(epoch FROM max(stats_reset)), 0)::text FROM pg_catalog.pg_stat_database")
	if err != nil {
		return nil, err
	}
	if len(rows) != 1 || len(rows[0]) != len(out.cols)+3 {
		return nil, fmt.Errorf("pg_stat_database: unexpected result")
	}
	r := rows[0]
	for i, c := range out.cols {
		if r[i] != "" {
			out.Sums[c] = r[i]
		}
	}
	n := len(out.cols)
	out.PostmasterStart, out.StatsReset = r[n], r[n+1]
	out.StatsResetEpoch, _ = collect.Num(r[n+2])
	return out, nil
}

func newPgStatDatabase() collect.Collector {
	var prev *pgStatDatabase
	return collect.Func{
		Name:    "pg_stat_database",
		Metrics: declared["pg_stat_database"],
		Help:    "transactions, block reads and hits, tuples, temp files, deadlocks (summed over databases)",
		Collect: func(ctx context.Context, s *collect.Scrape) error {
			if s.Conn == nil {
				return collect.ErrNoConn
			}
			db, err := readPgStatDatabase(ctx, s.Conn, prev)
			if err != nil {
				return err
			}
			prev = db
			for _, c := range pgDatabaseCols {
				if v, ok := collect.Num(db.Sums[c.expr]); ok {
					if c.kind == sample.Counter {
						s.Counter("pg."+c.name, c.unit, v)
					} else {
						s.Gauge("pg."+c.name, c.unit, v)
					}
				}
			}
			// The epoch: the postmaster's start and the newest statistics reset.
			s.Epoch(db.PostmasterStart + "|" + db.StatsReset)
			return nil
		},
	}.Collector()
}

var bgwriterCols = []pgCol{
	{"buffers_clean", "buffers_clean", sample.Counter, "buffers"},
	{"maxwritten_clean", "maxwritten_clean", sample.Counter, "times"},
	{"buffers_alloc", "buffers_alloc", sample.Counter, "buffers"},
}

var bgwriterCheckpointCols = []pgCol{
	{"checkpoints_timed", "checkpoints_timed", sample.Counter, "checkpoints"},
	{"checkpoints_req", "checkpoints_req", sample.Counter, "checkpoints"},
	{"checkpoint_write_time", "checkpoint_write_time", sample.Counter, "ms"},
	{"checkpoint_sync_time", "checkpoint_sync_time", sample.Counter, "ms"},
	{"buffers_checkpoint", "buffers_checkpoint", sample.Counter, "buffers"},
	{"buffers_backend", "buffers_backend", sample.Counter, "buffers"},
	{"buffers_backend_fsync", "buffers_backend_fsync", sample.Counter, "fsyncs"},
}

func newPgStatBgwriter() collect.Collector {
	return collect.Func{
		Name:    "pg_stat_bgwriter",
		Metrics: declared["pg_stat_bgwriter"],
		Help:    "background writer (and before 17 checkpoint) buffers written and checkpoints started",
		Collect: func(ctx context.Context, s *collect.Scrape) error {
			cols := bgwriterCols
			if pgVersion(s).Less(sample.Version{Major: 17}) {
				cols = append(append([]pgCol{}, bgwriterCheckpointCols...), bgwriterCols...)
			}
			rows, err := s.Query(ctx, "SELECT "+selectList(cols)+", pg_postmaster_start_time()::text, coalesce(stats_reset::text, '') FROM pg_catalog.pg_stat_bgwriter")
			if err != nil {
				return err
			}
			if len(rows) != 1 {
				return fmt.Errorf("pg_stat_bgwriter: %d rows", len(rows))
			}
			addRow(s, cols, rows[0])
			s.Epoch(rows[0][len(cols)] + "|" + rows[0][len(cols)+1])
			return nil
		},
	}.Collector()
}

func newPgStatCheckpointer() collect.Collector {
	return collect.Func{
		Name:    "pg_stat_checkpointer",
		Metrics: declared["pg_stat_checkpointer"],
		Help:    "checkpoints started (timed, requested) and buffers they wrote",
		Min:     sample.Version{Major: 17},
		Collect: func(ctx context.Context, s *collect.Scrape) error {
			cols := []pgCol{
				{"num_timed", "checkpoints_timed", sample.Counter, "checkpoints"},
				{"num_requested", "checkpoints_req", sample.Counter, "checkpoints"},
				{"write_time", "checkpoint_write_time", sample.Counter, "ms"},
				{"sync_time", "checkpoint_sync_time", sample.Counter, "ms"},
				{"buffers_written", "buffers_checkpoint", sample.Counter, "buffers"},
			}
			rows, err := s.Query(ctx, "SELECT "+selectList(cols)+", pg_postmaster_start_time()::text, coalesce(stats_reset::text, '') FROM pg_catalog.pg_stat_checkpointer")
			if err != nil {
				return err
			}
			if len(rows) != 1 {
				return fmt.Errorf("pg_stat_checkpointer: %d rows", len(rows))
			}
			addRow(s, cols, rows[0])
			s.Epoch(rows[0][len(cols)] + "|" + rows[0][len(cols)+1])
			return nil
		},
	}.Collector()
}

func newPgStatWAL() collect.Collector {
	return collect.Func{
		Name:    "pg_stat_wal",
		Metrics: declared["pg_stat_wal"],
		Help:    "WAL records, full-page images, bytes, buffer-full waits (and before 18 writes and syncs)",
		Min:     sample.Version{Major: 14},
		Collect: func(ctx context.Context, s *collect.Scrape) error {
			cols := []pgCol{
				{"wal_records", "wal_records", sample.Counter, "records"},
				{"wal_fpi", "wal_fpi", sample.Counter, "pages"},
				{"wal_buffers_full", "wal_buffers_full", sample.Counter, "times"},
			}
			if pgVersion(s).Less(sample.Version{Major: 18}) {
				cols = append(cols,
					pgCol{"wal_write", "wal_write", sample.Counter, "writes"},
					pgCol{"wal_sync", "wal_sync", sample.Counter, "syncs"},
					pgCol{"wal_write_time", "wal_write_time", sample.Counter, "ms"},
					pgCol{"wal_sync_time", "wal_sync_time", sample.Counter, "ms"},
				)
			}
			rows, err := s.Query(ctx, "SELECT "+selectList(cols)+", pg_postmaster_start_time()::text, coalesce(stats_reset::text, '') FROM pg_catalog.pg_stat_wal")
			if err != nil {
				return err
			}
			if len(rows) != 1 {
				return fmt.Errorf("pg_stat_wal: %d rows", len(rows))
			}
			addRow(s, cols, rows[0])
			s.Epoch(rows[0][len(cols)] + "|" + rows[0][len(cols)+1])
			return nil
		},
	}.Collector()
}

// pgWAL reads the WAL position (bytes written since the cluster began: a counter whose
// rate is WAL bytes per second) and how far it is past the last checkpoint's redo
// point, against max_wal_size: a requested checkpoint starts near
// max_wal_size / (1 + checkpoint_completion_target).
func newPgWAL() collect.Collector {
	var maxWAL float64
	scrapes := 0
	return collect.Func{
		Name:    "pg_wal",
		Metrics: declared["pg_wal"],
		Help:    "WAL position (bytes/s), WAL since the last checkpoint's redo point and its share of max_wal_size, checkpointer activity",
		Min:     sample.Version{Major: 10},
		Collect: func(ctx context.Context, s *collect.Scrape) error {
			// max_wal_size changes only with a reload: read it every 30th scrape.
			if scrapes%30 == 0 {
				if rows, err := s.Query(ctx, `SELECT setting::numeric * 1048576 FROM pg_catalog.pg_settings WHERE name = 'max_wal_size'`); err == nil && len(rows) == 1 {
					maxWAL, _ = collect.Num(rows[0][0])
				}
			}
			scrapes++
			rows, err := s.Query(ctx, `SELECT CASE WHEN pg_is_in_recovery() THEN coalesce(pg_last_wal_replay_lsn(), '0/0') ELSE pg_current_wal_lsn() END - '0/0'::pg_lsn,
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
			lsn, _ := collect.Num(r[0])
			s.Counter("pg.wal_bytes", "bytes", lsn)
			s.Epoch(r[1])
			if maxWAL > 0 {
				s.Gauge("pg.max_wal_size_bytes", "bytes", maxWAL)
			}
			if busy, ok := collect.Num(r[2]); ok {
				s.Gauge("pg.checkpointer_busy", "bool", busy)
			}
			// The last checkpoint's redo point needs pg_control_checkpoint(), which a
			// plain user may not run: then the rest is still recorded.
			cp, err := s.Query(ctx, `SELECT pg_current_wal_lsn() - redo_lsn, extract(epoch FROM now() - checkpoint_time) FROM pg_control_checkpoint() WHERE NOT pg_is_in_recovery()`)
			if err != nil || len(cp) != 1 {
				return nil
			}
			since, _ := collect.Num(cp[0][0])
			s.Gauge("pg.wal_since_checkpoint_bytes", "bytes", since)
			if age, ok := collect.Num(cp[0][1]); ok {
				s.Gauge("pg.checkpoint_age_seconds", "seconds", age)
			}
			if maxWAL > 0 {
				s.Gauge("pg.wal_since_checkpoint_pct", "%", since/maxWAL*100)
			}
			return nil
		},
	}.Collector()
}

// newPgActivity counts client sessions by state and what active ones wait on, and
// background workers by type (autovacuum workers in particular).
func newPgActivity() collect.Collector {
	return collect.Func{
		Name:    "pg_stat_activity",
		Metrics: declared["pg_stat_activity"],
		Help:    "sessions by state and by wait event, autovacuum workers, oldest transaction and query",
		Min:     sample.Version{Major: 10},
		Collect: func(ctx context.Context, s *collect.Scrape) error {
			rows, err := s.Query(ctx, `SELECT backend_type, coalesce(state, ''), coalesce(wait_event_type, ''), coalesce(wait_event, ''), count(*),
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
				n, _ := collect.Num(r[4])
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
					if x, _ := collect.Num(r[5]); x > oldestXact {
						oldestXact = x
					}
					if q, _ := collect.Num(r[6]); q > longestQuery {
						longestQuery = q
					}
				case "autovacuum worker":
					autovac += n
				case "walsender":
					walsenders += n
				}
			}
			for _, st := range pgStates {
				s.Gauge("pg.sessions."+collect.MetricPart(st), "sessions", states[st])
			}
			s.Gauge("pg.sessions.running", "sessions", running)
			for _, w := range pgWaitTypes {
				s.Gauge("pg.waiting."+strings.ToLower(w), "sessions", waits[w])
			}
			for e, n := range events {
				t, ev, _ := strings.Cut(e, ".")
				s.SparseGauge("pg.wait_event."+strings.ToLower(t)+"."+collect.MetricPart(ev), "sessions", n)
			}
			s.Gauge("pg.autovacuum_workers", "workers", autovac)
			s.Gauge("pg.walsenders", "processes", walsenders)
			s.Gauge("pg.oldest_xact_seconds", "seconds", oldestXact)
			s.Gauge("pg.longest_query_seconds", "seconds", longestQuery)
			return nil
		},
	}.Collector()
}

// newPgLocks counts lock requests that wait, and the sessions waiting.
func newPgLocks() collect.Collector {
	return collect.Func{
		Name:    "pg_locks",
		Metrics: declared["pg_locks"],
		Help:    "lock requests not granted (by lock type) and sessions waiting for a lock",
		Collect: func(ctx context.Context, s *collect.Scrape) error {
			// One row per lock type, and the total (locktype NULL) from the rollup.
			rows, err := s.Query(ctx, `SELECT coalesce(locktype, ''), count(*), count(DISTINCT pid), (locktype IS NULL)::text
				FROM pg_catalog.pg_locks WHERE NOT granted GROUP BY ROLLUP (locktype)`)
			if err != nil {
				return err
			}
			var total, blocked float64
			for _, r := range rows {
				if len(r) != 4 {
					continue
				}
				n, _ := collect.Num(r[1])
				if r[3] == "true" {
					total = n
					blocked, _ = collect.Num(r[2])
					continue
				}
				s.SparseGauge("pg.lock_waits."+collect.MetricPart(r[0]), "locks", n)
			}
			s.Gauge("pg.lock_waits", "locks", total)
			s.Gauge("pg.blocked_sessions", "sessions", blocked)
			return nil
		},
	}.Collector()
}

// newPgVacuum counts vacuums in progress (manual and autovacuum) and the heap blocks
// they scanned.
func newPgVacuum() collect.Collector {
	return collect.Func{
		Name:    "pg_stat_progress_vacuum",
		Metrics: declared["pg_stat_progress_vacuum"],
		Help:    "vacuums in progress (autovacuum and manual) and the heap blocks they have left",
		Min:     sample.Version{Major: 9, Minor: 6},
		Collect: func(ctx context.Context, s *collect.Scrape) error {
			// Autovacuum workers are counted by pg_stat_activity; here every vacuum.
			rows, err := s.Query(ctx, `SELECT count(*), coalesce(sum(heap_blks_total - heap_blks_scanned), 0) FROM pg_catalog.pg_stat_progress_vacuum`)
			if err != nil {
				return err
			}
			if len(rows) != 1 || len(rows[0]) != 2 {
				return fmt.Errorf("pg_stat_progress_vacuum: unexpected result")
			}
			n, _ := collect.Num(rows[0][0])
			left, _ := collect.Num(rows[0][1])
			s.Gauge("pg.vacuums", "vacuums", n)
			s.Gauge("pg.vacuum_heap_blocks_left", "blocks", left)
			return nil
		},
	}.Collector()
}
