package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/store"
)

// The coordination of agents (store.AgentStore): jobs, their members and the members'
// intervals, all timed on the store's clock so that machines with skewed clocks agree.

// nowNS is the store's clock in SQL, nanoseconds since the epoch (microsecond steps).
const nowNS = `(extract(epoch FROM clock_timestamp()) * 1000000)::bigint * 1000`

var _ store.AgentStore = (*Store)(nil)

// Clock reads the store's clock.
func (s *Store) Clock(ctx context.Context) (time.Time, error) {
	var ns int64
	if err := s.db.QueryRowContext(ctx, `SELECT `+nowNS).Scan(&ns); err != nil {
		return time.Time{}, err
	}
	return time.Unix(0, ns), nil
}

// CreateAgentJob records a waiting job.
func (s *Store) CreateAgentJob(ctx context.Context, j *store.AgentJob) error {
	j.State = store.JobWaiting
	err := s.db.QueryRowContext(ctx, `INSERT INTO agent_jobs (name, agents, spec, state, created_ns, beat_ns)
		VALUES ($1, $2, $3, $4, `+nowNS+`, `+nowNS+`) RETURNING id`, j.Name, j.Agents, string(j.Spec), j.State).Scan(&j.ID)
	if code(err) == "23505" { // unique_violation
		// The open job of that name is this one when its spec, token and all, is ours:
		// an earlier try of this call committed it and its acknowledgement was lost.
		var id int64
		err := s.db.QueryRowContext(ctx, `SELECT id FROM agent_jobs WHERE name = $1 AND state <> 'finished' AND spec = $2`,
			j.Name, string(j.Spec)).Scan(&id)
		if err == nil {
			j.ID = id
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		return fmt.Errorf("a job named %q is already open in %s: %w", j.Name, s.path, store.ErrTaken)
	}
	return err
}

const jobColumns = `id, name, agents, spec, state, coalesce(run_id, 0), coalesce(start_ns, 0), reason, ` + nowNS + ` - beat_ns`

func scanJob(sc interface{ Scan(...any) error }) (*store.AgentJob, error) {
	var j store.AgentJob
	var spec string
	var start, age int64
	if err := sc.Scan(&j.ID, &j.Name, &j.Agents, &spec, &j.State, &j.RunID, &start, &j.Reason, &age); err != nil {
		return nil, err
	}
	j.Spec = []byte(spec)
	if start != 0 {
		j.StartAt = time.Unix(0, start)
	}
	j.CoordinatorAge = time.Duration(age)
	return &j, nil
}

// AgentJob returns the newest job of that name.
func (s *Store) AgentJob(ctx context.Context, name string) (*store.AgentJob, error) {
	j, err := scanJob(s.db.QueryRowContext(ctx, `SELECT `+jobColumns+` FROM agent_jobs WHERE name = $1 ORDER BY id DESC LIMIT 1`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("no job named %q in %s: %w", name, s.path, store.ErrNotFound)
	}
	return j, err
}

// WaitingAgentJobs lists the jobs that still take agents, oldest first.
func (s *Store) WaitingAgentJobs(ctx context.Context) ([]store.AgentJob, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+jobColumns+` FROM agent_jobs j WHERE state = 'waiting'
		AND (SELECT count(*) FROM agent_members m WHERE m.job_id = j.id) < agents ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.AgentJob
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *j)
	}
	return out, rows.Err()
}

// JoinAgentJob registers an agent in a waiting job, locking the job row so that two
// agents asking for the lowest free index get different ones.
func (s *Store) JoinAgentJob(ctx context.Context, jobID int64, m *store.AgentMember) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var state string
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT state, agents FROM agent_jobs WHERE id = $1 FOR UPDATE`, jobID).Scan(&state, &n); err != nil {
		return err
	}
	if state != store.JobWaiting {
		return fmt.Errorf("the job is %s and takes no more agents: %w", state, store.ErrTaken)
	}
	held := map[int]bool{}
	rows, err := tx.QueryContext(ctx, `SELECT idx FROM agent_members WHERE job_id = $1`, jobID)
	if err != nil {
		return err
	}
	for rows.Next() {
		var i int
		if err := rows.Scan(&i); err != nil {
			rows.Close()
			return err
		}
		held[i] = true
	}
	rows.Close()
	if m.Index < 0 {
		for i := 0; i < n; i++ {
			if !held[i] {
				m.Index = i
				break
			}
		}
		if m.Index < 0 {
			return fmt.Errorf("all %d agents have joined: %w", n, store.ErrTaken)
		}
	} else if m.Index >= n {
		return fmt.Errorf("index %d is outside 0 to %d", m.Index, n-1)
	} else if held[m.Index] {
		return fmt.Errorf("another agent holds index %d: %w", m.Index, store.ErrTaken)
	}
	m.State = store.AgentRegistered
	if _, err := tx.ExecContext(ctx, `INSERT INTO agent_members (job_id, idx, host, version, pid, offset_ns, rtt_ns, clients, rate, seed,
		state, joined_ns, beat_ns) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,`+nowNS+`,`+nowNS+`)`,
		jobID, m.Index, m.Host, m.Version, m.PID, int64(m.Offset), int64(m.RTT), m.Clients, m.Rate, int64(m.Seed), m.State); err != nil {
		return err
	}
	return tx.Commit()
}

// AgentMembers lists a job's agents by index.
func (s *Store) AgentMembers(ctx context.Context, jobID int64) ([]store.AgentMember, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT idx, host, version, pid, offset_ns, rtt_ns, clients, rate, seed, state, reason,
		`+nowNS+` - beat_ns, coalesce(ended_ns, 0), (SELECT count(*) FROM agent_intervals i WHERE i.job_id = m.job_id AND i.agent = m.idx)
		FROM agent_members m WHERE job_id = $1 ORDER BY idx`, jobID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.AgentMember
	for rows.Next() {
		var m store.AgentMember
		var off, rtt, seed, age, ended int64
		if err := rows.Scan(&m.Index, &m.Host, &m.Version, &m.PID, &off, &rtt, &m.Clients, &m.Rate, &seed, &m.State, &m.Reason,
			&age, &ended, &m.Intervals); err != nil {
			return nil, err
		}
		m.Offset, m.RTT, m.Seed, m.Age = time.Duration(off), time.Duration(rtt), uint64(seed), time.Duration(age)
		if ended != 0 {
			m.Ended = time.Unix(0, ended)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// StartAgentJob links the run and sets the start instant.
func (s *Store) StartAgentJob(ctx context.Context, jobID, runID int64, lead time.Duration) (time.Time, error) {
	var ns int64
	err := s.db.QueryRowContext(ctx, `UPDATE agent_jobs SET state = 'started', run_id = $2, start_ns = `+nowNS+` + $3, beat_ns = `+nowNS+`
		WHERE id = $1 AND state = 'waiting' RETURNING start_ns`, jobID, runID, int64(lead)).Scan(&ns)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, fmt.Errorf("job %d is not waiting to start", jobID)
	}
	return time.Unix(0, ns), err
}

// SetAgentJobState changes the job's state; it also shows the coordinator alive.
func (s *Store) SetAgentJobState(ctx context.Context, jobID int64, state, reason string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE agent_jobs SET state = $2, reason = CASE WHEN $3 = '' THEN reason ELSE $3 END, beat_ns = `+nowNS+`
		WHERE id = $1`, jobID, state, reason)
	return err
}

// AgentBeat records that an agent is alive in state, and returns its job. An agent
// the coordinator has marked lost stays lost.
func (s *Store) AgentBeat(ctx context.Context, jobID int64, index int, state, reason string) (*store.AgentJob, error) {
	ended := state == store.AgentDone || state == store.AgentFailed
	res, err := s.db.ExecContext(ctx, `UPDATE agent_members SET state = $3, reason = $4, beat_ns = `+nowNS+`,
		ended_ns = CASE WHEN $5 THEN `+nowNS+` ELSE ended_ns END WHERE job_id = $1 AND idx = $2 AND state <> 'lost'`,
		jobID, index, state, reason, ended)
	if err != nil {
		return nil, err
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return nil, fmt.Errorf("agent %d of job %d: %w", index, jobID, store.ErrLost)
	}
	return scanJob(s.db.QueryRowContext(ctx, `SELECT `+jobColumns+` FROM agent_jobs WHERE id = $1`, jobID))
}

// MarkAgentLost marks an agent lost unless it already ended.
func (s *Store) MarkAgentLost(ctx context.Context, jobID int64, index int, reason string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE agent_members SET state = 'lost', reason = $3, ended_ns = `+nowNS+`
		WHERE job_id = $1 AND idx = $2 AND state IN ('registered', 'running')`, jobID, index, reason)
	return err
}

// AddAgentInterval stores one agent's interval in one statement.
func (s *Store) AddAgentInterval(ctx context.Context, jobID int64, index int, iv *measure.Interval) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO agent_intervals (job_id, agent, idx, start_ns, end_ns, warmup, reconnects, types)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8) ON CONFLICT (job_id, idx, agent) DO NOTHING`, jobID, index, iv.Index, int64(iv.Start), int64(iv.End), iv.Warmup, iv.Reconnects,
		store.EncodeAgentTypes(iv))
	return err
}

// AgentIntervals returns the agents' intervals from index from on.
func (s *Store) AgentIntervals(ctx context.Context, jobID int64, from int, types []string) ([]store.AgentInterval, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT agent, idx, start_ns, end_ns, warmup, reconnects, types FROM agent_intervals
		WHERE job_id = $1 AND idx >= $2 ORDER BY idx, agent`, jobID, from)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.AgentInterval
	for rows.Next() {
		var a store.AgentInterval
		var idx int
		var start, end int64
		var warm bool
		var rec int64
		var b []byte
		if err := rows.Scan(&a.Agent, &idx, &start, &end, &warm, &rec, &b); err != nil {
			return nil, err
		}
		iv := measure.NewInterval(idx, types)
		iv.Start, iv.End, iv.Warmup, iv.Reconnects = time.Duration(start), time.Duration(end), warm, rec
		if err := store.DecodeAgentTypes(b, iv); err != nil {
			return nil, fmt.Errorf("agent %d interval %d: %v", a.Agent, idx, err)
		}
		a.Interval = iv
		out = append(out, a)
	}
	return out, rows.Err()
}
