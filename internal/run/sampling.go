package run

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/fathom-lab/fathom/internal/analyze"
	"github.com/fathom-lab/fathom/internal/collect"
	"github.com/fathom-lab/fathom/internal/db"
	"github.com/fathom-lab/fathom/internal/errkind"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/sample"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/target"
)

// Sampling says which server and OS metrics to sample during a run. The zero value
// samples everything with the defaults.
type Sampling struct {
	Off        bool
	Only, Skip []string      // collectors or sources (os, postgres, …)
	Timeout    time.Duration // per collector and sample (0: 2s, at most the interval)
	Threshold  float64       // stall threshold (0: default)
	Window     int           // stall baseline window (0: default)
	// NoProcfs takes the portable path without /proc.
	NoProcfs bool
}

// StallParams are the stall analysis parameters; a bad value is a usage error.
func (o Sampling) StallParams() (analyze.StallParams, error) {
	p := analyze.DefaultStallParams()
	if o.Threshold != 0 {
		p.Threshold = o.Threshold
	}
	if o.Window != 0 {
		p.Window = o.Window
	}
	if err := p.Validate(); err != nil {
		return p, errkind.Usagef("%v", err)
	}
	return p, nil
}

// sampler builds a Sampler for tgt; mistakes are usage errors.
func (o Sampling) sampler(tgt target.Target, dsn string, interval time.Duration) (*collect.Sampler, error) {
	server, host, err := collect.Select(db.CollectOf(tgt.Kind()), o.Only, o.Skip)
	if err != nil {
		return nil, errkind.Usagef("%v", err)
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Second
		if interval > 0 && interval < timeout {
			timeout = max(interval, 250*time.Millisecond)
		}
	}
	opts := collect.Options{Kind: db.CollectOf(tgt.Kind()), Server: server, Host: host, Timeout: timeout, DSN: dsn, NoProcfs: o.NoProcfs}
	opts.NoServer, opts.NoHost = len(server) == 0, len(host) == 0
	return collect.NewSampler(tgt, opts), nil
}

// check validates the options for a target kind (before anything is recorded).
func (o Sampling) check(kind string) error {
	if o.Off {
		return nil
	}
	if _, _, err := collect.Select(db.CollectOf(kind), o.Only, o.Skip); err != nil {
		return errkind.Usagef("%v", err)
	}
	_, err := o.StallParams()
	return err
}

// SamplingResult is what sampling found after the run.
type SamplingResult struct {
	Stalls   []store.Stall
	StallErr error  // why stalls were not analysed
	Host     string // the saturated-host warning, if any
	Measured int    // measured (not warm-up) intervals seen
}

// sampling samples in the background during a run, on the run's clock: the runner's
// interval sink triggers a sample at each boundary (never waiting for it), and samples
// are stored as they come.
type sampling struct {
	opts    Sampling
	warn    func(string)
	st      store.Store
	runID   int64
	smp     *collect.Sampler
	loop    *collect.Loop
	w       store.SampleWriter
	mu      sync.Mutex
	origin  bool
	pending []*sample.Sample
	errs    int
	lastErr error
	res     SamplingResult
}

// startSampling connects the sampler and takes the baseline sample. It returns nil when
// sampling is off or cannot start (a warning): sampling never stops a run.
func startSampling(ctx context.Context, o Sampling, warn func(string), tgt target.Target, dsn string, st store.Store, runID int64, interval time.Duration) *sampling {
	if o.Off {
		return nil
	}
	smp, err := o.sampler(tgt, dsn, interval)
	if err != nil {
		warn(fmt.Sprintf("no server and OS samples: %v", err))
		return nil
	}
	srv := smp.Start(ctx)
	w, err := st.SampleWriter(ctx, runID, time.Now(), srv, interval)
	if err != nil {
		smp.Close()
		warn(fmt.Sprintf("server and OS samples will not be stored: %v", err))
		return nil
	}
	rs := &sampling{opts: o, warn: warn, st: st, runID: runID, smp: smp, w: w}
	rs.loop = smp.Loop(ctx, rs.store)
	rs.loop.Trigger(-1)
	return rs
}

// store writes a sample, holding them until the run's clock zero is known.
func (rs *sampling) store(s *sample.Sample) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if !rs.origin {
		rs.pending = append(rs.pending, s)
		return
	}
	rs.write(s)
}

func (rs *sampling) write(s *sample.Sample) {
	if err := rs.w.Add(context.Background(), s); err != nil {
		rs.errs++
		rs.lastErr = err
	}
}

// cut is called by the runner as it cuts interval index: it triggers the sample
// closing it and never blocks.
func (rs *sampling) cut(index int) {
	if rs == nil {
		return
	}
	rs.loop.Trigger(index)
}

// interval is called from the runner's sink for each interval; it never blocks.
func (rs *sampling) interval(start time.Time, iv *measure.Interval) {
	if rs == nil {
		return
	}
	rs.mu.Lock()
	if !rs.origin {
		rs.origin = true
		rs.w.SetOrigin(start)
		for _, s := range rs.pending {
			rs.write(s)
		}
		rs.pending = nil
	}
	if !iv.Warmup {
		rs.res.Measured++
	}
	rs.mu.Unlock()
}

// finish waits for the last sample, closes the sampler and finds the run's stalls.
func (rs *sampling) finish(ctx context.Context, start time.Time) *SamplingResult {
	if rs == nil {
		return nil
	}
	rs.loop.Stop(rs.smp.Timeout()*time.Duration(2) + time.Second)
	rs.smp.Close()
	rs.mu.Lock()
	if !rs.origin {
		rs.origin = true
		rs.w.SetOrigin(start)
		for _, s := range rs.pending {
			rs.write(s)
		}
	}
	rs.mu.Unlock()
	ctx = context.WithoutCancel(ctx)
	if n := rs.loop.Skipped(); n > 0 {
		_ = rs.w.Skipped(ctx, n)
	}
	if rs.errs > 0 {
		rs.warn(fmt.Sprintf("%d samples could not be stored: %v", rs.errs, rs.lastErr))
	}
	p, err := rs.opts.StallParams()
	if err != nil {
		rs.res.StallErr = err
		return &rs.res
	}
	run, err := rs.st.Run(ctx, rs.runID)
	if err != nil {
		rs.res.StallErr = err
		return &rs.res
	}
	rs.res.Stalls, rs.res.StallErr = analyze.AnalyzeStored(ctx, rs.st, run, p, db.StallOf(run.TargetKind))
	if h, ok, err := analyze.RunHostLoad(ctx, rs.st, run); err == nil && ok {
		rs.res.Host = h.Warning()
	}
	return &rs.res
}
