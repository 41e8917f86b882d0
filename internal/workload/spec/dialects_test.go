package spec

import (
	my "github.com/fathom-lab/fathom/internal/db/mysql/target"
	pg "github.com/fathom-lab/fathom/internal/db/postgres/target"
	lite "github.com/fathom-lab/fathom/internal/db/sqlite/target"
	"github.com/fathom-lab/fathom/internal/target"
)

// spec learns the dialects from the registry (internal/db), which its tests cannot
// link (db links spec through plan): they give the three SQL kinds' dialects as db
// does, in kind name order.
func init() {
	target.UseDialects(func() []*target.Dialect { return []*target.Dialect{my.SQLDialect, pg.SQLDialect, lite.SQLDialect} })
}
