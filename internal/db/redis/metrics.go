package redis

import (
	"github.com/fathom-lab/fathom/internal/collect"
	"github.com/fathom-lab/fathom/internal/sample"
)

// Redis's metrics: the INFO fields its collectors (internal/db/redis) read, under the
// names Redis gives them ("redis.aof_rewrite_in_progress"), so that they can be looked
// up in Redis's INFO documentation. One collector per INFO section.

// Redis metric names the code of this package refers to (no other package does). A
// test fails for a constant no collector declares.
const (
	redisAOFRewriteInProgress = "redis.aof_rewrite_in_progress"
	redisRDBBgsaveInProgress  = "redis.rdb_bgsave_in_progress"
	redisAOFDelayedFsync      = "redis.aof_delayed_fsync"
	redisLatestForkUsec       = "redis.latest_fork_usec"
	redisCurrentCOWSize       = "redis.current_cow_size"
	redisAOFBufferLength      = "redis.aof_buffer_length"
	redisLoading              = "redis.loading"
	redisCommands             = "redis.total_commands_processed"
	redisEvictedKeys          = "redis.evicted_keys"
	redisUsedMemory           = "redis.used_memory"
	redisUsedMemoryRSS        = "redis.used_memory_rss"
	redisMaxmemory            = "redis.maxmemory"
	redisBlockedClients       = "redis.blocked_clients"
	redisConnectedClients     = "redis.connected_clients"
	redisKeyspaceHits         = "redis.keyspace_hits"
	redisKeyspaceMisses       = "redis.keyspace_misses"
	redisAOFCurrentSize       = "redis.aof_current_size"
	redisTotalForks           = "redis.total_forks"
	familyRedisLatency        = "redis.latency."
)

// redisField is one INFO field a collector reads.
type redisField struct {
	Field string
	Kind  sample.Kind
	Unit  string
	Help  string
}

// redisSections are the INFO sections read, each by its own collector.
var redisSections = []struct {
	Collector, Section, Help string
	Fields                   []redisField
}{
	{"redis_persistence", "persistence", "INFO persistence: AOF rewrites, RDB saves, forks, fsync delays, copy-on-write", []redisField{
		{"loading", sample.Gauge, "bool", "1 while the server loads its data set (after a start)"},
		{"aof_enabled", sample.Gauge, "bool", "1 when the append-only file is on"},
		{"aof_rewrite_in_progress", sample.Gauge, "bool", "1 while an AOF rewrite (BGREWRITEAOF) runs"},
		{"aof_rewrite_scheduled", sample.Gauge, "bool", "1 when an AOF rewrite waits for a running RDB save"},
		{"rdb_bgsave_in_progress", sample.Gauge, "bool", "1 while an RDB snapshot (BGSAVE) runs"},
		{"rdb_changes_since_last_save", sample.Gauge, "changes", "writes since the last RDB save"},
		{"aof_delayed_fsync", sample.Counter, "fsyncs", "fsyncs that had to wait for an earlier one (appendfsync everysec: writes blocked up to 2 s)"},
		{"aof_pending_bio_fsync", sample.Gauge, "fsyncs", "fsyncs queued in the background I/O thread"},
		{"aof_buffer_length", sample.Gauge, "bytes", "AOF buffer not yet written"},
		{"aof_current_size", sample.Gauge, "bytes", "size of the append-only file"},
		{"aof_base_size", sample.Gauge, "bytes", "size of the append-only file at the last rewrite"},
		{"current_cow_size", sample.Gauge, "bytes", "copy-on-write memory of the running child (Redis 6.2+)"},
		{"aof_last_cow_size", sample.Gauge, "bytes", "copy-on-write memory of the last AOF rewrite"},
		{"rdb_last_cow_size", sample.Gauge, "bytes", "copy-on-write memory of the last RDB save"},
		{"rdb_saves", sample.Counter, "saves", "RDB saves since the start (Redis 7+)"},
		{"aof_rewrites", sample.Counter, "rewrites", "AOF rewrites since the start (Redis 7+)"},
		{"rdb_last_bgsave_time_sec", sample.Gauge, "seconds", "how long the last RDB save took"},
		{"aof_last_rewrite_time_sec", sample.Gauge, "seconds", "how long the last AOF rewrite took"},
	}},
	{"redis_stats", "stats", "INFO stats: commands, hits and misses, evictions, expirations, forks, network", []redisField{
		{"total_commands_processed", sample.Counter, "commands", "commands processed"},
		{"total_connections_received", sample.Counter, "connections", "connections accepted"},
		{"rejected_connections", sample.Counter, "connections", "connections refused (maxclients)"},
		{"keyspace_hits", sample.Counter, "lookups", "key lookups that found the key"},
		{"keyspace_misses", sample.Counter, "lookups", "key lookups that did not"},
		{"evicted_keys", sample.Counter, "keys", "keys evicted by maxmemory"},
		{"expired_keys", sample.Counter, "keys", "keys expired"},
		{"total_forks", sample.Counter, "forks", "forks (RDB saves, AOF rewrites)"},
		{"latest_fork_usec", sample.Gauge, "us", "how long the latest fork took (the server does nothing else meanwhile)"},
		{"total_net_input_bytes", sample.Counter, "bytes", "bytes received"},
		{"total_net_output_bytes", sample.Counter, "bytes", "bytes sent"},
		{"total_error_replies", sample.Counter, "replies", "error replies (Redis 6.2+)"},
	}},
	{"redis_memory", "memory", "INFO memory: used, resident, fragmentation, limit", []redisField{
		{"used_memory", sample.Gauge, "bytes", "memory the allocator gave Redis"},
		{"used_memory_rss", sample.Gauge, "bytes", "resident memory of the server process"},
		{"used_memory_peak", sample.Gauge, "bytes", "peak of used_memory"},
		{"maxmemory", sample.Gauge, "bytes", "memory limit (0: none)"},
		{"mem_fragmentation_ratio", sample.Gauge, "ratio", "used_memory_rss / used_memory"},
	}},
	{"redis_clients", "clients", "INFO clients: connected and blocked clients", []redisField{
		{"connected_clients", sample.Gauge, "clients", "client connections"},
		{"blocked_clients", sample.Gauge, "clients", "clients in a blocking command (BLPOP …)"},
	}},
	{"redis_cpu", "cpu", "INFO cpu: the server's CPU time", []redisField{
		{"used_cpu_sys", sample.Counter, "seconds", "system CPU time of the server"},
		{"used_cpu_user", sample.Counter, "seconds", "user CPU time of the server"},
	}},
}

func redisDescs(collector string) []collect.Desc {
	var out []collect.Desc
	for _, s := range redisSections {
		if s.Collector != collector {
			continue
		}
		for _, f := range s.Fields {
			out = append(out, collect.Desc{Name: "redis." + f.Field, Kind: f.Kind, Unit: f.Unit, Help: f.Help})
		}
	}
	if collector == "redis_latencystats" {
		out = append(out, collect.Family(familyRedisLatency, "us", "INFO latencystats: per-command latency percentiles since the start or CONFIG RESETSTAT (redis.latency.<command>.p50, .p99, .p99_9), Redis 7+"))
	}
	return out
}
