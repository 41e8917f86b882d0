package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/fathom-lab/fathom/internal/analyze"
	"github.com/fathom-lab/fathom/internal/collect"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/target/targets"
)

// watchWorkload is the workload name of stored watch sessions.
const watchWorkload = "watch"

type watchOpts struct {
	target         string
	store          string
	duration       time.Duration
	interval       time.Duration
	connectTimeout time.Duration
	labels         []string
	quiet          bool
	asJSON         bool
	sampling       samplingOpts
}

func newWatchCmd(env *Env) *cobra.Command {
	o := &watchOpts{}
	cmd := &cobra.Command{
		Use:   "watch",
		Short: "Sample server and OS metrics without a benchmark, live, and store them as a watch session",
		Long: `watch runs the same collectors as a benchmark run, without a workload: while real
load runs, it shows the key rates every interval and stores everything in the results
database as a watch session (workload "watch"), so that it can be shown, reported and
compared like a run. Stalls are found in the server's own throughput (PostgreSQL's
commits, MySQL's statements). Without -T it runs until Ctrl-C.`,
		Example: `  fathom watch --target postgres://postgres@db1/app -P 5s
  fathom watch --target mysql://root@127.0.0.1/test -T 10m -P 10 --label change=before`,
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd.Context(), env) },
	}
	fs := cmd.Flags()
	def := env.Getenv("FATHOM_TARGET")
	if def == "" {
		def = DefaultTarget
	}
	fs.StringVar(&o.target, "target", def, "database: postgres://…, mysql://…, sqlite:PATH (also $FATHOM_TARGET)")
	storeFlag(fs, env, &o.store)
	durationVarP(fs, &o.duration, "time", "T", 0, "how long to watch (default: until Ctrl-C)")
	durationVarP(fs, &o.interval, "report-interval", "P", time.Second, "sampling interval, e.g. 1, 10s")
	durationVarP(fs, &o.connectTimeout, "connect-timeout", "", 10*time.Second, "time allowed for each connection attempt")
	fs.StringArrayVar(&o.labels, "label", nil, "label key=value stored with the session (repeatable)")
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "no live view")
	fs.BoolVar(&o.asJSON, "json", false, "print the final summary as JSON")
	fs.StringSliceVar(&o.sampling.only, "collect", nil, "sample only these collectors or sources (see `fathom collectors`)")
	fs.StringSliceVar(&o.sampling.skip, "no-collector", nil, "leave out these collectors or sources")
	durationVarP(fs, &o.sampling.timeout, "collect-timeout", "", 0, "time allowed for each collector per sample (default 2s, at most the interval)")
	fs.Float64Var(&o.sampling.threshold, "stall-threshold", 0, "a stall is throughput below this fraction of the rolling median (default 0.5)")
	fs.IntVar(&o.sampling.window, "stall-window", 0, "rolling median window for stalls, in intervals (default 31)")
	return cmd
}

// watchSummary is the end of a watch session.
type watchSummary struct {
	RunID    int64             `json:"run_id"`
	Status   string            `json:"status"`
	Samples  int               `json:"samples"`
	Duration time.Duration     `json:"duration_ns"`
	Skipped  int               `json:"skipped"`
	Failures map[string]string `json:"collector_failures,omitempty"`
	Stalls   []store.Stall     `json:"stalls"`
}

func (o *watchOpts) run(ctx context.Context, env *Env) error {
	if o.interval < 100*time.Millisecond {
		return usagef("--report-interval %s: use at least 100ms", o.interval)
	}
	if o.duration < 0 {
		return usagef("--time %s: use a positive duration", o.duration)
	}
	labels := map[string]string{}
	for _, l := range o.labels {
		k, v, err := parseKV(l, "--label")
		if err != nil {
			return usagef("%v", err)
		}
		labels[k] = v
	}
	tgt, err := targets.Open(o.target, target.Config{ConnectTimeout: o.connectTimeout, AppName: "fathom watch"})
	if err != nil {
		return usagef("%v", err)
	}
	defer tgt.Close()
	if err := o.sampling.check(tgt.Kind()); err != nil {
		return err
	}
	stallP, _ := o.sampling.stallParams()
	// A server that cannot be reached is a clear error before anything is stored.
	cctx, cancel := context.WithTimeout(ctx, o.connectTimeout+5*time.Second)
	conn, err := connect(cctx, tgt)
	cancel()
	if err != nil {
		return err
	}
	conn.Close()
	info, err := tgt.Info(ctx)
	if err != nil {
		info = target.Info{Version: "unknown (" + oneLineErr(err) + ")"}
	}
	st, err := openStore(o.store)
	if err != nil {
		return err
	}
	defer st.Close()
	smp, err := o.sampling.sampler(tgt, o.target, o.interval)
	if err != nil {
		return err
	}
	defer smp.Close()
	srv := smp.Start(ctx)

	h := collect.HostFacts()
	run := &store.Run{
		ToolVersion: version(), Command: redactArgs(env.Args), Workload: watchWorkload,
		Options:    map[string]string{"interval": o.interval.String()},
		TargetKind: tgt.Kind(), Target: tgt.Redacted(), ServerVersion: info.Version, Settings: info.Settings,
		Host: store.Host{Hostname: h.Hostname, OS: h.OS, Kernel: h.Kernel, CPUModel: h.CPUModel, CPUs: h.CPUs,
			MemoryBytes: h.MemoryBytes, GoVersion: h.GoVersion},
		Labels: labels, Duration: o.duration, Interval: o.interval, TxnTypes: []string{}, StartedAt: env.Now(),
	}
	id, err := st.CreateRun(ctx, run)
	if err != nil {
		return withCode(ExitFailure, fmt.Errorf("recording the watch session in %s: %v", o.store, err))
	}
	start := time.Now()
	w, err := st.SampleWriter(ctx, id, start, srv, o.interval)
	if err != nil {
		return withCode(ExitFailure, fmt.Errorf("recording the watch session in %s: %v", o.store, err))
	}
	view := newWatchView(env, tgt.Kind(), o.quiet)
	if o.asJSON {
		view.out = env.Stderr // stdout is for the JSON summary
	}
	if !o.quiet {
		fmt.Fprintf(view.out, "watch %d: %s every %s%s; stored in %s\n", id, tgt.Redacted(), o.interval, untilText(o.duration), o.store)
	}
	runCtx, stop := env.Interrupts(ctx)
	defer stop()
	sum := watchSummary{RunID: id, Status: "complete", Failures: map[string]string{}}
	var writeErr error
	record := func(s *collect.Sample) {
		if err := w.Add(context.WithoutCancel(ctx), s); err != nil && writeErr == nil {
			writeErr = err
		}
		sum.Samples++
		for _, r := range s.Results {
			if r.Status == collect.StatusFailed || r.Status == collect.StatusTimeout {
				sum.Failures[r.Collector] = r.Error
			}
		}
	}
	record(smp.Sample(runCtx, -1, time.Now()))
	interrupted := false
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for k := 0; ; k++ {
		next := time.Duration(k+1) * o.interval
		if o.duration > 0 && next > o.duration {
			break
		}
		timer.Reset(time.Until(start.Add(next)))
		select {
		case <-runCtx.Done():
			interrupted = true
		case <-timer.C:
		}
		if interrupted {
			break
		}
		s := smp.Sample(runCtx, k, time.Now())
		record(s)
		view.show(s, time.Since(start))
		if writeErr != nil {
			break
		}
		// Sampling slower than the interval: skip the boundaries already past.
		if late := time.Since(start) - next; late > o.interval {
			skip := int(late / o.interval)
			sum.Skipped += skip
			k += skip
		}
	}
	view.done()
	end := time.Now()
	sum.Duration = end.Sub(start)
	reason := ""
	switch {
	case writeErr != nil:
		sum.Status, reason = "failed", fmt.Sprintf("writing samples to %s: %v", o.store, writeErr)
	case interrupted && o.duration > 0:
		sum.Status, reason = "interrupted", "interrupted by signal"
	case interrupted:
		reason = "stopped by signal"
	}
	if sum.Skipped > 0 {
		_ = w.Skipped(context.WithoutCancel(ctx), int64(sum.Skipped))
	}
	js, _ := json.Marshal(sum)
	bg := context.WithoutCancel(ctx)
	if err := st.FinishRun(bg, id, sum.Status, reason, end, js); err != nil {
		fmt.Fprintf(env.Stderr, "fathom: warning: could not mark watch %d %s in %s: %v\n", id, sum.Status, o.store, err)
	}
	if stored, err := st.Run(bg, id); err == nil {
		sum.Stalls, err = analyze.AnalyzeStored(bg, st, stored, stallP)
		if err != nil {
			fmt.Fprintf(env.Stderr, "fathom: warning: stalls not analysed: %v\n", err)
		}
	}
	if sum.Stalls == nil {
		sum.Stalls = []store.Stall{}
	}
	if o.asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(sum)
	} else {
		fmt.Fprintf(env.Stdout, "watch %d %s: %d samples over %s", id, sum.Status, sum.Samples, sum.Duration.Round(time.Millisecond))
		if sum.Skipped > 0 {
			fmt.Fprintf(env.Stdout, ", %d intervals skipped (sampling slower than -P)", sum.Skipped)
		}
		fmt.Fprintln(env.Stdout)
		names := make([]string, 0, len(sum.Failures))
		for n := range sum.Failures {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(env.Stdout, "  ! collector %s failed: %s\n", n, sum.Failures[n])
		}
		if sum.Samples-1 < analyze.MinStallIntervals {
			fmt.Fprintf(env.Stdout, "stalls: too few intervals to look for them (%d; at least %d)\n", max(sum.Samples-1, 0), analyze.MinStallIntervals)
		} else {
			writeStallList(env.Stdout, sum.Stalls, id)
		}
		fmt.Fprintf(env.Stdout, "see it again: fathom show %d --store %s\n", id, o.store)
	}
	switch sum.Status {
	case "failed":
		return withCode(ExitFailure, fmt.Errorf("watch %d failed: %s", id, reason))
	case "interrupted":
		return withCode(ExitInterrupted, fmt.Errorf("watch %d interrupted; %d samples kept in %s", id, sum.Samples, o.store))
	}
	return nil
}

func untilText(d time.Duration) string {
	if d <= 0 {
		return " until Ctrl-C"
	}
	return " for " + d.String()
}

func oneLineErr(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }

// watchColumn is one figure of the live view: the sum of some metrics' charted values.
type watchColumn struct {
	head    string
	metrics []string
	unit    string
}

var watchColumns = map[string][]watchColumn{
	"postgres": {
		{"commit/s", []string{"pg.xact_commit"}, ""},
		{"rollbk/s", []string{"pg.xact_rollback"}, ""},
		{"read/s", []string{"pg.blks_read"}, ""},
		{"wal/s", []string{"pg.wal_bytes"}, "bytes"},
		{"fpi/s", []string{"pg.wal_fpi"}, ""},
		{"ckpt", []string{"pg.checkpoints_req", "pg.checkpoints_timed"}, "events"},
		{"ckbuf/s", []string{"pg.buffers_checkpoint"}, ""},
		{"active", []string{"pg.sessions.active"}, ""},
		{"lockw", []string{"pg.waiting.lock"}, ""},
		{"autovac", []string{"pg.autovacuum_workers"}, ""},
	},
	"mysql": {
		{"qps", []string{"mysql.Questions"}, ""},
		{"commit/s", []string{"mysql.Com_commit"}, ""},
		{"rows_w/s", []string{"mysql.Innodb_rows_inserted", "mysql.Innodb_rows_updated", "mysql.Innodb_rows_deleted"}, ""},
		{"running", []string{"mysql.Threads_running"}, ""},
		{"flush/s", []string{"mysql.Innodb_buffer_pool_pages_flushed"}, ""},
		{"ckpt_age", []string{"mysql.innodb.checkpoint_age_pct", "mysql.innodb.checkpoint_age_capacity_pct"}, "first%"},
		{"logwait", []string{"mysql.Innodb_log_waits"}, ""},
		{"redo/s", []string{"mysql.Innodb_os_log_written"}, "bytes"},
		{"hll", []string{"mysql.innodb.history_list_length"}, ""},
		{"binlog", []string{"mysql.binlog.file_seq"}, "events"},
	},
	"os": {
		{"usr%", []string{"os.cpu.user_pct"}, ""},
		{"sys%", []string{"os.cpu.system_pct"}, ""},
		{"wa%", []string{"os.cpu.iowait_pct"}, ""},
		{"dirty", []string{"os.mem.dirty_bytes"}, "bytes"},
		{"wback", []string{"os.mem.writeback_bytes"}, "bytes"},
		{"w/s", []string{"os.disk.writes"}, ""},
		{"wMB/s", []string{"os.disk.write_bytes"}, "MB"},
		{"await", []string{"os.disk.await_ms"}, ""},
		{"util%", []string{"os.disk.util_pct"}, ""},
		{"io_psi%", []string{"os.pressure.io_some_pct"}, ""},
	},
}

// watchView is the live view: a redrawn panel on a terminal, plain lines otherwise.
type watchView struct {
	env     *Env
	out     io.Writer // plain lines
	cols    []watchColumn
	panel   bool
	quiet   bool
	lines   int
	hist    map[string][]float64
	present []watchColumn
}

func newWatchView(env *Env, kind string, quiet bool) *watchView {
	cols := append(append([]watchColumn(nil), watchColumns[kind]...), watchColumns["os"]...)
	return &watchView{env: env, out: env.Stdout, cols: cols, panel: env.Terminal, quiet: quiet, hist: map[string][]float64{}}
}

func (c *watchColumn) value(s *collect.Sample) (float64, bool) {
	var sum float64
	found := false
	for _, m := range c.metrics {
		for i := range s.Readings {
			r := &s.Readings[i]
			if r.Name != m {
				continue
			}
			if v, ok := r.Plot(); ok {
				sum += v
				found = true
			}
			if c.unit == "first%" && found {
				return sum, true
			}
		}
	}
	return sum, found
}

func (c *watchColumn) format(v float64) string {
	switch c.unit {
	case "bytes":
		return fmtValue(v, "bytes")
	case "MB":
		return fmt.Sprintf("%.1f", v/(1<<20))
	case "first%":
		return fmt.Sprintf("%.0f%%", v)
	case "events":
		if v > 0 {
			return "yes"
		}
		return "-"
	}
	return fmtNum(v)
}

func (v *watchView) show(s *collect.Sample, elapsed time.Duration) {
	if v.quiet {
		return
	}
	if v.panel {
		v.drawPanel(s, elapsed)
		return
	}
	// The columns are those the first sample had, kept for the whole session so that
	// they stay under their header ("-" when a collector failed).
	if v.present == nil {
		for _, c := range v.cols {
			if _, ok := c.value(s); ok {
				v.present = append(v.present, c)
			}
		}
	}
	present := v.present
	w := v.out
	if v.lines%20 == 0 {
		fmt.Fprintf(w, "%8s", "time")
		for _, c := range present {
			fmt.Fprintf(w, " %8s", c.head)
		}
		fmt.Fprintln(w)
	}
	v.lines++
	fmt.Fprintf(w, "%8s", fmtElapsed(elapsed.Round(time.Second)))
	for _, c := range present {
		if x, ok := c.value(s); ok {
			fmt.Fprintf(w, " %8s", c.format(x))
		} else {
			fmt.Fprintf(w, " %8s", "-")
		}
	}
	var bad []string
	for _, r := range s.Results {
		if r.Status == collect.StatusFailed || r.Status == collect.StatusTimeout {
			bad = append(bad, r.Collector)
		}
	}
	if len(bad) > 0 {
		fmt.Fprintf(w, "  (failed: %s)", strings.Join(bad, ","))
	}
	fmt.Fprintln(w)
}

var sparks = []rune("▁▂▃▄▅▆▇█")

func sparkline(vals []float64) string {
	lo, hi := vals[0], vals[0]
	for _, x := range vals {
		lo, hi = min(lo, x), max(hi, x)
	}
	var b strings.Builder
	for _, x := range vals {
		i := 0
		if hi > lo {
			i = int((x - lo) / (hi - lo) * float64(len(sparks)-1))
		}
		b.WriteRune(sparks[i])
	}
	return b.String()
}

func (v *watchView) drawPanel(s *collect.Sample, elapsed time.Duration) {
	var b strings.Builder
	b.WriteString("\033[H\033[2J")
	fmt.Fprintf(&b, "fathom watch  %s  (Ctrl-C to stop)\n\n", fmtElapsed(elapsed.Round(time.Second)))
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "metric\tnow\tmin\tmax\tlast 40")
	for _, c := range v.cols {
		x, ok := c.value(s)
		if !ok {
			continue
		}
		h := append(v.hist[c.head], x)
		if len(h) > 40 {
			h = h[len(h)-40:]
		}
		v.hist[c.head] = h
		lo, hi := h[0], h[0]
		for _, y := range h {
			lo, hi = min(lo, y), max(hi, y)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.head, c.format(x), c.format(lo), c.format(hi), sparkline(h))
	}
	tw.Flush()
	for _, r := range s.Results {
		if r.Status == collect.StatusFailed || r.Status == collect.StatusTimeout {
			fmt.Fprintf(&b, "! %s %s: %s\n", r.Collector, r.Status, r.Error)
		}
	}
	io.WriteString(v.env.Stderr, b.String())
}

func (v *watchView) done() {
	if v.panel && !v.quiet {
		fmt.Fprintln(v.env.Stderr)
	}
}

// newCollectorsCmd lists the collectors.
func newCollectorsCmd(env *Env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "collectors",
		Short: "List the server and OS collectors that run, watch and snapshot sample",
		RunE: func(cmd *cobra.Command, args []string) error {
			list := collect.List()
			if asJSON {
				enc := json.NewEncoder(env.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(list)
			}
			tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "SOURCE\tCOLLECTOR\tSINCE\tREADS")
			for _, c := range list {
				since := c.MinVersion
				if since == "" {
					since = "-"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.Source, c.Name, since, c.Help)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the list as JSON")
	return cmd
}
