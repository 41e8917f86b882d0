package redis

import (
	"fmt"
	"strings"

	"github.com/fathom-lab/fathom/internal/analyze"
	"github.com/fathom-lab/fathom/internal/store"
)

// StallRules are Redis's stall patterns, ranked after the generic ones: AOF rewrites,
// RDB snapshots, AOF fsync delays, memory pressure.
func (Kind) StallRules() []analyze.Rule {
	return []analyze.Rule{{Rank: 100, Match: stallRedisAOFRewrite}, {Rank: 110, Match: stallRedisBgsave},
		{Rank: 120, Match: stallRedisFsync}, {Rank: 130, Match: stallRedisMemory}}
}

// StallVocabulary names Redis's metrics that the generic stall patterns read: the
// commands processed stand for throughput in a watch session.
func (Kind) StallVocabulary() analyze.Vocabulary {
	return analyze.Vocabulary{ServerRates: []string{redisCommands}}
}

// Redis patterns. Material evidence:
//
//	AOF rewrite   aof_rewrite_in_progress was 1 in the stall and in fewer than half of
//	              the baseline intervals
//	RDB snapshot  rdb_bgsave_in_progress likewise
//	fsync delays  aof_delayed_fsync moved in the stall (each one is a write that waited
//	              for the previous fsync: with appendfsync everysec, up to 2 s)
//	memory        keys evicted at a higher rate than in the baseline, or used_memory
//	              at 95% of maxmemory or more
//
// A fork of at least stallRedisForkUs (latest_fork_usec) adds to the background-save
// patterns: the server does nothing else while it forks.
const (
	stallRedisForkUs     = 10_000
	stallRedisMemoryFull = 0.95
)

// stallRedisChild is an AOF rewrite or an RDB save running in a forked child.
func stallRedisChild(a analyze.Attributor, st *store.Stall, w []int, flag, key, title, what string) (analyze.Match, bool) {
	if _, ok := a.AtLeast(flag, w, 1); !ok {
		return analyze.Match{}, false
	}
	if a.BaselineShare(flag) >= 0.5 {
		return analyze.Match{}, false // running most of the time: not this stall's sign
	}
	m := analyze.Match{Key: key, Title: title, Score: 3, Metrics: []string{flag}}
	why := []string{what + " was running"}
	if us, ok := a.AtLeast(redisLatestForkUsec, w, stallRedisForkUs); ok {
		m.Score++
		m.Metrics = append(m.Metrics, redisLatestForkUsec)
		why = append(why, fmt.Sprintf("its fork took %.0f ms, during which the server answered nothing", us/1000))
	}
	if cow, ok := a.AtLeast(redisCurrentCOWSize, w, 1); ok {
		m.Score += 0.5
		m.Metrics = append(m.Metrics, redisCurrentCOWSize)
		why = append(why, fmt.Sprintf("the child's copy-on-write memory reached %s (pages the parent changed were copied)", analyze.Bytes(cow)))
	}
	if a.Happened(redisAOFDelayedFsync, w) {
		m.Score += 0.5
		m.Metrics = append(m.Metrics, redisAOFDelayedFsync)
		why = append(why, "fsyncs of the AOF were delayed (the child's writes compete for the disk)")
	}
	m.Explanation = fmt.Sprintf("Throughput fell from %s to %s at %s–%s while %s.", analyze.Number(st.Baseline), analyze.Number(st.Mean), analyze.At(st.Start), analyze.At(st.End), strings.Join(why, "; "))
	return m, true
}

func stallRedisAOFRewrite(a analyze.Attributor, st *store.Stall, w []int) (analyze.Match, bool) {
	m, ok := stallRedisChild(a, st, w, redisAOFRewriteInProgress, "redis_aof_rewrite", "AOF rewrite (BGREWRITEAOF)", "an AOF rewrite")
	if ok {
		m.Explanation += " A rewrite forks and writes the whole data set anew while the server keeps appending; no-appendfsync-on-rewrite yes skips fsyncs meanwhile (at the risk of losing more on a crash), and auto-aof-rewrite-percentage / -min-size decide when rewrites start."
		m.Settings = []store.StallSetting{a.Setting("no-appendfsync-on-rewrite", "skip fsyncs while a rewrite runs"),
			a.Setting("auto-aof-rewrite-percentage", "growth that starts a rewrite"), a.Setting("appendfsync", "when the AOF is fsynced")}
	}
	return m, ok
}

func stallRedisBgsave(a analyze.Attributor, st *store.Stall, w []int) (analyze.Match, bool) {
	m, ok := stallRedisChild(a, st, w, redisRDBBgsaveInProgress, "redis_rdb_snapshot", "RDB snapshot (BGSAVE)", "an RDB snapshot")
	if ok {
		m.Explanation += " A snapshot forks (the parent's page tables are copied: longer the bigger the data set) and the child writes the data set to disk while pages the parent changes are copied. The save setting decides how often snapshots run."
		m.Settings = []store.StallSetting{a.Setting("save", "snapshot rules (seconds changes …)")}
	}
	return m, ok
}

func stallRedisFsync(a analyze.Attributor, st *store.Stall, w []int) (analyze.Match, bool) {
	if !a.Happened(redisAOFDelayedFsync, w) || a.BaselineShare(redisAOFDelayedFsync) >= 0.5 {
		return analyze.Match{}, false
	}
	m := analyze.Match{Key: "redis_fsync", Title: "AOF fsync delays", Score: 2.5, Metrics: []string{redisAOFDelayedFsync}}
	m.Explanation = fmt.Sprintf("Throughput fell from %s to %s at %s–%s while fsyncs of the append-only file fell behind (aof_delayed_fsync moved): with appendfsync everysec Redis blocks writes once an fsync has taken over 2 seconds, so the disk set the pace.",
		analyze.Number(st.Baseline), analyze.Number(st.Mean), analyze.At(st.Start), analyze.At(st.End))
	m.Settings = []store.StallSetting{a.Setting("appendfsync", "always, everysec or no")}
	return m, true
}

func stallRedisMemory(a analyze.Attributor, st *store.Stall, w []int) (analyze.Match, bool) {
	m := analyze.Match{Key: "redis_memory", Title: "memory pressure (maxmemory, evictions)"}
	var why []string
	if d, ok := a.Up(redisEvictedKeys, w); ok && d.Mean > 0 {
		m.Score += 2.5
		m.Metrics = append(m.Metrics, redisEvictedKeys)
		why = append(why, fmt.Sprintf("keys were evicted at %s/s against %s/s normally", analyze.Number(d.Mean), analyze.Number(d.Base)))
	}
	if lim, ok := a.During(redisMaxmemory, w); ok && lim.Max > 0 {
		limit := lim.Max
		if used, ok := a.AtLeast(redisUsedMemory, w, stallRedisMemoryFull*limit); ok {
			m.Score += 1
			m.Metrics = append(m.Metrics, redisUsedMemory)
			why = append(why, fmt.Sprintf("used memory reached %s of maxmemory %s", analyze.Bytes(used), analyze.Bytes(limit)))
		}
	}
	if len(why) == 0 {
		return analyze.Match{}, false
	}
	m.Explanation = fmt.Sprintf("Throughput fell from %s to %s at %s–%s under memory pressure: %s. Each write over maxmemory evicts first (maxmemory-policy), or fails with OOM under noeviction.",
		analyze.Number(st.Baseline), analyze.Number(st.Mean), analyze.At(st.Start), analyze.At(st.End), strings.Join(why, "; "))
	m.Settings = []store.StallSetting{a.Setting("maxmemory", "memory limit"), a.Setting("maxmemory-policy", "what goes when it is reached")}
	return m, true
}
