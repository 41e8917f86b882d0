package postgres

import (
	pginstance "github.com/fathom-lab/fathom/internal/db/postgres/instance"
	"github.com/fathom-lab/fathom/internal/plan"
)

// PlanRules are PostgreSQL's rules in plan files.
func (Kind) PlanRules() plan.KindRules {
	return plan.KindRules{
		Reserved: pginstance.Driver{}.Reserved(),
		Timings: map[string]plan.Timing{
			"pg_prewarm.autoprewarm": {AtShutdown: true, AtStartup: true, What: "dumps shared buffers at shutdown and loads them at startup"},
		},
	}
}
