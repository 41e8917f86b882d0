package redis

import (
	"strings"

	redisinstance "github.com/fathom-lab/fathom/internal/db/redis/instance"
	"github.com/fathom-lab/fathom/internal/plan"
)

// PlanRules are Redis's rules in plan files. Its setting names are kept as written
// (lower-cased): it has both spellings (aof-use-rdb-preamble, bgsave_cpulist) as
// distinct names.
func (Kind) PlanRules() plan.KindRules {
	return plan.KindRules{
		Reserved:     redisinstance.Driver{}.Reserved(),
		SettingKey:   strings.ToLower,
		CommandHooks: "redis",
	}
}
