package mysql

import (
	myinstance "github.com/fathom-lab/fathom/internal/db/mysql/instance"
	"github.com/fathom-lab/fathom/internal/plan"
)

// PlanRules are MySQL's and MariaDB's rules in plan files. A buffer-pool dump is
// written when the server stops, under the value it runs with, and loaded when it
// starts: those settings act at shutdown or startup.
func (Kind) PlanRules() plan.KindRules {
	return plan.KindRules{
		Reserved: myinstance.Driver{}.Reserved(),
		Timings: map[string]plan.Timing{
			"innodb_buffer_pool_dump_at_shutdown": {AtShutdown: true, What: "writes the buffer pool dump when the server stops"},
			"innodb_buffer_pool_dump_pct":         {AtShutdown: true, What: "sizes the buffer pool dump written when the server stops"},
			"innodb_fast_shutdown":                {AtShutdown: true, What: "decides how much work the server does when it stops"},
			"innodb_auto_lru_dump":                {AtShutdown: true, What: "dumps the buffer pool's LRU list (Percona Server 5.5)"},
			"innodb_buffer_pool_load_at_startup":  {AtStartup: true, What: "loads the buffer pool dump when the server starts"},
		},
	}
}
