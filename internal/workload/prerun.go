package workload

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/fathom-lab/fathom/internal/target"
)

// PgbenchVacuum is what pgbench does before every run unless -n is given, whatever
// the scripts: on PostgreSQL VACUUM pgbench_branches, VACUUM pgbench_tellers and
// TRUNCATE pgbench_history, then with all (pgbench -v) VACUUM ANALYZE
// pgbench_accounts. MySQL and SQLite have no VACUUM of a table: there the history is
// emptied only. Like pgbench, a statement that fails (a table that is not there) is
// noted and the next one is tried; the error names each failure. done lists what
// succeeded, for the run's provenance.
func PgbenchVacuum(ctx context.Context, conn target.Conn, d *target.Dialect, all bool) (done string, err error) {
	var stmts []string
	if d.VacuumSQL != "" {
		stmts = append(stmts, fmt.Sprintf(d.VacuumSQL, "pgbench_branches"), fmt.Sprintf(d.VacuumSQL, "pgbench_tellers"))
	}
	truncate := d.TruncateSQL
	if truncate == "" {
		truncate = "DELETE FROM %s"
	}
	stmts = append(stmts, fmt.Sprintf(truncate, "pgbench_history"))
	if all && d.VacuumSQL != "" {
		stmts = append(stmts, fmt.Sprintf(d.VacuumSQL, "ANALYZE pgbench_accounts"))
	}
	var ok, failed []string
	for _, q := range stmts {
		if e := conn.Exec(ctx, q); e != nil {
			_ = conn.Rollback(ctx)
			failed = append(failed, fmt.Sprintf("%s: %v", q, e))
			if ctx.Err() != nil {
				break
			}
			continue
		}
		ok = append(ok, q)
	}
	if len(failed) > 0 {
		err = errors.New(strings.Join(failed, "; "))
	}
	return strings.Join(ok, "; "), err
}
