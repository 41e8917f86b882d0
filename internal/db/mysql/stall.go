package mysql

import (
	"fmt"
	"strings"

	"github.com/fathom-lab/fathom/internal/analyze"
	"github.com/fathom-lab/fathom/internal/store"
)

// StallRules are MySQL's and MariaDB's stall patterns: InnoDB checkpoints and binary
// log rotations (ranked after lock waits, before OS writeback).
func (Kind) StallRules() []analyze.Rule {
	return []analyze.Rule{{Rank: 40, Match: stallInnoDBCheckpoint}, {Rank: 50, Match: stallBinlogRotation}, {Rank: 30, LockWaits: stallLockWaits}}
}

// StallVocabulary names MySQL's and MariaDB's metrics that the generic stall patterns
// read: statements stand for throughput in a watch session; sessions waiting for a
// table's metadata lock are table-level waits, InnoDB's lock waits row-level ones;
// SHOW statements are fathom's own sampling; sizes and the uptime are not activity.
func (Kind) StallVocabulary() analyze.Vocabulary {
	return analyze.Vocabulary{
		ServerRates:       []string{mySQLQuestions, mySQLQueries},
		TableLockSessions: []string{mySQLThreadsWaitingForLock},
		RowLockSessions:   []string{mySQLInnoDBRowLockCurrentWaits, mySQLInnoDBTransactionsInLockWait},
		RowLockTime:       mySQLInnoDBRowLockTime,
		SessionStates:     familyMySQLThreadState,
		Sampling:          []string{familyMySQLStatus + "Com_show_*"},
		Static: []string{mySQLInnoDBRedoCapacityBytes, mySQLUptime + "*", mySQLInnoDBBufferPoolPagesTotal + "*",
			mySQLInnoDBCheckpointMaxAge, mySQLInnoDBPageSize},
	}
}

// stallLockWaits words the generic lock-wait pattern for MySQL and MariaDB: metadata
// locks (lock_wait_timeout) when table-level waits dominated, InnoDB row locks
// (innodb_lock_wait_timeout) otherwise.
func stallLockWaits(a analyze.Attributor, tableLevel bool, lead string) (string, string, []store.StallSetting) {
	if tableLevel {
		bound := "lock_wait_timeout bounds how long each of them waits"
		if v := a.Settings()["lock_wait_timeout"]; v != "" {
			bound += " (" + v + " s here)"
		}
		return "metadata lock waits: sessions blocked by LOCK TABLES, FLUSH TABLES WITH READ LOCK or DDL",
			lead + " A session held or queued for a table's metadata lock (LOCK TABLES, FLUSH TABLES WITH READ LOCK, ALTER or another DDL, often itself waiting behind a long transaction) and every statement on the table queued behind it. " + bound + ": run DDL with a short session lock_wait_timeout so that it gives up instead of blocking everyone, and keep transactions short. `fathom snapshot` lists the waiting sessions.",
			[]store.StallSetting{a.Setting("lock_wait_timeout", "how long a statement waits for a metadata lock (LOCK TABLES, FTWRL, DDL)")}
	}
	return "row lock waits: transactions blocked by other transactions' row locks",
		lead + " Transactions waited for rows locked by other transactions (a long or bulk write, hot rows). innodb_lock_wait_timeout bounds each wait; shorter transactions and writing hot rows in a consistent order reduce them. `fathom snapshot` lists blocked transactions and their blockers.",
		[]store.StallSetting{a.Setting("innodb_lock_wait_timeout", "how long a transaction waits for a row lock")}
}

func stallInnoDBCheckpoint(a analyze.Attributor, st *store.Stall, w []int) (analyze.Match, bool) {
	m := analyze.Match{Key: "innodb_checkpoint"}
	var why []string
	maria := stallIsMariaDB(a.Version())
	// The checkpoint age against the redo log's size (LSN minus the last checkpoint,
	// over innodb_log_file_size on MariaDB, innodb_redo_log_capacity on MySQL 8.0.30+),
	// or, where that is unknown, against MariaDB's Innodb_checkpoint_max_age (the age
	// at which it flushes synchronously).
	redo := "innodb_redo_log_capacity"
	if maria || !stallMySQLAtLeast(a.Version(), 8, 0, 30) {
		redo = "innodb_log_file_size"
	}
	if v, ok := a.AtLeast(mySQLInnoDBCheckpointAgeCapacityPct, w, 75); ok {
		m.Score += 1.5
		m.Metrics = append(m.Metrics, mySQLInnoDBCheckpointAgeCapacityPct)
		why = append(why, fmt.Sprintf("the checkpoint age reached %.0f%% of the redo log (%s=%s; InnoDB flushes furiously from about 75%% and stalls writers near the limit)", v, redo, stallSettingText(a.Settings()[redo])))
	} else if v, ok := a.AtLeast(mySQLInnoDBCheckpointAgePct, w, 75); ok {
		m.Score += 1.5
		m.Metrics = append(m.Metrics, mySQLInnoDBCheckpointAgePct)
		why = append(why, fmt.Sprintf("the checkpoint age reached %.0f%% of Innodb_checkpoint_max_age, where InnoDB flushes synchronously and writers wait", v))
	}
	if d, ok := a.Up(mySQLInnoDBBufferPoolPagesFlushed, w); ok {
		m.Score += 1
		m.Metrics = append(m.Metrics, mySQLInnoDBBufferPoolPagesFlushed)
		why = append(why, "pages flushed went "+d.Change())
	}
	for _, n := range []string{mySQLInnoDBLogWaits, mySQLInnoDBBufferPoolWaitFree} {
		if a.Happened(n, w) && a.BaselineShare(n) < 0.5 {
			m.Score += 1
			m.Metrics = append(m.Metrics, n)
			why = append(why, strings.TrimPrefix(n, familyMySQLStatus)+" increased")
		}
	}
	if _, ok := a.Up(mySQLInnoDBDataPendingFsyncs, w); ok {
		m.Score += 0.5
		m.Metrics = append(m.Metrics, mySQLInnoDBDataPendingFsyncs)
	}
	if m.Score < 2 {
		return analyze.Match{}, false
	}
	m.Title = "InnoDB checkpoint: flushing to keep the checkpoint age within the redo log"
	size := "A larger redo log (innodb_redo_log_capacity)"
	switch {
	case maria:
		size = "A larger redo log (innodb_log_file_size; MariaDB 10.5+ has a single redo log file)"
	case redo == "innodb_log_file_size":
		size = "A larger redo log (innodb_log_file_size × innodb_log_files_in_group)"
	}
	m.Explanation = fmt.Sprintf("Throughput fell from %s to %s at %s–%s: %s. When the redo log fills faster than the page cleaners flush, InnoDB flushes dirty pages in bursts and writers wait. %s and an innodb_io_capacity that matches the storage smooth this out.",
		analyze.Number(st.Baseline), analyze.Number(st.Mean), analyze.At(st.Start), analyze.At(st.End), strings.Join(why, "; "), size)
	m.Settings = []store.StallSetting{a.Setting(redo, "the redo log's size")}
	if redo == "innodb_log_file_size" && !maria {
		m.Settings = append(m.Settings, a.Setting("innodb_log_files_in_group", "redo log files"))
	}
	m.Settings = append(m.Settings,
		a.Setting("innodb_io_capacity", "background flushing rate"),
		a.Setting("innodb_io_capacity_max", "flushing rate when behind"),
		a.Setting("innodb_max_dirty_pages_pct", "dirty pages allowed"),
		a.Setting("innodb_adaptive_flushing", "flush ahead of the redo log"),
	)
	return m, true
}

// stallSettingText is a recorded setting's value, or "not recorded".
func stallSettingText(v string) string {
	if v == "" {
		return "not recorded"
	}
	return v
}

func stallBinlogRotation(a analyze.Attributor, st *store.Stall, w []int) (analyze.Match, bool) {
	if !a.Happened(mySQLBinlogFileSeq, w) || a.BaselineShare(mySQLBinlogFileSeq) > 0.5 {
		return analyze.Match{}, false
	}
	m := analyze.Match{Key: "binlog_rotation", Score: 2.5, Metrics: []string{mySQLBinlogFileSeq}}
	m.Title = "binary log rotation"
	m.Explanation = fmt.Sprintf("Throughput fell from %s to %s at %s–%s as the binary log rotated to a new file: the old file is synced and closed while commits wait. Fewer, larger rotations (max_binlog_size) or a less strict sync_binlog reduce these pauses.",
		analyze.Number(st.Baseline), analyze.Number(st.Mean), analyze.At(st.Start), analyze.At(st.End))
	m.Settings = []store.StallSetting{
		a.Setting("max_binlog_size", "size at which the binary log rotates"),
		a.Setting("sync_binlog", "how often the binary log is fsynced"),
	}
	return m, true
}

// stallIsMariaDB reports whether a recorded server version is MariaDB's.
func stallIsMariaDB(version string) bool {
	return strings.Contains(strings.ToLower(version), "mariadb")
}

// stallMySQLAtLeast reports whether a MySQL (not MariaDB) version is at least
// major.minor.patch; unknown versions are not.
func stallMySQLAtLeast(version string, major, minor, patch int) bool {
	if stallIsMariaDB(version) {
		return false
	}
	var v [3]int
	n, _ := fmt.Sscanf(version, "%d.%d.%d", &v[0], &v[1], &v[2])
	if n < 2 {
		return false
	}
	w := [3]int{major, minor, patch}
	for i := range v {
		if v[i] != w[i] {
			return v[i] > w[i]
		}
	}
	return true
}
