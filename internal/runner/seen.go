package runner

import (
	"errors"
	"sync"
	"time"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
)

// The run's first distinct errors (measure.SeenError), kept at little cost on the hot
// path: each client remembers the last error it met and counts its repeats in its own
// fields, without a lock; only an error different from the client's last takes the
// book's lock, and only one new to the run allocates (its entry, and the workload's
// Place). The counts a client holds are added to the book when its error changes and
// when the run ends.

// errorBook is the run's list of distinct errors.
type errorBook struct {
	mu   sync.Mutex
	kept []*measure.SeenError // at most measure.KeptErrors, in the order first met
	// keys are kept's messages as met, before passwords were masked in them.
	keys []string
	// unlisted counts the errors that are none of kept (measured, warm-up).
	unlisted, unlistedWarm int64
	// onNew hears each error as it is first kept; it must not block.
	onNew func(measure.SeenError)
}

// clientErr is what a client remembers of the last error it met.
type clientErr struct {
	set   bool
	class target.Class
	code  string
	msg   string
	entry *measure.SeenError // its entry in the book; nil: unlisted
	// n and warm are its occurrences (measured, warm-up) not yet added to the book.
	n, warm int64
}

// errorText is err's code and message: those of the *target.Error in its chain (a
// workload's wrapping, such as the pipeline line, is left to Place), else its text.
func errorText(err error) (code, msg string) {
	for e := err; e != nil; {
		if te, ok := e.(*target.Error); ok {
			return te.Code, te.Msg
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			break
		}
		e = u.Unwrap()
	}
	var abort *workload.AbortError
	if errors.As(err, &abort) {
		return "", abort.Err.Error()
	}
	return "", err.Error()
}

// noteError counts err, of class, met by client c in a transaction of type typ (into
// a warm-up interval when warm); abort says it stops the client.
func (r *Runner) noteError(c *client, typ int, err error, class target.Class, warm, abort bool) {
	code, msg := errorText(err)
	ce := &c.err
	if !ce.set || ce.class != class || ce.code != code || ce.msg != msg {
		r.book.switchTo(r, c, typ, class, code, msg, abort)
	}
	if warm {
		ce.warm++
	} else {
		ce.n++
	}
}

// switchTo adds what c counted of its last error to the book and makes the new one
// its last, keeping it if it is new to the run and there is room.
func (b *errorBook) switchTo(r *Runner, c *client, typ int, class target.Class, code, msg string, abort bool) {
	ce := &c.err
	var added *measure.SeenError
	b.mu.Lock()
	b.flush(ce)
	ce.set, ce.class, ce.code, ce.msg, ce.entry = true, class, code, msg, nil
	cls := class.String()
	for i, e := range b.kept {
		if e.Class == cls && e.Code == code && b.keys[i] == msg {
			ce.entry = e
			break
		}
	}
	if ce.entry == nil && len(b.kept) < measure.KeptErrors {
		// Targets mask passwords in their errors; a workload's own text is masked here.
		e := &measure.SeenError{Class: cls, Code: code, Message: target.RedactString(msg), Client: c.id,
			AtNs: int64(time.Since(r.start)), Aborted: abort}
		if typ >= 0 && typ < len(r.types) {
			e.Txn = r.types[typ]
		}
		if p, ok := c.worker.(workload.Placer); ok {
			e.Where = target.RedactString(p.Place())
		}
		b.kept = append(b.kept, e)
		b.keys = append(b.keys, msg)
		ce.entry = e
		cp := *e
		added = &cp
	}
	if ce.entry != nil && abort {
		ce.entry.Aborted = true
	}
	b.mu.Unlock()
	if added != nil && b.onNew != nil {
		b.onNew(*added)
	}
}

// flush adds what ce counted to the book; the caller holds b.mu.
func (b *errorBook) flush(ce *clientErr) {
	if !ce.set {
		return
	}
	if ce.entry != nil {
		ce.entry.Count += ce.n
		ce.entry.Warmup += ce.warm
	} else {
		b.unlisted += ce.n
		b.unlistedWarm += ce.warm
	}
	ce.n, ce.warm = 0, 0
}

// finish adds every client's counts to the book (all clients have stopped) and
// returns the kept errors and the count of measured errors none of them is.
func (b *errorBook) finish(clients []*client) ([]measure.SeenError, int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range clients {
		b.flush(&c.err)
	}
	out := make([]measure.SeenError, len(b.kept))
	for i, e := range b.kept {
		out[i] = *e
	}
	return out, b.unlisted
}

// OnError sets f to hear each distinct error as the run first meets it (the first
// measure.KeptErrors of them), from the goroutine of the client that met it: f must
// not block. Call it before Run.
func (r *Runner) OnError(f func(measure.SeenError)) { r.book.onNew = f }
