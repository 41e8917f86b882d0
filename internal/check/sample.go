package check

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/fathom-lab/fathom/internal/target"
)

// Sample is everything one fetch reads from a server: one namespace of variables for
// expressions, plus the structured facts the built-in modes need.
type Sample struct {
	Kind   string    `json:"kind"`   // mysql or postgres
	Server string    `json:"server"` // host:port (for messages and file names)
	Time   time.Time `json:"time"`   // when it was read (this host's clock)
	Vars   vars      `json:"vars"`
	// Started is when the server started and StatsReset when its statistics were last
	// reset (FLUSH STATUS, pg_stat_reset), in Unix seconds of the server's clock; a
	// change between two runs means counters started again from zero.
	Started    float64 `json:"started"`
	StatsReset float64 `json:"stats_reset,omitempty"`
	// Replica holds MySQL replication channels (SHOW REPLICA STATUS), or the
	// PostgreSQL standby's own view.
	Channels []Channel `json:"channels,omitempty"`
	// InRecovery: PostgreSQL standby.
	InRecovery bool     `json:"in_recovery,omitempty"`
	Standby    *Standby `json:"standby,omitempty"`
	// Replicas: PostgreSQL primary's pg_stat_replication.
	Replicas []PGReplica `json:"replicas,omitempty"`
	// LongestQuery is the longest-running client statement; LongestLockWait the
	// statement waiting longest for a lock.
	LongestQuery    *Session `json:"longest_query,omitempty"`
	LongestLockWait *Session `json:"longest_lock_wait,omitempty"`
	LockWaits       int      `json:"lock_waits"`
	// Missing names sources that could not be read (privileges, server version) and why.
	Missing map[string]string `json:"missing,omitempty"`
}

// Channel is one MySQL/MariaDB replication channel.
type Channel struct {
	Name            string   `json:"name"`
	IORunning       string   `json:"io_running"`  // Yes, No, Connecting, Preparing
	SQLRunning      string   `json:"sql_running"` // Yes, No
	SecondsBehind   *float64 `json:"seconds_behind,omitempty"`
	LastIOError     string   `json:"last_io_error,omitempty"`
	LastSQLError    string   `json:"last_sql_error,omitempty"`
	PrimaryHost     string   `json:"primary_host,omitempty"`
	PrimaryPort     string   `json:"primary_port,omitempty"`
	PrimaryServerID int64    `json:"primary_server_id,omitempty"`
	SQLDelay        float64  `json:"sql_delay,omitempty"`
}

// Standby is a PostgreSQL standby's view of its replication.
type Standby struct {
	ReceiverStatus string   `json:"receiver_status"` // pg_stat_wal_receiver.status, "" when no receiver
	ReplayPaused   bool     `json:"replay_paused"`
	ReplayBehind   float64  `json:"replay_behind_bytes"`  // received but not replayed
	ReplayAge      *float64 `json:"replay_age,omitempty"` // now - last replayed commit
	Caught         bool     `json:"caught_up"`            // receive LSN == replay LSN
	Upstream       string   `json:"upstream,omitempty"`
}

// PGReplica is one row of pg_stat_replication.
type PGReplica struct {
	Name      string   `json:"name"`
	Addr      string   `json:"addr,omitempty"`
	State     string   `json:"state"`
	SyncState string   `json:"sync_state,omitempty"`
	WriteLag  *float64 `json:"write_lag,omitempty"`
	FlushLag  *float64 `json:"flush_lag,omitempty"`
	ReplayLag *float64 `json:"replay_lag,omitempty"`
	// Behind is bytes of WAL the standby has not replayed: the primary's current WAL
	// position less the standby's replay position.
	Behind float64 `json:"behind_bytes"`
	// Unreplayed is bytes the standby has flushed but not replayed (replay stopped or
	// slow while WAL still arrives).
	Unreplayed float64 `json:"unreplayed_bytes,omitempty"`
	// ReplyAge is seconds since the standby's last reply (PostgreSQL 12+), nil if unknown.
	ReplyAge *float64 `json:"reply_age,omitempty"`
}

// Session describes one client session for long-query and locked-query messages.
// Query holds at most 60 characters of the statement with its literals masked.
type Session struct {
	ID      int64   `json:"id"`
	User    string  `json:"user,omitempty"`
	DB      string  `json:"db,omitempty"`
	Seconds float64 `json:"seconds"`
	State   string  `json:"state,omitempty"`
	Query   string  `json:"query,omitempty"`
}

func (s *Session) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "id %d", s.ID)
	if s.User != "" {
		fmt.Fprintf(&b, " user %s", s.User)
	}
	if s.DB != "" {
		fmt.Fprintf(&b, " db %s", s.DB)
	}
	if s.State != "" {
		fmt.Fprintf(&b, " (%s)", s.State)
	}
	if s.Query != "" {
		fmt.Fprintf(&b, ": %s", s.Query)
	}
	return b.String()
}

// Source fills a sample over conn: one per database kind that `check` can read (the
// kind's bundle in internal/db gives it).
type Source func(ctx context.Context, conn target.Conn, s *Sample, now func() time.Time) error

// Fetch reads a sample over conn with src. kind is the target's Kind().
func Fetch(ctx context.Context, conn target.Conn, src Source, kind, server string, now func() time.Time) (*Sample, error) {
	if src == nil {
		return nil, fmt.Errorf("kind %s has no check support", kind)
	}
	s := &Sample{Kind: kind, Server: server, Vars: vars{}, Missing: map[string]string{}}
	err := src(ctx, conn, s, now)
	if err != nil {
		return nil, err
	}
	if s.Time.IsZero() {
		s.Time = now()
	}
	if len(s.Missing) == 0 {
		s.Missing = nil
	}
	return s, nil
}

// Optional runs one optional source; errors other than lost connections and
// cancellations are recorded in s.Missing instead of failing the fetch.
func Optional(s *Sample, what string, err error) error {
	if err == nil {
		return nil
	}
	switch target.ClassOf(err) {
	case target.ClassConnection, target.ClassCanceled, target.ClassTimeout:
		return err
	}
	s.Missing[what] = OneLine(err.Error())
	return nil
}

func OneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return target.RedactString(s)
}

var literal = regexp.MustCompile(`'(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*"|\b[0-9]+(?:\.[0-9]+)?\b`)

// MaskQuery shortens a statement for a status line and replaces its literals with '?',
// so that passwords (IDENTIFIED BY '…') and personal data never reach the output.
func MaskQuery(q string) string {
	q = strings.Join(strings.Fields(q), " ")
	if len(q) > 4000 {
		q = q[:4000]
	}
	q = literal.ReplaceAllString(q, "?")
	q = strings.ReplaceAll(q, "|", "/")
	if r := []rune(q); len(r) > 60 {
		q = string(r[:57]) + "..."
	}
	return q
}

// SecretSetting reports settings whose values may hold credentials; they are not kept.
func SecretSetting(name string) bool {
	n := strings.ToLower(name)
	return strings.Contains(n, "conninfo") || strings.Contains(n, "password") || strings.Contains(n, "passwd")
}

func IdentName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(s)) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else if b.Len() > 0 && !strings.HasSuffix(b.String(), "_") {
			b.WriteByte('_')
		}
	}
	return strings.TrimSuffix(b.String(), "_")
}

// Midpoint is the time halfway between a and b: when a query that took from a to b
// read its values.
func Midpoint(a, b time.Time) time.Time { return a.Add(b.Sub(a) / 2) }
