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
// log of every statement, read by the kind's own parsers (internal/db/KIND), which
// turn statements into events with Normalize. A Reader may also be a ColumnTyper and
// a Hinter.
type Reader interface {
	// Statements reads the server's statement statistics, filling src.
	Statements(ctx context.Context, conn target.Conn, src *Source) ([]Statement, error)
	// Log reads a log of every statement at path.
	Log(ctx context.Context, conn target.Conn, path string, src Source) ([]Event, Source, error)
}

// CommonLog is a Reader whose log is in the format most tools write (MySQL's slow
// query log: also what proxies and log converters produce): kinds without a reader of
// their own read a log with it.
type CommonLog interface {
	CommonLog() bool
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
		if o.Reader == nil {
			return nil, nil, src, fmt.Errorf("%w: no reader of %s's logs is registered", ErrNotAvailable, kind)
		}
		ev, src, err := o.Reader.Log(ctx, conn, o.SlowLog, src)
		return statementsOf(ev), ev, src, err
	case o.Reader == nil:
		return nil, nil, src, fmt.Errorf("%w: %s keeps no statement statistics; capture reads PostgreSQL (pg_stat_statements or --slow-log) and MySQL/MariaDB (performance_schema or --slow-log)", ErrNotAvailable, kind)
	}
	st, err := o.Reader.Statements(ctx, conn, &src)
	return st, nil, src, err
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
	return dmlRE.MatchString(s.SQL) && len(tables(s.SQL)) > 0 && !internalRE.MatchString(s.SQL) && !strings.Contains(s.SQL, "...")
}

// selectTop filters the statements and keeps the top ones, busiest first.
func selectTop(all []Statement, src *Source, o Options) []Statement {
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
func Capture(ctx context.Context, tgt target.Target, o Options) (*workload, error) {
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
	st := selectTop(all, &src, o)
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
