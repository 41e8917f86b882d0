package postgres

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fathom-lab/fathom/internal/target"
)

// classOf maps a SQLSTATE to a class (PostgreSQL's errcodes, appendix A).
func classOf(code string) target.Class {
	switch code {
	case "40001": // serialization_failure
		return target.ClassSerialization
	case "40P01": // deadlock_detected
		return target.ClassDeadlock
	case "57014", // query_canceled: statement_timeout or a cancel request
		"55P03", // lock_not_available: lock_timeout, NOWAIT
		"25P03", // idle_in_transaction_session_timeout
		"25P04": // transaction_timeout
		return target.ClassTimeout
	case "57P01", // admin_shutdown: pg_terminate_backend, smart/fast shutdown
		"57P02", // crash_shutdown
		"57P03", // cannot_connect_now: starting up or shutting down
		"57P04", // database_dropped
		"57P05", // idle_session_timeout
		"53300": // too_many_connections
		return target.ClassConnection
	case "08P01": // protocol_violation: e.g. a wrong number of parameters; the session lives on
		return target.ClassOther
	case "28000", // invalid_authorization_specification (no pg_hba entry, …)
		"28P01", // invalid_password
		"42501": // insufficient_privilege
		return target.ClassAuth
	case "42P01", // undefined_table
		"42703", // undefined_column
		"42883", // undefined_function
		"3D000", // invalid_catalog_name: the database does not exist
		"3F000": // invalid_schema_name
		return target.ClassUndefined
	}
	switch {
	case strings.HasPrefix(code, "23"): // integrity_constraint_violation
		return target.ClassConstraint
	case strings.HasPrefix(code, "08"): // connection_exception
		return target.ClassConnection
	}
	return target.ClassOther
}

// netErr reports whether err comes from the network or a closed connection.
func netErr(err error) bool {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNABORTED) ||
		errors.Is(err, syscall.ETIMEDOUT) || errors.Is(err, syscall.EHOSTUNREACH) ||
		errors.Is(err, syscall.ENETUNREACH) || errors.Is(err, syscall.ENOENT) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne)
}

// classify wraps err as a *target.Error. what, if not empty, prefixes the message.
// secret is scrubbed from the message. closed says whether the connection is gone,
// which makes any error without a SQLSTATE a connection error.
func classify(err error, what, secret string, closed bool) *target.Error {
	if err == nil {
		return nil
	}
	var te *target.Error
	if errors.As(err, &te) {
		return te
	}
	e := &target.Error{Class: target.ClassOther, Err: err}
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe):
		e.Class = classOf(pe.Code)
		e.Code = oneLine(pe.Code, secret) // a SQLSTATE; whatever else a server (or a fuzzer) puts there is masked too
		e.Msg = pe.Message
		if pe.Detail != "" && e.Class == target.ClassConstraint {
			e.Msg += ": " + pe.Detail
		}
	case errors.Is(err, context.Canceled):
		e.Class, e.Msg = target.ClassCanceled, "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		e.Class, e.Msg = target.ClassTimeout, "deadline exceeded"
	case netErr(err) || closed:
		e.Class, e.Msg = target.ClassConnection, "connection lost ("+rootCause(err)+")"
		if what != "" {
			e.Msg = rootCause(err)
		}
	default:
		e.Msg = rootCause(err)
	}
	e.Msg = oneLine(e.Msg, secret)
	if what != "" {
		e.Msg = what + ": " + e.Msg
	}
	return e
}

// rootCause is the message of the innermost error, without pgconn's prefix that
// repeats the user and database ("failed to connect to `user=… database=…`").
func rootCause(err error) string {
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		if u := errors.Unwrap(ce); u != nil {
			err = u
		}
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, "dial error: "); i >= 0 {
		msg = msg[i+len("dial error: "):]
	}
	return msg
}

// oneLine makes msg a single line without secret in it.
func oneLine(msg, secret string) string {
	if strings.ContainsAny(msg, "\r\n\t") {
		msg = strings.Join(strings.Fields(msg), " ")
	}
	if len(secret) >= 4 && strings.Contains(msg, secret) {
		msg = strings.ReplaceAll(msg, secret, "xxxxx")
	}
	return target.RedactString(msg)
}
