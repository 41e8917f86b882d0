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
	if s.Kind == "postgres" {
		if c.Mode == "seconds-behind-master" {
			return Result{}, &failure{Unknown, "Seconds_Behind_Master is MySQL's; on PostgreSQL use --mode replication-lag"}
		}
		if s.InRecovery {
			return r.pgStandbyLag(ctx, c, s)
		}
		return r.pgPrimaryLag(c, s)
	}
	return r.mysqlLag(ctx, c, s)
}

// lagResult classifies a lag and adds its perfdata; crit overrides the thresholds
// when replication itself is broken.
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

func (r *Runner) mysqlLag(ctx context.Context, c *Check, s *Sample) (Result, error) {
	if why, ok := s.Missing["replica status"]; ok {
		return Result{}, &failure{Unknown, "cannot read the replica status: " + why + " (the check's user needs REPLICATION CLIENT, or REPLICA MONITOR on MariaDB)"}
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
			return Result{}, &failure{Critical, fmt.Sprintf("no replication channel %q on %s", c.Channel, s.Server)}
		}
	}
	if len(channels) == 0 {
		return Result{}, &failure{Critical, fmt.Sprintf("%s is not a replica: SHOW REPLICA STATUS is empty", s.Server)}
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
			hb, err := r.heartbeatLag(ctx, c, id)
			if err != nil {
				return Result{}, err
			}
			if hb.missing != "" {
				broken = append(broken, name+hb.missing)
				continue
			}
			lag = &hb.lag
			notes = append(notes, fmt.Sprintf("%sheartbeat lag %ss (server id %d)", name, formatNumber(round2(hb.lag)), id))
		} else {
			if ch.SecondsBehind == nil {
				if ch.IORunning == "Yes" && ch.SQLRunning == "Yes" {
					broken = append(broken, name+"Seconds_Behind_Master is NULL")
				}
				continue
			}
			lag = ch.SecondsBehind
			notes = append(notes, fmt.Sprintf("%sSeconds_Behind_Master %ss", name, formatNumber(*lag)))
		}
		if worst == nil || *lag > *worst {
			worst = lag
		}
	}
	res := lagResult(c, worst, broken, notes)
	if len(broken) == 0 && res.Status != OK {
		res.Message += thresholdNote(res.Status, c, *worst)
	}
	if !c.Heartbeat && res.Status == OK {
		res.Message += " (it cannot see a starved I/O thread: use --heartbeat with `fathom heartbeat` on the primary)"
	}
	return res, nil
}

type heartbeatReading struct {
	lag     float64
	missing string // why there is no reading, for a CRITICAL message
}

// heartbeatLag reads the primary's heartbeat row on this replica and compares its
// timestamp with the replica's clock.
func (r *Runner) heartbeatLag(ctx context.Context, c *Check, serverID int64) (heartbeatReading, error) {
	conn, err := r.connection(ctx)
	if err != nil {
		return heartbeatReading{}, err
	}
	q := "SELECT TIMESTAMPDIFF(MICROSECOND, ts, UTC_TIMESTAMP(6)) / 1e6 FROM " + c.HeartbeatTable + " WHERE server_id = ?"
	if r.Target.Kind() == "postgres" {
		q = "SELECT extract(epoch FROM clock_timestamp() - ts) FROM " + c.HeartbeatTable + " WHERE server_id = $1"
	}
	rows, err := conn.Query(ctx, q, target.Int64(serverID))
	if err != nil {
		if noDatabase(err) {
			return heartbeatReading{}, &failure{Unknown, fmt.Sprintf("no database selected: put the heartbeat's database in the DSN (mysql://user@host/monitoring) or give --heartbeat-table monitoring.%s", c.HeartbeatTable)}
		}
		if target.ClassOf(err) == target.ClassUndefined {
			return heartbeatReading{missing: fmt.Sprintf("no heartbeat table %s here (%s): run `fathom heartbeat` against the primary, which creates it", c.HeartbeatTable, oneLine(err.Error()))}, nil
		}
		return heartbeatReading{}, r.queryFailure(err, "reading the heartbeat")
	}
	if len(rows) == 0 || len(rows[0]) != 1 {
		return heartbeatReading{missing: fmt.Sprintf("no heartbeat row for server id %d in %s: is `fathom heartbeat` running against the primary?", serverID, c.HeartbeatTable)}, nil
	}
	lag, err := strconv.ParseFloat(strings.TrimSpace(rows[0][0]), 64)
	if err != nil {
		return heartbeatReading{}, fmt.Errorf("unreadable heartbeat timestamp for server id %d", serverID)
	}
	if lag < 0 {
		// The primary's clock is ahead of the replica's: the lag is at most the skew.
		lag = 0
	}
	return heartbeatReading{lag: lag}, nil
}

func (r *Runner) pgStandbyLag(ctx context.Context, c *Check, s *Sample) (Result, error) {
	if why, ok := s.Missing["standby status"]; ok {
		return Result{}, &failure{Unknown, "cannot read the standby status: " + why}
	}
	st := s.Standby
	var broken, notes []string
	if st.ReceiverStatus != "streaming" {
		if st.ReceiverStatus == "" {
			broken = append(broken, "no WAL receiver: the standby is not connected to its primary")
		} else {
			broken = append(broken, fmt.Sprintf("WAL receiver is %s, not streaming", st.ReceiverStatus))
		}
	}
	if st.ReplayPaused {
		broken = append(broken, "WAL replay is paused (SELECT pg_wal_replay_resume() resumes it)")
	}
	var lag *float64
	if c.Heartbeat {
		id := c.ServerID
		if id == 0 {
			conn, err := r.connection(ctx)
			if err != nil {
				return Result{}, err
			}
			rows, err := conn.Query(ctx, "SELECT system_identifier FROM pg_control_system()")
			if err != nil {
				return Result{}, r.queryFailure(err, "reading the system identifier")
			}
			if len(rows) == 1 && len(rows[0]) == 1 {
				id, _ = strconv.ParseInt(rows[0][0], 10, 64)
			}
		}
		hb, err := r.heartbeatLag(ctx, c, id)
		if err != nil {
			return Result{}, err
		}
		if hb.missing != "" {
			broken = append(broken, hb.missing)
		} else {
			lag = &hb.lag
			notes = append(notes, fmt.Sprintf("heartbeat lag %ss", formatNumber(round2(hb.lag))))
		}
	} else {
		zero := 0.0
		switch {
		case st.Caught:
			lag = &zero
			notes = append(notes, "replayed all WAL received (an idle primary and a starved receiver look the same: use --heartbeat)")
		case st.ReplayAge != nil:
			lag = st.ReplayAge
			notes = append(notes, fmt.Sprintf("last replayed transaction %ss old, %s bytes received but not replayed", formatNumber(round2(*lag)), formatNumber(st.ReplayBehind)))
		default:
			notes = append(notes, fmt.Sprintf("%s bytes received but not replayed", formatNumber(st.ReplayBehind)))
		}
	}
	res := lagResult(c, lag, broken, notes)
	if len(broken) == 0 && res.Status != OK {
		res.Message += thresholdNote(res.Status, c, *lag)
	}
	if lag != nil {
		res.Perf = append(res.Perf, Perf{Label: c.Name + "_bytes", Value: st.ReplayBehind, UOM: "B", Min: ptr(0)})
	}
	return res, nil
}

func ptr(f float64) *float64 { return &f }

func (r *Runner) pgPrimaryLag(c *Check, s *Sample) (Result, error) {
	if c.Heartbeat {
		return Result{}, &failure{Critical, fmt.Sprintf("%s is not a standby (pg_is_in_recovery() is false): run the heartbeat check against a standby", s.Server)}
	}
	if why, ok := s.Missing["pg_stat_replication"]; ok {
		return Result{}, &failure{Unknown, "cannot read pg_stat_replication: " + why}
	}
	want := c.MinReplicas
	var broken, notes []string
	var worst *float64
	streaming := 0
	for _, rep := range s.Replicas {
		name := rep.Name
		if name == "" {
			name = rep.Addr
		}
		if rep.State != "streaming" {
			broken = append(broken, fmt.Sprintf("standby %s is %s, not streaming", name, rep.State))
			continue
		}
		streaming++
		var lag float64
		switch {
		case rep.Behind == 0:
			lag = 0 // caught up; an idle primary reports NULL lag times
		case rep.ReplayLag != nil:
			lag = *rep.ReplayLag
		default:
			notes = append(notes, fmt.Sprintf("%s: %s bytes behind, lag time not known yet", name, formatNumber(rep.Behind)))
			continue
		}
		notes = append(notes, fmt.Sprintf("%s: replay lag %ss, %s bytes behind", name, formatNumber(round2(lag)), formatNumber(rep.Behind)))
		if worst == nil || lag > *worst {
			l := lag
			worst = &l
		}
	}
	if streaming < want {
		broken = append([]string{fmt.Sprintf("%d standby(s) streaming, want at least %d", streaming, want)}, broken...)
	}
	res := lagResult(c, worst, broken, notes)
	if len(broken) == 0 && res.Status != OK {
		res.Message += thresholdNote(res.Status, c, *worst)
	}
	if res.Message == "" {
		res.Message = "no standby"
	}
	res.Perf = append(res.Perf, Perf{Label: c.Name + "_streaming", Value: float64(streaming), Min: ptr(0)})
	return res, nil
}

// noDatabase recognises MySQL's "No database selected" (ER_NO_DB_ERROR, 1046).
func noDatabase(err error) bool {
	var te *target.Error
	return errors.As(err, &te) && te.Code == "1046"
}
