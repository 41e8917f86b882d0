package sqlite

import (
	"context"
	"database/sql/driver"
	"errors"
	"strconv"
	"strings"

	msqlite "modernc.org/sqlite"
	lib "modernc.org/sqlite/lib"

	"github.com/fathom-lab/fathom/internal/target"
)

// Result codes have a primary code in the low byte and details in the higher bytes
// (extended result codes, which the driver turns on for every connection).
const primaryMask = 0xff

// classOf maps an extended result code to a class. busy is what a SQLITE_BUSY means on
// the connection that got it, which the code alone does not say (see busyClass).
func classOf(code int, busy target.Class) target.Class {
	switch code {
	case lib.SQLITE_BUSY_SNAPSHOT:
		// A read transaction's snapshot is older than the newest commit, so it cannot
		// become a write transaction (WAL mode): could not serialize access.
		return target.ClassSerialization
	case lib.SQLITE_BUSY_RECOVERY, lib.SQLITE_BUSY_TIMEOUT:
		return target.ClassTimeout
	}
	switch code & primaryMask {
	case lib.SQLITE_CONSTRAINT:
		return target.ClassConstraint
	case lib.SQLITE_BUSY:
		return busy
	case lib.SQLITE_LOCKED:
		// Shared-cache table locks and conflicts within one connection; the driver
		// already waited for SQLITE_LOCKED_SHAREDCACHE.
		return target.ClassTimeout
	case lib.SQLITE_INTERRUPT:
		return target.ClassCanceled
	case lib.SQLITE_CANTOPEN:
		return target.ClassConnection
	case lib.SQLITE_PERM, lib.SQLITE_AUTH, lib.SQLITE_READONLY:
		return target.ClassAuth
	}
	return target.ClassOther
}

// codeNames names the result codes, primary and extended, as sqlite3.h does.
var codeNames = map[int]string{
	lib.SQLITE_OK: "SQLITE_OK", lib.SQLITE_ERROR: "SQLITE_ERROR", lib.SQLITE_INTERNAL: "SQLITE_INTERNAL",
	lib.SQLITE_PERM: "SQLITE_PERM", lib.SQLITE_ABORT: "SQLITE_ABORT", lib.SQLITE_BUSY: "SQLITE_BUSY",
	lib.SQLITE_LOCKED: "SQLITE_LOCKED", lib.SQLITE_NOMEM: "SQLITE_NOMEM", lib.SQLITE_READONLY: "SQLITE_READONLY",
	lib.SQLITE_INTERRUPT: "SQLITE_INTERRUPT", lib.SQLITE_IOERR: "SQLITE_IOERR", lib.SQLITE_CORRUPT: "SQLITE_CORRUPT",
	lib.SQLITE_NOTFOUND: "SQLITE_NOTFOUND", lib.SQLITE_FULL: "SQLITE_FULL", lib.SQLITE_CANTOPEN: "SQLITE_CANTOPEN",
	lib.SQLITE_PROTOCOL: "SQLITE_PROTOCOL", lib.SQLITE_EMPTY: "SQLITE_EMPTY", lib.SQLITE_SCHEMA: "SQLITE_SCHEMA",
	lib.SQLITE_TOOBIG: "SQLITE_TOOBIG", lib.SQLITE_CONSTRAINT: "SQLITE_CONSTRAINT", lib.SQLITE_MISMATCH: "SQLITE_MISMATCH",
	lib.SQLITE_MISUSE: "SQLITE_MISUSE", lib.SQLITE_NOLFS: "SQLITE_NOLFS", lib.SQLITE_AUTH: "SQLITE_AUTH",
	lib.SQLITE_FORMAT: "SQLITE_FORMAT", lib.SQLITE_RANGE: "SQLITE_RANGE", lib.SQLITE_NOTADB: "SQLITE_NOTADB",
	lib.SQLITE_NOTICE: "SQLITE_NOTICE", lib.SQLITE_WARNING: "SQLITE_WARNING",

	lib.SQLITE_ERROR_MISSING_COLLSEQ: "SQLITE_ERROR_MISSING_COLLSEQ", lib.SQLITE_ERROR_RETRY: "SQLITE_ERROR_RETRY",
	lib.SQLITE_ERROR_SNAPSHOT: "SQLITE_ERROR_SNAPSHOT",

	lib.SQLITE_IOERR_READ: "SQLITE_IOERR_READ", lib.SQLITE_IOERR_SHORT_READ: "SQLITE_IOERR_SHORT_READ",
	lib.SQLITE_IOERR_WRITE: "SQLITE_IOERR_WRITE", lib.SQLITE_IOERR_FSYNC: "SQLITE_IOERR_FSYNC",
	lib.SQLITE_IOERR_DIR_FSYNC: "SQLITE_IOERR_DIR_FSYNC", lib.SQLITE_IOERR_TRUNCATE: "SQLITE_IOERR_TRUNCATE",
	lib.SQLITE_IOERR_FSTAT: "SQLITE_IOERR_FSTAT", lib.SQLITE_IOERR_UNLOCK: "SQLITE_IOERR_UNLOCK",
	lib.SQLITE_IOERR_RDLOCK: "SQLITE_IOERR_RDLOCK", lib.SQLITE_IOERR_DELETE: "SQLITE_IOERR_DELETE",
	lib.SQLITE_IOERR_NOMEM: "SQLITE_IOERR_NOMEM", lib.SQLITE_IOERR_ACCESS: "SQLITE_IOERR_ACCESS",
	lib.SQLITE_IOERR_CHECKRESERVEDLOCK: "SQLITE_IOERR_CHECKRESERVEDLOCK", lib.SQLITE_IOERR_LOCK: "SQLITE_IOERR_LOCK",
	lib.SQLITE_IOERR_CLOSE: "SQLITE_IOERR_CLOSE", lib.SQLITE_IOERR_SHMOPEN: "SQLITE_IOERR_SHMOPEN",
	lib.SQLITE_IOERR_SHMSIZE: "SQLITE_IOERR_SHMSIZE", lib.SQLITE_IOERR_SHMLOCK: "SQLITE_IOERR_SHMLOCK",
	lib.SQLITE_IOERR_SHMMAP: "SQLITE_IOERR_SHMMAP", lib.SQLITE_IOERR_SEEK: "SQLITE_IOERR_SEEK",
	lib.SQLITE_IOERR_DELETE_NOENT: "SQLITE_IOERR_DELETE_NOENT", lib.SQLITE_IOERR_MMAP: "SQLITE_IOERR_MMAP",
	lib.SQLITE_IOERR_GETTEMPPATH: "SQLITE_IOERR_GETTEMPPATH", lib.SQLITE_IOERR_CORRUPTFS: "SQLITE_IOERR_CORRUPTFS",
	lib.SQLITE_IOERR_IN_PAGE: "SQLITE_IOERR_IN_PAGE",

	lib.SQLITE_LOCKED_SHAREDCACHE: "SQLITE_LOCKED_SHAREDCACHE", lib.SQLITE_LOCKED_VTAB: "SQLITE_LOCKED_VTAB",
	lib.SQLITE_BUSY_RECOVERY: "SQLITE_BUSY_RECOVERY", lib.SQLITE_BUSY_SNAPSHOT: "SQLITE_BUSY_SNAPSHOT",
	lib.SQLITE_BUSY_TIMEOUT: "SQLITE_BUSY_TIMEOUT",

	lib.SQLITE_CANTOPEN_NOTEMPDIR: "SQLITE_CANTOPEN_NOTEMPDIR", lib.SQLITE_CANTOPEN_ISDIR: "SQLITE_CANTOPEN_ISDIR",
	lib.SQLITE_CANTOPEN_FULLPATH: "SQLITE_CANTOPEN_FULLPATH", lib.SQLITE_CANTOPEN_CONVPATH: "SQLITE_CANTOPEN_CONVPATH",
	lib.SQLITE_CANTOPEN_SYMLINK: "SQLITE_CANTOPEN_SYMLINK",

	lib.SQLITE_CORRUPT_VTAB: "SQLITE_CORRUPT_VTAB", lib.SQLITE_CORRUPT_SEQUENCE: "SQLITE_CORRUPT_SEQUENCE",
	lib.SQLITE_CORRUPT_INDEX: "SQLITE_CORRUPT_INDEX",

	lib.SQLITE_READONLY_RECOVERY: "SQLITE_READONLY_RECOVERY", lib.SQLITE_READONLY_CANTLOCK: "SQLITE_READONLY_CANTLOCK",
	lib.SQLITE_READONLY_ROLLBACK: "SQLITE_READONLY_ROLLBACK", lib.SQLITE_READONLY_DBMOVED: "SQLITE_READONLY_DBMOVED",
	lib.SQLITE_READONLY_CANTINIT: "SQLITE_READONLY_CANTINIT", lib.SQLITE_READONLY_DIRECTORY: "SQLITE_READONLY_DIRECTORY",

	lib.SQLITE_ABORT_ROLLBACK: "SQLITE_ABORT_ROLLBACK",

	lib.SQLITE_CONSTRAINT_CHECK: "SQLITE_CONSTRAINT_CHECK", lib.SQLITE_CONSTRAINT_COMMITHOOK: "SQLITE_CONSTRAINT_COMMITHOOK",
	lib.SQLITE_CONSTRAINT_FOREIGNKEY: "SQLITE_CONSTRAINT_FOREIGNKEY", lib.SQLITE_CONSTRAINT_FUNCTION: "SQLITE_CONSTRAINT_FUNCTION",
	lib.SQLITE_CONSTRAINT_NOTNULL: "SQLITE_CONSTRAINT_NOTNULL", lib.SQLITE_CONSTRAINT_PRIMARYKEY: "SQLITE_CONSTRAINT_PRIMARYKEY",
	lib.SQLITE_CONSTRAINT_TRIGGER: "SQLITE_CONSTRAINT_TRIGGER", lib.SQLITE_CONSTRAINT_UNIQUE: "SQLITE_CONSTRAINT_UNIQUE",
	lib.SQLITE_CONSTRAINT_VTAB: "SQLITE_CONSTRAINT_VTAB", lib.SQLITE_CONSTRAINT_ROWID: "SQLITE_CONSTRAINT_ROWID",
	lib.SQLITE_CONSTRAINT_PINNED: "SQLITE_CONSTRAINT_PINNED", lib.SQLITE_CONSTRAINT_DATATYPE: "SQLITE_CONSTRAINT_DATATYPE",

	lib.SQLITE_AUTH_USER: "SQLITE_AUTH_USER",
}

// codeName names a result code: its sqlite3.h name, or the primary code's name with
// the number of an extended code this table does not know.
func codeName(code int) string {
	if s, ok := codeNames[code]; ok {
		return s
	}
	if s, ok := codeNames[code&primaryMask]; ok {
		return s + "(" + strconv.Itoa(code) + ")"
	}
	return "SQLITE(" + strconv.Itoa(code) + ")"
}

// classify wraps err as a *target.Error. busy is the class of a plain SQLITE_BUSY (see
// classOf); what, if not empty, prefixes the message ("opening /path/to.db").
func classify(err error, what string, busy target.Class) *target.Error {
	if err == nil {
		return nil
	}
	var te *target.Error
	if errors.As(err, &te) {
		return te
	}
	e := &target.Error{Class: target.ClassOther, Err: err}
	var se *msqlite.Error
	switch {
	case errors.As(err, &se):
		e.Class = classOf(se.Code(), busy)
		e.Code = codeName(se.Code())
		e.Msg = trimCode(se.Error(), se.Code())
	case errors.Is(err, context.Canceled):
		e.Class, e.Msg = target.ClassCanceled, "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		e.Class, e.Msg = target.ClassTimeout, "deadline exceeded"
	case errors.Is(err, driver.ErrBadConn):
		e.Class, e.Msg = target.ClassConnection, "connection unusable ("+err.Error()+")"
	default:
		e.Msg = err.Error()
	}
	e.Msg = oneLine(e.Msg)
	if what != "" {
		e.Msg = what + ": " + e.Msg
	}
	return e
}

// trimCode drops the " (2067)" and " (SQLITE_BUSY)" the driver appends to its
// messages: the code is in Error.Code, by name.
func trimCode(msg string, code int) string {
	msg = strings.TrimSuffix(msg, " (SQLITE_BUSY)")
	return strings.TrimSuffix(msg, " ("+strconv.Itoa(code)+")")
}

// oneLine makes msg a single line.
func oneLine(msg string) string {
	if strings.ContainsAny(msg, "\r\n") {
		msg = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(msg)
	}
	return msg
}

// sqliteCode returns the extended result code of err, or -1 if it has none.
func sqliteCode(err error) int {
	var se *msqlite.Error
	if errors.As(err, &se) {
		return se.Code()
	}
	return -1
}
