package check

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/fathom-lab/fathom/internal/target"
)

// replication runs the replication-lag and seconds-behind-master modes.
func (r *Runner) replication(ctx context.Context, c *Check, s *Sample) (Result, error) {
	if r.Opts.Dialect.Replication == nil {
		return Result{}, &failure{Unknown, c.Mode + " reads MySQL/MariaDB or PostgreSQL replication; on this server use --mode varcomp over its own fields (Redis: master_link_status, master_last_io_seconds_ago)"}
	}
	return r.Opts.Dialect.Replication.Lag(ctx, r, c, s)
}

// Replication is a kind's replication-lag reader: it runs the replication-lag and
// seconds-behind-master modes on a sample its Fetch took (check.Sample's Channels,
// Standby, Replicas), judging with JudgeLag and reading a heartbeat with
// Runner.HeartbeatLag.
type Replication interface {
	Lag(ctx context.Context, r *Runner, c *Check, s *Sample) (Result, error)
}

// JudgeLag classifies a lag (nil: none measured) against c's thresholds and adds its
// perfdata; broken (replication itself is broken) makes it CRITICAL whatever the
// lag. notes follow broken in the message; a lag over a threshold says which.
func JudgeLag(c *Check, lag *float64, broken []string, notes []string) Result {
	res := lagResult(c, lag, broken, notes)
	if len(broken) == 0 && res.Status != OK {
		res.Message += thresholdNote(res.Status, c, *lag)
	}
	return res
}

func lagResult(c *Check, lag *float64, broken []string, notes []string) Result {
	st := OK
	if lag != nil {
		st = classify(*lag, c)
	}
	var msg []string
	if len(broken) > 0 {
		st = Critical
		msg = append(msg, broken...)
	}
	msg = append(msg, notes...)
	res := Result{Status: st, Message: strings.Join(msg, "; ")}
	if lag != nil {
		res.Perf = []Perf{c.perf(*lag)}
	}
	return res
}

// heartbeatReading is a replica's heartbeat lag, or why there is none.
type heartbeatReading struct {
	Lag     float64
	Missing string // why there is no reading, for a CRITICAL message
}

// HeartbeatLag reads the primary's heartbeat row on this replica and compares its
// timestamp with the replica's clock.
func (r *Runner) HeartbeatLag(ctx context.Context, c *Check, serverID int64) (heartbeatReading, error) {
	conn, err := r.connection(ctx)
	if err != nil {
		return heartbeatReading{}, err
	}
	rows, err := conn.Query(ctx, r.Opts.Dialect.HeartbeatAge(c.HeartbeatTable), target.Int64(serverID))
	if err != nil {
		if noDatabase(err) {
			return heartbeatReading{}, &failure{Unknown, fmt.Sprintf("no database selected: put the heartbeat's database in the DSN (mysql://user@host/monitoring) or give --heartbeat-table monitoring.%s", c.HeartbeatTable)}
		}
		if target.ClassOf(err) == target.ClassUndefined {
			return heartbeatReading{Missing: fmt.Sprintf("no heartbeat table %s here (%s): run `fathom heartbeat` against the primary, which creates it", c.HeartbeatTable, OneLine(err.Error()))}, nil
		}
		return heartbeatReading{}, r.queryFailure(err, "reading the heartbeat")
	}
	if len(rows) == 0 || len(rows[0]) != 1 {
		return heartbeatReading{Missing: fmt.Sprintf("no heartbeat row for server id %d in %s: is `fathom heartbeat` running against the primary?", serverID, c.HeartbeatTable)}, nil
	}
	lag, err := strconv.ParseFloat(strings.TrimSpace(rows[0][0]), 64)
	if err != nil {
		return heartbeatReading{}, fmt.Errorf("unreadable heartbeat timestamp for server id %d", serverID)
	}
	if lag < 0 {
		// The primary's clock is ahead of the replica's: the lag is at most the skew.
		lag = 0
	}
	return heartbeatReading{Lag: lag}, nil
}

// What a kind's Replication uses of the runner and of check's formatting.

// Conn is the runner's connection to the server, opened on first use.
func (r *Runner) Conn(ctx context.Context) (target.Conn, error) { return r.connection(ctx) }

// QueryFailure is the check's error for a query that failed while reading what.
func (r *Runner) QueryFailure(err error, what string) error { return r.queryFailure(err, what) }

// FormatNumber shows a figure as check's messages and perfdata do.
func FormatNumber(f float64) string { return formatNumber(f) }

// Round2 rounds to two decimals, for messages.
func Round2(f float64) float64 { return round2(f) }

// Worse is the more severe of two statuses.
func Worse(a, b Status) Status { return worse(a, b) }

// noDatabase recognises MySQL's "No database selected" (ER_NO_DB_ERROR, 1046).
func noDatabase(err error) bool {
	var te *target.Error
	return errors.As(err, &te) && te.Code == "1046"
}
