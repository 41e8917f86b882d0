package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/fathom-lab/fathom/internal/check"
)

// replication reads replication lag on PostgreSQL: a standby's own replay, or the
// standbys a primary's pg_stat_replication shows.
type replication struct{}

// Lag runs the replication-lag mode (seconds-behind-master is MySQL's).
func (replication) Lag(ctx context.Context, r *check.Runner, c *check.Check, s *check.Sample) (check.Result, error) {
	if c.Mode == "seconds-behind-master" {
		return check.Result{}, check.Failure(check.Unknown, "Seconds_Behind_Master is MySQL's; on PostgreSQL use --mode replication-lag")
	}
	if s.InRecovery {
		return standbyLag(ctx, r, c, s)
	}
	return primaryLag(c, s)
}

// standbyLag runs the replication-lag mode on a PostgreSQL standby.
func standbyLag(ctx context.Context, r *check.Runner, c *check.Check, s *check.Sample) (check.Result, error) {
	if why, ok := s.Missing["standby status"]; ok {
		return check.Result{}, check.Failure(check.Unknown, "cannot read the standby status: "+why)
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
			conn, err := r.Conn(ctx)
			if err != nil {
				return check.Result{}, err
			}
			rows, err := conn.Query(ctx, "SELECT system_identifier FROM pg_control_system()")
			if err != nil {
				return check.Result{}, r.QueryFailure(err, "reading the system identifier")
			}
			if len(rows) == 1 && len(rows[0]) == 1 {
				id, _ = strconv.ParseInt(rows[0][0], 10, 64)
			}
		}
		hb, err := r.HeartbeatLag(ctx, c, id)
		if err != nil {
			return check.Result{}, err
		}
		if hb.Missing != "" {
			broken = append(broken, hb.Missing)
		} else {
			lag = &hb.Lag
			notes = append(notes, fmt.Sprintf("heartbeat lag %ss", check.FormatNumber(check.Round2(hb.Lag))))
		}
	} else {
		zero := 0.0
		switch {
		case st.Caught:
			lag = &zero
			notes = append(notes, "replayed all WAL received (an idle primary and a starved receiver look the same: use --heartbeat)")
		case st.ReplayAge != nil:
			lag = st.ReplayAge
			notes = append(notes, fmt.Sprintf("last replayed transaction %ss old, %s bytes received but not replayed", check.FormatNumber(check.Round2(*lag)), check.FormatNumber(st.ReplayBehind)))
		default:
			notes = append(notes, fmt.Sprintf("%s bytes received but not replayed", check.FormatNumber(st.ReplayBehind)))
		}
	}
	res := check.JudgeLag(c, lag, broken, notes)
	if lag != nil {
		res.Perf = append(res.Perf, check.Perf{Label: c.Name + "_bytes", Value: st.ReplayBehind, UOM: "B", Min: ptr(0)})
	}
	return res, nil
}

func ptr(f float64) *float64 { return &f }

// replicaLag is one streaming standby's lag in seconds and its note. known is false
// when the standby is behind but PostgreSQL has not measured its lag yet (and
// nothing else says how far behind it is in time): its lag is then not judged.
func replicaLag(name string, rep check.PGReplica) (lag float64, note string, known bool) {
	var why []string
	switch {
	case rep.Behind == 0:
		lag = 0 // caught up; an idle primary reports NULL lag times
	case rep.ReplayLag != nil:
		lag = *rep.ReplayLag
	}
	if rep.Behind != 0 && rep.ReplyAge != nil && *rep.ReplyAge > lag {
		lag = *rep.ReplyAge
		why = append(why, fmt.Sprintf("no reply from it for %ss", check.FormatNumber(check.Round2(*rep.ReplyAge))))
	}
	if rep.Unreplayed > 0 {
		why = append(why, fmt.Sprintf("%s bytes received but not replayed", check.FormatNumber(rep.Unreplayed)))
	}
	if rep.Behind != 0 && rep.ReplayLag == nil && len(why) == 0 {
		return 0, fmt.Sprintf("%s: %s bytes behind, lag time not known yet", name, check.FormatNumber(rep.Behind)), false
	}
	note = fmt.Sprintf("%s: replay lag %ss, %s bytes behind", name, check.FormatNumber(check.Round2(lag)), check.FormatNumber(max(rep.Behind, 0)))
	if len(why) > 0 {
		note += " (" + strings.Join(why, ", ") + ")"
	}
	return lag, note, true
}

// judgeBytes raises res to the byte thresholds' status when the standby furthest
// behind is over one, saying so in its message.
func judgeBytes(c *check.Check, res *check.Result, worstBytes float64) {
	bst := check.OK
	if c.CriticalBytes.IsSet() && c.CriticalBytes.Alert(worstBytes) {
		bst = check.Critical
	} else if c.WarningBytes.IsSet() && c.WarningBytes.Alert(worstBytes) {
		bst = check.Warning
	}
	if bst != check.OK {
		res.Message += fmt.Sprintf("; %s bytes behind is over the %s bytes threshold", check.FormatNumber(worstBytes), strings.ToLower(bst.String()))
		res.Status = check.Worse(res.Status, bst)
	}
}

// primaryLag judges the standbys from the primary's pg_stat_replication. Bytes
// behind (the primary's current WAL position less each standby's replay position) are
// always current; PostgreSQL's replay_lag is only the lag last measured when replay
// advanced, so it does not grow while replay is stopped or the standby is silent.
// The seconds judged are therefore replay_lag, or the time since the standby's last
// reply when that is longer and the standby is behind; byte thresholds
// (WarningBytes, CriticalBytes) catch a standby whose replay stopped while it still
// replies.
func primaryLag(c *check.Check, s *check.Sample) (check.Result, error) {
	if c.Heartbeat {
		return check.Result{}, check.Failure(check.Critical, fmt.Sprintf("%s is not a standby (pg_is_in_recovery() is false): run the heartbeat check against a standby", s.Server))
	}
	if why, ok := s.Missing["pg_stat_replication"]; ok {
		return check.Result{}, check.Failure(check.Unknown, "cannot read pg_stat_replication: "+why)
	}
	want := c.MinReplicas
	var broken, notes []string
	var worst, worstBytes *float64
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
		behind := max(rep.Behind, 0)
		if worstBytes == nil || behind > *worstBytes {
			worstBytes = ptr(behind)
		}
		lag, note, known := replicaLag(name, rep)
		notes = append(notes, note)
		if known && (worst == nil || lag > *worst) {
			worst = ptr(lag)
		}
	}
	if streaming < want {
		broken = append([]string{fmt.Sprintf("%d standby(s) streaming, want at least %d", streaming, want)}, broken...)
	}
	res := check.JudgeLag(c, worst, broken, notes)
	if worstBytes != nil && len(broken) == 0 {
		judgeBytes(c, &res, *worstBytes)
	}
	if res.Message == "" {
		res.Message = "no standby"
	}
	if res.Status == check.OK && worstBytes != nil && *worstBytes > 0 && !c.WarningBytes.IsSet() && !c.CriticalBytes.IsSet() {
		res.Message += " (replay_lag is the last measured: give --warning-bytes/--critical-bytes to catch a standby whose replay stopped)"
	}
	if worstBytes != nil {
		res.Perf = append(res.Perf, check.Perf{Label: c.Name + "_bytes", Value: *worstBytes, UOM: "B", Warn: c.WarningBytes, Crit: c.CriticalBytes, Min: ptr(0)})
	}
	res.Perf = append(res.Perf, check.Perf{Label: c.Name + "_streaming", Value: float64(streaming), Min: ptr(0)})
	return res, nil
}
