package postgres

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/fathom-lab/fathom/internal/analyze"
	"github.com/fathom-lab/fathom/internal/store"
)

// StallRules are PostgreSQL's stall patterns: checkpoints (ranked after lock waits),
// autovacuum and WAL flush waits (after OS writeback).
func (Kind) StallRules() []analyze.Rule {
	return []analyze.Rule{{Rank: 40, Match: stallPGCheckpoint}, {Rank: 70, Match: stallAutovacuum}, {Rank: 80, Match: stallWALFlush}}
}

// StallVocabulary names PostgreSQL's metrics that the generic stall patterns read:
// committed transactions stand for throughput in a watch session; sessions waiting
// for relation, object and advisory locks are table-level waits, for transaction ids
// and tuples row locks; the WAL size limit and the checkpoint's age are not activity.
func (Kind) StallVocabulary() analyze.Vocabulary {
	return analyze.Vocabulary{
		ServerRates:       []string{pgXactCommit},
		TableLockSessions: []string{pgLockWaitsRelation, pgLockWaitsObject, pgLockWaitsAdvisory},
		RowLockSessions:   []string{pgLockWaitsTransactionid, pgLockWaitsTuple},
		AnyLockSessions:   []string{pgWaitingLock, pgBlockedSessions},
		Static:            []string{pgMaxWALSizeBytes, pgCheckpointAgeSeconds},
	}
}

func stallPGCheckpoint(a analyze.Attributor, st *store.Stall, w []int) (analyze.Match, bool) {
	m := analyze.Match{Key: "checkpoint"}
	var why []string
	req := a.Happened(pgCheckpointsReq, w)
	timed := a.Happened(pgCheckpointsTimed, w)
	if req || timed {
		// A checkpoint that starts in nearly every interval explains nothing.
		share := math.Max(a.BaselineShare(pgCheckpointsReq), a.BaselineShare(pgCheckpointsTimed))
		m.Score += 2 * (1 - share)
		if req {
			m.Metrics = append(m.Metrics, pgCheckpointsReq)
			why = append(why, "a checkpoint was requested because the WAL written since the last one reached max_wal_size")
		} else {
			m.Metrics = append(m.Metrics, pgCheckpointsTimed)
			why = append(why, "a timed checkpoint (checkpoint_timeout) started")
		}
	}
	if d, ok := a.Up(pgCheckpointerBusy, w); ok {
		m.Score += 1
		m.Metrics = append(m.Metrics, pgCheckpointerBusy)
		_ = d
		if len(why) == 0 {
			why = append(why, "the checkpointer was writing")
		}
	}
	if d, ok := a.Up(pgBuffersCheckpoint, w); ok {
		m.Score += 1
		m.Metrics = append(m.Metrics, pgBuffersCheckpoint)
		why = append(why, "buffers written by the checkpoint went "+d.Change())
	}
	for _, n := range []string{pgCheckpointWriteTime, pgCheckpointSyncTime} {
		if _, ok := a.Up(n, w); ok {
			m.Score += 0.5
			m.Metrics = append(m.Metrics, n)
		}
	}
	if d, ok := a.Up(pgWALFPI, w); ok {
		m.Score += 1
		m.Metrics = append(m.Metrics, pgWALFPI)
		why = append(why, "full-page images in WAL went "+d.Change()+" (after a checkpoint the first change to each page writes the whole page)")
	}
	// A checkpoint that began shortly before the window (its full-page images are what
	// slow the stall down) shows as a young checkpoint age. One that began before the
	// run did (the shutdown checkpoint of a restart just before it: age older than the
	// run's clock at the stall's end) is not this run's cause: a slow start is not a
	// stall.
	if !req && !timed {
		if age, ok := a.Minimum(pgCheckpointAgeSeconds, w); ok && age < 2*(st.End-st.Start).Seconds()+5 && age < st.End.Seconds() {
			if _, fpi := a.Up(pgWALFPI, w); fpi || slices.Contains(m.Metrics, pgBuffersCheckpoint) {
				m.Score += 1.5
				m.Metrics = append(m.Metrics, pgCheckpointAgeSeconds)
				why = append(why, fmt.Sprintf("a checkpoint had started %.0fs before", age))
			}
		}
	}
	if v, ok := a.AtLeast(pgWALSinceCheckpointPct, w, 70); ok {
		m.Score += 0.5
		m.Metrics = append(m.Metrics, pgWALSinceCheckpointPct)
		why = append(why, fmt.Sprintf("WAL since the last checkpoint reached %.0f%% of max_wal_size", v))
	}
	if m.Score < 2 || !(req || timed || len(m.Metrics) >= 2) {
		return analyze.Match{}, false
	}
	m.Title = "PostgreSQL checkpoint"
	switch {
	case req:
		m.Title += " (requested: WAL reached max_wal_size)"
	case timed:
		m.Title += " (timed: checkpoint_timeout)"
	}
	m.Explanation = fmt.Sprintf("Throughput fell from %s to %s at %s–%s: %s. Checkpoints write every dirty buffer and fsync the data files, and the full-page images after them multiply WAL volume. Space them out: raise max_wal_size so that checkpoints are timed rather than requested, lengthen checkpoint_timeout, keep checkpoint_completion_target near 0.9; wal_compression shrinks full-page images.",
		analyze.Number(st.Baseline), analyze.Number(st.Mean), analyze.At(st.Start), analyze.At(st.End), strings.Join(why, "; "))
	m.Settings = []store.StallSetting{
		a.Setting("max_wal_size", "WAL between requested checkpoints"),
		a.Setting("checkpoint_timeout", "time between timed checkpoints"),
		a.Setting("checkpoint_completion_target", "share of the interval the writes are spread over"),
		a.Setting("full_page_writes", "whole pages in WAL after each checkpoint"),
		a.Setting("wal_compression", "compresses those full-page images"),
		a.Setting("shared_buffers", "how much can be dirty"),
	}
	return m, true
}

func stallAutovacuum(a analyze.Attributor, st *store.Stall, w []int) (analyze.Match, bool) {
	m := analyze.Match{Key: "autovacuum"}
	d, ok := a.Rise(pgAutovacuumWorkers, st, 1)
	if !ok {
		return analyze.Match{}, false
	}
	m.Score = 2
	m.Metrics = append(m.Metrics, pgAutovacuumWorkers)
	m.Title = "autovacuum"
	m.Explanation = fmt.Sprintf("Throughput fell from %s to %s at %s–%s while %s autovacuum workers ran on average (%s normally): their reads and writes compete with the workload. Throttle them (autovacuum_vacuum_cost_limit, autovacuum_vacuum_cost_delay), or vacuum big tables at quiet times.",
		analyze.Number(st.Baseline), analyze.Number(st.Mean), analyze.At(st.Start), analyze.At(st.End), analyze.Number(d.Mean), analyze.Number(d.Base))
	m.Settings = []store.StallSetting{
		a.Setting("autovacuum_vacuum_cost_limit", "work between pauses (-1: vacuum_cost_limit)"),
		a.Setting("autovacuum_vacuum_cost_delay", "the pause"),
		a.Setting("autovacuum_max_workers", "workers at once"),
	}
	return m, true
}

func stallWALFlush(a analyze.Attributor, st *store.Stall, w []int) (analyze.Match, bool) {
	m := analyze.Match{Key: "wal_flush"}
	for _, n := range []string{pgWaitEventLWLockWalwrite, pgWaitEventIOWalsync, pgWaitEventIOWalwrite, pgWALBuffersFull, pgWALSyncTime, pgWALWriteTime} {
		if _, ok := a.Up(n, w); ok {
			m.Score += 0.75
			m.Metrics = append(m.Metrics, n)
		}
	}
	if m.Score < 1.5 {
		return analyze.Match{}, false
	}
	m.Title = "WAL write and flush waits"
	m.Explanation = fmt.Sprintf("Throughput fell from %s to %s at %s–%s while sessions waited to write or flush WAL. A slow WAL device, a small wal_buffers or bursts of WAL (full-page images after checkpoints, bulk writes) cause this.",
		analyze.Number(st.Baseline), analyze.Number(st.Mean), analyze.At(st.Start), analyze.At(st.End))
	m.Settings = []store.StallSetting{
		a.Setting("wal_buffers", "WAL kept in memory before it must be written"),
		a.Setting("wal_sync_method", "how WAL is flushed"),
		a.Setting("synchronous_commit", "whether commits wait for the flush"),
	}
	return m, true
}
