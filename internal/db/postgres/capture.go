package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/fathom-lab/fathom/internal/capture"
	"github.com/fathom-lab/fathom/internal/target"
)

// CaptureReader is how `fathom capture` reads PostgreSQL: pg_stat_statements, or the
// server log (log_min_duration_statement = 0) of the current database.
func (Kind) CaptureReader() capture.Reader { return captureReader{} }

type captureReader struct{}

func (captureReader) Statements(ctx context.Context, conn target.Conn, src *capture.Source) ([]capture.Statement, error) {
	return readStatStatements(ctx, conn, src)
}

func (captureReader) Log(ctx context.Context, conn target.Conn, path string, src capture.Source) ([]capture.Event, capture.Source, error) {
	rows, err := conn.Query(ctx, "SELECT current_database()")
	if err != nil {
		return nil, src, err
	}
	src.Database = rows[0][0]
	return readPGLog(path, src)
}

// readStatStatements reads pg_stat_statements for the current database.
func readStatStatements(ctx context.Context, conn target.Conn, src *capture.Source) ([]capture.Statement, error) {
	rows, err := conn.Query(ctx, "SELECT current_database(), current_setting('server_version'), (SELECT count(*) FROM pg_extension WHERE extname = 'pg_stat_statements')")
	if err != nil {
		return nil, err
	}
	src.Database, src.ServerVersion = rows[0][0], rows[0][1]
	if rows[0][2] == "0" {
		return nil, fmt.Errorf("%w: the pg_stat_statements extension is not in database %s: add pg_stat_statements to shared_preload_libraries, restart, and run CREATE EXTENSION pg_stat_statements", capture.ErrNotAvailable, src.Database)
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
			return nil, fmt.Errorf("%w: reading pg_stat_statements: %v (is pg_stat_statements in shared_preload_libraries?)", capture.ErrNotAvailable, err)
		}
		return nil, err
	}
	out := make([]capture.Statement, 0, len(rows))
	for _, r := range rows {
		s := capture.Statement{SQL: r[0]}
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
