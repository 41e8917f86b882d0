package redis

import "github.com/fathom-lab/fathom/internal/collect"

// DefaultCharts are the charts a report draws for a Redis run, in order: the server's
// throughput and the work stalls are made of.
func (Kind) DefaultCharts() []collect.Chart {
	return []collect.Chart{
		{Title: "Commands", Metrics: []string{RedisCommands}},
		{Title: "Hits and misses", Metrics: []string{RedisKeyspaceHits, RedisKeyspaceMisses}},
		{Title: "AOF rewrite and RDB snapshot in progress", Metrics: []string{RedisAOFRewriteInProgress, RedisRDBBgsaveInProgress}},
		{Title: "Latest fork", Metrics: []string{RedisLatestForkUsec}},
		{Title: "Copy-on-write memory of the running child", Metrics: []string{RedisCurrentCOWSize}},
		{Title: "Delayed AOF fsyncs", Metrics: []string{RedisAOFDelayedFsync}},
		{Title: "AOF size", Metrics: []string{RedisAOFCurrentSize}},
		{Title: "Memory used and resident", Metrics: []string{RedisUsedMemory, RedisUsedMemoryRSS}},
		{Title: "Evicted keys", Metrics: []string{RedisEvictedKeys}},
		{Title: "Clients", Metrics: []string{RedisConnectedClients, RedisBlockedClients}},
	}
}

// WatchColumns are the key figures of `fathom watch` for a Redis server.
func (Kind) WatchColumns() []collect.WatchColumn {
	return []collect.WatchColumn{
		{Head: "cmd/s", Metrics: []string{RedisCommands}, Unit: ""},
		{Head: "hit/s", Metrics: []string{RedisKeyspaceHits}, Unit: ""},
		{Head: "miss/s", Metrics: []string{RedisKeyspaceMisses}, Unit: ""},
		{Head: "evict/s", Metrics: []string{RedisEvictedKeys}, Unit: ""},
		{Head: "aofrw", Metrics: []string{RedisAOFRewriteInProgress}, Unit: ""},
		{Head: "bgsave", Metrics: []string{RedisRDBBgsaveInProgress}, Unit: ""},
		{Head: "fork_us", Metrics: []string{RedisLatestForkUsec}, Unit: ""},
		{Head: "dfsync", Metrics: []string{RedisAOFDelayedFsync}, Unit: "events"},
		{Head: "used", Metrics: []string{RedisUsedMemory}, Unit: "bytes"},
		{Head: "clients", Metrics: []string{RedisConnectedClients}, Unit: ""},
	}
}
