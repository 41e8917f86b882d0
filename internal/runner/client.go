package runner

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/fathom-lab/fathom/internal/target"
)

// client runs one client's loop: draw a transaction, run it with retries, record it.
func (r *Runner) client(c *client) {
	openLoop := c.rate > 0
	var sched *schedule
	if openLoop {
		sched = newSchedule(r.start, c.rate, r.cfg.Seed, c.id)
	}
	var done int64 // transactions finished after warm-up (for -t)
	for !r.stop.Load() {
		now := time.Now()
		if !r.end.IsZero() && !now.Before(r.end) {
			break
		}
		if c.txns > 0 && done >= c.txns {
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
				typ := c.worker.Next()
				rec := c.slot.Begin()
				rec.Counts[typ].Dropped++
				c.slot.End()
				continue
			}
		}
		typ := c.worker.Next()
		if !r.runOne(c, typ, now, intended) {
			break
		}
		if c.txns > 0 && !now.Before(r.measure) {
			done++
		}
	}
	if openLoop && !r.end.IsZero() && !r.stop.Load() {
		// Intended starts before the end that never began are dropped, not hidden.
		for t := sched.next(); t.Before(r.end); t = sched.next() {
			typ := c.worker.Next()
			rec := c.slot.Begin()
			rec.Counts[typ].Dropped++
			c.slot.End()
		}
	}
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
func (r *Runner) runOne(c *client, typ int, start, intended time.Time) bool {
	var (
		stmts   int64
		retries int64
		errs    [target.NumClasses]int64
		failed  bool
		stopped bool
	)
	for try := 1; ; try++ {
		n, err := c.worker.Do(r.hardCtx)
		stmts += int64(n)
		if err == nil {
			break
		}
		class := target.ClassOf(err)
		if class == target.ClassCanceled || r.hardCtx.Err() != nil {
			// Cut off by the stop; not the server's fault and not a result.
			stopped = true
			break
		}
		errs[class]++
		if class == target.ClassConnection || !c.conn.Alive() {
			failed = true
			if !r.reconnect(c, err) {
				stopped = true
			}
			break
		}
		_ = c.conn.Rollback(r.hardCtx)
		if class.Retryable() && try < r.cfg.MaxTries && !r.stop.Load() {
			retries++
			continue
		}
		failed = true
		break
	}
	end := time.Now()
	rec := c.slot.Begin()
	cnt := &rec.Counts[typ]
	cnt.Statements += stmts
	cnt.Retries += retries
	for i, v := range errs {
		cnt.Errors[i] += v
	}
	if !stopped || failed {
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
	}
	c.slot.End()
	return !stopped
}

// reconnect replaces a dead connection, retrying with backoff until the reconnect
// timeout. It returns false if the run must stop.
func (r *Runner) reconnect(c *client, cause error) bool {
	_ = c.conn.Close()
	deadline := time.Now().Add(r.cfg.ReconnectTimeout)
	backoff := 50 * time.Millisecond
	var last error = cause
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
