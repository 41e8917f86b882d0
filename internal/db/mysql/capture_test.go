package mysql

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/capture"
)

// digestSQL makes performance_schema's digest texts runnable.
func TestDigestSQL(t *testing.T) {
	for in, want := range map[string]string{
		"SELECT SUM ( `k` ) FROM `sbtest1` WHERE ID IN (...) ":                            "SELECT SUM(`k`) FROM `sbtest1` WHERE ID IN(?)",
		"INSERT INTO `seqrand_rand` ( ID , `k` , `v` ) VALUES ( ?, ... , (_charset) ? ) ": "INSERT INTO `seqrand_rand`(ID , `k` , `v`) VALUES(?, ?, ?)",
		"SELECT ID , `k` , `v` FROM `seqrand_seq` WHERE ID >= ? ORDER BY ID LIMIT ? ":     "SELECT ID , `k` , `v` FROM `seqrand_seq` WHERE ID >= ? ORDER BY ID LIMIT ?",
		"SELECT `c` FROM `t` WHERE `a` = _utf8mb4 ? AND b IN ( ?, ... )":                  "SELECT `c` FROM `t` WHERE `a` = ? AND b IN(?)",
	} {
		if got := digestSQL(in); got != want {
			t.Errorf("digestSQL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSlowLog(t *testing.T) {
	log := `/usr/sbin/mariadbd, Version: 10.11.19-MariaDB (Debian). started with:
Tcp port: 3306  Unix socket: /run/mysqld/mysqld.sock
Time		    Id Command	Argument
# Time: 231123 23:50:01
# User@Host: root[root] @ localhost []
# Thread_id: 8  Schema: bench  QC_hit: No
# Query_time: 0.000200  Lock_time: 0.000045  Rows_sent: 1  Rows_examined: 1
use bench;
SET timestamp=1700000000;
SELECT c FROM sbtest1 WHERE id=42;
# User@Host: root[root] @ localhost []
# Query_time: 0.000400  Lock_time: 0.000045  Rows_sent: 1  Rows_examined: 1
SET timestamp=1700000060;
SELECT c FROM sbtest1 WHERE id=7;
# User@Host: root[root] @ localhost []
# Query_time: 0.001000  Lock_time: 0.0  Rows_sent: 0  Rows_examined: 0
SET timestamp=1700000061;
UPDATE sbtest1 SET c='it''s', pad=_binary'x\'y' WHERE id=3;
`
	path := filepath.Join(t.TempDir(), "slow.log")
	if err := os.WriteFile(path, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	// Read the log as `fathom capture --slow-log` does, through the kind's reader.
	st, ev, src, err := capture.Read(context.Background(), nil, "mysql", capture.Options{SlowLog: path, Reader: Kind{}.CaptureReader()})
	if err != nil {
		t.Fatal(err)
	}
	if ev[0].Session != "8" || !reflect.DeepEqual(ev[0].Values, []string{"42"}) || !reflect.DeepEqual(ev[2].Values, []string{"it's", "x'y", "3"}) {
		t.Errorf("events: %+v", ev)
	}
	if len(st) != 2 || st[0].SQL != "SELECT c FROM sbtest1 WHERE id=?" || st[0].Calls != 2 || st[0].TotalMs < 0.59 || st[0].TotalMs > 0.61 ||
		st[1].SQL != "UPDATE sbtest1 SET c=?, pad=? WHERE id=?" {
		t.Errorf("statements: %+v", st)
	}
	if !src.Since.Equal(time.Unix(1700000000, 0)) || !src.Until.Equal(time.Unix(1700000061, 0)) {
		t.Errorf("window %s to %s", src.Since, src.Until)
	}
	w := capture.Build(context.Background(), nil, st, nil, src, capture.Options{})
	var b strings.Builder
	if err := w.Write(&b); err != nil || !strings.Contains(b.String(), "sql: \"SELECT c FROM sbtest1 WHERE id=:p1\"") {
		t.Errorf("written:\n%s", b.String())
	}
}
