package promexp

import (
	"github.com/fathom-lab/fathom/internal/store/postgres"
	"github.com/fathom-lab/fathom/internal/store/sqlite"
)

// Both stores can be read by NewHandler, and both read only the new intervals.
var (
	_ Reader         = (*sqlite.Store)(nil)
	_ IntervalsAfter = (*sqlite.Store)(nil)
	_ Reader         = (*postgres.Store)(nil)
	_ IntervalsAfter = (*postgres.Store)(nil)
)
