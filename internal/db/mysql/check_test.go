package mysql

import (
	"os"
	"path/filepath"
	"testing"
)

func TestInnoDBStatus(t *testing.T) {
	for _, tt := range []struct {
		file string
		want map[string]float64
	}{
		{"innodb-mariadb-10.11.txt", map[string]float64{"innodb_history_list_length": 0, "innodb_checkpoint_age": 356,
			"innodb_lsn": 44760, "innodb_pending_fsyncs": 0, "innodb_pending_reads": 0, "innodb_pending_writes": 0}},
		{"innodb-mysql-8.0.txt", map[string]float64{"innodb_history_list_length": 1234, "innodb_checkpoint_age": 1000,
			"innodb_pending_aio_reads": 3, "innodb_pending_aio_writes": 2, "innodb_pending_log_fsyncs": 1,
			"innodb_pending_buffer_pool_fsyncs": 4, "innodb_pending_fsyncs": 5, "innodb_pending_reads": 7, "innodb_pending_writes": 6}},
	} {
		b, err := os.ReadFile(filepath.Join("testdata", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		got := parseInnoDBStatus(string(b))
		for k, v := range tt.want {
			if g, ok := got[k]; !ok || g != v {
				t.Errorf("%s: %s = %v (present %v), want %v", tt.file, k, g, ok, v)
			}
		}
	}
}
