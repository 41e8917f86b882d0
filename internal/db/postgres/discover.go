package postgres

import (
	"context"
	"strconv"
	"strings"

	"github.com/prometheus/procfs"

	"github.com/fathom-lab/fathom/internal/collect"
	"github.com/fathom-lab/fathom/internal/sample"
	"github.com/fathom-lab/fathom/internal/target"
)

// collectSide is the kind's collect side: its collectors, discovery and snapshot
// sections.
type collectSide struct{}

func (collectSide) Name() string  { return "postgres" }
func (collectSide) Title() string { return "PostgreSQL" }
func (collectSide) Collectors() []collect.Collector {
	return collect.Fresh(newPgStatDatabase, newPgStatBgwriter, newPgStatCheckpointer, newPgStatWAL, newPgWAL,
		newPgActivity, newPgLocks, newPgVacuum)
}
func (collectSide) Discover(ctx context.Context, s *sample.Server, conn target.Conn, dsn string, fs procfs.FS, haveProc bool) {
	s.Flavor = "postgresql"
	if conn != nil {
		discoverPostgres(ctx, s, conn, fs, haveProc)
	}
}
func (collectSide) Snapshot(sn *collect.Snap) { snapshot(sn) }
func (collectSide) SessionSetup() string {
	return "SET application_name = 'fathom collector'; SET jit = off"
}

// KeyMetrics are the metrics shown first (fathom show, fathom watch).
func (collectSide) KeyMetrics() []string {
	return []string{pgXactCommit, pgXactRollback, pgBlksRead, pgTupUpdated, pgWALBytes, pgWALFPI,
		pgCheckpointsReq, pgCheckpointsTimed, pgBuffersCheckpoint, pgBuffersBackend, pgWALSinceCheckpointPct,
		pgSessionsActive, pgWaitingLock, pgWaitingLWLock, pgWaitingIO, pgLockWaits, pgAutovacuumWorkers, pgDeadlocks, pgTempBytes}
}

// governing are the settings read at discovery: the ones stall explanations name.
var governing = []string{"max_wal_size", "min_wal_size", "checkpoint_timeout", "checkpoint_completion_target",
	"shared_buffers", "full_page_writes", "wal_compression", "synchronous_commit", "wal_sync_method",
	"bgwriter_lru_maxpages", "autovacuum_max_workers", "autovacuum_vacuum_cost_limit",
	"autovacuum_vacuum_cost_delay", "deadlock_timeout", "lock_timeout", "checkpoint_flush_after",
	"backend_flush_after", "wal_writer_flush_after", "commit_delay", "commit_siblings"}

func discoverPostgres(ctx context.Context, s *sample.Server, conn target.Conn, fs procfs.FS, haveProc bool) {
	rows, err := conn.Query(ctx, `SELECT current_setting('server_version_num'), version(), pg_backend_pid(),
		coalesce((SELECT setting FROM pg_catalog.pg_settings WHERE name = 'data_directory'), '')`)
	if err != nil || len(rows) != 1 || len(rows[0]) != 4 {
		collect.Note(s, "version: %v", collect.ErrOr(err, "no row"))
		return
	}
	r := rows[0]
	n, _ := strconv.Atoi(r[0])
	if n < 100000 {
		s.Version = sample.Version{Major: n / 10000, Minor: n / 100 % 100, Patch: n % 100}
	} else {
		s.Version = sample.Version{Major: n / 10000, Minor: n % 10000}
	}
	s.VersionString = r[1]
	s.DataDir = r[3]
	if s.DataDir == "" {
		collect.Note(s, "data_directory not visible to this user (needs pg_read_all_settings)")
	}
	names := governing
	set, err := conn.Query(ctx, `SELECT name, setting, coalesce(unit, '') FROM pg_catalog.pg_settings WHERE name IN ('`+strings.Join(names, "','")+`')`)
	if err == nil {
		for _, row := range set {
			if len(row) == 3 {
				s.Settings[row[0]] = pgSettingText(row[1], row[2])
			}
		}
	}
	if !haveProc {
		return
	}
	// The server is local when our own backend is a process here, named postgres, and
	// its parent is the postmaster.
	backend, _ := strconv.Atoi(r[2])
	if backend <= 0 {
		return
	}
	p, err := fs.Proc(backend)
	if err != nil {
		collect.Note(s, "server processes not on this host (backend %d not found): OS metrics describe this host only", backend)
		return
	}
	st, err := p.Stat()
	if err != nil || !isPostgresComm(st.Comm) {
		collect.Note(s, "server processes not on this host: OS metrics describe this host only")
		return
	}
	s.Local = true
	s.PID = st.PPID
	s.Children = true // a backend process per connection, children of the postmaster
}

func isPostgresComm(c string) bool {
	return c == "postgres" || c == "postmaster" || strings.HasPrefix(c, "postgres")
}

// pgSettingText renders a pg_settings value with its unit as SHOW would.
func pgSettingText(v, unit string) string {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || unit == "" {
		return v
	}
	switch unit {
	case "8kB":
		return humanBytes(n * 8192)
	case "kB":
		return humanBytes(n * 1024)
	case "MB":
		return humanBytes(n << 20)
	case "B":
		return humanBytes(n)
	}
	return v + unit
}

func humanBytes(n int64) string {
	for _, u := range []struct {
		s string
		n int64
	}{{"GB", 1 << 30}, {"MB", 1 << 20}, {"kB", 1 << 10}} {
		if n >= u.n && n%u.n == 0 {
			return strconv.FormatInt(n/u.n, 10) + u.s
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}
