package mysql

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/fathom-lab/fathom/internal/target"
)

// TestClassify covers the mapping for errors a test server cannot easily produce.
// Real-server tests (TestErrors, TestDeadlock, TestKilled …) cover the common ones.
func TestClassify(t *testing.T) {
	cases := []struct {
		err   error
		class target.Class
		code  string
	}{
		{&mysql.MySQLError{Number: 1213, Message: "Deadlock found"}, target.ClassDeadlock, "1213"},
		{&mysql.MySQLError{Number: 1614}, target.ClassDeadlock, "1614"},
		{&mysql.MySQLError{Number: 1020}, target.ClassSerialization, "1020"},
		{&mysql.MySQLError{Number: 1205}, target.ClassTimeout, "1205"},
		{&mysql.MySQLError{Number: 3024}, target.ClassTimeout, "3024"},
		{&mysql.MySQLError{Number: 1969}, target.ClassTimeout, "1969"},
		{&mysql.MySQLError{Number: 1062}, target.ClassConstraint, "1062"},
		{&mysql.MySQLError{Number: 1452}, target.ClassConstraint, "1452"},
		{&mysql.MySQLError{Number: 1451}, target.ClassConstraint, "1451"},
		{&mysql.MySQLError{Number: 1216}, target.ClassConstraint, "1216"},
		{&mysql.MySQLError{Number: 1217}, target.ClassConstraint, "1217"},
		{&mysql.MySQLError{Number: 4025}, target.ClassConstraint, "4025"},
		{&mysql.MySQLError{Number: 1045}, target.ClassAuth, "1045"},
		{&mysql.MySQLError{Number: 1044}, target.ClassAuth, "1044"},
		{&mysql.MySQLError{Number: 1698}, target.ClassAuth, "1698"},
		{&mysql.MySQLError{Number: 1146}, target.ClassUndefined, "1146"},
		{&mysql.MySQLError{Number: 1054}, target.ClassUndefined, "1054"},
		{&mysql.MySQLError{Number: 1049}, target.ClassUndefined, "1049"},
		{&mysql.MySQLError{Number: 1927}, target.ClassConnection, "1927"},
		{&mysql.MySQLError{Number: 1053}, target.ClassConnection, "1053"},
		{&mysql.MySQLError{Number: 2013}, target.ClassConnection, "2013"},
		{&mysql.MySQLError{Number: 1064, Message: "syntax\nerror"}, target.ClassOther, "1064"},
		{fmt.Errorf("wrapped: %w", &mysql.MySQLError{Number: 1062}), target.ClassConstraint, "1062"},
		{driver.ErrBadConn, target.ClassConnection, ""},
		{mysql.ErrInvalidConn, target.ClassConnection, ""},
		{io.EOF, target.ClassConnection, ""},
		{&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, target.ClassConnection, ""},
		{syscall.EPIPE, target.ClassConnection, ""},
		{mysql.ErrNativePassword, target.ClassAuth, ""},
		{context.Canceled, target.ClassCanceled, ""},
		{context.DeadlineExceeded, target.ClassTimeout, ""},
		{errors.New("something else"), target.ClassOther, ""},
	}
	for _, c := range cases {
		e := classify(c.err, "", "")
		if e.Class != c.class || e.Code != c.code {
			t.Errorf("%v: class %v code %q, want %v %q", c.err, e.Class, e.Code, c.class, c.code)
		}
		if strings.ContainsAny(e.Msg, "\r\n") {
			t.Errorf("%v: message %q is not one line", c.err, e.Msg)
		}
		if !errors.Is(e, c.err) {
			t.Errorf("%v: not wrapped", c.err)
		}
	}
	e := classify(errors.New("dial: user secret-pw-1 at mysql://u:other-pw-2@h/d"), "connecting", "secret-pw-1")
	if strings.Contains(e.Error(), "secret-pw-1") || strings.Contains(e.Error(), "other-pw-2") || !strings.HasPrefix(e.Msg, "connecting: ") {
		t.Errorf("message %q", e.Msg)
	}
}

func TestReturnsRows(t *testing.T) {
	cases := map[string]bool{
		"SELECT 1": true, "  select c from t where id=?": true, "(SELECT 1) UNION (SELECT 2)": true,
		"/* comment */ SELECT 1": true, "-- note\nSELECT 1": true, "# note\nshow tables": true,
		"WITH x AS (SELECT 1) SELECT * FROM x": true, "VALUES (1)": true, "EXPLAIN SELECT 1": true,
		"CALL p()": true, "DELETE FROM t RETURNING id": true, "insert into t values (1) returning id": true,
		"UPDATE t SET k=k+1 WHERE id=?": false, "INSERT INTO t VALUES ('returning')": false,
		"INSERT INTO t (returning_x) VALUES (1)": false, "DELETE FROM t WHERE id=?": false,
		"BEGIN": false, "COMMIT": false, "SET @a = 1": false, "": false, "/* unterminated": false,
		"selectx": false,
	}
	for sql, want := range cases {
		if got := returnsRows(sql); got != want {
			t.Errorf("returnsRows(%q) = %v, want %v", sql, got, want)
		}
	}
}
