package postgres

import (
	"github.com/fathom-lab/fathom/internal/plan"
)

// PlanRules are PostgreSQL's rules in plan files.
func (Kind) PlanRules() plan.KindRules {
	return plan.KindRules{
		Reserved: []string{"port", "listen_addresses", "unix_socket_directories", "data_directory", "config_file", "hba_file", "include", "include_if_exists", "include_dir"},
		Timings: map[string]plan.Timing{
			"pg_prewarm.autoprewarm": {AtShutdown: true, AtStartup: true, What: "dumps shared buffers at shutdown and loads them at startup"},
		},
	}
}
