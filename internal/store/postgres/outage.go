package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// Unreachable reports whether err says the store could not be reached or its
// connection was lost (refused, reset, closed, timed out, the server shutting down or
// starting, a session terminated, too many connections) rather than that the store
// refused what was asked: a write that failed so may be tried again when it returns.
func Unreachable(err error) bool {
	if err == nil {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "57P01", // admin_shutdown: pg_terminate_backend or a fast shutdown
			"57P02", // crash_shutdown
			"57P03", // cannot_connect_now: starting up or shutting down
			"53300", // too_many_connections
			"40001", // serialization_failure (a write of ours is idempotent and may be tried again)
			"40P01": // deadlock_detected
			return true
		}
		return strings.HasPrefix(pe.Code, "08") // connection_exception
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || pgconn.Timeout(err) ||
		errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.ETIMEDOUT) ||
		errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) ||
		errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "conn closed")
}

// Relock takes again the advisory locks this process holds whose session was lost
// (the store went away, or the session was terminated): while a run is written, its
// lock shows readers that its writer lives, and a writer that rode out an outage
// lives. A lock this process created (a run's, a new experiment's) is its own: a
// session of its name the server still keeps is ended and the lock taken anew. A
// resumed experiment's lock that another session took meanwhile is left to it.
func (s *Store) Relock(ctx context.Context) error {
	s.mu.Lock()
	for k, c := range s.held {
		if err := c.PingContext(ctx); err != nil {
			drop(c)
			s.lost[k] = s.tags[k]
			delete(s.held, k)
			delete(s.tags, k)
		}
	}
	lost := make(map[lockKey]string, len(s.lost))
	for k, tag := range s.lost {
		lost[k] = tag
	}
	s.mu.Unlock()
	var first error
	for k, tag := range lost {
		var err error
		if tag != "" {
			err = s.relock(ctx, k.space, k.id, tag)
		} else {
			err = s.lock(ctx, k.space, k.id)
		}
		if err != nil && !errors.Is(err, errHeld) {
			// Tried again at the next Relock.
			if first == nil {
				first = err
			}
			continue
		}
		s.mu.Lock()
		delete(s.lost, k)
		s.mu.Unlock()
	}
	return first
}
