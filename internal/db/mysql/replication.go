package mysql

import (
	"context"
	"fmt"
	"strings"

	"github.com/fathom-lab/fathom/internal/check"
)

// replication reads replication lag on MySQL and MariaDB replicas: Seconds_Behind_Master
// per channel, or the heartbeat's age.
type replication struct{}

// Lag runs the replication modes on a MySQL or MariaDB replica.
func (replication) Lag(ctx context.Context, r *check.Runner, c *check.Check, s *check.Sample) (check.Result, error) {
	if why, ok := s.Missing["replica status"]; ok {
		return check.Result{}, check.Failure(check.Unknown, "cannot read the replica status: "+why+" (the check's user needs REPLICATION CLIENT, or REPLICA MONITOR on MariaDB)")
	}
	channels := s.Channels
	if c.Channel != "" {
		channels = nil
		for _, ch := range s.Channels {
			if strings.EqualFold(ch.Name, c.Channel) {
				channels = append(channels, ch)
			}
		}
		if len(channels) == 0 {
			return check.Result{}, check.Failure(check.Critical, fmt.Sprintf("no replication channel %q on %s", c.Channel, s.Server))
		}
	}
	if len(channels) == 0 {
		return check.Result{}, check.Failure(check.Critical, fmt.Sprintf("%s is not a replica: SHOW REPLICA STATUS is empty", s.Server))
	}
	var (
		broken, notes []string
		worst         *float64
	)
	for _, ch := range channels {
		name := ""
		if len(channels) > 1 || ch.Name != "" {
			name = fmt.Sprintf("channel '%s': ", ch.Name)
		}
		if ch.IORunning != "Yes" {
			why := "I/O thread not running"
			if ch.IORunning == "Connecting" {
				why = "I/O thread not connected to the primary (Connecting)"
			} else if ch.IORunning != "" {
				why += " (" + ch.IORunning + ")"
			}
			if ch.LastIOError != "" {
				why += ": " + ch.LastIOError
			}
			broken = append(broken, name+why)
		}
		if ch.SQLRunning != "Yes" {
			why := "SQL thread not running"
			if ch.LastSQLError != "" {
				why += ": " + ch.LastSQLError
			}
			broken = append(broken, name+why)
		}
		var lag *float64
		if c.Heartbeat {
			id := c.ServerID
			if id == 0 {
				id = ch.PrimaryServerID
			}
			if id == 0 {
				broken = append(broken, name+"the primary's server id is unknown (the replica has not connected yet): give --server-id")
				continue
			}
			hb, err := r.HeartbeatLag(ctx, c, id)
			if err != nil {
				return check.Result{}, err
			}
			if hb.Missing != "" {
				broken = append(broken, name+hb.Missing)
				continue
			}
			lag = &hb.Lag
			notes = append(notes, fmt.Sprintf("%sheartbeat lag %ss (server id %d)", name, check.FormatNumber(check.Round2(hb.Lag)), id))
		} else {
			if ch.SecondsBehind == nil {
				if ch.IORunning == "Yes" && ch.SQLRunning == "Yes" {
					broken = append(broken, name+"Seconds_Behind_Master is NULL")
				}
				continue
			}
			lag = ch.SecondsBehind
			notes = append(notes, fmt.Sprintf("%sSeconds_Behind_Master %ss", name, check.FormatNumber(*lag)))
		}
		if worst == nil || *lag > *worst {
			worst = lag
		}
	}
	res := check.JudgeLag(c, worst, broken, notes)
	if !c.Heartbeat && res.Status == check.OK {
		res.Message += " (it cannot see a starved I/O thread: use --heartbeat with `fathom heartbeat` on the primary)"
	}
	return res, nil
}
