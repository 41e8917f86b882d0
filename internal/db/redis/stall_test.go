package redis

import (
	"github.com/fathom-lab/fathom/internal/analyze"
	"github.com/fathom-lab/fathom/internal/analyze/stalltest"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/store"
)

// A dip while an AOF rewrite ran (with a long fork) is the rewrite; the same dip while
// a snapshot ran is the snapshot; a rewrite flag that is on all the time explains
// nothing.
func TestRedisBackgroundSaves(t *testing.T) {
	const n = 50
	tp := stalltest.Synth(n, 50000, stalltest.DipRange(30, 32, 0))
	flag := func(on ...int) func(int) float64 {
		return func(i int) float64 {
			if stalltest.In(i, on...) {
				return 1
			}
			return 0
		}
	}
	fork := func(i int) float64 {
		if i >= 30 {
			return 80000
		}
		return 300
	}
	for _, tc := range []struct {
		flag, cause string
	}{
		{redisAOFRewriteInProgress, "redis_aof_rewrite"},
		{redisRDBBgsaveInProgress, "redis_rdb_snapshot"},
	} {
		in := analyze.StallInput{Rules: Kind{}.StallRules(), Throughput: tp, Unit: "tps", Kind: "redis", Local: true, Version: "7.0.15",
			Settings: map[string]string{"appendfsync": "everysec", "save": "3600 1"},
			Samples:  stalltest.Statuses(n, "redis"),
			Metrics: []store.MetricSeries{
				stalltest.Series(tc.flag, "gauge", "bool", n, flag(30, 31, 32)),
				stalltest.Series(redisLatestForkUsec, "gauge", "us", n, fork),
			}}
		s := stalltest.OneStall(t, in)
		if s.Cause != tc.cause || !strings.Contains(s.Explanation, "fork took 80 ms") {
			t.Errorf("%s: cause %q: %s", tc.flag, s.Cause, s.Explanation)
		}
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		in.Metrics[0] = stalltest.Series(tc.flag, "gauge", "bool", n, flag(all...))
		if s := stalltest.OneStall(t, in); s.Cause == tc.cause {
			t.Errorf("%s on all the time still named: %s", tc.flag, s.Explanation)
		}
	}
}

func TestRedisEvictions(t *testing.T) {
	const n = 50
	tp := stalltest.Synth(n, 50000, stalltest.DipRange(30, 32, 0))
	in := analyze.StallInput{Rules: Kind{}.StallRules(), Throughput: tp, Unit: "tps", Kind: "redis", Version: "7.0.15",
		Samples: stalltest.Statuses(n, "redis"),
		Metrics: []store.MetricSeries{
			stalltest.Series(redisEvictedKeys, "counter", "keys", n, func(i int) float64 {
				if stalltest.In(i, 30, 31, 32) {
					return 20000
				}
				return stalltest.Wobble(i, 0.5)
			}),
		}}
	s := stalltest.OneStall(t, in)
	if s.Cause != "redis_memory" || !strings.Contains(stalltest.SettingNames(s), "maxmemory-policy") {
		t.Fatalf("cause %q: %s", s.Cause, s.Explanation)
	}
}
