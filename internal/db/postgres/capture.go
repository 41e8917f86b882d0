package postgres

import (
	"context"

	"github.com/fathom-lab/fathom/internal/capture"
	"github.com/fathom-lab/fathom/internal/target"
)

// CaptureReader is how `fathom capture` reads PostgreSQL: pg_stat_statements, or the
// server log (log_min_duration_statement = 0) of the current database.
func (Kind) CaptureReader() capture.Reader { return captureReader{} }

type captureReader struct{}

func (captureReader) Statements(ctx context.Context, conn target.Conn, src *capture.Source) ([]capture.Statement, error) {
	return capture.ReadPgStatStatements(ctx, conn, src)
}

func (captureReader) Log(ctx context.Context, conn target.Conn, path string, src capture.Source) ([]capture.Event, capture.Source, error) {
	rows, err := conn.Query(ctx, "SELECT current_database()")
	if err != nil {
		return nil, src, err
	}
	src.Database = rows[0][0]
	return capture.ReadPGLog(path, src)
}
