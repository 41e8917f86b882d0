package redis

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/fathom-lab/fathom/internal/check"
	"github.com/fathom-lab/fathom/internal/target"
)

// checkDialect is how `fathom check` reads Redis: INFO's fields as the sample; no
// replication modes and no heartbeat (both are refused in one line).
var checkDialect = &check.Dialect{
	Fetch: fetchRedis, DefaultPort: "6379",
	Connections: "connected_clients / maxclients * 100", Used: "connected_clients", Max: "maxclients",
	StatsReset: "CONFIG RESETSTAT",
	AuthHint:   "check the password: DSN, REDISCLI_AUTH or the DSN's passfile=",
}

// fetchRedis fills s from INFO everything: every field under its INFO name
// (used_memory, aof_rewrite_in_progress, instantaneous_ops_per_sec …), numeric ones as
// numbers, so varcomp and lastrun expressions can use any of them. The server's start
// is its clock minus uptime_in_seconds.
func fetchRedis(ctx context.Context, conn target.Conn, s *check.Sample, now func() time.Time) error {
	before := now()
	info, err := readRedisInfo(ctx, conn, "everything")
	if err != nil {
		return err
	}
	s.Time = check.Midpoint(before, now())
	if len(info) == 0 {
		return errors.New("INFO gave no fields")
	}
	for k, v := range info {
		s.Vars.Set(k, v, true)
	}
	serverNow := float64(s.Time.UnixNano()) / 1e9
	if us, err := strconv.ParseInt(info["server_time_usec"], 10, 64); err == nil {
		serverNow = float64(us) / 1e6
	}
	if up, err := strconv.ParseFloat(info["uptime_in_seconds"], 64); err == nil {
		s.Started = serverNow - up
	}
	return nil
}
