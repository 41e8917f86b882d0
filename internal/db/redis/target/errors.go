package redis

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"syscall"

	"github.com/redis/rueidis"

	"github.com/fathom-lab/fathom/internal/target"
)

// errWatch is EXEC's null reply: a WATCHed key changed, so the transaction did nothing.
var errWatch = &target.Error{Class: target.ClassSerialization, Code: "WATCH", Msg: "transaction aborted: a watched key changed"}

// codeClass maps the error code a Redis error reply starts with (the protocol's
// machine-readable part, like a SQLSTATE) to a class.
//
// Classes for what has no SQL counterpart: the server refusing for now — out of
// memory (OOM), a replica (READONLY), a long script (BUSY), loading its data set
// (LOADING), a failed background save refusing writes (MISCONF), no master (MASTERDOWN),
// TRYAGAIN — is ClassTimeout, the class of "the server could not do it in time"; the
// code itself is kept with the error and counted by it.
var codeClass = map[string]target.Class{
	"OOM":        target.ClassTimeout,
	"READONLY":   target.ClassTimeout,
	"BUSY":       target.ClassTimeout,
	"LOADING":    target.ClassTimeout,
	"MISCONF":    target.ClassTimeout,
	"MASTERDOWN": target.ClassTimeout,
	"TRYAGAIN":   target.ClassTimeout,
	"NOAUTH":     target.ClassAuth,
	"WRONGPASS":  target.ClassAuth,
	"NOPERM":     target.ClassAuth,
	"EXECABORT":  target.ClassOther,
	"WRONGTYPE":  target.ClassConstraint,
}

// classify turns an error from rueidis or the network into a *target.Error whose
// message never holds the password.
func classify(err error, what, password string) *target.Error {
	if err == nil {
		return nil
	}
	var te *target.Error
	if errors.As(err, &te) {
		return te
	}
	msg := err.Error()
	if password != "" && len(password) >= 1 {
		msg = strings.ReplaceAll(msg, password, "xxxxx")
	}
	if what != "" {
		msg = what + ": " + msg
	}
	if re, ok := rueidis.IsRedisErr(err); ok {
		return classifyReply(re.Error(), what, password, err)
	}
	e := &target.Error{Class: target.ClassOther, Msg: msg, Err: err}
	var ne net.Error
	switch {
	case errors.Is(err, context.Canceled):
		e.Class = target.ClassCanceled
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		e.Class = target.ClassTimeout
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EPIPE),
		errors.Is(err, syscall.ENOENT), errors.Is(err, rueidis.ErrClosing):
		e.Class = target.ClassConnection
	case errors.As(err, &ne) && ne.Timeout():
		e.Class = target.ClassConnection
	case errors.As(err, &ne):
		e.Class = target.ClassConnection
	}
	return e
}

// classifyReply classifies an error reply's text (without its generic "ERR "
// prefix, as rueidis gives it) by its code.
func classifyReply(text, what, password string, err error) *target.Error {
	msg := text
	if password != "" {
		msg = strings.ReplaceAll(msg, password, "xxxxx")
	}
	if what != "" {
		msg = what + ": " + msg
	}
	code, _, _ := strings.Cut(text, " ")
	if !isCode(code) {
		code = "ERR"
	}
	class, known := codeClass[code]
	if !known {
		class = target.ClassOther
		if code == "ERR" && strings.HasPrefix(text, "unknown command") {
			class = target.ClassUndefined
		}
	}
	return &target.Error{Class: class, Code: code, Msg: msg, Err: err}
}

func ctxError(err error) *target.Error {
	if errors.Is(err, context.DeadlineExceeded) {
		return &target.Error{Class: target.ClassTimeout, Msg: "timed out", Err: err}
	}
	return &target.Error{Class: target.ClassCanceled, Msg: "canceled", Err: err}
}

// isCode reports whether w looks like an error code: upper-case letters only.
func isCode(w string) bool {
	if len(w) < 2 {
		return false
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'A' || w[i] > 'Z' {
			return false
		}
	}
	return true
}
