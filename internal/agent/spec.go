package agent

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/fathom-lab/fathom/internal/errkind"
	"github.com/fathom-lab/fathom/internal/run"
	"github.com/fathom-lab/fathom/internal/runner"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/workload"
)

// spec is what every agent of a job runs, as the coordinator stores it: the run's
// totals (each agent takes its Share of them) and how to reach the target, without
// any password (agents take theirs from their own environment: PGPASSWORD, .pgpass,
// MYSQL_PWD, a Kubernetes Secret).
type spec struct {
	Target           string          `json:"target"`
	QueryMode        string          `json:"query_mode,omitempty"`
	ConnectTimeout   time.Duration   `json:"connect_timeout,omitempty"`
	Workload         string          `json:"workload"`
	Params           workload.Params `json:"params,omitempty"`
	Types            []string        `json:"types"`
	Clients          int             `json:"clients"`
	Rate             float64         `json:"rate,omitempty"`
	Seed             uint64          `json:"seed"`
	Duration         time.Duration   `json:"duration,omitempty"`
	Transactions     int64           `json:"transactions,omitempty"`
	Warmup           time.Duration   `json:"warmup,omitempty"`
	Interval         time.Duration   `json:"interval"`
	LatencyLimit     time.Duration   `json:"latency_limit,omitempty"`
	MaxTries         int             `json:"max_tries"`
	ReconnectTimeout time.Duration   `json:"reconnect_timeout,omitempty"`
	ConnectPerTxn    bool            `json:"connect_per_txn,omitempty"`
	// Token is drawn at random by the coordinator: a creation of its job tried again
	// (the store's acknowledgement lost) finds its own job by it (CreateAgentJob).
	Token string `json:"token,omitempty"`
}

// config is agent share's runner configuration.
func (s *spec) config(sh Share) runner.Config {
	return runner.Config{Clients: sh.Clients, Rate: sh.Rate, Seed: sh.Seed, Duration: s.Duration, Transactions: s.Transactions,
		Warmup: s.Warmup, Interval: s.Interval, LatencyLimit: s.LatencyLimit, MaxTries: s.MaxTries,
		ReconnectTimeout: s.ReconnectTimeout, ConnectPerTxn: s.ConnectPerTxn}
}

// newToken is a random Spec.Token.
func newToken() string { return rand.Text() }

// withoutPassword is dsn with any password removed (the user part of a URL and
// password= parameters), for the store: agents bring their own.
func withoutPassword(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" || u.Opaque != "" || u.Host == "" {
		return strings.TrimSpace(kvPassword.ReplaceAllString(dsn, ""))
	}
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	q := u.Query()
	for k := range q {
		if strings.EqualFold(k, "password") {
			q.Del(k)
			u.RawQuery = q.Encode()
		}
	}
	return u.String()
}

var kvPassword = regexp.MustCompile(`(?i)\bpassword\s*=\s*('(?:[^'\\]|\\.)*'|\S*)`)

// agentStore returns st's agent coordination, or a usage error saying that agents
// need a store every machine can reach.
func agentStore(st store.Store) (store.AgentStore, error) {
	if as, ok := st.(store.AgentStore); ok {
		return as, nil
	}
	return nil, errkind.Usagef("agents coordinate through a PostgreSQL results store that every machine reaches: give --store postgres://user@host/fathom (store %s cannot be shared)", st.Path())
}

// storeClock measures the store's clock against this machine's, the NTP way: of a few
// reads, the one with the shortest round trip, its reading taken as made halfway
// through. offset is the store's clock minus ours as measured; the truth lies within
// ±rtt/2 of it (a delay on one way only shifts the midpoint by up to that much).
func storeClock(ctx context.Context, as store.AgentStore) (offset, rtt time.Duration, err error) {
	rtt = -1
	for i := 0; i < clockSamples; i++ {
		t0 := time.Now()
		st, err := as.Clock(ctx)
		t1 := time.Now()
		if err != nil {
			return 0, 0, err
		}
		if d := t1.Sub(t0); rtt < 0 || d < rtt {
			rtt = d
			offset = st.Sub(t0.Add(d / 2))
		}
	}
	return offset, rtt, nil
}

const clockSamples = 8

// clockApplied is the offset a machine starts by: of the offsets the measurement
// allows (offset ± rtt/2), the one nearest zero. Clocks kept by NTP agree to a few
// milliseconds, while a slow or asymmetric path to the store fakes an offset of up to
// half its round trip: an offset within the uncertainty is not applied, and a larger
// one only by what the uncertainty cannot explain.
func clockApplied(offset, rtt time.Duration) time.Duration {
	u := rtt / 2
	switch {
	case offset > u:
		return offset - u
	case offset < -u:
		return offset + u
	}
	return 0
}

// clockWarning says when a machine's clock is known too loosely, or was far enough off,
// for its intervals to line up with the others' within a material share (5%) of the
// interval; "" when it is fine.
func clockWarning(who string, offset, rtt, interval time.Duration) string {
	u, applied := rtt/2, clockApplied(offset, rtt)
	limit := interval / 20
	switch {
	case u > limit:
		return fmt.Sprintf("%s's clock is known only to ±%.1f ms (round trip %.1f ms to the store), %.0f%% of the %s interval: its intervals may be that far out of line with the others'",
			who, ms(u), ms(rtt), 100*float64(u)/float64(interval), interval)
	case applied > limit || applied < -limit:
		return fmt.Sprintf("%s's clock was %+.1f ms off the store's (±%.1f ms), %.0f%% of the %s interval: it started by the store's clock, but check its time synchronisation",
			who, ms(-applied), ms(u), 100*math.Abs(float64(applied))/float64(interval), interval)
	}
	return ""
}

// decodeSpec reads a job's spec.
func decodeSpec(j *store.AgentJob) (*spec, error) {
	var s spec
	if err := json.Unmarshal(j.Spec, &s); err != nil {
		return nil, fmt.Errorf("job %q: its spec does not decode (%v): is this agent older than the coordinator?", j.Name, err)
	}
	if s.Clients < 1 || s.Interval <= 0 || len(s.Types) == 0 {
		return nil, fmt.Errorf("job %q: incomplete spec", j.Name)
	}
	return &s, nil
}

// sleepUntil waits until t on this machine's clock; false if ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}

var errStopped = errors.New("stopped")

// runOptions is the engine's view of a spec, for opening its workload and target.
func (s *spec) runOptions(dsn string, getenv func(string) string, poller bool) run.Options {
	return run.Options{Target: run.Target{DSN: dsn, QueryMode: s.QueryMode, ConnectTimeout: s.ConnectTimeout, PollerSockets: poller, Getenv: getenv},
		Workload: s.Workload, Params: s.Params}
}
