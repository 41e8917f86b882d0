package analyze

import "strings"

// Vocabulary names the metrics of a database kind that the generic stall patterns
// read, or must not take for evidence. The kind's bundle (internal/db/KIND) gives it,
// with its rules (StallKind), so that this package names no kind's metric: it reads
// whatever the run's kind says stands for its throughput, its lock waits and its
// static figures. Entries of Sampling and Static that end in "*" are prefixes.
type Vocabulary struct {
	// ServerRates are the server's counters that stand for throughput when no client
	// measured it (a watch session), in order of preference.
	ServerRates []string
	// Sessions waiting for table-level (metadata) locks, for row locks, and for locks
	// of either kind (gauges, in sessions).
	TableLockSessions, RowLockSessions, AnyLockSessions []string
	// RowLockTime is a counter of the time spent waiting for row locks, in ms ("":
	// none).
	RowLockTime string
	// SessionStates is the prefix of a family of gauges that count sessions by state
	// ("": none); the lock-wait pattern names the states whose name holds "lock".
	SessionStates string
	// Sampling are metrics that count fathom's own sampling queries: they move when
	// the sampler does, not the server.
	Sampling []string
	// Static are settings and sizes sampled as metrics (a redo log's capacity, the
	// server's uptime): never evidence of a stall.
	Static []string
}

// StallKind is what stall analysis takes of a run's database kind: its own patterns,
// and the names of its metrics that the generic patterns read.
type StallKind struct {
	Rules      []Rule
	Vocabulary Vocabulary
}

// matches reports whether name is one of list, or starts with one of its entries
// that end in "*".
func matches(list []string, name string) bool {
	for _, e := range list {
		if p, ok := strings.CutSuffix(e, "*"); ok && strings.HasPrefix(name, p) || e == name {
			return true
		}
	}
	return false
}

// Names lists every metric name or prefix v refers to, for checking them against the
// declared metrics.
func (v Vocabulary) Names() []string {
	var out []string
	out = append(out, v.ServerRates...)
	out = append(out, v.TableLockSessions...)
	out = append(out, v.RowLockSessions...)
	out = append(out, v.AnyLockSessions...)
	if v.RowLockTime != "" {
		out = append(out, v.RowLockTime)
	}
	if v.SessionStates != "" {
		out = append(out, v.SessionStates)
	}
	out = append(out, v.Sampling...)
	out = append(out, v.Static...)
	return out
}
