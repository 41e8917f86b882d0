package redis

import (
	"bytes"
	"context"
	"errors"
	"strconv"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/target/sock"
)

// exchange is a Batch as a target.Exchanger: its commands written as one request in
// RESP, their replies read back, so that the runner can drive many Redis connections
// from one thread (epoll) as redis-benchmark does, instead of a thread blocked in a
// read per connection. It is also a target.Stmt whose Run sends the batch through
// rueidis, for the goroutine path.
//
// The replies are RESP3 (rueidis says HELLO 3 when it connects), RESP2 replies parse
// too. A reply is only counted: an error reply is the exchange's error (the first
// one, classified by its code as Send classifies it), a null reply counts in Nils;
// values are not looked at.
type exchange struct {
	c *Conn
	b *batch
	// left is how many replies of the request in flight are still to come.
	left  int
	first error
}

var (
	_ target.Exchanger = (*exchange)(nil)
	_ target.Batched   = (*exchange)(nil)
	_ target.Stmt      = (*exchange)(nil)
)

// Exchange returns b, a batch built for this connection, as an Exchanger (an
// *Exchange; nil for a batch of another kind).
func (c *Conn) Exchange(tb target.Batch) target.Stmt {
	b, err := batchOf(tb)
	if err != nil {
		return nil
	}
	return &exchange{c: c, b: b}
}

// Run sends the batch (kept, for a retry) through the connection: the goroutine path.
func (x *exchange) Run(ctx context.Context, _ []target.Value, _ *target.Result) error {
	return x.c.SendKeep(ctx, x.b)
}

// Close does nothing.
func (x *exchange) Close() error { return nil }

// Statements implements target.Batched: the commands in the batch.
func (x *exchange) Statements() int { return x.b.Len() }

// Socket implements target.Exchanger: a connection that sock.Blocking made (Linux),
// without TLS, that rueidis only ever used synchronously (fathom sends every command
// with a context without a Done channel, so rueidis has no reader of its own and
// nothing buffered between replies).
func (x *exchange) Socket() (int, bool) {
	if !x.c.t.Exchanges() || !x.c.Alive() || x.c.inTx {
		return -1, false
	}
	return sock.FD(x.c.nc)
}

// Exchanges implements target.Exchanging: batches over connections that are not
// encrypted (TLS would stand between the socket and the replies).
func (t *redisTarget) Exchanges() bool { return !t.cfg.PollerSockets && !t.d.tls }

// AppendRequest implements target.Exchanger: every command of the batch as a RESP
// array of bulk strings, redis-cli's and every client's request form.
func (x *exchange) AppendRequest(dst []byte, _ []target.Value) ([]byte, error) {
	b := x.b
	start := 0
	for _, end := range b.ends {
		dst = append(dst, '*')
		dst = strconv.AppendInt(dst, int64(end-start), 10)
		dst = append(dst, '\r', '\n')
		for _, w := range b.words[start:end] {
			dst = append(dst, '$')
			dst = strconv.AppendInt(dst, int64(len(w)), 10)
			dst = append(dst, '\r', '\n')
			dst = append(dst, w...)
			dst = append(dst, '\r', '\n')
		}
		start = end
	}
	x.left, x.first, b.Nils = len(b.ends), nil, 0
	return dst, nil
}

// ParseReply implements target.Exchanger: it consumes the whole replies in src and is
// done once every command of the request has its reply.
func (x *exchange) ParseReply(src []byte) (int, bool, error) {
	used := 0
	for x.left > 0 {
		n, kind, err := respReply(src[used:])
		if err != nil {
			return used, true, x.Lost(err)
		}
		if n == 0 {
			return used, false, nil // not all here yet
		}
		reply := src[used : used+n]
		used += n
		switch kind {
		case replyPush:
			continue // out of band (an invalidation): not a command's reply
		case replyNull:
			x.b.Nils++
		case replyError:
			if x.first == nil {
				x.first = replyErr(reply, x.c.t.d.password)
			}
		}
		x.left--
	}
	return used, true, x.first
}

// Lost implements target.Exchanger.
func (x *exchange) Lost(err error) error {
	x.c.dead = true
	e := classify(err, "", x.c.t.d.password)
	e.Class = target.ClassConnection
	return e
}

// replyErr is an error reply ("-CODE message", or the blob "!len\r\nCODE message")
// as the *target.Error Send returns for it: "ERR " dropped as rueidis drops it, the
// class from the code.
func replyErr(reply []byte, password string) error {
	var text string
	if reply[0] == '!' {
		_, body, _ := cutLine(reply)
		text = string(bytes.TrimSuffix(body, []byte("\r\n")))
	} else {
		line, _, _ := cutLine(reply)
		text = string(line[1:])
	}
	if len(text) > 4 && text[:4] == "ERR " {
		text = text[4:]
	}
	return classifyReply(text, "", password, nil)
}

// Reply kinds respReply tells apart.
const (
	replyValue = iota
	replyNull
	replyError
	replyPush
)

var errMalformed = errors.New("malformed reply from the server")

// respReply measures the reply at the start of src: its length in bytes (0 when it
// has not all arrived) and its kind. It reads RESP2 and RESP3. Aggregates are walked
// without recursion: need counts the elements still to come.
func respReply(src []byte) (int, int, error) {
	kind, need, used := replyValue, 1, 0
	for first := true; need > 0; first = false {
		if used >= len(src) {
			return 0, 0, nil
		}
		line, _, ok := cutLine(src[used:])
		if ok && len(line) == 0 {
			return 0, 0, errMalformed
		}
		if !ok {
			if len(src)-used > 64<<10 {
				return 0, 0, errMalformed // no line is that long but a simple string's
			}
			return 0, 0, nil
		}
		typ := line[0]
		used += len(line) + 2
		need--
		if first {
			switch typ {
			case '-', '!':
				kind = replyError
			case '_':
				kind = replyNull
			case '>':
				kind = replyPush
			}
		}
		switch typ {
		case '+', '-', ':', ',', '#', '(', '_':
		case '$', '!', '=': // bulk: a length, then that many bytes and CRLF
			n, err := respLen(line)
			if err != nil {
				return 0, 0, err
			}
			if n < 0 {
				if typ != '$' {
					return 0, 0, errMalformed // RESP3 has no null blob error or verbatim string
				}
				if first {
					kind = replyNull
				}
				continue
			}
			if used+n+2 > len(src) {
				return 0, 0, nil
			}
			if src[used+n] != '\r' || src[used+n+1] != '\n' {
				return 0, 0, errMalformed
			}
			used += n + 2
		case '*', '~', '>', '%', '|': // aggregates: n elements (maps and attributes: n pairs)
			n, err := respLen(line)
			if err != nil {
				return 0, 0, err
			}
			if n < 0 {
				if first {
					kind = replyNull
				}
				continue
			}
			if typ == '%' || typ == '|' {
				n *= 2
			}
			if typ == '|' {
				need++ // an attribute comes before the reply it describes
			}
			need += n
		default:
			return 0, 0, errMalformed
		}
	}
	return used, kind, nil
}

// cutLine splits src at its first CRLF: the line without it, the rest after it; ok
// is false when no CRLF has arrived yet.
func cutLine(src []byte) (line, rest []byte, ok bool) {
	for i := 0; i+1 < len(src); i++ {
		if src[i] == '\r' && src[i+1] == '\n' {
			return src[:i], src[i+2:], true
		}
	}
	return nil, nil, false
}

// respLen reads the length after a line's type byte: -1 for a null.
func respLen(line []byte) (int, error) {
	n, err := strconv.Atoi(string(line[1:]))
	if err != nil || n < -1 || n > 1<<30 {
		return 0, errMalformed
	}
	return n, nil
}
