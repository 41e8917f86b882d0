package measure

import hdr "github.com/HdrHistogram/hdrhistogram-go"

// Timer is one owner's latency histogram with fathom's range and precision, in a
// recorder's compact form (blocks of counts made on first use, so an unused Timer
// costs a few hundred bytes). Recording never allocates once a block exists. Not
// safe for concurrent use: each worker owns its Timers, read after it has stopped.
type Timer struct{ d dense }

// Record counts one latency in nanoseconds (clamped into 1 µs to 1 h).
func (t *Timer) Record(ns int64) { t.d.record(ns) }

// DrainInto adds the counts to *dst (created if nil) and empties t.
func (t *Timer) DrainInto(dst **hdr.Histogram) { t.d.drainInto(dst) }
