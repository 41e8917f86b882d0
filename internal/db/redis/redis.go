// Package redis is the Redis kind's bundle: targets (target/), the server
// collectors and snapshot sections from INFO, and throwaway redis-server instances.
package redis

import (
	"context"
	"fmt"

	"github.com/fathom-lab/fathom/internal/check"
	"github.com/fathom-lab/fathom/internal/collect"
	redisinstance "github.com/fathom-lab/fathom/internal/db/redis/instance"
	rd "github.com/fathom-lab/fathom/internal/db/redis/target"
	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/target"
)

// Kind is the Redis bundle.
type Kind struct{}

func (Kind) Name() string       { return "redis" }
func (Kind) Title() string      { return "Redis" }
func (Kind) Schemes() []string  { return []string{"redis://", "rediss://", "redis+unix://", "unix://"} }
func (Kind) DSNExample() string { return "redis://host:port/db" }

// Dialect is a name only: Redis has no SQL.
func (Kind) Dialect() *target.Dialect { return &target.Dialect{Name: "redis"} }

// Open opens a Redis target.
func (Kind) Open(dsn string, cfg target.Config) (target.Target, error) { return rd.Open(dsn, cfg) }

// Collect is the server side for collect: INFO collectors, discovery, snapshot.
func (Kind) Collect() collect.Database { return collectSide{} }

// CheckDialect is how fathom check reads Redis: INFO's fields.
func (Kind) CheckDialect() *check.Dialect { return checkDialect }

// AuthHint is what to check after a refused login.
func (Kind) AuthHint() string {
	return "check the password: in the DSN, REDISCLI_AUTH or the DSN's passfile="
}

// InstanceDriver is the driver of the kind's throwaway servers (instance/).
func (Kind) InstanceDriver() instance.Driver { return redisinstance.Driver{} }

// MeasureRestart restarts a throwaway instance once from the file it loads and times
// it (see the package function).
func (Kind) MeasureRestart(ctx context.Context, inst *instance.Instance) (float64, string, error) {
	m, err := measureRestart(ctx, inst)
	if err != nil {
		return 0, "", err
	}
	return m.Seconds, fmt.Sprintf("loading %s from %s (%s keys, %s in memory)", m.FileText, m.Source, m.Keys, m.MemoryText), nil
}

// MeasureRestarts restarts a throwaway instance from each format (rdb, aof,
// aof-plain) and times it (see the package function).
func (Kind) MeasureRestarts(ctx context.Context, inst *instance.Instance, formats []string) ([]store.RestartFacts, error) {
	ms, err := measureRestarts(ctx, inst, formats)
	out := make([]store.RestartFacts, 0, len(ms))
	for _, m := range ms {
		f := store.RestartFacts{Format: m.Source, Seconds: m.Seconds, FileBytes: m.FileBytes, Memory: m.Memory}
		fmt.Sscan(m.Keys, &f.Keys)
		out = append(out, f)
	}
	return out, err
}
