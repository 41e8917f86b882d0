package capture

import (
	"reflect"
	"testing"
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
		got, params := rewrite(c.in)
		var cols []string
		for _, p := range params {
			cols = append(cols, p.Column)
		}
		if got != c.out || !reflect.DeepEqual(cols, c.cols) {
			t.Errorf("Rewrite(%q) = %q %q, want %q %q", c.in, got, cols, c.out, c.cols)
		}
	}
	if got := tables("SELECT a FROM `s`.`t1` JOIN t2 ON x WHERE y IN (SELECT z FROM t3)"); !reflect.DeepEqual(got, []string{"t1", "t2", "t3"}) {
		t.Errorf("Tables = %q", got)
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
	st := selectTop(all, &src, Options{Top: 2})
	if len(st) != 2 || st[0].Calls != 60 || st[1].Calls != 30 || src.DroppedByTop != 1 || src.Skipped != 6 {
		t.Errorf("by calls: %+v, %+v", st, src)
	}
	st = selectTop(all, &Source{}, Options{Top: 1, By: "time"})
	if len(st) != 1 || st[0].TotalMs != 50 {
		t.Errorf("by time: %+v", st)
	}
}
