// Package capture turns a server's own statement statistics into a fathom workload
// file: PostgreSQL's pg_stat_statements, MySQL's and MariaDB's performance_schema
// statement digests, or a MySQL slow query log. The busiest statements become
// transactions weighted by their share of the calls, and each parameter gets a
// generator inferred from the data of the column it is compared with or written to.
package capture

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fathom-lab/fathom/internal/target"
)

// Options say what to capture.
type Options struct {
	Top int    // statements to keep (default 10)
	By  string // "calls" (default) or "time": what ranks the statements
	// SlowLog is a server log of every statement to read instead of the statistics:
	// MySQL's or MariaDB's slow query log (long_query_time = 0), or PostgreSQL's log
	// with log_min_duration_statement = 0.
	SlowLog string
	Name    string // the workload's name (default "captured")
	Now     time.Time
	// Reader is the target kind's reader of statement statistics and logs (its
	// bundle's, internal/db/KIND; nil: the kind keeps none).
	Reader Reader
}

// Reader is what a database kind gives capture: its statement statistics and its
// log of every statement, read with this package's readers (ReadPgStatStatements,
// ReadPerfSchema, ReadPGLog, ReadSlowLog). A Reader may also be a ColumnTyper and a
// Hinter.
type Reader interface {
	// Statements reads the server's statement statistics, filling src.
	Statements(ctx context.Context, conn target.Conn, src *Source) ([]Statement, error)
	// Log reads a log of every statement at path.
	Log(ctx context.Context, conn target.Conn, path string, src Source) ([]Event, Source, error)
}

// ColumnTyper is a Reader whose server's information_schema needs its own filter
// for the session's tables and its own character-length function (MySQL:
// DATABASE(), char_length). The default is PostgreSQL's current_schemas and length.
type ColumnTyper interface {
	ColumnQuery() (schema, length string)
}

// Hinter is a Reader with advice for when nothing the application ran was read.
type Hinter interface {
	Hint(o Options) string
}

// Statement is one normalized statement and what the server counted for it.
type Statement struct {
	SQL     string // as the server normalized it: $1 … (PostgreSQL) or ? (MySQL)
	Calls   int64
	TotalMs float64
	Rows    int64
}

// Source is where the statements came from, for the file's comments.
type Source struct {
	What          string // e.g. "pg_stat_statements on PostgreSQL 15.4, database bench"
	Since, Until  time.Time
	SinceUnknown  bool
	Total         int64 // calls of every statement read, before filtering
	Skipped       int   // statements left out (not DML, catalog, fathom's own)
	DroppedByTop  int
	Database      string
	Kind          string
	ServerVersion string
}

// ErrNotAvailable wraps the reason a server's statistics cannot be read, with the fix.
var ErrNotAvailable = errors.New("statement statistics not available")

// Read reads the statements on conn (kind is the target's kind) through o.Reader, and
// from a log the calls that make them up.
func Read(ctx context.Context, conn target.Conn, kind string, o Options) ([]Statement, []Event, Source, error) {
	src := Source{Kind: kind, Until: o.Now}
	switch {
	case o.SlowLog != "":
		src.Until = time.Time{}
		var ev []Event
		var err error
		if o.Reader != nil {
			ev, src, err = o.Reader.Log(ctx, conn, o.SlowLog, src)
		} else {
			// A kind without a reader of its own: the log is read as MySQL's slow log,
			// the format most tools write.
			ev, src, err = ReadSlowLog(o.SlowLog, src)
		}
		return statementsOf(ev), ev, src, err
	case o.Reader == nil:
		return nil, nil, src, fmt.Errorf("%w: %s keeps no statement statistics; capture reads PostgreSQL (pg_stat_statements or --slow-log) and MySQL/MariaDB (performance_schema or --slow-log)", ErrNotAvailable, kind)
	}
	st, err := o.Reader.Statements(ctx, conn, &src)
	return st, nil, src, err
}

// ReadPgStatStatements reads PostgreSQL's pg_stat_statements for the current
// database.
func ReadPgStatStatements(ctx context.Context, conn target.Conn, src *Source) ([]Statement, error) {
	return readPostgres(ctx, conn, src)
}

// ReadPerfSchema reads MySQL's or MariaDB's performance_schema digests.
func ReadPerfSchema(ctx context.Context, conn target.Conn, src *Source) ([]Statement, error) {
	return readMySQL(ctx, conn, src)
}

// ReadSlowLog reads a MySQL or MariaDB slow query log (see readSlowLog).
func ReadSlowLog(path string, src Source) ([]Event, Source, error) { return readSlowLog(path, src) }

// ReadPGLog reads a PostgreSQL server log (see readPGLog) of the database src names.
func ReadPGLog(path string, src Source) ([]Event, Source, error) { return readPGLog(path, src) }

func readPostgres(ctx context.Context, conn target.Conn, src *Source) ([]Statement, error) {
	rows, err := conn.Query(ctx, "SELECT current_database(), current_setting('server_version'), (SELECT count(*) FROM pg_extension WHERE extname = 'pg_stat_statements')")
	if err != nil {
		return nil, err
	}
	src.Database, src.ServerVersion = rows[0][0], rows[0][1]
	if rows[0][2] == "0" {
		return nil, fmt.Errorf("%w: the pg_stat_statements extension is not in database %s: add pg_stat_statements to shared_preload_libraries, restart, and run CREATE EXTENSION pg_stat_statements", ErrNotAvailable, src.Database)
	}
	src.What = "pg_stat_statements on PostgreSQL " + src.ServerVersion + ", database " + src.Database
	q := `SELECT s.query, s.calls, s.total_exec_time, s.rows FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
		WHERE d.datname = current_database() AND s.calls > 0`
	rows, err = conn.Query(ctx, q)
	if target.ClassOf(err) == target.ClassUndefined { // before PostgreSQL 13: total_time
		rows, err = conn.Query(ctx, strings.Replace(q, "total_exec_time", "total_time", 1))
	}
	if err != nil {
		if strings.Contains(err.Error(), "shared_preload_libraries") || target.ClassOf(err) == target.ClassOther {
			return nil, fmt.Errorf("%w: reading pg_stat_statements: %v (is pg_stat_statements in shared_preload_libraries?)", ErrNotAvailable, err)
		}
		return nil, err
	}
	out := make([]Statement, 0, len(rows))
	for _, r := range rows {
		s := Statement{SQL: r[0]}
		s.Calls, _ = strconv.ParseInt(r[1], 10, 64)
		s.TotalMs, _ = strconv.ParseFloat(r[2], 64)
		s.Rows, _ = strconv.ParseInt(r[3], 10, 64)
		out = append(out, s)
	}
	src.SinceUnknown = true
	if rows, err := conn.Query(ctx, "SELECT to_char(stats_reset AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') FROM pg_stat_statements_info"); err == nil && len(rows) == 1 {
		if t, err := time.Parse(time.RFC3339, rows[0][0]); err == nil {
			src.Since, src.SinceUnknown = t, false
		}
	}
	return out, nil
}

func readMySQL(ctx context.Context, conn target.Conn, src *Source) ([]Statement, error) {
	rows, err := conn.Query(ctx, "SELECT DATABASE(), VERSION(), @@performance_schema")
	if err != nil {
		return nil, err
	}
	src.Database, src.ServerVersion = rows[0][0], rows[0][1]
	if rows[0][2] != "1" {
		return nil, fmt.Errorf("%w: performance_schema is off on this server: start it with performance_schema=ON, or give the slow query log with --slow-log FILE", ErrNotAvailable)
	}
	src.What = "performance_schema statement digests on " + src.ServerVersion + ", database " + src.Database
	rows, err = conn.Query(ctx, `SELECT DIGEST_TEXT, COUNT_STAR, SUM_TIMER_WAIT / 1000000000, SUM_ROWS_SENT + SUM_ROWS_AFFECTED,
		DATE_FORMAT(FIRST_SEEN, '%Y-%m-%dT%H:%i:%s'), DATE_FORMAT(LAST_SEEN, '%Y-%m-%dT%H:%i:%s')
		FROM performance_schema.events_statements_summary_by_digest
		WHERE SCHEMA_NAME = DATABASE() AND DIGEST_TEXT IS NOT NULL AND COUNT_STAR > 0`)
	if err != nil {
		return nil, fmt.Errorf("%w: reading performance_schema.events_statements_summary_by_digest: %v", ErrNotAvailable, err)
	}
	out := make([]Statement, 0, len(rows))
	for _, r := range rows {
		s := Statement{SQL: digestSQL(r[0])}
		s.Calls, _ = strconv.ParseInt(r[1], 10, 64)
		s.TotalMs, _ = strconv.ParseFloat(r[2], 64)
		s.Rows, _ = strconv.ParseInt(r[3], 10, 64)
		out = append(out, s)
		// The server's clock, taken as UTC: fine for naming the window.
		if t, err := time.Parse("2006-01-02T15:04:05", r[4]); err == nil && (src.Since.IsZero() || t.Before(src.Since)) {
			src.Since = t
		}
		if t, err := time.Parse("2006-01-02T15:04:05", r[5]); err == nil && t.After(src.Until) {
			src.Until = t
		}
	}
	src.SinceUnknown = src.Since.IsZero()
	return out, nil
}

var (
	callSpaceRE = regexp.MustCompile("([A-Za-z0-9_`])\\s+\\(")
	parenRE     = regexp.MustCompile(`\(\s+|\s+\)`)
)

var (
	charsetRE = regexp.MustCompile(`\(_\w+\)\s*|\b_(?:utf8mb4|utf8mb3|utf8|latin1|binary|ascii)\s+`)
	valuesRE  = regexp.MustCompile(`(?is)(\(([^()]*)\)\s*VALUES\s*)\(.*\.\.\..*\)\s*$`)
	inListRE  = regexp.MustCompile(`(?i)\bIN\s*\(\s*(?:\.\.\.|\?\s*,\s*\.\.\.)\s*\)`)
)

// digestSQL makes a digest's text runnable: the digest writes "SUM ( k )", which
// MySQL reads as a call of a stored function SUM unless IGNORE_SPACE is set; it folds
// value lists ("VALUES ( ?, ... , (_charset) ? )", "IN (...)"), which get one
// placeholder per column of the INSERT, and one for an IN list.
func digestSQL(s string) string {
	s = charsetRE.ReplaceAllString(strings.TrimSpace(s), "")
	if m := valuesRE.FindStringSubmatchIndex(s); m != nil {
		n := len(strings.Split(s[m[4]:m[5]], ","))
		s = s[:m[3]] + "(" + strings.TrimSuffix(strings.Repeat("?, ", n), ", ") + ")"
	}
	s = inListRE.ReplaceAllString(s, "IN (?)")
	s = callSpaceRE.ReplaceAllString(s, "$1(")
	return parenRE.ReplaceAllStringFunc(s, strings.TrimSpace)
}

var (
	dmlRE = regexp.MustCompile(`(?is)^\s*(select|insert|update|delete|replace|with)\b`)
	// internalRE matches what the application did not send: catalog and statistics
	// reads, server functions (fathom's own sampler calls them), and the probes that
	// check whether a table exists (SELECT 1 FROM t WHERE 1 = 0, normalized).
	internalRE = regexp.MustCompile(`(?i)\b(pg_catalog|information_schema|performance_schema|pg_stat_\w+|pg_extension|pg_database|pg_class|fathom_prepare\w*|mysql\.\w+|sys\.\w+)\b|@@|\bcurrent_setting\s*\(|\bpg_\w+\s*\(|\bwhere\s+(\$\d+|\?)\s*=\s*(\$\d+|\?)|/\* fathom`)
)

// keep reports whether s is a statement of the application: DML on its own tables,
// complete (the digest text of a long statement is cut off with "...", and a list it
// folds that digestSQL could not unfold has one too).
func keep(s Statement) bool {
	return dmlRE.MatchString(s.SQL) && len(Tables(s.SQL)) > 0 && !internalRE.MatchString(s.SQL) && !strings.Contains(s.SQL, "...")
}

// Select filters the statements and keeps the top ones, busiest first.
func Select(all []Statement, src *Source, o Options) []Statement {
	top := o.Top
	if top <= 0 {
		top = 10
	}
	var st []Statement
	for _, s := range all {
		src.Total += s.Calls
		if keep(s) {
			st = append(st, s)
		} else {
			src.Skipped++
		}
	}
	slices.SortStableFunc(st, func(a, b Statement) int {
		if o.By == "time" && a.TotalMs != b.TotalMs {
			if a.TotalMs > b.TotalMs {
				return -1
			}
			return 1
		}
		if a.Calls != b.Calls {
			if a.Calls > b.Calls {
				return -1
			}
			return 1
		}
		return strings.Compare(a.SQL, b.SQL)
	})
	if len(st) > top {
		src.DroppedByTop = len(st) - top
		st = st[:top]
	}
	return st
}

// Capture reads the statistics on tgt and returns the workload to write.
func Capture(ctx context.Context, tgt target.Target, o Options) (*Workload, error) {
	if o.By != "" && o.By != "calls" && o.By != "time" {
		return nil, fmt.Errorf("--by %q: use calls or time", o.By)
	}
	conn, err := tgt.Connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	all, events, src, err := Read(ctx, conn, tgt.Kind(), o)
	if err != nil {
		return nil, err
	}
	st := Select(all, &src, o)
	if len(st) == 0 {
		return nil, fmt.Errorf("%w: %s holds no DML statements of the application (%d statements read, all left out); run the application (or reset the statistics and run it) first%s", ErrNotAvailable, src.What, len(all), hint(o))
	}
	return Build(ctx, conn, st, events, src, o), nil
}

func hint(o Options) string {
	if h, ok := o.Reader.(Hinter); ok {
		return h.Hint(o)
	}
	return ""
}
