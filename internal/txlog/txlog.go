// Package txlog writes pgbench's transaction logs (pgbench -l): one line per
// transaction, or with an aggregate interval one line per interval, in the field order
// PostgreSQL 15 to 18 document, so that scripts written for pgbench's logs read
// fathom's. Each client writes into its own buffer; the file is locked only when a
// buffer is full, so the hot path neither allocates nor locks.
package txlog

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/fathom-lab/fathom/internal/safefile"
	"github.com/fathom-lab/fathom/internal/target"
)

// Options say what to log and where.
type Options struct {
	// Prefix of the file name (pgbench's --log-prefix, default "pgbench_log"); the
	// file is Prefix.PID, as pgbench names the log of its first thread.
	Prefix string
	PID    int
	// Aggregate > 0 writes one line per interval of this many whole seconds
	// (--aggregate-interval) instead of one per transaction.
	Aggregate time.Duration
	// SamplingRate in (0, 1] logs that fraction of transactions at random (0: all).
	SamplingRate float64
	Seed         uint64
	Clients      int
	Lag          bool // open loop: the schedule_lag field (per transaction)
	Retries      bool // --max-tries above 1: the retries field (per transaction)
}

// Check reports an option pgbench would refuse, with the fix.
func (o Options) Check() error {
	if o.Aggregate > 0 && o.Aggregate%time.Second != 0 {
		return fmt.Errorf("--aggregate-interval %s: give whole seconds, as pgbench does (e.g. 1 or 10)", o.Aggregate)
	}
	if o.Aggregate > 0 && o.SamplingRate > 0 {
		return fmt.Errorf("--sampling-rate and --aggregate-interval cannot be combined (as in pgbench): an interval line counts every transaction; leave one out")
	}
	return nil
}

// flushAt is the size at which a client's buffer goes to the file (16 KiB a client:
// 16 MiB for 1,000 clients).
const flushAt = 16 << 10

// Log is an open transaction log.
type Log struct {
	o    Options
	path string
	mu   sync.Mutex // the file, err and buckets
	f    *os.File
	err  error
	cl   []clientLog

	base    int64 // first interval start, Unix seconds (aggregate)
	buckets map[int64]*bucket
}

type clientLog struct {
	buf []byte
	n   int64 // transactions logged by this client (transaction_no)
	rng *rand.Rand
	cur *bucket // aggregate: the client's current interval
	idx int64
	_   [64]byte // keep clients' hot fields on separate cache lines
}

// bucket is one aggregate interval. Latencies and lags are in microseconds.
type bucket struct {
	n, sum, sum2, min, max    int64
	lsum, lsum2, lmin, lmax   int64
	skipped, retried, retries int64
	serial, deadlock          int64
	hasLag                    bool
}

// Open creates the log file (replacing one of the same name, as pgbench does).
func Open(o Options, now time.Time) (*Log, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	if o.Prefix == "" {
		o.Prefix = "pgbench_log"
	}
	if o.PID == 0 {
		o.PID = os.Getpid()
	}
	l := &Log{o: o, path: o.Prefix + "." + strconv.Itoa(o.PID), cl: make([]clientLog, o.Clients),
		base: now.Unix(), buckets: map[int64]*bucket{}}
	f, err := safefile.Create(l.path)
	if err != nil {
		return nil, fmt.Errorf("creating the transaction log %s: %v", l.path, err)
	}
	l.f = f
	for i := range l.cl {
		l.cl[i].buf = make([]byte, 0, flushAt+256)
		l.cl[i].idx = -1
		if o.SamplingRate > 0 {
			l.cl[i].rng = rand.New(rand.NewPCG(o.Seed, uint64(i)+1))
		}
	}
	return l, nil
}

// Path is the log file's name.
func (l *Log) Path() string { return l.path }

func micros(d time.Duration) int64 { return d.Microseconds() }

// Txn logs a finished transaction (runner.TxnLog).
func (l *Log) Txn(client, typ int, intended, start, end time.Time, retries int64, failed bool, class target.Class) {
	c := &l.cl[client]
	lat, lag := end.Sub(start), time.Duration(0)
	if !intended.IsZero() {
		lat, lag = end.Sub(intended), start.Sub(intended)
	}
	if l.o.Aggregate > 0 {
		b := l.bucket(c, end)
		switch {
		case failed && class == target.ClassSerialization:
			b.serial++
		case failed && class == target.ClassDeadlock:
			b.deadlock++
		case failed:
			// pgbench aborts a client on other errors; they have no field here.
		default:
			us := micros(lat)
			if b.n == 0 || us < b.min {
				b.min = us
			}
			b.max = max(b.max, us)
			b.n++
			b.sum += us
			b.sum2 += us * us
		}
		if retries > 0 {
			b.retried++
			b.retries += retries
		}
		if !intended.IsZero() && !failed {
			us := micros(lag)
			if !b.hasLag || us < b.lmin {
				b.lmin = us
			}
			b.hasLag = true
			b.lmax = max(b.lmax, us)
			b.lsum += us
			b.lsum2 += us * us
		}
		return
	}
	c.n++
	if c.rng != nil && c.rng.Float64() >= l.o.SamplingRate {
		return
	}
	c.buf = strconv.AppendInt(c.buf, int64(client), 10)
	c.buf = append(c.buf, ' ')
	c.buf = strconv.AppendInt(c.buf, c.n, 10)
	c.buf = append(c.buf, ' ')
	if failed {
		c.buf = append(c.buf, "failed"...)
	} else {
		c.buf = strconv.AppendInt(c.buf, micros(lat), 10)
	}
	l.tail(c, typ, end, lag, retries)
}

// tail writes script_no time_epoch time_us [schedule_lag] [retries] and the newline.
func (l *Log) tail(c *clientLog, typ int, end time.Time, lag time.Duration, retries int64) {
	c.buf = append(c.buf, ' ')
	c.buf = strconv.AppendInt(c.buf, int64(typ), 10)
	c.buf = append(c.buf, ' ')
	c.buf = strconv.AppendInt(c.buf, end.Unix(), 10)
	c.buf = append(c.buf, ' ')
	c.buf = strconv.AppendInt(c.buf, int64(end.Nanosecond()/1000), 10)
	if l.o.Lag {
		c.buf = append(c.buf, ' ')
		c.buf = strconv.AppendInt(c.buf, micros(lag), 10)
	}
	if l.o.Retries {
		c.buf = append(c.buf, ' ')
		c.buf = strconv.AppendInt(c.buf, retries, 10)
	}
	c.buf = append(c.buf, '\n')
	if len(c.buf) >= flushAt {
		l.write(c)
	}
}

// Skipped logs n dropped intended starts (runner.TxnLog): pgbench's "skipped" lines,
// or the skipped field of the interval.
func (l *Log) Skipped(client, typ int, n int64, now time.Time) {
	c := &l.cl[client]
	if l.o.Aggregate > 0 {
		l.bucket(c, now).skipped += n
		return
	}
	for range n {
		if c.rng != nil && c.rng.Float64() >= l.o.SamplingRate {
			continue
		}
		c.buf = strconv.AppendInt(c.buf, int64(client), 10)
		c.buf = append(c.buf, ' ')
		c.buf = strconv.AppendInt(c.buf, c.n+1, 10) // pgbench does not number skipped ones
		c.buf = append(c.buf, " skipped"...)
		l.tail(c, typ, now, 0, 0)
	}
}

// bucket returns the client's bucket for time t, handing the previous one to the
// shared map when t is in a new interval (once per interval per client).
func (l *Log) bucket(c *clientLog, t time.Time) *bucket {
	idx := (t.Unix() - l.base) / int64(l.o.Aggregate/time.Second)
	if idx == c.idx && c.cur != nil {
		return c.cur
	}
	if c.cur != nil {
		l.merge(c.idx, c.cur)
	}
	c.idx, c.cur = idx, &bucket{}
	return c.cur
}

func (l *Log) merge(idx int64, b *bucket) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.buckets[idx]
	if m == nil {
		l.buckets[idx] = b
		return
	}
	if b.n > 0 {
		if m.n == 0 || b.min < m.min {
			m.min = b.min
		}
		m.max = max(m.max, b.max)
	}
	if b.hasLag {
		if !m.hasLag || b.lmin < m.lmin {
			m.lmin = b.lmin
		}
		m.lmax = max(m.lmax, b.lmax)
		m.hasLag = true
	}
	m.n += b.n
	m.sum += b.sum
	m.sum2 += b.sum2
	m.lsum += b.lsum
	m.lsum2 += b.lsum2
	m.skipped += b.skipped
	m.retried += b.retried
	m.retries += b.retries
	m.serial += b.serial
	m.deadlock += b.deadlock
}

func (l *Log) write(c *clientLog) {
	l.mu.Lock()
	if l.err == nil {
		_, l.err = l.f.Write(c.buf)
	}
	l.mu.Unlock()
	c.buf = c.buf[:0]
}

// Close writes what the clients hold (every interval, with the empty ones between,
// as pgbench does) and closes the file. Call it after the clients have stopped.
func (l *Log) Close() error {
	if l.o.Aggregate > 0 {
		for i := range l.cl {
			if c := &l.cl[i]; c.cur != nil {
				l.merge(c.idx, c.cur)
				c.cur = nil
			}
		}
		if len(l.buckets) > 0 {
			idxs := slices.Sorted(func(yield func(int64) bool) {
				for k := range l.buckets {
					if !yield(k) {
						return
					}
				}
			})
			step := int64(l.o.Aggregate / time.Second)
			var buf []byte
			for i := idxs[0]; i <= idxs[len(idxs)-1]; i++ {
				b := l.buckets[i]
				if b == nil {
					b = &bucket{}
				}
				buf = appendInts(buf, l.base+i*step, b.n, b.sum, b.sum2, b.min, b.max,
					b.lsum, b.lsum2, b.lmin, b.lmax, b.skipped, b.retried, b.retries, b.serial, b.deadlock)
			}
			if l.err == nil {
				_, l.err = l.f.Write(buf)
			}
		}
	}
	for i := range l.cl {
		if len(l.cl[i].buf) > 0 {
			l.write(&l.cl[i])
		}
	}
	if err := l.f.Close(); l.err == nil {
		l.err = err
	}
	if l.err != nil {
		return fmt.Errorf("writing the transaction log %s: %v", l.path, l.err)
	}
	return nil
}

func appendInts(buf []byte, v ...int64) []byte {
	for i, x := range v {
		if i > 0 {
			buf = append(buf, ' ')
		}
		buf = strconv.AppendInt(buf, x, 10)
	}
	return append(buf, '\n')
}
