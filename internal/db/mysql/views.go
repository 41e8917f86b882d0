package mysql

import "github.com/fathom-lab/fathom/internal/collect"

// DefaultCharts are the charts a report draws for a MySQL/MariaDB run, in order: the server's
// throughput and the work stalls are made of.
func (Kind) DefaultCharts() []collect.Chart {
	return []collect.Chart{
		{Title: "Questions and commits", Metrics: []string{MySQLQuestions, MySQLComCommit}},
		{Title: "Threads running", Metrics: []string{MySQLThreadsRunning}},
		{Title: "Dirty pages in the buffer pool", Metrics: []string{MySQLInnoDBBufferPoolPagesDirty}},
		{Title: "Pages flushed", Metrics: []string{MySQLInnoDBBufferPoolPagesFlushed}},
		{Title: "Checkpoint age (% of the limit)", Metrics: []string{MySQLInnoDBCheckpointAgeCapacityPct, MySQLInnoDBCheckpointAgePct}},
		{Title: "Log waits and free-page waits", Metrics: []string{MySQLInnoDBLogWaits, MySQLInnoDBBufferPoolWaitFree}},
		{Title: "Redo log written", Metrics: []string{MySQLInnoDBOsLogWritten}},
		{Title: "Data fsyncs", Metrics: []string{MySQLInnoDBDataFsyncs}},
		{Title: "History list length", Metrics: []string{MySQLInnoDBHistoryListLength}},
		{Title: "Row lock waits", Metrics: []string{MySQLInnoDBRowLockCurrentWaits, MySQLThreadsWaitingForLock}},
		{Title: "Binary log files", Metrics: []string{MySQLBinlogFileSeq}},
	}
}

// WatchColumns are the key figures of `fathom watch` for a MySQL/MariaDB server.
func (Kind) WatchColumns() []collect.WatchColumn {
	return []collect.WatchColumn{
		{Head: "qps", Metrics: []string{MySQLQuestions}, Unit: ""},
		{Head: "commit/s", Metrics: []string{MySQLComCommit}, Unit: ""},
		{Head: "rows_w/s", Metrics: []string{MySQLInnoDBRowsInserted, MySQLInnoDBRowsUpdated, MySQLInnoDBRowsDeleted}, Unit: ""},
		{Head: "running", Metrics: []string{MySQLThreadsRunning}, Unit: ""},
		{Head: "flush/s", Metrics: []string{MySQLInnoDBBufferPoolPagesFlushed}, Unit: ""},
		{Head: "ckpt_age", Metrics: []string{MySQLInnoDBCheckpointAgePct, MySQLInnoDBCheckpointAgeCapacityPct}, Unit: "first%"},
		{Head: "logwait", Metrics: []string{MySQLInnoDBLogWaits}, Unit: ""},
		{Head: "redo/s", Metrics: []string{MySQLInnoDBOsLogWritten}, Unit: "bytes"},
		{Head: "hll", Metrics: []string{MySQLInnoDBHistoryListLength}, Unit: ""},
		{Head: "binlog", Metrics: []string{MySQLBinlogFileSeq}, Unit: "events"},
	}
}
