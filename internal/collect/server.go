package collect

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/prometheus/procfs"

	"github.com/fathom-lab/fathom/internal/target"
)

// Server is what the sampler learnt about the database server when it started: its
// version, where its data lives, and whether it runs on this host (then the OS
// collectors read its processes and the disk holding its data directory).
type Server struct {
	Kind    string  `json:"kind"`   // postgres, mysql, sqlite
	Flavor  string  `json:"flavor"` // postgresql, mariadb, mysql, sqlite
	Version Version `json:"version"`
	// VersionString is the server's own version text.
	VersionString string `json:"version_string,omitempty"`
	DataDir       string `json:"data_dir,omitempty"`
	// Local: the server's processes were found on this host.
	Local bool `json:"local"`
	// PID is the main server process (postmaster, mysqld) when Local.
	PID int `json:"pid,omitempty"`
	// Devices are the block devices the disk collector sums: the one holding the data
	// directory, or every disk when it cannot be found.
	Devices []string `json:"devices,omitempty"`
	// DiskScope says which: "data directory" or "all disks".
	DiskScope string `json:"disk_scope,omitempty"`
	// Settings holds the server (and vm.*) settings that govern the patterns stall
	// analysis knows, as the server shows them.
	Settings map[string]string `json:"settings,omitempty"`
	// Notes say what could not be learnt and why.
	Notes []string `json:"notes,omitempty"`
}

func (s *Server) note(format string, args ...any) {
	s.Notes = append(s.Notes, fmt.Sprintf(format, args...))
}

// governing settings read at discovery, per kind: the ones stall explanations name.
var governing = map[string][]string{
	"postgres": {"max_wal_size", "min_wal_size", "checkpoint_timeout", "checkpoint_completion_target",
		"shared_buffers", "full_page_writes", "wal_compression", "synchronous_commit", "wal_sync_method",
		"bgwriter_lru_maxpages", "autovacuum_max_workers", "autovacuum_vacuum_cost_limit",
		"autovacuum_vacuum_cost_delay", "deadlock_timeout", "lock_timeout", "checkpoint_flush_after",
		"backend_flush_after", "wal_writer_flush_after"},
	"mysql": {"innodb_log_file_size", "innodb_log_files_in_group", "innodb_redo_log_capacity",
		"innodb_io_capacity", "innodb_io_capacity_max", "innodb_max_dirty_pages_pct",
		"innodb_max_dirty_pages_pct_lwm", "innodb_adaptive_flushing", "innodb_adaptive_flushing_lwm",
		"innodb_flush_method", "innodb_flush_log_at_trx_commit", "innodb_flush_neighbors",
		"innodb_buffer_pool_size", "innodb_lock_wait_timeout", "log_bin", "max_binlog_size",
		"sync_binlog", "binlog_format", "innodb_doublewrite"},
}

// vmSettings are the writeback settings read from /proc/sys/vm.
var vmSettings = []string{"dirty_ratio", "dirty_background_ratio", "dirty_bytes", "dirty_background_bytes",
	"dirty_expire_centisecs", "dirty_writeback_centisecs", "swappiness"}

// Discover learns about the server over conn (which may be nil when the server cannot
// be reached: then only the OS side is filled in). It never fails: what cannot be
// learnt is left empty and noted.
func Discover(ctx context.Context, kind string, conn target.Conn, dsn string) *Server {
	s := &Server{Kind: kind, Settings: map[string]string{}}
	fs, fsErr := procfs.NewDefaultFS()
	switch kind {
	case "postgres":
		s.Flavor = "postgresql"
		if conn != nil {
			discoverPostgres(ctx, s, conn, fs, fsErr == nil)
		}
	case "mysql":
		s.Flavor = "mysql"
		if conn != nil {
			discoverMySQL(ctx, s, conn, fs, fsErr == nil)
		}
	case "sqlite":
		s.Flavor = "sqlite"
		s.Local = true
		if p := sqlitePath(dsn); p != "" {
			if abs, err := filepath.Abs(p); err == nil {
				s.DataDir = filepath.Dir(abs)
			}
		}
	}
	if conn == nil && kind != "sqlite" {
		s.note("server not reached: server collectors will fail until it is")
	}
	if fsErr != nil {
		s.note("no /proc: OS collectors are off (%v)", fsErr)
		return s
	}
	for _, k := range vmSettings {
		if b, err := os.ReadFile("/proc/sys/vm/" + k); err == nil {
			s.Settings["vm."+k] = strings.TrimSpace(string(b))
		}
	}
	s.findDevices()
	return s
}

// sqlitePath extracts the file of a sqlite:PATH DSN.
func sqlitePath(dsn string) string {
	p := strings.TrimPrefix(dsn, "sqlite:")
	p = strings.TrimPrefix(p, "//")
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	if p == "" || p == ":memory:" {
		return ""
	}
	return p
}

func discoverPostgres(ctx context.Context, s *Server, conn target.Conn, fs procfs.FS, haveProc bool) {
	rows, err := conn.Query(ctx, `SELECT current_setting('server_version_num'), version(), pg_backend_pid(),
		coalesce((SELECT setting FROM pg_catalog.pg_settings WHERE name = 'data_directory'), '')`)
	if err != nil || len(rows) != 1 || len(rows[0]) != 4 {
		s.note("version: %v", errOr(err, "no row"))
		return
	}
	r := rows[0]
	n, _ := strconv.Atoi(r[0])
	if n < 100000 {
		s.Version = Version{Major: n / 10000, Minor: n / 100 % 100, Patch: n % 100}
	} else {
		s.Version = Version{Major: n / 10000, Minor: n % 10000}
	}
	s.VersionString = r[1]
	s.DataDir = r[3]
	if s.DataDir == "" {
		s.note("data_directory not visible to this user (needs pg_read_all_settings)")
	}
	names := governing["postgres"]
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
		s.note("server processes not on this host (backend %d not found): OS metrics describe this host only", backend)
		return
	}
	st, err := p.Stat()
	if err != nil || !isPostgresComm(st.Comm) {
		s.note("server processes not on this host: OS metrics describe this host only")
		return
	}
	s.Local = true
	s.PID = st.PPID
}

func isPostgresComm(c string) bool {
	return c == "postgres" || c == "postmaster" || strings.HasPrefix(c, "postgres")
}

func discoverMySQL(ctx context.Context, s *Server, conn target.Conn, fs procfs.FS, haveProc bool) {
	rows, err := conn.Query(ctx, `SELECT VERSION(), @@version_comment, @@datadir, @@pid_file`)
	if err != nil || len(rows) != 1 || len(rows[0]) != 4 {
		s.note("version: %v", errOr(err, "no row"))
		return
	}
	r := rows[0]
	s.VersionString = r[0]
	s.Version = ParseVersion(r[0])
	if strings.Contains(strings.ToLower(r[0]+" "+r[1]), "mariadb") {
		s.Flavor = "mariadb"
	}
	s.Version.Flavor = s.Flavor
	s.DataDir = strings.TrimRight(r[2], "/")
	vars, err := conn.Query(ctx, "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('"+strings.Join(governing["mysql"], "','")+"')")
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
	s.note("server process not found on this host: OS metrics describe this host only")
}

func isMySQLComm(c string) bool { return c == "mysqld" || c == "mariadbd" }

func errOr(err error, s string) string {
	if err != nil {
		return err.Error()
	}
	return s
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

// findDevices picks the block devices for the disk collector: the device holding the
// data directory when it is known and visible, every disk otherwise.
func (s *Server) findDevices() {
	if s.Local && s.DataDir != "" {
		var st syscall.Stat_t
		if err := syscall.Stat(s.DataDir, &st); err == nil {
			maj, min := devMajor(uint64(st.Dev)), devMinor(uint64(st.Dev))
			if name := deviceName(maj, min); name != "" {
				s.Devices, s.DiskScope = []string{name}, "data directory"
				return
			}
			s.note("data directory %s is on device %d:%d, which has no disk statistics (tmpfs, overlay or a network filesystem?): summing all disks", s.DataDir, maj, min)
		} else {
			s.note("data directory %s: %v: summing all disks", s.DataDir, err)
		}
	}
	s.Devices, s.DiskScope = wholeDisks(), "all disks"
}

func devMajor(dev uint64) uint32 { return uint32((dev>>8)&0xfff) | uint32((dev>>32)&^0xfff) }
func devMinor(dev uint64) uint32 { return uint32(dev&0xff) | uint32((dev>>12)&^0xff) }

// deviceName finds the /proc/diskstats name of a major:minor device.
func deviceName(maj, min uint32) string {
	b, err := os.ReadFile("/proc/diskstats")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		if f[0] == strconv.Itoa(int(maj)) && f[1] == strconv.Itoa(int(min)) {
			return f[2]
		}
	}
	return ""
}

// wholeDisks lists the disks in /sys/block, leaving out loop, ram, zram, device
// mapper and md devices (which would count the same I/O twice).
func wholeDisks() []string {
	ents, err := os.ReadDir("/sys/block")
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, "loop") || strings.HasPrefix(n, "ram") || strings.HasPrefix(n, "zram") ||
			strings.HasPrefix(n, "dm-") || strings.HasPrefix(n, "md") || strings.HasPrefix(n, "sr") || strings.HasPrefix(n, "fd") {
			continue
		}
		out = append(out, n)
	}
	return out
}
