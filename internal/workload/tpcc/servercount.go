package tpcc

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/fathom-lab/fathom/internal/target"
)

// Where HammerDB reads its TPM: the server's transactions committed and rolled back,
// by every session. On PostgreSQL only the target database's are read (HammerDB sums
// every database's): on a shared server the others' would swamp the run's own.
const (
	pgServerCount    = "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()"
	mysqlServerCount = "SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_commit', 'Com_rollback')"
	pgCountSource    = "PostgreSQL pg_stat_database: xact_commit + xact_rollback of this database"
	mysqlCountSource = "MySQL SHOW GLOBAL STATUS: Com_commit + Com_rollback"
)

// errNoServerCount: SQLite keeps no count of transactions.
var errNoServerCount = errors.New("SQLite has no server-side transaction counter")

// ServerTransactions reads the server's transactions ended (committed or rolled
// back) as HammerDB does for its TPM. It needs Setup to have found the database kind.
func (w *tpccWorkload) ServerTransactions(ctx context.Context, conn target.Conn) (int64, string, error) {
	switch w.dialect {
	case "postgres":
		rows, err := conn.Query(ctx, pgServerCount)
		if err != nil {
			return 0, pgCountSource, fmt.Errorf("reading pg_stat_database: %w", err)
		}
		n, err := oneInt(rows)
		if err != nil {
			return 0, pgCountSource, fmt.Errorf("reading pg_stat_database: %w", err)
		}
		return n, pgCountSource, nil
	case "mysql":
		rows, err := conn.Query(ctx, mysqlServerCount)
		if err != nil {
			return 0, mysqlCountSource, fmt.Errorf("reading Com_commit and Com_rollback: %w", err)
		}
		var n int64
		seen := 0
		for _, r := range rows {
			if len(r) != 2 {
				continue
			}
			v, err := strconv.ParseInt(strings.TrimSpace(r[1]), 10, 64)
			if err != nil {
				return 0, mysqlCountSource, fmt.Errorf("reading %s: not a number: %q", r[0], r[1])
			}
			n += v
			seen++
		}
		if seen != 2 {
			return 0, mysqlCountSource, fmt.Errorf("reading Com_commit and Com_rollback: the server gave %d of them", seen)
		}
		return n, mysqlCountSource, nil
	}
	return 0, "", errNoServerCount
}
