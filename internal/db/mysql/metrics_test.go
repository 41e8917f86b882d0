package mysql

import (
	"slices"
	"testing"

	"github.com/fathom-lab/fathom/internal/sample"
)

func TestMySQLKinds(t *testing.T) {
	for name, want := range map[string]sample.Kind{
		"Questions": sample.Counter, "Com_select": sample.Counter, "Threads_running": sample.Gauge, "Innodb_buffer_pool_pages_dirty": sample.Gauge,
		"Innodb_buffer_pool_pages_flushed": sample.Counter, "Innodb_data_pending_fsyncs": sample.Gauge, "Innodb_os_log_written": sample.Counter,
		"Innodb_history_list_length": sample.Gauge, "Innodb_lsn_current": sample.Counter, "Uptime": sample.Gauge, "Innodb_row_lock_time": sample.Counter,
		"Innodb_row_lock_current_waits": sample.Gauge, "Open_tables": sample.Gauge, "Opened_tables": sample.Counter,
	} {
		if got := mySQLStatusKind(name); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
}

// A snapshot's Activity line: statements, redo written, rows read.
func TestActivity(t *testing.T) {
	parts, facts := collectSide{}.Activity(map[string]float64{mySQLQuestions: 50, mySQLInnoDBOsLogWritten: 2048, mySQLInnoDBRowsRead: 7})
	if want := []string{"50 statements/s", "redo 2.0 kB/s", "7 rows read/s"}; !slices.Equal(parts, want) || facts != nil {
		t.Errorf("parts %q, facts %q; want %q", parts, facts, want)
	}
}
