package sqlite

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	lib "modernc.org/sqlite/lib"

	"github.com/fathom-lab/fathom/internal/target"
)

// TestClassOf covers the mapping for result codes a test cannot easily produce. The
// real-database tests (TestErrors, TestBusy, TestCancel …) cover the common ones.
func TestClassOf(t *testing.T) {
	cases := []struct {
		code  int
		busy  target.Class
		class target.Class
		name  string
	}{
		{lib.SQLITE_CONSTRAINT_UNIQUE, 0, target.ClassConstraint, "SQLITE_CONSTRAINT_UNIQUE"},
		{lib.SQLITE_CONSTRAINT_FOREIGNKEY, 0, target.ClassConstraint, "SQLITE_CONSTRAINT_FOREIGNKEY"},
		{lib.SQLITE_CONSTRAINT, 0, target.ClassConstraint, "SQLITE_CONSTRAINT"},
		{lib.SQLITE_BUSY, target.ClassTimeout, target.ClassTimeout, "SQLITE_BUSY"},
		{lib.SQLITE_BUSY, target.ClassDeadlock, target.ClassDeadlock, "SQLITE_BUSY"},
		{lib.SQLITE_BUSY_SNAPSHOT, target.ClassTimeout, target.ClassSerialization, "SQLITE_BUSY_SNAPSHOT"},
		{lib.SQLITE_BUSY_RECOVERY, target.ClassDeadlock, target.ClassTimeout, "SQLITE_BUSY_RECOVERY"},
		{lib.SQLITE_BUSY_TIMEOUT, target.ClassDeadlock, target.ClassTimeout, "SQLITE_BUSY_TIMEOUT"},
		{lib.SQLITE_LOCKED, 0, target.ClassTimeout, "SQLITE_LOCKED"},
		{lib.SQLITE_LOCKED_SHAREDCACHE, 0, target.ClassTimeout, "SQLITE_LOCKED_SHAREDCACHE"},
		{lib.SQLITE_INTERRUPT, 0, target.ClassCanceled, "SQLITE_INTERRUPT"},
		{lib.SQLITE_CANTOPEN, 0, target.ClassConnection, "SQLITE_CANTOPEN"},
		{lib.SQLITE_CANTOPEN_ISDIR, 0, target.ClassConnection, "SQLITE_CANTOPEN_ISDIR"},
		{lib.SQLITE_READONLY, 0, target.ClassAuth, "SQLITE_READONLY"},
		{lib.SQLITE_READONLY_DBMOVED, 0, target.ClassAuth, "SQLITE_READONLY_DBMOVED"},
		{lib.SQLITE_PERM, 0, target.ClassAuth, "SQLITE_PERM"},
		{lib.SQLITE_AUTH, 0, target.ClassAuth, "SQLITE_AUTH"},
		{lib.SQLITE_ERROR, 0, target.ClassOther, "SQLITE_ERROR"},
		{lib.SQLITE_IOERR_FSYNC, 0, target.ClassOther, "SQLITE_IOERR_FSYNC"},
		{lib.SQLITE_NOTADB, 0, target.ClassOther, "SQLITE_NOTADB"},
		{lib.SQLITE_CORRUPT, 0, target.ClassOther, "SQLITE_CORRUPT"},
		{lib.SQLITE_FULL, 0, target.ClassOther, "SQLITE_FULL"},
		{lib.SQLITE_IOERR | 99<<8, 0, target.ClassOther, "SQLITE_IOERR(25354)"},
		{1000, 0, target.ClassOther, "SQLITE(1000)"},
	}
	for _, c := range cases {
		if got := classOf(c.code, c.busy); got != c.class {
			t.Errorf("classOf(%d) = %v, want %v", c.code, got, c.class)
		}
		if got := codeName(c.code); got != c.name {
			t.Errorf("codeName(%d) = %q, want %q", c.code, got, c.name)
		}
	}
	// Every extended code is named after its primary code.
	for code, name := range codeNames {
		if p := codeNames[code&primaryMask]; !strings.HasPrefix(name, p) {
			t.Errorf("code %d named %q, primary %q", code, name, p)
		}
	}
}

func TestClassify(t *testing.T) {
	cases := []struct {
		err   error
		class target.Class
	}{
		{context.Canceled, target.ClassCanceled},
		{fmt.Errorf("wrapped: %w", context.Canceled), target.ClassCanceled},
		{context.DeadlineExceeded, target.ClassTimeout},
		{driver.ErrBadConn, target.ClassConnection},
		{errors.New("something\nelse"), target.ClassOther},
	}
	for _, c := range cases {
		e := classify(c.err, "doing", target.ClassTimeout)
		if e.Class != c.class || !strings.HasPrefix(e.Msg, "doing: ") || strings.ContainsAny(e.Msg, "\r\n") {
			t.Errorf("%v: class %v message %q", c.err, e.Class, e.Msg)
		}
		if !errors.Is(e, c.err) {
			t.Errorf("%v: not wrapped", c.err)
		}
	}
	te := target.Errorf(target.ClassAuth, "x", "already classified")
	if classify(te, "", 0) != te {
		t.Error("a *target.Error is not passed through")
	}
	if got := trimCode("database is locked (5) (SQLITE_BUSY)", 5); got != "database is locked" {
		t.Errorf("trimCode: %q", got)
	}
	if got := trimCode("constraint failed: UNIQUE constraint failed: t.id (2067)", 2067); got != "constraint failed: UNIQUE constraint failed: t.id" {
		t.Errorf("trimCode: %q", got)
	}
}

func TestReturnsRowsWrites(t *testing.T) {
	cases := []struct {
		sql          string
		rows, writes bool
	}{
		{"SELECT 1", true, false},
		{"  select c from t where id=?", true, false},
		{"(SELECT 1) UNION (SELECT 2)", true, false},
		{"/* comment */ SELECT 1", true, false},
		{"-- note\nSELECT 1", true, false},
		{"VALUES (1)", true, false},
		{"EXPLAIN QUERY PLAN SELECT 1", true, false},
		{"PRAGMA journal_mode", true, false},
		{"WITH x AS (SELECT 1) SELECT * FROM x", true, false},
		{"WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x", false, true},
		{"WITH x AS (SELECT 1) DELETE FROM t WHERE id IN x RETURNING id", true, true},
		{"DELETE FROM t RETURNING id", true, true},
		{"insert into t values (1) returning id", true, true},
		{"REPLACE INTO t VALUES (1) RETURNING *", true, true},
		{"UPDATE t SET k=k+1 WHERE id=?", false, true},
		{"INSERT INTO t VALUES ('returning')", false, true},
		{`INSERT INTO t ("returning") VALUES (1)`, false, true},
		{"INSERT INTO t (returning_x) VALUES (1)", false, true},
		{"BEGIN", false, true},
		{"CREATE TABLE t (id INTEGER)", false, true},
		{"", false, true},
		{"/* unterminated", false, true},
		{"selectx", false, true},
	}
	for _, c := range cases {
		if got := returnsRows(c.sql); got != c.rows {
			t.Errorf("returnsRows(%q) = %v, want %v", c.sql, got, c.rows)
		}
		if got := writes(c.sql); got != c.writes {
			t.Errorf("writes(%q) = %v, want %v", c.sql, got, c.writes)
		}
	}
}

func TestCountParams(t *testing.T) {
	cases := map[string]int{
		"SELECT 1": 0, "SELECT ?": 1, "INSERT INTO t VALUES (?, ?, ?)": 3,
		"SELECT '?', \"?\", [?], `?` -- ?\n /* ? */ , ?": 1, "SELECT 'it''s ?', ?": 1,
		"SELECT ?1, ?2": -1, "SELECT :name": -1, "SELECT @x, $y": -1, "SELECT a$b FROM t WHERE x = ?": 1,
	}
	for sql, want := range cases {
		if got := countParams(sql); got != want {
			t.Errorf("countParams(%q) = %d, want %d", sql, got, want)
		}
	}
}

func TestReferencedTables(t *testing.T) {
	cases := map[string][]tableName{
		"SELECT 1 FROM pgbench_branches WHERE 1 = 0":                     {{"", "pgbench_branches"}},
		"select * from a, b AS bb, \"c d\" cc JOIN e ON 1 LEFT JOIN f":   {{"", "a"}, {"", "b"}, {"", "c d"}, {"", "e"}, {"", "f"}},
		"INSERT INTO main.t (id) VALUES (1)":                             {{"main", "t"}},
		"INSERT OR REPLACE INTO t SELECT * FROM u":                       {{"", "t"}, {"", "u"}},
		"UPDATE OR ROLLBACK t SET x = (SELECT y FROM u)":                 {{"", "t"}, {"", "u"}},
		"DELETE FROM [old t] WHERE id IN (SELECT id FROM x)":             {{"", "old t"}, {"", "x"}},
		"WITH c(n) AS (SELECT 1), d AS (SELECT 2) SELECT * FROM c, d, t": {{"", "t"}},
		"SELECT * FROM json_each('[1]'), generate_series(1, 3)":          nil,
		"SELECT * FROM sqlite_schema, pragma_table_list":                 nil,
		"SELECT 'FROM x' FROM (SELECT 1)":                                nil,
		"CREATE TABLE t (id INTEGER)":                                    nil,
	}
	for sql, want := range cases {
		if got := referencedTables(sql); !reflect.DeepEqual(got, want) {
			t.Errorf("referencedTables(%q) = %v, want %v", sql, got, want)
		}
	}
}
