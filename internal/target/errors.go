package target

import (
	"context"
	"errors"
	"fmt"
)

// Class groups database errors by what a benchmark should do about them. Targets
// classify by SQLSTATE, errno or result code, never by message text.
type Class uint8

const (
	ClassOther         Class = iota
	ClassSerialization       // retryable: could not serialize access
	ClassDeadlock            // retryable: deadlock detected
	ClassConstraint          // unique / foreign key / check violation
	ClassTimeout             // statement or lock wait timeout, SQLITE_BUSY after the busy timeout
	ClassConnection          // connection lost, refused, server shut down
	ClassAuth                // wrong user or password, no access
	ClassUndefined           // table or column does not exist
	ClassCanceled            // the run is stopping
	NumClasses
)

var classNames = [NumClasses]string{"other", "serialization", "deadlock", "constraint", "timeout", "connection", "auth", "undefined", "canceled"}

func (c Class) String() string {
	if c < NumClasses {
		return classNames[c]
	}
	return fmt.Sprintf("class(%d)", c)
}

// Retryable reports whether a transaction failing with this class may be retried with
// the same values (pgbench semantics: serialization failures and deadlocks).
func (c Class) Retryable() bool { return c == ClassSerialization || c == ClassDeadlock }

// Error is a classified database error. Msg never contains a password.
type Error struct {
	Class Class
	Code  string // SQLSTATE, errno or SQLite result code, as text
	Msg   string
	Err   error
}

func (e *Error) Error() string {
	if e.Code != "" {
		return fmt.Sprintf("%s (%s)", e.Msg, e.Code)
	}
	return e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// ClassOf returns the class of err: the class of the first *Error in its chain,
// ClassCanceled for context cancellation, ClassOther otherwise.
func ClassOf(err error) Class {
	if err == nil {
		return ClassOther
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Class
	}
	if errors.Is(err, context.Canceled) {
		return ClassCanceled
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return ClassTimeout
	}
	return ClassOther
}

// Errorf returns a classified error with a formatted message.
func Errorf(class Class, code string, format string, args ...any) *Error {
	return &Error{Class: class, Code: code, Msg: fmt.Sprintf(format, args...)}
}
