package mysql

import "github.com/fathom-lab/fathom/internal/collect"

// DefaultCharts are the charts a report draws for a MySQL/MariaDB run, in order: the server's
// throughput and the work stalls are made of.
func (Kind) DefaultCharts() []collect.Chart {
	return []collect.Chart{
		{Title: "Questions and commits", Metrics: []string{mySQLQuestions, mySQLComCommit}},
		{Title: "Threads running", Metrics: []string{mySQLThreadsRunning}},
		{Title: "Dirty pages in the buffer pool", Metrics: []string{mySQLInnoDBBufferPoolPagesDirty}},
		{Title: "Pages flushed", Metrics: []string{mySQLInnoDBBufferPoolPagesFlushed}},
		{Title: "Checkpoint age (% of the limit)", Metrics: []string{mySQLInnoDBCheckpointAgeCapacityPct, mySQLInnoDBCheckpointAgePct}},
		{Title: "Log waits and free-page waits", Metrics: []string{mySQLInnoDBLogWaits, mySQLInnoDBBufferPoolWaitFree}},
		{Title: "Redo log written", Metrics: []string{mySQLInnoDBOsLogWritten}},
		{Title: "Data fsyncs", Metrics: []string{mySQLInnoDBDataFsyncs}},
		{Title: "History list length", Metrics: []string{mySQLInnoDBHistoryListLength}},
		{Title: "Row lock waits", Metrics: []string{mySQLInnoDBRowLockCurrentWaits, mySQLThreadsWaitingForLock}},
		{Title: "Binary log files", Metrics: []string{mySQLBinlogFileSeq}},
	}
}

// WatchColumns are the key figures of `fathom watch` for a MySQL/MariaDB server.
func (Kind) WatchColumns() []collect.WatchColumn {
	return []collect.WatchColumn{
		{Head: "qps", Metrics: []string{mySQLQuestions}, Unit: ""},
		{Head: "commit/s", Metrics: []string{mySQLComCommit}, Unit: ""},
		{Head: "rows_w/s", Metrics: []string{mySQLInnoDBRowsInserted, mySQLInnoDBRowsUpdated, mySQLInnoDBRowsDeleted}, Unit: ""},
		{Head: "running", Metrics: []string{mySQLThreadsRunning}, Unit: ""},
		{Head: "flush/s", Metrics: []string{mySQLInnoDBBufferPoolPagesFlushed}, Unit: ""},
		{Head: "ckpt_age", Metrics: []string{mySQLInnoDBCheckpointAgePct, mySQLInnoDBCheckpointAgeCapacityPct}, Unit: "first%"},
		{Head: "logwait", Metrics: []string{mySQLInnoDBLogWaits}, Unit: ""},
		{Head: "redo/s", Metrics: []string{mySQLInnoDBOsLogWritten}, Unit: "bytes"},
		{Head: "hll", Metrics: []string{mySQLInnoDBHistoryListLength}, Unit: ""},
		{Head: "binlog", Metrics: []string{mySQLBinlogFileSeq}, Unit: "events"},
	}
}
