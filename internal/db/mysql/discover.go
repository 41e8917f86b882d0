package mysql

import (
	"context"
	"os"
	"path/filepath"
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

func (collectSide) Name() string  { return "mysql" }
func (collectSide) Title() string { return "MySQL/MariaDB" }
func (collectSide) Collectors() []collect.Collector {
	return collect.Fresh(newMySQLGlobalStatus, newMySQLInnoDBStatus, newMySQLBinlog, newMySQLProcesslist)
}
func (collectSide) Discover(ctx context.Context, s *sample.Server, conn target.Conn, dsn string, fs procfs.FS, haveProc bool) {
	s.Flavor = "mysql"
	if conn != nil {
		discoverMySQL(ctx, s, conn, fs, haveProc)
	}
}
func (collectSide) Snapshot(sn *collect.Snap) { snapshot(sn) }
func (collectSide) FlavorTitle(flavor string) string {
	switch flavor {
	case "mariadb":
		return "MariaDB"
	case "mysql":
		return "MySQL"
	}
	return ""
}

// KeyMetrics are the metrics shown first (fathom show, fathom watch).
func (collectSide) KeyMetrics() []string {
	return []string{mySQLQuestions, mySQLComCommit, mySQLInnoDBRowsRead, mySQLInnoDBRowsUpdated, mySQLInnoDBRowsInserted,
		mySQLThreadsRunning, mySQLInnoDBBufferPoolPagesDirty, mySQLInnoDBBufferPoolPagesFlushed,
		mySQLInnoDBCheckpointAgeCapacityPct, mySQLInnoDBCheckpointAgePct, mySQLInnoDBLogWaits,
		mySQLInnoDBBufferPoolWaitFree, mySQLInnoDBOsLogWritten, mySQLInnoDBDataFsyncs,
		mySQLInnoDBHistoryListLength, mySQLInnoDBRowLockCurrentWaits, mySQLBinlogFileSeq}
}

// governing are the settings read at discovery: the ones stall explanations name.
var governing = []string{"innodb_log_file_size", "innodb_log_files_in_group", "innodb_redo_log_capacity",
	"innodb_io_capacity", "innodb_io_capacity_max", "innodb_max_dirty_pages_pct",
	"innodb_max_dirty_pages_pct_lwm", "innodb_adaptive_flushing", "innodb_adaptive_flushing_lwm",
	"innodb_flush_method", "innodb_flush_log_at_trx_commit", "innodb_flush_neighbors",
	"innodb_buffer_pool_size", "innodb_lock_wait_timeout", "lock_wait_timeout", "log_bin", "max_binlog_size",
	"sync_binlog", "binlog_format", "innodb_doublewrite"}

func discoverMySQL(ctx context.Context, s *sample.Server, conn target.Conn, fs procfs.FS, haveProc bool) {
	rows, err := conn.Query(ctx, `SELECT VERSION(), @@version_comment, @@datadir, @@pid_file`)
	if err != nil || len(rows) != 1 || len(rows[0]) != 4 {
		collect.Note(s, "version: %v", collect.ErrOr(err, "no row"))
		return
	}
	r := rows[0]
	s.VersionString = r[0]
	s.Version = collect.ParseVersion(r[0])
	if strings.Contains(strings.ToLower(r[0]+" "+r[1]), "mariadb") {
		s.Flavor = "mariadb"
	}
	s.Version.Flavor = s.Flavor
	s.DataDir = strings.TrimRight(r[2], "/")
	vars, err := conn.Query(ctx, "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('"+strings.Join(governing, "','")+"')")
	if err == nil {
		for _, row := range vars {
			if len(row) == 2 {
				s.Settings[row[0]] = row[1]
			}
		}
	}
	if !haveProc {
		return
	}
	pidFile := r[3]
	if pidFile != "" && !filepath.IsAbs(pidFile) && s.DataDir != "" {
		pidFile = filepath.Join(s.DataDir, pidFile)
	}
	if b, err := os.ReadFile(pidFile); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			if p, err := fs.Proc(pid); err == nil {
				if st, err := p.Stat(); err == nil && isMySQLComm(st.Comm) {
					s.Local, s.PID = true, pid
					return
				}
			}
		}
	}
	// Without a readable pid file: a mysqld whose working directory is the data directory.
	if procs, err := fs.AllProcs(); err == nil && s.DataDir != "" {
		for _, p := range procs {
			if c, err := p.Comm(); err == nil && isMySQLComm(c) {
				if cwd, err := p.Cwd(); err == nil && strings.TrimRight(cwd, "/") == s.DataDir {
					s.Local, s.PID = true, p.PID
					return
				}
			}
		}
	}
	collect.Note(s, "server process not found on this host: OS metrics describe this host only")
}

func isMySQLComm(c string) bool { return c == "mysqld" || c == "mariadbd" }
