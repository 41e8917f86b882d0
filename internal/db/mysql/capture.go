package mysql

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/fathom-lab/fathom/internal/capture"
	"github.com/fathom-lab/fathom/internal/target"
)

// CaptureReader is how `fathom capture` reads MySQL and MariaDB: performance_schema's
// statement digests, or the slow query log (long_query_time = 0).
func (Kind) CaptureReader() capture.Reader { return captureReader{} }

type captureReader struct{}

func (captureReader) Statements(ctx context.Context, conn target.Conn, src *capture.Source) ([]capture.Statement, error) {
	return readPerfSchema(ctx, conn, src)
}

func (captureReader) Log(_ context.Context, _ target.Conn, path string, src capture.Source) ([]capture.Event, capture.Source, error) {
	return readSlowLog(path, src)
}

// CommonLog: the slow query log's format is the one most tools write; kinds without a
// reader of their own read --slow-log as it.
func (captureReader) CommonLog() bool { return true }

// ColumnQuery is information_schema's filter for the session's tables and the
// character-length function.
func (captureReader) ColumnQuery() (schema, length string) {
	return "table_schema = DATABASE()", "char_length"
}

// Hint is what to try when the digests held nothing of the application.
func (captureReader) Hint(o capture.Options) string {
	if o.SlowLog == "" {
		return "; MariaDB's digests leave out server-side prepared statements: for an application that uses them, give its slow log (--slow-log)"
	}
	return ""
}

// readPerfSchema reads MySQL's or MariaDB's performance_schema statement digests of
// the current database.
func readPerfSchema(ctx context.Context, conn target.Conn, src *capture.Source) ([]capture.Statement, error) {
	rows, err := conn.Query(ctx, "SELECT DATABASE(), VERSION(), @@performance_schema")
	if err != nil {
		return nil, err
	}
	src.Database, src.ServerVersion = rows[0][0], rows[0][1]
	if rows[0][2] != "1" {
		return nil, fmt.Errorf("%w: performance_schema is off on this server: start it with performance_schema=ON, or give the slow query log with --slow-log FILE", capture.ErrNotAvailable)
	}
	src.What = "performance_schema statement digests on " + src.ServerVersion + ", database " + src.Database
	rows, err = conn.Query(ctx, `SELECT DIGEST_TEXT, COUNT_STAR, SUM_TIMER_WAIT / 1000000000, SUM_ROWS_SENT + SUM_ROWS_AFFECTED,
		DATE_FORMAT(FIRST_SEEN, '%Y-%m-%dT%H:%i:%s'), DATE_FORMAT(LAST_SEEN, '%Y-%m-%dT%H:%i:%s')
		FROM performance_schema.events_statements_summary_by_digest
		WHERE SCHEMA_NAME = DATABASE() AND DIGEST_TEXT IS NOT NULL AND COUNT_STAR > 0`)
	if err != nil {
		return nil, fmt.Errorf("%w: reading performance_schema.events_statements_summary_by_digest: %v", capture.ErrNotAvailable, err)
	}
	out := make([]capture.Statement, 0, len(rows))
	for _, r := range rows {
		s := capture.Statement{SQL: digestSQL(r[0])}
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
