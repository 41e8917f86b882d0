package analyze

import (
	"sort"
	"time"

	"github.com/fathom-lab/fathom/internal/store"
)

// What a database kind's own stall patterns (its bundle in internal/db/KIND gives
// them, and callers hand them in with StallInput.Rules) read and return. The generic
// patterns (server stopped answering, restart, lock waits, OS writeback, client host
// saturated) are in this package; checkpoints, the binary log, autovacuum, WAL flushes
// and Redis's background saves are their kinds'.

// Rule is a kind's stall pattern, or its wording of a generic one.
type Rule struct {
	// Rank places the rule among the others: of causes that score the same, the one
	// ranked lower is named first. The generic patterns rank 10 (server stopped
	// answering), 20 (restart), 30 (lock waits), 60 (OS writeback) and 90 (client
	// host saturated).
	Rank int
	// Match decides whether the pattern explains the stall st, whose intervals are
	// window.
	Match func(a Attributor, st *store.Stall, window []int) (Match, bool)
	// LockWaits, set instead of Match, words the generic lock-wait pattern for the
	// kind: its title, explanation and governing settings, given whether table-level
	// locks dominated and the lead sentence that names the evidence. Without one the
	// pattern speaks of lock_timeout and deadlock_timeout.
	LockWaits func(a Attributor, tableLevel bool, lead string) (title, explanation string, settings []store.StallSetting)
}

// Match is what a pattern found: its cause's key and title, an explanation that names
// the evidence and the fix, a score (higher: more likely the cause), the metrics it
// rests on and the settings that govern it.
type Match struct {
	Key, Title, Explanation string
	Score                   float64
	Metrics                 []string
	Settings                []store.StallSetting
}

// duringStall summarises a metric over a stall's intervals: its mean (a rate for counters),
// its extreme in the direction of the change, its maximum, and the baseline's median.
type duringStall struct {
	Mean, Peak, Max, Base float64
	d                     stallDuring
}

// Change says how the metric moved ("from 2/s to 40/s").
func (d duringStall) Change() string { return stallChange(d.d) }

// Attributor is a pattern's view of the run around a stall.
type Attributor struct{ a *stallAttributor }

// Version and Settings are the run's server version and recorded settings (server
// and vm.*).
func (x Attributor) Version() string             { return x.a.in.Version }
func (x Attributor) Settings() map[string]string { return x.a.in.Settings }

// Happened says whether a counter moved in window.
func (x Attributor) Happened(name string, window []int) bool { return x.a.happened(name, window) }

// BaselineShare is the share of baseline intervals in which a counter moved.
func (x Attributor) BaselineShare(name string) float64 { return x.a.baselineShare(name) }

// Up is the metric in window when it rose unusually (MinScore robust spreads).
func (x Attributor) Up(name string, window []int) (duringStall, bool) {
	return during(x.a.up(name, window))
}

// Rise is the metric over the stall when it rose by at least minDelta over the
// baseline.
func (x Attributor) Rise(name string, st *store.Stall, minDelta float64) (duringStall, bool) {
	return during(x.a.rise(name, st, minDelta))
}

// During is the metric over window, however it moved.
func (x Attributor) During(name string, window []int) (duringStall, bool) {
	return during(x.a.during(name, window))
}

// AtLeast is the metric's highest value in window when it reached v.
func (x Attributor) AtLeast(name string, window []int, v float64) (float64, bool) {
	return x.a.atLeast(name, window, v)
}

// Minimum is the metric's lowest value in window.
func (x Attributor) Minimum(name string, window []int) (float64, bool) {
	return x.a.minimum(name, window)
}

// Setting is a governing setting as recorded, with a hint for the reader.
func (x Attributor) Setting(name, hint string) store.StallSetting { return x.a.setting(name, hint) }

func during(d stallDuring, ok bool) (duringStall, bool) {
	out := duringStall{Mean: d.mean, Peak: d.peak, Max: d.max, d: d}
	if d.ms != nil {
		out.Base = d.ms.base
	}
	return out, ok
}

// Number, Bytes and At format figures in explanations as the generic patterns do.
func Number(v float64) string   { return stallNum(v) }
func Bytes(v float64) string    { return stallBytes(v) }
func At(d time.Duration) string { return stallAt(d) }

// rule is a pattern of this package or of the run's kind, ranked.
type rule struct {
	rank  int
	match func(a *stallAttributor, st *store.Stall, window []int, reconnects int64) (stallMatch, bool)
}

// rules are the generic patterns and in.Rules, by rank.
func (a *stallAttributor) rules() []rule {
	out := []rule{{10, stallUnresponsive}, {20, stallRestart}, {30, stallLockWaits}, {60, stallOSWriteback}, {90, stallClientHost}}
	for _, r := range a.in.Rules {
		if r.Match == nil {
			continue
		}
		m := r.Match
		out = append(out, rule{r.Rank, func(a *stallAttributor, st *store.Stall, w []int, _ int64) (stallMatch, bool) {
			x, ok := m(Attributor{a}, st, w)
			return stallMatch{key: x.Key, title: x.Title, explanation: x.Explanation, score: x.Score, metrics: x.Metrics, settings: x.Settings}, ok
		}})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].rank < out[j].rank })
	return out
}
