package runner

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
)

// client runs one client's loop: draw a transaction, run it with retries, record it.
func (r *Runner) client(c *client) {
	openLoop := c.rate > 0
	var sched *schedule
	if openLoop {
		sched = newSchedule(r.start, c.rate, r.cfg.Seed, c.id)
	}
	for !r.stop.Load() {
		now := time.Now()
		if !r.end.IsZero() && !now.Before(r.end) {
			break
		}
		// With -t, the transactions counted are those recorded in measured intervals:
		// the same ones the run's summary counts, however late the cut at the end of
		// warm-up was taken on a busy machine.
		if c.txns > 0 && c.measured >= c.txns {
			break
		}
		var intended time.Time
		if openLoop {
			intended = sched.next()
			if wait := intended.Sub(now); wait > 0 {
				if !r.end.IsZero() && intended.After(r.end) {
					// The next start is past the end of the run.
					sleepUntil(r, r.end)
					break
				}
				if !sleepUntil(r, intended) {
					sched.unread()
					break
				}
				now = time.Now()
			}
			if r.cfg.LatencyLimit > 0 && now.Sub(intended) > r.cfg.LatencyLimit {
				sched.unread()
				r.dropUntil(c, sched, now.Add(-r.cfg.LatencyLimit))
				continue
			}
		}
		typ := c.worker.Next()
		if !openLoop {
			var ok bool
			if now, ok = r.waitBefore(c, now); !ok {
				break
			}
		}
		run := true // false: failed to connect (-C), counted, and the client reconnected
		if r.cfg.ConnectPerTxn {
			ok, stop := r.freshConn(c, typ, now, intended)
			if stop {
				break
			}
			run = ok
		}
		if run && !r.runOne(c, typ, now, intended) {
			break
		}
	}
	// Intended starts that were due and never began are dropped, not hidden: before the
	// end of a run that ran its course, before the moment of the stop of one that was
	// interrupted or failed. (A run by transaction count ends when the count is done.)
	if openLoop && !c.aborted && !c.ended { // an aborted or ended client's schedule is not the target's doing
		switch {
		case !r.stop.Load() && !r.end.IsZero():
			r.dropUntil(c, sched, r.end)
		case r.stop.Load():
			until := time.Now()
			if !r.end.IsZero() && until.After(r.end) {
				until = r.end
			}
			r.dropUntil(c, sched, until)
		}
	}
}

// waitBefore waits out a workload.Waiter's wait before the drawn transaction (a
// closed loop's terminal user keying and thinking) and returns the time after it;
// false when the run ended or stopped meanwhile and the transaction must not run.
func (r *Runner) waitBefore(c *client, now time.Time) (time.Time, bool) {
	w, ok := c.worker.(workload.Waiter)
	if !ok {
		return now, true
	}
	d := w.Wait()
	if d <= 0 {
		return now, true
	}
	until := now.Add(d)
	if !r.end.IsZero() && !until.Before(r.end) {
		sleepUntil(r, r.end)
		return now, false
	}
	if !sleepUntil(r, until) {
		return now, false
	}
	return time.Now(), true
}

// exactDrops: dropUntil draws up to this many dropped starts one by one.
const exactDrops = 1024

// dropUntil counts the client's intended starts before until as dropped and moves its
// schedule past them. Up to exactDrops are drawn one by one, each with its
// transaction type drawn as for a transaction that runs. More than that (a rate far
// beyond what the target can do) are counted arithmetically, so that no rate can keep
// a client busy counting: their number is the schedule's expected count (rate × time)
// and their types are split as the drawn ones' were.
func (r *Runner) dropUntil(c *client, sched *schedule, until time.Time) {
	if c.drops == nil {
		c.drops = make([]int64, r.nTypes)
	}
	// With -t, a skipped start counts towards the client's transactions, as in
	// pgbench (processed + skipped = -t): no more are drawn than the count leaves.
	limit := int64(-1)
	if c.txns > 0 {
		warm := c.slot.Begin().Warmup
		c.slot.End()
		if !warm {
			limit = max(c.txns-c.measured, 0)
		}
	}
	n := int64(0)
	for n < exactDrops && (limit < 0 || n < limit) {
		t := sched.next()
		if !t.Before(until) {
			sched.unread()
			break
		}
		c.drops[c.worker.Next()]++
		n++
	}
	if n == exactDrops {
		rest := sched.skipTo(until)
		if limit >= 0 {
			rest = min(rest, limit-n)
		}
		if rest > 0 {
			most := 0
			for typ, k := range c.drops {
				if k > c.drops[most] {
					most = typ
				}
			}
			given := int64(0)
			for typ, k := range c.drops {
				share := int64(float64(rest) * float64(k) / float64(n))
				c.drops[typ] += share
				given += share
			}
			c.drops[most] += rest - given
		}
	}
	rec := c.slot.Begin()
	total := int64(0)
	for typ, k := range c.drops {
		rec.Counts[typ].Dropped += k
		total += k
	}
	if !rec.Warmup {
		c.measured += total
	}
	c.slot.End()
	if r.log != nil {
		now := time.Now()
		for typ, k := range c.drops {
			if k > 0 {
				r.log.Skipped(c.id, typ, k, now)
			}
		}
	}
	clear(c.drops)
}

// freshConn replaces the client's connection with a new one before a transaction
// (-C): ok when the transaction can run on it. A failure to connect is the
// transaction's failure, counted as a connection error, and the client then
// reconnects as after a lost connection; stop says the client must stop.
func (r *Runner) freshConn(c *client, typ int, start, intended time.Time) (ok, stop bool) {
	if c.conn != nil {
		_ = c.conn.Close()
		c.conn = nil
	}
	conn, err := r.tgt.Connect(r.hardCtx)
	if err == nil {
		if err = c.worker.Bind(r.hardCtx, conn); err == nil {
			c.conn = conn
			return true, false
		}
		_ = conn.Close()
	}
	if target.ClassOf(err) == target.ClassCanceled || r.hardCtx.Err() != nil {
		return false, true
	}
	rec := c.slot.Begin()
	rec.Counts[typ].Errors[target.ClassConnection]++
	warm := rec.Warmup
	c.slot.End()
	r.noteError(c, typ, err, target.ClassConnection, warm, false)
	c.failClass = target.ClassConnection
	r.finish(c, typ, start, intended, 0, 0, true)
	return false, !r.reconnect(c, err)
}

// sleepUntil sleeps until t or until the run stops; it reports whether t was reached.
func sleepUntil(r *Runner, t time.Time) bool {
	for {
		d := time.Until(t)
		if d <= 0 {
			return true
		}
		if r.stop.Load() {
			return false
		}
		if d > 50*time.Millisecond {
			d = 50 * time.Millisecond
		}
		time.Sleep(d)
	}
}

// runOne runs the drawn transaction with retries and records it. It returns false
// when the client must stop (the run is stopping or the target is gone).
//
// Each error is recorded when it happens, and a transaction lost with its connection
// is recorded as failed before the client reconnects: reconnecting can take up to the
// reconnect timeout, and what happened before it belongs to the interval in which it
// happened.
func (r *Runner) runOne(c *client, typ int, start, intended time.Time) bool {
	var stmts, retries int64
	for try := 1; ; try++ {
		n, err := c.worker.Do(r.hardCtx)
		stmts += int64(n)
		switch v := r.settle(c, &typ, start, intended, stmts, retries, try, err); v {
		case verdictNext:
			return true
		case verdictRetry:
			retries++
		case verdictReconnect:
			return r.reconnect(c, err)
		default:
			return false
		}
	}
}

// verdict is what settle decided after one try of a transaction.
type verdict uint8

const (
	verdictNext      verdict = iota // recorded: go on with the next transaction
	verdictRetry                    // run the transaction again (count a retry)
	verdictReconnect                // recorded as failed: replace the connection, then go on
	verdictStop                     // the client stops (the run stops, it aborted or has no more work)
)

// settle records what one try of a transaction came to (Do's statements and error;
// stmts and retries are the transaction's so far) and says what the client does
// next: the goroutine path (runOne) and the multiplexed one (muxWorker) share it. typ
// is updated when the worker retypes a successful transaction.
func (r *Runner) settle(c *client, typ *int, start, intended time.Time, stmts, retries int64, try int, err error) verdict {
	if c.cmds != nil {
		// The commands' times go to the interval the attempt ended in, as the
		// transaction's own time does.
		rec := c.slot.Begin()
		c.cmds.FlushCommands(rec)
		c.slot.End()
	}
	if err == nil {
		if c.retype != nil {
			*typ = c.retype.Retype(*typ)
		}
		r.finish(c, *typ, start, intended, stmts, retries, false)
		return verdictNext
	}
	if err == workload.ErrWorkerDone { // returned as is, never wrapped
		c.ended = true
		return verdictStop
	}
	class := target.ClassOf(err)
	if class == target.ClassCanceled || r.hardCtx.Err() != nil {
		// Cut off by the stop; not the server's fault and not a result.
		rec := c.slot.Begin()
		rec.Counts[*typ].Statements += stmts
		rec.Counts[*typ].Retries += retries
		c.slot.End()
		return verdictStop
	}
	rec := c.slot.Begin()
	rec.Counts[*typ].Errors[class]++
	warm := rec.Warmup
	c.slot.End()
	c.failClass = class
	var abort *workload.AbortError
	isAbort := errors.As(err, &abort)
	r.noteError(c, *typ, err, class, warm, isAbort)
	if isAbort {
		// The workload's mistake: this client stops, as pgbench aborts a
		// client; the others go on.
		_ = c.conn.Rollback(r.hardCtx)
		r.finish(c, *typ, start, intended, stmts, retries, true)
		r.abort(c, abort)
		return verdictStop
	}
	if class == target.ClassConnection || !c.conn.Alive() {
		r.finish(c, *typ, start, intended, stmts, retries, true)
		return verdictReconnect
	}
	_ = c.conn.Rollback(r.hardCtx)
	if (class.Retryable() && try < r.cfg.MaxTries || isRestart(err)) && !r.stop.Load() {
		return verdictRetry
	}
	r.finish(c, *typ, start, intended, stmts, retries, true)
	return verdictNext
}

// finish records a transaction that succeeded or gave up (failed), now.
func (r *Runner) finish(c *client, typ int, start, intended time.Time, stmts, retries int64, failed bool) {
	end := time.Now()
	rec := c.slot.Begin()
	cnt := &rec.Counts[typ]
	cnt.Statements += stmts
	cnt.Retries += retries
	if !intended.IsZero() {
		if start.Sub(intended) > r.cfg.LateThreshold {
			cnt.Late++
		}
		if failed {
			rec.Failure(typ, end.Sub(intended).Nanoseconds())
		} else {
			rec.Success(typ, end.Sub(intended).Nanoseconds(), end.Sub(start).Nanoseconds())
		}
	} else if failed {
		rec.Failure(typ, end.Sub(start).Nanoseconds())
	} else {
		rec.Success(typ, end.Sub(start).Nanoseconds(), 0)
	}
	if !rec.Warmup {
		c.measured++
	}
	c.slot.End()
	if r.log != nil {
		r.log.Txn(c.id, typ, intended, start, end, retries, failed, c.failClass)
	}
}

// reconnect replaces a dead connection, retrying with backoff until the reconnect
// timeout. It returns false if the run must stop.
func (r *Runner) reconnect(c *client, cause error) bool {
	if c.conn != nil {
		_ = c.conn.Close()
		c.conn = nil
	}
	deadline := time.Now().Add(r.cfg.ReconnectTimeout)
	backoff := 50 * time.Millisecond
	var last error // the error of the last try (cause is what made the connection dead)
	for !r.stop.Load() {
		conn, err := r.tgt.Connect(r.hardCtx)
		if err == nil {
			if err = c.worker.Bind(r.hardCtx, conn); err == nil {
				c.conn = conn
				rec := c.slot.Begin()
				rec.Reconnects++
				c.slot.End()
				return true
			}
			_ = conn.Close()
		}
		last = err
		if time.Now().After(deadline) {
			r.fail(fmt.Errorf("lost connection to the server and could not reconnect for %s: %v", r.cfg.ReconnectTimeout, last))
			return false
		}
		time.Sleep(backoff + time.Duration(rand.Int64N(int64(backoff/2))))
		if backoff < time.Second {
			backoff *= 2
		}
	}
	return false
}

// isRestart: the workload runs this transaction again itself (workload.RestartError).
func isRestart(err error) bool {
	var re *workload.RestartError
	return errors.As(err, &re)
}
