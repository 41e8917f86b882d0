package redis

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/collect"
	"github.com/fathom-lab/fathom/internal/collect/collecttest"
	rd "github.com/fathom-lab/fathom/internal/db/redis/target"
	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/sample"
	"github.com/fathom-lab/fathom/internal/target"
)

func TestParseRedisInfo(t *testing.T) {
	got := parseRedisInfo([][]string{{"# Persistence\r\nloading:0\r\naof_enabled:1\r\n\r\n# Stats\r\nkeyspace_hits:12\r\n"}})
	if got["loading"] != "0" || got["aof_enabled"] != "1" || got["keyspace_hits"] != "12" || len(got) != 3 {
		t.Fatalf("%v", got)
	}
}

func TestRedisCollectors(t *testing.T) {
	tg, err := rd.Open(dbtest.RedisURL(t), target.Config{ConnectTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	ctx := context.Background()
	s := collect.NewSampler(tg, collect.Options{Kind: collectSide{}})
	defer s.Close()
	srv := s.Start(ctx)
	if srv.Version.IsZero() || srv.Settings["appendonly"] == "" {
		t.Fatalf("server not discovered: %+v", srv)
	}
	s.Sample(ctx, -1, time.Now())
	c, err := tg.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		if err := c.Exec(ctx, "GET fathom:collect:none"); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	second := s.Sample(ctx, 0, time.Now())
	collecttest.CheckReadings(t, second)
	collecttest.CheckDeclared(t, Kind{}.Collect(), second)
	for _, r := range second.Results {
		if r.Status != sample.StatusOK && !(r.Collector == "os_pressure" && strings.Contains(r.Error, "PSI")) &&
			!(r.Collector == "redis_latencystats" && r.Status == sample.StatusSkipped) {
			t.Errorf("collector %s: %s %s", r.Collector, r.Status, r.Error)
		}
	}
	q, ok := collecttest.Reading(second, redisCommands)
	if !ok || q.Kind != sample.Counter || !q.HasRate || q.Rate <= 0 {
		t.Errorf("%s: %+v", redisCommands, q)
	}
	for _, name := range []string{redisAOFRewriteInProgress, redisRDBBgsaveInProgress, redisUsedMemory, redisBlockedClients, "redis.keyspace_misses"} {
		if _, ok := collecttest.Reading(second, name); !ok {
			t.Errorf("no reading %s", name)
		}
	}
	if srv.Version.Major >= 7 {
		found := false
		for _, r := range second.Readings {
			found = found || strings.HasPrefix(r.Name, familyRedisLatency+"get.")
		}
		if !found {
			t.Error("Redis 7: no latencystats for GET")
		}
	}
}
