package measure

import (
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Interval is the merged measurement of all workers over one report interval.
type Interval struct {
	Index  int
	Start  time.Duration // since the run's start
	End    time.Duration
	Warmup bool
	Types  []TypeInterval
	// Reconnects counts successful reconnections during the interval.
	Reconnects int64
	// Commands are the latencies of each script command (pgbench's -r) that ended in
	// the interval, by the workload's command index; nil unless the workload times them.
	Commands []*hdr.Histogram
}

// TypeInterval is one transaction type's share of an interval.
type TypeInterval struct {
	Name string
	Counts
	Latency       *hdr.Histogram // successful transactions' response time (never nil)
	Service       *hdr.Histogram // open loop service time, or nil
	FailedLatency *hdr.Histogram // time spent on transactions that gave up, or nil
}

// NewInterval returns an empty interval for the named transaction types.
func NewInterval(index int, types []string) *Interval {
	iv := &Interval{Index: index, Types: make([]TypeInterval, len(types))}
	for i, n := range types {
		iv.Types[i] = TypeInterval{Name: n, Latency: NewHistogram()}
	}
	return iv
}

func mergeInto(dst **hdr.Histogram, src *hdr.Histogram) {
	if src == nil || src.TotalCount() == 0 {
		return
	}
	if *dst == nil {
		*dst = NewHistogram()
	}
	(*dst).Merge(src)
}

// AddRecorder merges a worker's recorder into the interval and empties it for reuse.
func (iv *Interval) AddRecorder(r *Recorder) {
	for i := range iv.Types {
		t := &iv.Types[i]
		t.Counts.Add(&r.Counts[i])
		r.latency[i].drainInto(&t.Latency)
		r.service[i].drainInto(&t.Service)
		r.failed[i].drainInto(&t.FailedLatency)
	}
	if len(r.commands) > len(iv.Commands) {
		iv.Commands = append(iv.Commands, make([]*hdr.Histogram, len(r.commands)-len(iv.Commands))...)
	}
	for i, d := range r.commands {
		d.drainInto(&iv.Commands[i])
	}
	iv.Reconnects += r.Reconnects
	r.Reset()
}

// Add merges another interval (of the same types) into iv, e.g. to total a run.
func (iv *Interval) Add(o *Interval) {
	for i := range iv.Types {
		t, s := &iv.Types[i], &o.Types[i]
		t.Counts.Add(&s.Counts)
		mergeInto(&t.Latency, s.Latency)
		mergeInto(&t.Service, s.Service)
		mergeInto(&t.FailedLatency, s.FailedLatency)
	}
	iv.AddCommands(o.Commands)
	iv.Reconnects += o.Reconnects
}

// AddCommands merges per-command histograms (Interval.Commands of another interval)
// into iv's.
func (iv *Interval) AddCommands(cmds []*hdr.Histogram) {
	if len(cmds) > len(iv.Commands) {
		iv.Commands = append(iv.Commands, make([]*hdr.Histogram, len(cmds)-len(iv.Commands))...)
	}
	for i, h := range cmds {
		mergeInto(&iv.Commands[i], h)
	}
}

// Total returns all types' counts and latency merged.
func (iv *Interval) Total() TypeInterval {
	tot := TypeInterval{Name: "all", Latency: NewHistogram()}
	for i := range iv.Types {
		t := &iv.Types[i]
		tot.Counts.Add(&t.Counts)
		mergeInto(&tot.Latency, t.Latency)
		mergeInto(&tot.Service, t.Service)
		mergeInto(&tot.FailedLatency, t.FailedLatency)
	}
	return tot
}

// Seconds is the interval's length in seconds.
func (iv *Interval) Seconds() float64 { return (iv.End - iv.Start).Seconds() }
