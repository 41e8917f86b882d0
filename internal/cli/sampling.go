package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/fathom-lab/fathom/internal/analyze"
	"github.com/fathom-lab/fathom/internal/collect"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/report"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/target"
)

// samplingOpts are the flags for server and OS sampling during a run (and watch).
// The zero value samples everything with the defaults, so that callers that build
// runOpts themselves get sampling too.
type samplingOpts struct {
	off       bool
	only      []string
	skip      []string
	timeout   time.Duration
	threshold float64
	window    int
}

func (o *samplingOpts) register(fs *pflag.FlagSet) {
	fs.BoolVar(&o.off, "no-collect", false, "do not sample server and OS metrics during the run")
	fs.StringSliceVar(&o.only, "collect", nil, "sample only these collectors or sources (os, postgres, mysql, or names from `fathom collectors`)")
	fs.StringSliceVar(&o.skip, "no-collector", nil, "leave out these collectors or sources")
	durationVarP(fs, &o.timeout, "collect-timeout", "", 0, "time allowed for each collector per sample (default 2s, at most the report interval)")
	fs.Float64Var(&o.threshold, "stall-threshold", 0, "a stall is throughput below this fraction of the rolling median (default 0.5)")
	fs.IntVar(&o.window, "stall-window", 0, "rolling median window for stalls, in intervals (default 31)")
}

func (o *samplingOpts) stallParams() (analyze.StallParams, error) {
	p := analyze.DefaultStallParams()
	if o.threshold != 0 {
		p.Threshold = o.threshold
	}
	if o.window != 0 {
		p.Window = o.window
	}
	if err := p.Validate(); err != nil {
		return p, usagef("%v", err)
	}
	return p, nil
}

// sampler builds a Sampler for tgt from the flags; mistakes are usage errors.
func (o *samplingOpts) sampler(tgt target.Target, dsn string, interval time.Duration) (*collect.Sampler, error) {
	server, host, err := collect.Select(tgt.Kind(), o.only, o.skip)
	if err != nil {
		return nil, usagef("%v", err)
	}
	timeout := o.timeout
	if timeout <= 0 {
		timeout = 2 * time.Second
		if interval > 0 && interval < timeout {
			timeout = max(interval, 250*time.Millisecond)
		}
	}
	opts := collect.Options{Server: server, Host: host, Timeout: timeout, DSN: dsn}
	opts.NoServer, opts.NoHost = len(server) == 0, len(host) == 0
	return collect.NewSampler(tgt, opts), nil
}

// runSampling samples in the background during a run, on the run's clock: the runner's
// interval sink triggers a sample at each boundary (never waiting for it), and samples
// are stored as they come.
type runSampling struct {
	opts     *samplingOpts
	env      *Env
	st       *store.Store
	runID    int64
	smp      *collect.Sampler
	loop     *collect.Loop
	w        *store.SampleWriter
	mu       sync.Mutex
	origin   bool
	pending  []*collect.Sample
	errs     int
	lastErr  error
	stalls   []store.Stall
	stallErr error
	measured int // measured (not warm-up) intervals seen
}

// check validates the flags for a target kind (before anything is recorded).
func (o *samplingOpts) check(kind string) error {
	if o.off {
		return nil
	}
	if _, _, err := collect.Select(kind, o.only, o.skip); err != nil {
		return usagef("%v", err)
	}
	_, err := o.stallParams()
	return err
}

// startRun connects the sampler and takes the baseline sample. It returns nil when
// sampling is off or cannot start (a warning): sampling never stops a run.
func (o *samplingOpts) startRun(ctx context.Context, env *Env, tgt target.Target, dsn string, st *store.Store, runID int64, interval time.Duration) *runSampling {
	if o.off {
		return nil
	}
	smp, err := o.sampler(tgt, dsn, interval)
	if err != nil {
		fmt.Fprintf(env.Stderr, "fathom: warning: no server and OS samples: %v\n", err)
		return nil
	}
	srv := smp.Start(ctx)
	w, err := st.SampleWriter(ctx, runID, time.Now(), srv, interval)
	if err != nil {
		smp.Close()
		fmt.Fprintf(env.Stderr, "fathom: warning: server and OS samples will not be stored: %v\n", err)
		return nil
	}
	rs := &runSampling{opts: o, env: env, st: st, runID: runID, smp: smp, w: w}
	rs.loop = smp.Loop(ctx, rs.store)
	rs.loop.Trigger(-1)
	return rs
}

// store writes a sample, holding them until the run's clock zero is known.
func (rs *runSampling) store(s *collect.Sample) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if !rs.origin {
		rs.pending = append(rs.pending, s)
		return
	}
	rs.write(s)
}

func (rs *runSampling) write(s *collect.Sample) {
	if err := rs.w.Add(context.Background(), s); err != nil {
		rs.errs++
		rs.lastErr = err
	}
}

// interval is called from the runner's sink at each boundary: it triggers the sample
// closing iv and never blocks.
func (rs *runSampling) interval(start time.Time, iv *measure.Interval) {
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
		rs.measured++
	}
	rs.mu.Unlock()
	rs.loop.Trigger(iv.Index)
}

// finish waits for the last sample, closes the sampler and finds the run's stalls.
func (rs *runSampling) finish(ctx context.Context, start time.Time) {
	if rs == nil {
		return
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
		fmt.Fprintf(rs.env.Stderr, "fathom: warning: %d samples could not be stored: %v\n", rs.errs, rs.lastErr)
	}
	p, err := rs.opts.stallParams()
	if err != nil {
		rs.stallErr = err
		return
	}
	run, err := rs.st.Run(ctx, rs.runID)
	if err != nil {
		rs.stallErr = err
		return
	}
	rs.stalls, rs.stallErr = analyze.AnalyzeStored(ctx, rs.st, run, p)
}

// report prints the stalls found after the summary.
func (rs *runSampling) report(w io.Writer) {
	if rs == nil {
		return
	}
	if rs.stallErr != nil {
		fmt.Fprintf(w, "stalls: not analysed: %v\n", rs.stallErr)
		return
	}
	if rs.measured < analyze.MinStallIntervals && len(rs.stalls) == 0 {
		fmt.Fprintf(w, "stalls: too few measured intervals to look for them (%d; a stall is judged against the run's rolling median)\n", rs.measured)
		return
	}
	writeStallList(w, rs.stalls, rs.runID)
}

// writeStallList prints one line per stall (or that there were none).
func writeStallList(w io.Writer, stalls []store.Stall, runID int64) {
	if len(stalls) == 0 {
		fmt.Fprintln(w, "stalls: none (throughput never fell below the rolling median's threshold)")
		return
	}
	fmt.Fprintf(w, "stalls: %d (details: fathom show %d)\n", len(stalls), runID)
	for _, s := range stalls {
		cause := s.Title
		if cause == "" {
			cause = "no known pattern"
		}
		fmt.Fprintf(w, "  #%d %s–%s %s %s → %s (-%.0f%%): %s\n", s.Number, fmtSecs(s.Start), fmtSecs(s.End), s.Throughput,
			fmtNum(s.Baseline), fmtNum(s.Mean), s.Depth*100, cause)
	}
}

func fmtSecs(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }

// fmtNum and fmtValue are the report's formatting, so that a report's stall table
// shows the same numbers as show.
func fmtNum(v float64) string { return report.FormatNumber(v) }

// fmtValue renders a value in its unit.
func fmtValue(v float64, unit string) string { return report.FormatValue(v, unit) }

// writeSampling prints what show adds for a sampled run: the collectors' record, the
// key metrics over the measured intervals, and the stalls with their explanations.
func writeSampling(ctx context.Context, w io.Writer, st *store.Store, run *store.Run) error {
	src, err := st.SampleSource(ctx, run.ID)
	if err != nil {
		return nil // not sampled (--no-collect, or a run from before sampling existed)
	}
	fmt.Fprintln(w)
	srv := src.Server
	where := "remote server: OS metrics describe this host only"
	if srv.Local {
		where = "server on this host"
		if len(srv.Devices) > 0 {
			where += fmt.Sprintf(", disk %s (%s)", strings.Join(srv.Devices, "+"), srv.DiskScope)
		}
	}
	fmt.Fprintf(w, "Server and OS samples (every %s; %s)\n", src.Interval, where)
	crs, err := st.Collectors(ctx, run.ID)
	if err != nil {
		return err
	}
	var bad []string
	for _, c := range crs {
		switch {
		case c.Failed+c.Timeouts > 0:
			bad = append(bad, fmt.Sprintf("%s failed %d/%d (%s)", c.Collector, c.Failed+c.Timeouts, c.OK+c.Failed+c.Timeouts, c.LastError))
		case c.OK == 0 && c.Skipped > 0:
			bad = append(bad, fmt.Sprintf("%s skipped (%s)", c.Collector, c.LastError))
		}
		if c.Resets > 0 {
			bad = append(bad, fmt.Sprintf("%s: counters reset %d time(s), no rate shown there", c.Collector, c.Resets))
		}
	}
	fmt.Fprintf(w, "  collectors: %d", len(crs))
	if src.Skipped > 0 {
		fmt.Fprintf(w, ", %d boundaries skipped (sampling could not keep up)", src.Skipped)
	}
	fmt.Fprintln(w)
	for _, b := range bad {
		fmt.Fprintf(w, "  ! %s\n", b)
	}
	for _, n := range srv.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	ms, err := st.MetricSeries(ctx, run.ID, collect.KeyMetrics(run.TargetKind)...)
	if err != nil {
		return err
	}
	warm := map[int]bool{}
	if ivs, err := st.EncodedIntervals(ctx, run); err == nil {
		for _, iv := range ivs {
			if iv.Warmup {
				warm[iv.Index] = true
			}
		}
	}
	if len(ms) > 0 {
		byName := map[string]*store.MetricSeries{}
		for i := range ms {
			byName[ms[i].Name] = &ms[i]
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "  metric\tmedian\tp95\tmax\t")
		for _, name := range collect.KeyMetrics(run.TargetKind) {
			ser := byName[name]
			if ser == nil {
				continue
			}
			var ys []float64
			for i := range ser.Points {
				if warm[ser.Points[i].Interval] || ser.Points[i].Interval < 0 {
					continue
				}
				if y, ok := ser.Y(i); ok {
					ys = append(ys, y)
				}
			}
			if len(ys) == 0 {
				continue
			}
			sort.Float64s(ys)
			if ys[0] == 0 && ys[len(ys)-1] == 0 {
				continue
			}
			label := name
			if ser.IsCounter() && ser.Unit != "%" {
				label += "/s"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t\n", label, fmtValue(analyze.QuantileSorted(ys, 0.5), ser.Unit),
				fmtValue(analyze.QuantileSorted(ys, 0.95), ser.Unit), fmtValue(ys[len(ys)-1], ser.Unit))
		}
		tw.Flush()
	}
	stalls, _, analyzed, err := st.Stalls(ctx, run.ID)
	if err != nil {
		return err
	}
	fmt.Fprintln(w)
	if !analyzed {
		fmt.Fprintln(w, "stalls: not analysed yet (the run may still be going)")
		return nil
	}
	writeStalls(w, stalls, run.ID)
	return nil
}

// writeStalls prints each stall with its explanation, settings and evidence.
func writeStalls(w io.Writer, stalls []store.Stall, runID int64) {
	if len(stalls) == 0 {
		fmt.Fprintln(w, "Stalls: none (throughput never fell below the threshold of its rolling median)")
		return
	}
	fmt.Fprintf(w, "Stalls: %d\n", len(stalls))
	for _, s := range stalls {
		title := s.Title
		if title == "" {
			title = "cause not recognised"
		}
		fmt.Fprintf(w, "\n  #%d  %s–%s (intervals %d–%d)  %s %s → %s (-%.0f%%, min %s, ~%s lost)\n", s.Number, fmtSecs(s.Start), fmtSecs(s.End),
			s.FirstInterval, s.LastInterval, s.Throughput, fmtNum(s.Baseline), fmtNum(s.Mean), s.Depth*100, fmtNum(s.Min), fmtNum(s.Lost))
		fmt.Fprintf(w, "      %s\n", title)
		for _, line := range wrap(s.Explanation, 90) {
			fmt.Fprintf(w, "      %s\n", line)
		}
		var set []string
		for _, x := range s.Settings {
			v := x.Value
			if v == "" {
				v = "?"
			}
			set = append(set, x.Name+"="+v)
		}
		if len(set) > 0 {
			fmt.Fprintf(w, "      settings: %s\n", strings.Join(set, ", "))
		}
		if len(s.Evidence) > 0 {
			fmt.Fprintln(w, "      unusual during it (baseline → during, robust z):")
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			for _, e := range s.Evidence {
				name := e.Metric
				if e.Kind == "counter" && e.Unit != "%" {
					name += "/s"
				}
				reset := ""
				if e.Reset {
					reset = "  (counter reset)"
				}
				fmt.Fprintf(tw, "        %s\t%s → %s\tz=%+.1f%s\n", name, fmtValue(e.Baseline, e.Unit), fmtValue(e.During, e.Unit), e.Score, reset)
			}
			tw.Flush()
		}
	}
}

// wrap breaks text into lines of at most n characters at spaces.
func wrap(s string, n int) []string {
	var out []string
	line := ""
	for _, word := range strings.Fields(s) {
		if line != "" && len(line)+1+len(word) > n {
			out = append(out, line)
			line = word
			continue
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	if line != "" {
		out = append(out, line)
	}
	return out
}

// samplingJSON is what show --json adds for a sampled run.
type samplingJSON struct {
	Source     *store.SampleSource  `json:"source"`
	Collectors []store.CollectorRun `json:"collectors"`
	Analyzed   bool                 `json:"stalls_analyzed"`
	Stalls     []store.Stall        `json:"stalls"`
}

func samplingFor(ctx context.Context, st *store.Store, run *store.Run) *samplingJSON {
	src, err := st.SampleSource(ctx, run.ID)
	if err != nil {
		return nil
	}
	out := &samplingJSON{Source: src, Stalls: []store.Stall{}}
	out.Collectors, _ = st.Collectors(ctx, run.ID)
	if stalls, _, analyzed, err := st.Stalls(ctx, run.ID); err == nil {
		out.Analyzed = analyzed
		if stalls != nil {
			out.Stalls = stalls
		}
	}
	return out
}
