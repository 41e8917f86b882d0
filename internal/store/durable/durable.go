// Package durable keeps a run going through an outage of a network results store. It
// wraps a store.Store: what a run writes as it goes (intervals, errors, warnings, agent
// intervals, server and OS samples) is written at once while the store answers, and
// kept in order while it does not (in memory up to a bound, then in a private spool
// file) to be written when it returns, each write idempotent so that one whose
// acknowledgement was lost is not doubled. Other calls (creating a run, experiment
// bookkeeping, agents' coordination, reads) wait for what is kept to be written and
// are tried again until the store returns. The outage is recorded with each run it
// touched. Only an outage longer than Options.Bound stops the writer: what is kept
// stays in the spool file, which `fathom store upload` (Upload) writes later.
//
// The engine does not know about it: the front end wraps the store it opens.
package durable

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fathom-lab/fathom/internal/sample"
	"github.com/fathom-lab/fathom/internal/store"
)

// Defaults of Options.
const (
	DefaultBound   = 10 * time.Minute
	defaultMemory  = 64 << 20
	defaultSamples = 16 << 20
	defaultAttempt = 20 * time.Second
)

// Options say how long an outage is ridden out and where what waits is kept.
type Options struct {
	// Bound is the longest outage ridden out (0: DefaultBound). Past it, writes fail
	// with an error saying how to finish the upload.
	Bound time.Duration
	// Memory is how many bytes of waiting writes are kept in memory before they go to
	// the spool file (0: DefaultMemory); Samples how many bytes of server and OS
	// samples are kept (0: DefaultSamples): samples beyond it are recorded as skipped.
	Memory, Samples int64
	// Dir is where the spool file is made, private (0700 directory, 0600 file).
	Dir string
	// Unreachable tells an outage (the write may be tried again) from a refusal.
	Unreachable func(error) bool
	// Attempt bounds one try of one write (0: 20s).
	Attempt time.Duration
	// Warn, when set, hears that the store went away and came back (one line each).
	Warn func(string)
	Now  func() time.Time
}

// errOutage is wrapped by the errors of writes made after the outage outlasted the
// bound: what they carried is in the spool file.
var errOutage = errors.New("the results store was unreachable for too long")

// durableStore is a store.Store that rides out outages (see the package comment).
type durableStore struct {
	store.Store
	o    Options
	wake chan struct{}
	stop chan struct{}
	done chan struct{}

	mu       sync.Mutex
	idle     *sync.Cond // broadcast when the queue empties or the store gives up
	queue    []*entry   // in memory, after what is in the file
	memBytes int64
	smpBytes int64
	down     bool
	since    time.Time // the outage's start
	backAt   time.Time // when the store answered again (zero: not yet)
	lastErr  error
	gaveUp   error
	file     *spoolFile
	// inflight is the queue's head while step writes it without s.mu: spill and
	// giveUp leave it at the head (moving it to the file would write it twice, or,
	// with nothing left in memory, let step pop an empty queue), and a retry of it
	// goes before the file.
	inflight *entry
	late     map[int64]*lateCounts // by run: what this outage delays
	open     map[int64]bool        // runs created here and not finished: an outage is recorded with each
	writers  []*sampleWriter
	closed   bool
}

type lateCounts struct {
	intervals, other, samples, refused int
}

// entry is one waiting call: an op (written to the spool file if need be), a sample
// (kept in memory only), or a call someone waits for.
type entry struct {
	op     *op
	sample *sample.Sample
	w      *sampleWriter
	fn     func(context.Context) error
	done   chan error // nil for a write nobody waits for
	size   int64
	gone   bool // its caller stopped waiting
	first  bool // kept at the head while written as the rest went to the spool file: tried again before it
}

// Wrap returns st riding out outages as o says.
func Wrap(st store.Store, o Options) *durableStore {
	if o.Bound <= 0 {
		o.Bound = DefaultBound
	}
	if o.Memory <= 0 {
		o.Memory = defaultMemory
	}
	if o.Samples <= 0 {
		o.Samples = defaultSamples
	}
	if o.Attempt <= 0 {
		o.Attempt = defaultAttempt
	}
	if o.Unreachable == nil {
		o.Unreachable = func(error) bool { return false }
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Dir == "" {
		o.Dir = os.TempDir()
	}
	s := &durableStore{Store: st, o: o, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		late: map[int64]*lateCounts{}, open: map[int64]bool{}}
	s.idle = sync.NewCond(&s.mu)
	go s.drain()
	return s
}

// attempt runs fn once with the attempt's timeout.
func (s *durableStore) attempt(ctx context.Context, fn func(context.Context) error) error {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.o.Attempt)
	defer cancel()
	return fn(actx)
}

func (s *durableStore) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// goDown starts an outage (if none is on) after err; s.mu is held.
func (s *durableStore) goDown(err error) {
	s.lastErr = err
	if s.down {
		return
	}
	s.down, s.since = true, s.o.Now()
	if s.o.Warn != nil {
		s.o.Warn(fmt.Sprintf("the results store %s is unreachable (%s): measuring goes on and what is measured is kept to be written when it returns (for up to %s)",
			s.Path(), oneLine(err), s.o.Bound))
	}
}

// write is a write the caller need not wait for: done now if the store answers and
// nothing waits before it, else queued. It fails only when the store refuses it, or
// once the outage outlasted the bound: then an interval is not kept (a run counts
// only the intervals whose write succeeded, and stops), and any other write is kept
// in the spool file for the upload to finish the run.
func (s *durableStore) write(ctx context.Context, o *op, fn func(context.Context) error) error {
	s.mu.Lock()
	if s.gaveUp != nil || s.checkBound() != nil {
		err := s.gaveUp
		if o.Op != opInterval && o.Op != opAgentInterval {
			err = s.toFile(o)
		}
		s.mu.Unlock()
		return err
	}
	if !s.down && len(s.queue) == 0 && (s.file == nil || s.file.left == 0) {
		s.mu.Unlock()
		err := s.attempt(ctx, fn)
		if err == nil || !s.o.Unreachable(err) {
			return err
		}
		s.mu.Lock()
		s.goDown(err)
	}
	s.enqueue(&entry{op: o})
	s.mu.Unlock()
	s.poke()
	return nil
}

// writeWait is write, then waits until it is written (or kept past the bound).
func (s *durableStore) writeWait(ctx context.Context, o *op, fn func(context.Context) error) error {
	s.mu.Lock()
	if s.gaveUp != nil {
		err := s.toFile(o)
		s.mu.Unlock()
		return err
	}
	if !s.down && len(s.queue) == 0 && (s.file == nil || s.file.left == 0) {
		s.mu.Unlock()
		err := s.attempt(ctx, fn)
		if err == nil || !s.o.Unreachable(err) {
			return err
		}
		s.mu.Lock()
		s.goDown(err)
	}
	e := &entry{op: o, done: make(chan error, 1)}
	s.enqueue(e)
	s.mu.Unlock()
	s.poke()
	return <-e.done
}

// call runs fn once everything queued before it is written, trying again through an
// outage up to the bound; ctx's end stops the wait.
func (s *durableStore) call(ctx context.Context, fn func(context.Context) error) error {
	s.mu.Lock()
	if s.gaveUp == nil && !s.down && len(s.queue) == 0 && (s.file == nil || s.file.left == 0) {
		s.mu.Unlock()
		err := s.attempt(ctx, fn)
		if err == nil || !s.o.Unreachable(err) {
			return err
		}
		s.mu.Lock()
		s.goDown(err)
	}
	if s.gaveUp != nil {
		s.mu.Unlock()
		return s.attempt(ctx, fn)
	}
	e := &entry{fn: fn, done: make(chan error, 1)}
	s.queue = append(s.queue, e)
	s.mu.Unlock()
	s.poke()
	select {
	case err := <-e.done:
		return err
	case <-ctx.Done():
		s.mu.Lock()
		e.gone = true
		s.mu.Unlock()
		return ctx.Err()
	}
}

// get is call for a function with a result.
func get[T any](s *durableStore, ctx context.Context, fn func(context.Context) (T, error)) (T, error) {
	var v T
	err := s.call(ctx, func(ctx context.Context) error {
		var err error
		v, err = fn(ctx)
		return err
	})
	return v, err
}

// enqueue queues e, counting what it delays, and moves the oldest writes to the spool
// file when memory is over its bound; s.mu is held.
func (s *durableStore) enqueue(e *entry) {
	if e.op != nil {
		b, _ := json.Marshal(e.op)
		e.size = int64(len(b))
		s.memBytes += e.size
		l := s.lateOf(e.op.Run)
		if e.op.Op == opInterval || e.op.Op == opAgentInterval {
			l.intervals++ // an agent's under run 0: in the total, not in a run's warning
		} else if e.op.Run != 0 {
			l.other++
		}
	}
	s.queue = append(s.queue, e)
	if s.memBytes > s.o.Memory {
		if err := s.spill(false); err != nil {
			s.lastErr = err
		}
	}
}

func (s *durableStore) lateOf(run int64) *lateCounts {
	l := s.late[run]
	if l == nil {
		l = &lateCounts{}
		s.late[run] = l
	}
	return l
}

// checkBound gives up when the outage has outlasted the bound; s.mu is held.
func (s *durableStore) checkBound() error {
	if s.gaveUp != nil {
		return s.gaveUp
	}
	if !s.down || s.o.Now().Sub(s.since) < s.o.Bound {
		return nil
	}
	s.giveUp()
	return s.gaveUp
}

// giveUp moves every waiting write to the spool file and fails every waiting call;
// s.mu is held.
func (s *durableStore) giveUp() {
	n := 0
	if s.file != nil {
		n = s.file.left
	}
	var waiting []chan error
	for _, e := range s.queue {
		if e.op != nil {
			n++
		}
		if e.done != nil && e != s.inflight { // the entry being written is answered by step
			waiting = append(waiting, e.done)
		}
	}
	if err := s.spill(true); err != nil {
		s.gaveUp = fmt.Errorf("%w (%s for %s, over the bound of %s), and the %d writes kept could not be saved: %v",
			errOutage, s.Path(), s.o.Now().Sub(s.since).Round(time.Second), s.o.Bound, n, err)
	} else {
		s.gaveUp = fmt.Errorf("%w: %s, over the --store-outage bound of %s (%s); %d writes are kept in %s: finish with `fathom store upload --store %s %s`",
			errOutage, s.o.Now().Sub(s.since).Round(time.Second), s.o.Bound, oneLine(s.lastErr), n, s.file.path, shellQuote(s.Path()), shellQuote(s.file.path))
	}
	for _, done := range waiting {
		done <- s.gaveUp
	}
	if s.file != nil {
		for _, w := range s.file.waiting {
			w.done <- s.gaveUp
		}
		s.file.waiting = nil
	}
	s.queue, s.memBytes = nil, 0
	if s.inflight != nil {
		s.queue = []*entry{s.inflight}
		if s.inflight.op != nil {
			s.memBytes = s.inflight.size
		}
	}
	s.idle.Broadcast()
}

// keepAfterGivingUp ends e, the entry being written when the store was given up on
// and whose write then failed: an op goes to the spool file, and whoever waits for e
// hears the outage. s.mu is held.
func (s *durableStore) keepAfterGivingUp(e *entry) {
	if len(s.queue) > 0 && s.queue[0] == e {
		s.queue = s.queue[1:]
	}
	err := s.gaveUp
	switch {
	case e.op != nil:
		s.memBytes -= e.size
		err = s.toFile(e.op)
	case e.sample != nil:
		e.w.dropped++
		s.smpBytes -= e.size
	}
	if e.done != nil {
		e.done <- err
	}
	s.idle.Broadcast()
}

// spill moves the queued writes up to the first call someone waits for (all, when
// all) to the spool file; samples are dropped and counted skipped. s.mu is held.
func (s *durableStore) spill(all bool) error {
	if s.file == nil {
		f, err := createSpool(s.o.Dir, s.Path(), s.o.Now())
		if err != nil {
			return err
		}
		s.file = f
	}
	start := 0
	if len(s.queue) > 0 && s.queue[0] == s.inflight {
		start = 1 // being written: it stays, and is tried again first if that fails
		s.inflight.first = true
	}
	i := start
	for ; i < len(s.queue); i++ {
		e := s.queue[i]
		if e.fn != nil && !all {
			break
		}
		switch {
		case e.sample != nil:
			e.w.dropped++
			s.smpBytes -= e.size
			if l := s.late[e.w.run]; l != nil {
				l.samples--
			}
		case e.op != nil:
			if err := s.file.append(e.op); err != nil {
				s.queue = append(s.queue[:start], s.queue[i:]...)
				return err
			}
			s.memBytes -= e.size
			if e.done != nil && !all {
				// A caller waits for it: it is answered once the file is written.
				s.file.waiting = append(s.file.waiting, waiter{n: s.file.total, done: e.done})
			}
		}
	}
	s.queue = append(s.queue[:start], s.queue[i:]...)
	return s.file.sync()
}

// toFile appends a write made after giving up to the spool file; s.mu is held.
func (s *durableStore) toFile(o *op) error {
	if s.file == nil {
		return s.gaveUp
	}
	if err := s.file.append(o); err != nil {
		return fmt.Errorf("%v; and this write could not be kept: %v", s.gaveUp, err)
	}
	_ = s.file.sync()
	return s.gaveUp
}

// drain writes what waits, in order, while the store answers.
func (s *durableStore) drain() {
	defer close(s.done)
	backoff := 100 * time.Millisecond
	for {
		s.mu.Lock()
		if s.gaveUp == nil && s.pending() {
			s.mu.Unlock()
			if s.step() {
				backoff = 100 * time.Millisecond
				continue
			}
			s.mu.Lock()
			_ = s.checkBound()
			s.mu.Unlock()
			select {
			case <-time.After(backoff):
			case <-s.stop:
				return
			}
			backoff = min(2*backoff, time.Second)
			continue
		}
		s.mu.Unlock()
		select {
		case <-s.wake:
		case <-s.stop:
			return
		}
	}
}

// pending reports whether anything waits; s.mu is held.
func (s *durableStore) pending() bool {
	return len(s.queue) > 0 || (s.file != nil && s.file.left > 0)
}

// step writes the first waiting thing; false when the store did not answer.
func (s *durableStore) step() bool {
	s.mu.Lock()
	var (
		o  *op
		e  *entry
		fn func(context.Context) error
	)
	fromFile := s.file != nil && s.file.left > 0 && !(len(s.queue) > 0 && s.queue[0].first)
	if fromFile {
		var err error
		if o, err = s.file.peek(); err != nil {
			// A spool file that cannot be read back: kept for upload, the outage goes on.
			s.lastErr = err
			s.giveUp()
			s.mu.Unlock()
			return false
		}
	} else {
		e = s.queue[0]
		if e.gone {
			s.queue = s.queue[1:]
			s.afterStep()
			s.mu.Unlock()
			return true
		}
		s.inflight = e
		switch {
		case e.op != nil:
			o = e.op
		case e.sample != nil:
			fn = func(ctx context.Context) error { return e.w.w.Add(ctx, e.sample) }
		default:
			fn = e.fn
		}
	}
	relock := s.down && s.backAt.IsZero()
	s.mu.Unlock()
	if o != nil {
		fn = func(ctx context.Context) error { return apply(ctx, s.Store, o) }
	}
	if relock && !s.relock() {
		s.mu.Lock()
		s.inflight = nil
		s.idle.Broadcast()
		s.mu.Unlock()
		return false
	}
	err := s.attempt(context.Background(), fn)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inflight = nil
	s.idle.Broadcast() // Close waits for a write under way
	if err != nil && s.o.Unreachable(err) {
		s.goDown(err)
		s.backAt = time.Time{}
		if e != nil && s.gaveUp != nil {
			// Given up while it was being written: kept in the spool file after the
			// rest (the upload writes each thing once, whatever the order).
			s.keepAfterGivingUp(e)
		}
		return false
	}
	if s.down && s.backAt.IsZero() {
		s.backAt = s.o.Now()
	}
	s.finishStep(fromFile, e, o, err)
	s.afterStep()
	return true
}

// relock takes the store's lock again after an outage, when the store holds one (a
// PostgreSQL store's advisory lock); false when the store is still unreachable.
func (s *durableStore) relock() bool {
	r, ok := s.Store.(interface{ Relock(context.Context) error })
	if !ok {
		return true
	}
	if err := s.attempt(context.Background(), r.Relock); err != nil && s.o.Unreachable(err) {
		s.mu.Lock()
		s.lastErr = err
		s.mu.Unlock()
		return false
	}
	return true
}

// finishStep, with s.mu held, is done with the write step made: the spool file's or
// the queue's head (e) advanced past, its waiters told err, and a refusal counted.
func (s *durableStore) finishStep(fromFile bool, e *entry, o *op, err error) {
	// Written, or refused by the store for itself (not for an outage): either way it
	// is done with; a refused write is said in the warning that ends the outage.
	if fromFile {
		s.file.advance()
		for len(s.file.waiting) > 0 && s.file.waiting[0].n <= s.file.done {
			s.file.waiting[0].done <- err
			s.file.waiting = s.file.waiting[1:]
		}
	} else {
		s.queue = s.queue[1:] // e: spill and giveUp leave the entry being written at the head
		switch {
		case e.op != nil:
			s.memBytes -= e.size
		case e.sample != nil:
			s.smpBytes -= e.size
		}
		if e.done != nil {
			e.done <- err
		}
	}
	if err != nil && e != nil && e.sample != nil {
		e.w.dropped++ // a sample the store refused: skipped
	} else if err != nil && (e == nil || e.done == nil) {
		s.lastErr = err
		if o != nil && o.Run != 0 {
			s.lateOf(o.Run).refused++
		}
	}
}

// afterStep ends the outage when nothing waits any more; s.mu is held.
func (s *durableStore) afterStep() {
	if s.pending() {
		return
	}
	if s.down {
		s.down = false
		caught := s.o.Now()
		if s.backAt.IsZero() {
			s.backAt = caught
		}
		took := s.backAt.Sub(s.since)
		// Every run this process writes records the outage, whether or not it had
		// anything to write meanwhile (a coordinator waiting for its agents' intervals).
		for id := range s.open {
			s.lateOf(id)
		}
		runs := make([]int64, 0, len(s.late))
		for id := range s.late {
			if id != 0 {
				runs = append(runs, id)
			}
		}
		sort.Slice(runs, func(i, j int) bool { return runs[i] < runs[j] })
		var skipped = map[int64]int64{}
		for _, w := range s.writers {
			if n := w.dropped - w.told; n > 0 {
				skipped[w.run] += n
				if _, ok := s.late[w.run]; !ok {
					runs = append(runs, w.run)
				}
			}
		}
		for _, id := range runs {
			l := s.lateOf(id)
			msg := fmt.Sprintf("the results store was unreachable from %s for %s: %s written late, in order, by %s; nothing measured was lost",
				s.since.Format("2006-01-02 15:04:05 MST"), took.Round(100*time.Millisecond), l.describe(), caught.Format("15:04:05"))
			if *l == (lateCounts{}) {
				msg = fmt.Sprintf("the results store was unreachable from %s for %s; nothing of this run waited to be written meanwhile, nothing measured was lost",
					s.since.Format("2006-01-02 15:04:05 MST"), took.Round(100*time.Millisecond))
			}
			if n := skipped[id]; n > 0 {
				msg += fmt.Sprintf("; %d server/OS samples were not kept (over the %d MiB kept in memory) and are recorded as skipped", n, s.o.Samples>>20)
			}
			if l.refused > 0 {
				msg += fmt.Sprintf("; %d writes were refused by the store when it returned (%s)", l.refused, oneLine(s.lastErr))
			}
			runID := id
			s.queue = append(s.queue, &entry{fn: func(ctx context.Context) error { return s.Store.AddRunWarning(ctx, runID, msg) }})
		}
		for _, w := range s.writers {
			if w.dropped > w.told {
				w.told = w.dropped
				ww := w
				s.queue = append(s.queue, &entry{fn: func(ctx context.Context) error { return ww.w.Skipped(ctx, ww.reported+ww.told) }})
			}
		}
		if s.o.Warn != nil {
			total := lateCounts{}
			for _, l := range s.late {
				total.intervals += l.intervals
				total.other += l.other
				total.samples += l.samples
			}
			if total == (lateCounts{}) {
				// A call that failed (a lost acknowledgement, say) and nothing written late.
				s.o.Warn(fmt.Sprintf("the results store %s is back after %s: nothing waited to be written, nothing lost", s.Path(), took.Round(100*time.Millisecond)))
			} else {
				s.o.Warn(fmt.Sprintf("the results store %s is back after %s: %s written late, nothing lost", s.Path(), took.Round(100*time.Millisecond), total.describe()))
			}
		}
		s.late = map[int64]*lateCounts{}
		s.backAt = time.Time{}
		if s.file != nil {
			s.file.remove()
			s.file = nil
		}
		if len(s.queue) > 0 {
			s.poke()
			return
		}
	}
	s.idle.Broadcast()
}

func (l *lateCounts) describe() string {
	var parts []string
	parts = append(parts, plural(l.intervals, "interval"))
	if l.other > 0 {
		parts = append(parts, plural(l.other, "other write"))
	}
	if l.samples > 0 {
		parts = append(parts, plural(l.samples, "server/OS sample"))
	}
	return strings.Join(parts, ", ")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// Close waits for what is kept to be written (up to the bound of the outage), then
// closes the store. After giving up, the spool file stays for `fathom store upload`,
// and Close returns the error that says so.
func (s *durableStore) Close() error {
	s.mu.Lock()
	if s.gaveUp == nil && s.pending() && s.down && s.o.Warn != nil {
		// Measuring is over; the process waits for the store, and says so.
		n := len(s.queue)
		if s.file != nil {
			n += s.file.left
		}
		s.o.Warn(fmt.Sprintf("the results store %s is still unreachable: waiting for it to write the %d writes kept, until %s (the --store-outage bound); past it they stay in a spool file for `fathom store upload`",
			s.Path(), n, s.since.Add(s.o.Bound).Format("15:04:05")))
	}
	for (s.gaveUp == nil && s.pending()) || s.inflight != nil { // a write under way ends within o.Attempt
		s.idle.Wait()
	}
	gave := s.gaveUp
	if s.file != nil {
		s.file.close()
	}
	s.closed = true
	s.mu.Unlock()
	close(s.stop)
	<-s.done
	err := s.Store.Close()
	if gave != nil {
		return gave
	}
	return err
}

func oneLine(err error) string {
	if err == nil {
		return ""
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}

// shellQuote quotes v for a POSIX shell when it needs it.
func shellQuote(v string) string {
	if v != "" && strings.IndexFunc(v, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@=+,%", r))
	}) < 0 {
		return v
	}
	return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
}
