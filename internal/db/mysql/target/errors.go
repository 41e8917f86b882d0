package mysql

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"io/fs"
	"net"
	"strconv"
	"strings"
	"syscall"

	"github.com/go-sql-driver/mysql"

	"github.com/fathom-lab/fathom/internal/target"
)

// classOf maps a server error number to a class. Numbers come from MySQL's and
// MariaDB's errmsg files; where the two servers disagree on a number, the one that
// can never be sent by the other server is listed (3024 is unused in MariaDB).
func classOf(errno uint16) target.Class {
	switch errno {
	case 1213, // ER_LOCK_DEADLOCK
		1614: // ER_XA_RBDEADLOCK
		return target.ClassDeadlock
	case 1020, // ER_CHECKREAD: MariaDB innodb_snapshot_isolation write conflict, transaction rolled back
		3101: // ER_TRANSACTION_ROLLBACK_DURING_COMMIT: group replication certification conflict
		return target.ClassSerialization
	case 1205, // ER_LOCK_WAIT_TIMEOUT
		1613, // ER_XA_RBTIMEOUT
		1969, // MariaDB ER_STATEMENT_TIMEOUT (max_statement_time)
		3024, // MySQL ER_QUERY_TIMEOUT (max_execution_time)
		3572: // MySQL ER_LOCK_NOWAIT
		return target.ClassTimeout
	case 1062, // ER_DUP_ENTRY
		1022, // ER_DUP_KEY
		1586, // ER_DUP_ENTRY_WITH_KEY_NAME
		1048, // ER_BAD_NULL_ERROR
		1216, // ER_NO_REFERENCED_ROW
		1217, // ER_ROW_IS_REFERENCED
		1451, // ER_ROW_IS_REFERENCED_2
		1452, // ER_NO_REFERENCED_ROW_2
		1557, // ER_FOREIGN_DUPLICATE_KEY
		1761, // ER_FOREIGN_DUPLICATE_KEY_WITH_CHILD_INFO
		1762, // ER_FOREIGN_DUPLICATE_KEY_WITHOUT_CHILD_INFO
		3819, // MySQL ER_CHECK_CONSTRAINT_VIOLATED
		4025: // MariaDB ER_CONSTRAINT_FAILED
		return target.ClassConstraint
	case 1044, // ER_DBACCESS_DENIED_ERROR
		1045, // ER_ACCESS_DENIED_ERROR
		1698, // ER_ACCESS_DENIED_NO_PASSWORD_ERROR
		1130, // ER_HOST_NOT_PRIVILEGED
		1142, // ER_TABLEACCESS_DENIED_ERROR
		1143, // ER_COLUMNACCESS_DENIED_ERROR
		1227, // ER_SPECIFIC_ACCESS_DENIED_ERROR
		1251, // ER_NOT_SUPPORTED_AUTH_MODE
		1820, // ER_MUST_CHANGE_PASSWORD
		1862, // ER_MUST_CHANGE_PASSWORD_LOGIN
		3118, // MySQL ER_ACCOUNT_HAS_BEEN_LOCKED
		4151: // MariaDB ER_ACCOUNT_HAS_BEEN_LOCKED
		return target.ClassAuth
	case 1146, // ER_NO_SUCH_TABLE
		1054, // ER_BAD_FIELD_ERROR
		1049, // ER_BAD_DB_ERROR
		1051, // ER_BAD_TABLE_ERROR
		1109, // ER_UNKNOWN_TABLE
		1305: // ER_SP_DOES_NOT_EXIST
		return target.ClassUndefined
	case 1927, // MariaDB ER_CONNECTION_KILLED
		1053, // ER_SERVER_SHUTDOWN
		1040, // ER_CON_COUNT_ERROR
		1203, // ER_TOO_MANY_USER_CONNECTIONS
		1129, // ER_HOST_IS_BLOCKED
		1043, // ER_HANDSHAKE_ERROR
		1152, // ER_ABORTING_CONNECTION
		1184, // ER_NEW_ABORTING_CONNECTION
		1158, // ER_NET_READ_ERROR
		1159, // ER_NET_READ_INTERRUPTED
		1160, // ER_NET_ERROR_ON_WRITE
		1161, // ER_NET_WRITE_INTERRUPTED
		2006, // CR_SERVER_GONE_ERROR
		2013: // CR_SERVER_LOST
		return target.ClassConnection
	}
	return target.ClassOther
}

// connectionErr reports whether err means the connection cannot be used any more.
func connectionErr(err error) bool {
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysql.ErrInvalidConn) ||
		errors.Is(err, mysql.ErrMalformPkt) || errors.Is(err, mysql.ErrPktSync) ||
		errors.Is(err, mysql.ErrPktSyncMul) || errors.Is(err, mysql.ErrBusyBuffer) ||
		errors.Is(err, mysql.ErrNoTLS) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, fs.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNABORTED) ||
		errors.Is(err, syscall.ETIMEDOUT) || errors.Is(err, syscall.EHOSTUNREACH) ||
		errors.Is(err, syscall.ENETUNREACH) || errors.Is(err, syscall.ENOENT) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne)
}

// authErr reports the driver's client-side authentication failures.
func authErr(err error) bool {
	return errors.Is(err, mysql.ErrCleartextPassword) || errors.Is(err, mysql.ErrNativePassword) ||
		errors.Is(err, mysql.ErrOldPassword) || errors.Is(err, mysql.ErrUnknownPlugin)
}

// classify wraps err as a *target.Error. what, if not empty, prefixes the message
// ("connecting to 127.0.0.1:3306"). secret is scrubbed from the message.
func classify(err error, what, secret string) *target.Error {
	if err == nil {
		return nil
	}
	var te *target.Error
	if errors.As(err, &te) {
		return te
	}
	e := &target.Error{Class: target.ClassOther, Err: err}
	var me *mysql.MySQLError
	switch {
	case errors.As(err, &me):
		e.Class = classOf(me.Number)
		e.Code = strconv.Itoa(int(me.Number))
		e.Msg = me.Message
	case errors.Is(err, context.Canceled):
		e.Class, e.Msg = target.ClassCanceled, "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		e.Class, e.Msg = target.ClassTimeout, "deadline exceeded"
	case authErr(err):
		e.Class, e.Msg = target.ClassAuth, err.Error()
	case connectionErr(err):
		e.Class, e.Msg = target.ClassConnection, err.Error()
		if errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysql.ErrInvalidConn) || errors.Is(err, io.EOF) {
			e.Msg = "connection lost (" + err.Error() + ")"
		}
	default:
		e.Msg = err.Error()
	}
	e.Msg = oneLine(e.Msg, secret)
	if what != "" {
		e.Msg = what + ": " + e.Msg
	}
	return e
}

// oneLine makes msg a single line without secret in it.
func oneLine(msg, secret string) string {
	if strings.ContainsAny(msg, "\r\n") {
		msg = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(msg)
	}
	if len(secret) >= 4 && strings.Contains(msg, secret) {
		msg = strings.ReplaceAll(msg, secret, "xxxxx")
	}
	return target.RedactString(msg)
}
