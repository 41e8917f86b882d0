package capture

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestRewrite(t *testing.T) {
	for _, c := range []struct {
		in, out string
		cols    []string
	}{
		{"SELECT abalance FROM pgbench_accounts WHERE aid = $1", "SELECT abalance FROM pgbench_accounts WHERE aid = :p1", []string{"aid"}},
		{"UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2", "UPDATE pgbench_accounts SET abalance = abalance + :p1 WHERE aid = :p2", []string{"abalance", "aid"}},
		{"INSERT INTO t (a, b, c) VALUES ($1, $2, now())", "INSERT INTO t (a, b, c) VALUES (:p1, :p2, now())", []string{"a", "b"}},
		{"SELECT c FROM `sbtest1` WHERE `id` BETWEEN ? AND ? ORDER BY c LIMIT ?", "SELECT c FROM `sbtest1` WHERE `id` BETWEEN :p1 AND :p2 ORDER BY c LIMIT :p3", []string{"id", "id", ""}},
		{"SELECT x FROM t a WHERE a.k IN ($1, $2) AND $3 < a.m", "SELECT x FROM t a WHERE a.k IN (:p1, :p2) AND :p3 < a.m", []string{"k", "k", "m"}},
		{"SELECT '$1 ?' FROM t WHERE v = $1 AND w = $1", "SELECT '$1 ?' FROM t WHERE v = :p1 AND w = :p1", []string{"v"}},
	} {
		got, params := Rewrite(c.in)
		var cols []string
		for _, p := range params {
			cols = append(cols, p.Column)
		}
		if got != c.out || !reflect.DeepEqual(cols, c.cols) {
			t.Errorf("Rewrite(%q) = %q %q, want %q %q", c.in, got, cols, c.out, c.cols)
		}
	}
	if got := Tables("SELECT a FROM `s`.`t1` JOIN t2 ON x WHERE y IN (SELECT z FROM t3)"); !reflect.DeepEqual(got, []string{"t1", "t2", "t3"}) {
		t.Errorf("Tables = %q", got)
	}
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

func TestSelect(t *testing.T) {
	all := []Statement{
		{SQL: "BEGIN", Calls: 100},
		{SQL: "SELECT a FROM t WHERE id = $1", Calls: 60, TotalMs: 1},
		{SQL: "UPDATE t SET a = $1 WHERE id = $2", Calls: 30, TotalMs: 50},
		{SQL: "SELECT count(*) FROM pg_stat_activity", Calls: 500},
		{SQL: "SELECT $1 FROM t WHERE $2 = $3", Calls: 5},
		{SQL: "/* fathom capture */ SELECT min(id) FROM t", Calls: 5},
		{SQL: "SELECT version()", Calls: 5},
		{SQL: "SELECT a FROM t WHERE id IN (...", Calls: 5},
		{SQL: "DELETE FROM t WHERE id = $1", Calls: 10, TotalMs: 2},
	}
	src := Source{}
	st := Select(all, &src, Options{Top: 2})
	if len(st) != 2 || st[0].Calls != 60 || st[1].Calls != 30 || src.DroppedByTop != 1 || src.Skipped != 6 {
		t.Errorf("by calls: %+v, %+v", st, src)
	}
	st = Select(all, &Source{}, Options{Top: 1, By: "time"})
	if len(st) != 1 || st[0].TotalMs != 50 {
		t.Errorf("by time: %+v", st)
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
	ev, src, err := readSlowLog(path, Source{})
	if err != nil {
		t.Fatal(err)
	}
	st := statementsOf(ev)
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
	w := Build(context.Background(), nil, st, nil, src, Options{})
	var b strings.Builder
	if err := w.Write(&b); err != nil || !strings.Contains(b.String(), "sql: \"SELECT c FROM sbtest1 WHERE id=:p1\"") {
		t.Errorf("written:\n%s", b.String())
	}
}
