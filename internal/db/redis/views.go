package redis

import "github.com/fathom-lab/fathom/internal/collect"

// DefaultCharts are the charts a report draws for a Redis run, in order: the server's
// throughput and the work stalls are made of.
func (Kind) DefaultCharts() []collect.Chart {
	return []collect.Chart{
		{Title: "Commands", Metrics: []string{redisCommands}},
		{Title: "Hits and misses", Metrics: []string{redisKeyspaceHits, redisKeyspaceMisses}},
		{Title: "AOF rewrite and RDB snapshot in progress", Metrics: []string{redisAOFRewriteInProgress, redisRDBBgsaveInProgress}},
		{Title: "Latest fork", Metrics: []string{redisLatestForkUsec}},
		{Title: "Copy-on-write memory of the running child", Metrics: []string{redisCurrentCOWSize}},
		{Title: "Delayed AOF fsyncs", Metrics: []string{redisAOFDelayedFsync}},
		{Title: "AOF size", Metrics: []string{redisAOFCurrentSize}},
		{Title: "Memory used and resident", Metrics: []string{redisUsedMemory, redisUsedMemoryRSS}},
		{Title: "Evicted keys", Metrics: []string{redisEvictedKeys}},
		{Title: "Clients", Metrics: []string{redisConnectedClients, redisBlockedClients}},
	}
}

// WatchColumns are the key figures of `fathom watch` for a Redis server.
func (Kind) WatchColumns() []collect.WatchColumn {
	return []collect.WatchColumn{
		{Head: "cmd/s", Metrics: []string{redisCommands}, Unit: ""},
		{Head: "hit/s", Metrics: []string{redisKeyspaceHits}, Unit: ""},
		{Head: "miss/s", Metrics: []string{redisKeyspaceMisses}, Unit: ""},
		{Head: "evict/s", Metrics: []string{redisEvictedKeys}, Unit: ""},
		{Head: "aofrw", Metrics: []string{redisAOFRewriteInProgress}, Unit: ""},
		{Head: "bgsave", Metrics: []string{redisRDBBgsaveInProgress}, Unit: ""},
		{Head: "fork_us", Metrics: []string{redisLatestForkUsec}, Unit: ""},
		{Head: "dfsync", Metrics: []string{redisAOFDelayedFsync}, Unit: "events"},
		{Head: "used", Metrics: []string{redisUsedMemory}, Unit: "bytes"},
		{Head: "clients", Metrics: []string{redisConnectedClients}, Unit: ""},
	}
}
