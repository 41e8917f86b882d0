package pgscript

import (
	"context"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
)

var _ workload.PreRunner = (*scriptWorkload)(nil)

// PreRun does what pgbench does before running any script, built-in or not, unless -n
// is given (workload.PgbenchVacuum): the same tables are tidied whether the
// benchmark is spelt -b tpcb-like or --workload tpcb. A table that is not there is
// noted and the run goes on, as in pgbench.
func (w *scriptWorkload) PreRun(ctx context.Context, conn target.Conn, d *target.Dialect, all bool) (string, error) {
	return workload.PgbenchVacuum(ctx, conn, d, all)
}
