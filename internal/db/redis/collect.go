package redis

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/prometheus/procfs"

	"github.com/fathom-lab/fathom/internal/collect"
	"github.com/fathom-lab/fathom/internal/sample"
	"github.com/fathom-lab/fathom/internal/target"
)

// Redis collectors: one per INFO section, each reading the fields of its table in the
// vocabulary (RedisSections) under the names Redis gives them ("redis.aof_rewrite_in_progress"), so that they can
// be looked up in Redis's INFO documentation.

// parseRedisInfo reads the name:value lines of an INFO reply.
func parseRedisInfo(rows [][]string) map[string]string {
	out := map[string]string{}
	for _, r := range rows {
		for _, text := range r {
			for line := range strings.SplitSeq(text, "\n") {
				line = strings.TrimRight(line, "\r")
				if line == "" || line[0] == '#' {
					continue
				}
				if k, v, ok := strings.Cut(line, ":"); ok {
					out[k] = v
				}
			}
		}
	}
	return out
}

// readRedisInfo runs INFO section (all sections for "everything") and parses it.
func readRedisInfo(ctx context.Context, conn target.Conn, section string) (map[string]string, error) {
	if conn == nil {
		return nil, collect.ErrNoConn
	}
	rows, err := conn.Query(ctx, "INFO "+section)
	if err != nil {
		return nil, err
	}
	return parseRedisInfo(rows), nil
}

func newRedisSection(i int) func() collect.Collector {
	sec := redisSections[i]
	return func() collect.Collector {
		return collect.Func{Name: sec.Collector, Help: sec.Help, Metrics: redisDescs(sec.Collector), Collect: func(ctx context.Context, s *collect.Scrape) error {
			info, err := readRedisInfo(ctx, s.Conn, "server "+sec.Section)
			if err != nil {
				return err
			}
			if up, ok := collect.Num(info["uptime_in_seconds"]); ok {
				s.Uptime(up)
			}
			if id := info["run_id"]; id != "" {
				s.Epoch(id)
			}
			found := 0
			for _, f := range sec.Fields {
				v, ok := collect.Num(info[f.Field])
				if !ok {
					continue
				}
				found++
				if f.Kind == sample.Counter {
					s.Counter("redis."+f.Field, f.Unit, v)
				} else {
					s.Gauge("redis."+f.Field, f.Unit, v)
				}
			}
			if found == 0 {
				return fmt.Errorf("INFO %s gave none of its fields (a server before Redis 7 answers only one section per INFO)", sec.Section)
			}
			return nil
		}}.Collector()
	}
}

// newRedisLatencyStats reads INFO latencystats (Redis 7+):
// latency_percentiles_usec_get:p50=1.003,p99=2.007,p99.9=4.015.
func newRedisLatencyStats() collect.Collector {
	return collect.Func{Name: "redis_latencystats", Help: "INFO latencystats: per-command latency percentiles (Redis 7+)", Min: sample.Version{Major: 7},
		Metrics: redisDescs("redis_latencystats"),
		Collect: func(ctx context.Context, s *collect.Scrape) error {
			info, err := readRedisInfo(ctx, s.Conn, "latencystats")
			if err != nil {
				return err
			}
			for k, v := range info {
				cmd, ok := strings.CutPrefix(k, "latency_percentiles_usec_")
				if !ok {
					continue
				}
				cmd = collect.MetricPart(strings.ReplaceAll(cmd, "|", "_"))
				for part := range strings.SplitSeq(v, ",") {
					p, val, ok := strings.Cut(part, "=")
					if f, okf := collect.Num(val); ok && okf {
						s.SparseGauge(familyRedisLatency+cmd+"."+strings.ReplaceAll(p, ".", "_"), "us", f)
					}
				}
			}
			return nil
		}}.Collector()
}

// redisGoverning are the settings stall analysis reads for Redis.
var redisGoverning = []string{"appendonly", "appendfsync", "save", "maxmemory", "maxmemory-policy",
	"no-appendfsync-on-rewrite", "auto-aof-rewrite-percentage", "auto-aof-rewrite-min-size", "aof-use-rdb-preamble", "dir"}

// collectSide is the Redis kind's collect side: its collectors, discovery and
// snapshot sections.
type collectSide struct{}

func (collectSide) Name() string  { return "redis" }
func (collectSide) Title() string { return "Redis" }
func (collectSide) Collectors() []collect.Collector {
	return collect.Fresh(newRedisSection(0), newRedisSection(1), newRedisSection(2), newRedisSection(3), newRedisSection(4), newRedisLatencyStats)
}
func (collectSide) Discover(ctx context.Context, s *sample.Server, conn target.Conn, _ string, fs procfs.FS, haveProc bool) {
	s.Flavor = "redis"
	if conn != nil {
		discoverRedis(ctx, s, conn, fs, haveProc)
	}
}
func (collectSide) Snapshot(sn *collect.Snap) { snapshot(sn) }

func discoverRedis(ctx context.Context, s *sample.Server, conn target.Conn, fs procfs.FS, haveProc bool) {
	info, err := readRedisInfo(ctx, conn, "server")
	if err != nil || info["redis_version"] == "" {
		collect.Note(s, "version: %v", collect.ErrOr(err, "INFO server gave no redis_version"))
		return
	}
	s.VersionString = info["redis_version"]
	s.Version = collect.ParseVersion(s.VersionString)
	for _, n := range redisGoverning {
		rows, err := conn.Query(ctx, "CONFIG GET "+n)
		if err != nil {
			collect.Note(s, "CONFIG GET: %v", err)
			break
		}
		switch {
		case len(rows) == 1 && len(rows[0]) == 2: // RESP3: a map
			s.Settings[rows[0][0]] = rows[0][1]
		case len(rows) == 2 && len(rows[1]) == 1: // RESP2: name, value
			s.Settings[rows[0][0]] = rows[1][0]
		}
	}
	s.DataDir = s.Settings["dir"]
	if !haveProc {
		return
	}
	pid, _ := strconv.Atoi(info["process_id"])
	if p, err := fs.Proc(pid); err == nil && pid > 0 {
		if c, err := p.Comm(); err == nil && strings.HasPrefix(c, "redis-server") {
			// The same pid and program could be in another host's namespace; the
			// executable being readable here says it is ours.
			if _, err := os.Stat(fmt.Sprintf("/proc/%d/exe", pid)); err == nil {
				s.Local, s.PID = true, pid
				return
			}
		}
	}
	collect.Note(s, "server process not found on this host: OS metrics describe this host only")
}

// KeyMetrics are the metrics shown first (fathom show, fathom watch).
func (collectSide) KeyMetrics() []string {
	return []string{redisCommands, redisKeyspaceHits, redisKeyspaceMisses, redisEvictedKeys, redisAOFRewriteInProgress,
		redisRDBBgsaveInProgress, redisLatestForkUsec, redisCurrentCOWSize, redisAOFDelayedFsync, redisAOFBufferLength,
		redisAOFCurrentSize, redisUsedMemory, redisUsedMemoryRSS, redisConnectedClients, redisBlockedClients, redisLoading}
}
