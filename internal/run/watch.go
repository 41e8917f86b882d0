package run

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/fathom-lab/fathom/internal/analyze"
	"github.com/fathom-lab/fathom/internal/collect"
	"github.com/fathom-lab/fathom/internal/db"
	"github.com/fathom-lab/fathom/internal/errkind"
	"github.com/fathom-lab/fathom/internal/sample"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/target"
)

// watchWorkload is the workload name of stored watch sessions.
const watchWorkload = "watch"

// WatchOptions are a watch session's: the collectors of a run without a workload.
type WatchOptions struct {
	DSN            string
	ConnectTimeout time.Duration
	PollerSockets  bool
	Getenv         func(string) string // the environment for the DSN's defaults
	Duration       time.Duration       // 0: until ctx is cancelled
	Interval       time.Duration       // at least 100ms
	Labels         map[string]string
	Sampling       Sampling
	ToolVersion    string
	Command        string
	Now            func() time.Time
	// Downsampling keeps a long session's size bounded (nil: store.WatchDownsampling):
	// it is applied as the session goes, at least every 5 minutes.
	Downsampling []store.DownsampleTier
}

// WatchListener receives a watch session's live events.
type WatchListener interface {
	// WatchStarted: the session is recorded as run id.
	WatchStarted(id int64, target string)
	// Sample is each interval's sample and the time since the start.
	Sample(s *sample.Sample, elapsed time.Duration)
	Finished()
	Warning(msg string)
}

// WatchSummary is the end of a watch session.
type WatchSummary struct {
	RunID    int64             `json:"run_id"`
	Status   string            `json:"status"`
	Samples  int               `json:"samples"`
	Duration time.Duration     `json:"duration_ns"`
	Skipped  int               `json:"skipped"`
	Failures map[string]string `json:"collector_failures,omitempty"`
	Stalls   []store.Stall     `json:"stalls"`
	// HostWarning says the client host was saturated ("" when not).
	HostWarning string `json:"host_warning,omitempty"`
}

// Check refuses watch options that cannot work before anything is spent: the
// interval and duration, the target's DSN (parsed, not connected) and the sampling
// options. Watch checks the same; a front end calls Check before opening the store.
func (o WatchOptions) Check() error {
	tgt, err := o.check()
	if tgt != nil {
		tgt.Close()
	}
	return err
}

func (o *WatchOptions) check() (target.Target, error) {
	if o.Interval < 100*time.Millisecond {
		return nil, errkind.Usagef("--report-interval %s: use at least 100ms", o.Interval)
	}
	if o.Duration < 0 {
		return nil, errkind.Usagef("--time %s: use a positive duration", o.Duration)
	}
	tgt, err := db.Open(o.DSN, target.Config{ConnectTimeout: o.ConnectTimeout, AppName: "fathom watch", PollerSockets: o.PollerSockets, Getenv: o.Getenv})
	if err != nil {
		return nil, errkind.Usagef("%v", err)
	}
	if err := o.Sampling.check(tgt.Kind()); err != nil {
		tgt.Close()
		return nil, err
	}
	return tgt, nil
}

// watchRun is the run that records a watch session, started at startedAt.
func (o *WatchOptions) watchRun(tgt target.Target, info target.Info, startedAt time.Time) *store.Run {
	h := collect.HostFacts()
	labels := o.Labels
	if labels == nil {
		labels = map[string]string{}
	}
	return &store.Run{
		ToolVersion: o.ToolVersion, Command: o.Command, Workload: watchWorkload,
		Options:    map[string]string{"interval": o.Interval.String()},
		TargetKind: tgt.Kind(), Target: tgt.Redacted(), ServerVersion: info.Version, Settings: info.Settings,
		Host: store.Host{Hostname: h.Hostname, OS: h.OS, Kernel: h.Kernel, CPUModel: h.CPUModel, CPUs: h.CPUs,
			MemoryBytes: h.MemoryBytes, GoVersion: h.GoVersion, Sockets: sockets(tgt), Transport: transport(tgt), OSMetrics: collect.OSMetrics(o.Sampling.NoProcfs)},
		Labels: labels, Duration: o.Duration, Interval: o.Interval, TxnTypes: []string{}, StartedAt: startedAt,
	}
}

// downsampling is the session's downsampling tiers, and how often to apply them: at
// the finest tier's bucket, at most every 5 minutes, at least every interval.
func (o *WatchOptions) downsampling() ([]store.DownsampleTier, time.Duration) {
	tiers := o.Downsampling
	if tiers == nil {
		tiers = store.WatchDownsampling
	}
	every := 5 * time.Minute
	for _, t := range tiers {
		every = min(every, t.Bucket)
	}
	return tiers, max(every, o.Interval)
}

// watchEnd is a finished session's status and reason: failed when its samples could
// not be written, interrupted when a signal cut a session of set duration short
// (complete, stopped by signal, when it had none).
func (o *WatchOptions) watchEnd(st store.Store, writeErr error, interrupted bool) (status, reason string) {
	switch {
	case writeErr != nil:
		return "failed", fmt.Sprintf("writing samples to %s: %v", st.Path(), writeErr)
	case interrupted && o.Duration > 0:
		return "interrupted", "interrupted by signal"
	case interrupted:
		return "complete", "stopped by signal"
	}
	return "complete", ""
}

// watchStalls finds the stored session's stalls and whether this host was saturated,
// into sum (warning on l when the analysis fails).
func watchStalls(ctx context.Context, st store.Store, id int64, stallP analyze.StallParams, sum *WatchSummary, l WatchListener) {
	if stored, err := st.Run(ctx, id); err == nil {
		sum.Stalls, err = analyze.AnalyzeStored(ctx, st, stored, stallP, db.StallOf(stored.TargetKind))
		if err != nil {
			l.Warning(fmt.Sprintf("stalls not analysed: %v", err))
		}
		if h, ok, err := analyze.RunHostLoad(ctx, st, stored); err == nil && ok {
			sum.HostWarning = h.WatchWarning()
		}
	}
	if sum.Stalls == nil {
		sum.Stalls = []store.Stall{}
	}
}

// serverInfo connects once, so that a server that cannot be reached is a clear error
// before anything is stored, and reads the server's version and settings (a version
// that cannot be read is "unknown", with why).
func (o *WatchOptions) serverInfo(ctx context.Context, tgt target.Target) (target.Info, error) {
	cctx, cancel := context.WithTimeout(ctx, o.ConnectTimeout+5*time.Second)
	conn, err := Connect(cctx, tgt)
	cancel()
	if err != nil {
		return target.Info{}, err
	}
	conn.Close()
	info, err := tgt.Info(ctx)
	if err != nil {
		info = target.Info{Version: "unknown (" + strings.Join(strings.Fields(err.Error()), " ") + ")"}
	}
	return info, nil
}

// watchRecorder writes a session's samples and counts them, and the collectors that
// failed, in its summary; err is the first write's error.
type watchRecorder struct {
	w   store.SampleWriter
	sum *WatchSummary
	err error
}

func (r *watchRecorder) add(ctx context.Context, s *sample.Sample) {
	if err := r.w.Add(ctx, s); err != nil && r.err == nil {
		r.err = err
	}
	r.sum.Samples++
	for _, res := range s.Results {
		if res.Status == sample.StatusFailed || res.Status == sample.StatusTimeout {
			r.sum.Failures[res.Collector] = res.Error
		}
	}
}

// Watch samples the server and the OS every interval until the duration is over or
// ctx is cancelled, storing the session as a run in st (which the caller opened and
// closes), then finds its stalls. Errors before the session is recorded come with a
// nil summary; a failed or interrupted session returns its summary with the error.
func Watch(ctx context.Context, st store.Store, o WatchOptions, l WatchListener) (*WatchSummary, error) {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	tgt, err := o.check()
	if err != nil {
		return nil, err
	}
	defer tgt.Close()
	stallP, _ := o.Sampling.StallParams()
	bg := context.WithoutCancel(ctx)
	info, err := o.serverInfo(bg, tgt)
	if err != nil {
		return nil, err
	}
	smp, err := o.Sampling.sampler(tgt, o.DSN, o.Interval)
	if err != nil {
		return nil, err
	}
	defer smp.Close()
	srv := smp.Start(bg)

	id, err := st.CreateRun(bg, o.watchRun(tgt, info, now()))
	if err != nil {
		return nil, errkind.WithKind(errkind.Failed, fmt.Errorf("recording the watch session in %s: %v", st.Path(), err))
	}
	start := time.Now()
	w, err := st.SampleWriter(bg, id, start, srv, o.Interval)
	if err != nil {
		return nil, errkind.WithKind(errkind.Failed, fmt.Errorf("recording the watch session in %s: %v", st.Path(), err))
	}
	l.WatchStarted(id, tgt.Redacted())
	sum := WatchSummary{RunID: id, Status: "complete", Failures: map[string]string{}}
	rec := &watchRecorder{w: w, sum: &sum}
	rec.add(bg, smp.Sample(ctx, -1, time.Now()))
	tiers, every := o.downsampling()
	lastDown := time.Duration(0)
	interrupted := false
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for k := 0; ; k++ {
		next := time.Duration(k+1) * o.Interval
		if o.Duration > 0 && next > o.Duration {
			break
		}
		timer.Reset(time.Until(start.Add(next)))
		select {
		case <-ctx.Done():
			interrupted = true
		case <-timer.C:
		}
		if interrupted {
			break
		}
		s := smp.Sample(ctx, k, time.Now())
		rec.add(bg, s)
		l.Sample(s, time.Since(start))
		if rec.err != nil {
			break
		}
		if el := time.Since(start); el-lastDown >= every {
			lastDown = el
			if _, err := st.Downsample(bg, id, el, tiers); err != nil {
				l.Warning(fmt.Sprintf("older samples not downsampled: %v", err))
			}
		}
		// Sampling slower than the interval: skip the boundaries already past.
		if late := time.Since(start) - next; late > o.Interval {
			skip := int(late / o.Interval)
			sum.Skipped += skip
			k += skip
		}
	}
	l.Finished()
	if _, err := st.Downsample(bg, id, time.Since(start), tiers); err != nil && rec.err == nil {
		l.Warning(fmt.Sprintf("older samples not downsampled: %v", err))
	}
	end := time.Now()
	sum.Duration = end.Sub(start)
	reason := ""
	sum.Status, reason = o.watchEnd(st, rec.err, interrupted)
	if sum.Skipped > 0 {
		_ = w.Skipped(bg, int64(sum.Skipped))
	}
	js, _ := json.Marshal(sum)
	if err := st.FinishRun(bg, id, sum.Status, reason, end, js); err != nil {
		l.Warning(fmt.Sprintf("could not mark watch %d %s in %s: %v", id, sum.Status, st.Path(), err))
	}
	watchStalls(bg, st, id, stallP, &sum, l)
	switch sum.Status {
	case "failed":
		return &sum, errkind.WithKind(errkind.Failed, fmt.Errorf("watch %d failed: %s", id, reason))
	case "interrupted":
		return &sum, errkind.WithKind(errkind.Interrupted, fmt.Errorf("watch %d interrupted; %d samples kept in %s", id, sum.Samples, st.Path()))
	}
	return &sum, nil
}
