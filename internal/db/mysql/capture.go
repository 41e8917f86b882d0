package mysql

import (
	"context"

	"github.com/fathom-lab/fathom/internal/capture"
	"github.com/fathom-lab/fathom/internal/target"
)

// CaptureReader is how `fathom capture` reads MySQL and MariaDB: performance_schema's
// statement digests, or the slow query log (long_query_time = 0).
func (Kind) CaptureReader() capture.Reader { return captureReader{} }

type captureReader struct{}

func (captureReader) Statements(ctx context.Context, conn target.Conn, src *capture.Source) ([]capture.Statement, error) {
	return capture.ReadPerfSchema(ctx, conn, src)
}

func (captureReader) Log(_ context.Context, _ target.Conn, path string, src capture.Source) ([]capture.Event, capture.Source, error) {
	return capture.ReadSlowLog(path, src)
}

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
