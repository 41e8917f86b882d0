package mysql

import (
	"slices"
	"testing"

	"github.com/fathom-lab/fathom/internal/metric"
)

func TestMySQLKinds(t *testing.T) {
	for name, want := range map[string]metric.Kind{
		"Questions": metric.Counter, "Com_select": metric.Counter, "Threads_running": metric.Gauge, "Innodb_buffer_pool_pages_dirty": metric.Gauge,
		"Innodb_buffer_pool_pages_flushed": metric.Counter, "Innodb_data_pending_fsyncs": metric.Gauge, "Innodb_os_log_written": metric.Counter,
		"Innodb_history_list_length": metric.Gauge, "Innodb_lsn_current": metric.Counter, "Uptime": metric.Gauge, "Innodb_row_lock_time": metric.Counter,
		"Innodb_row_lock_current_waits": metric.Gauge, "Open_tables": metric.Gauge, "Opened_tables": metric.Counter,
	} {
		if got := MySQLStatusKind(name); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
}

// A snapshot's Activity line: statements, redo written, rows read.
func TestActivity(t *testing.T) {
	parts, facts := collectSide{}.Activity(map[string]float64{MySQLQuestions: 50, MySQLInnoDBOsLogWritten: 2048, MySQLInnoDBRowsRead: 7})
	if want := []string{"50 statements/s", "redo 2.0 kB/s", "7 rows read/s"}; !slices.Equal(parts, want) || facts != nil {
		t.Errorf("parts %q, facts %q; want %q", parts, facts, want)
	}
}
