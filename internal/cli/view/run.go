// Package view turns the engine's typed events into what a person reads on a
// terminal or in a log: a run's interval lines and progress bar, a watch session's
// lines or panel, a prepare's progress, an experiment's progress and results, the
// agents' lines. Only the command-line front end uses it; the engine never formats
// text for a person (DESIGN.md, "The flow").
package view

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/run"
	"github.com/fathom-lab/fathom/internal/runner"
)

// RunLines is a run.Listener (and run.ErrorListener) that prints one line per interval, like sysbench's
// --report-interval, and keeps a progress bar with the time left on Bar (a terminal).
type RunLines struct {
	W    io.Writer // live lines (io.Discard: none)
	Bar  io.Writer // progress bar (nil: none)
	Warn io.Writer // warnings, as "fathom: warning: …" lines (nil: dropped)
	cfg  runner.Config
	errs int // distinct errors printed
	// mu keeps the errors, which come from a goroutine of their own, from being
	// written in the middle of an interval's line or the bar.
	mu sync.Mutex
}

// Started prints the run's header line.
func (p *RunLines) Started(s *run.Started) {
	p.cfg = s.Config
	if p.W == io.Discard {
		p.Bar = nil
	}
	mode := "closed loop"
	if p.cfg.Rate > 0 {
		mode = fmt.Sprintf("open loop at %g tx/s (Poisson), latency from intended start", p.cfg.Rate)
	}
	length := p.cfg.Duration.String()
	if p.cfg.Transactions > 0 {
		length = fmt.Sprintf("%d transactions per client", p.cfg.Transactions)
	}
	if p.cfg.Warmup > 0 {
		length += fmt.Sprintf(" after %s warm-up", p.cfg.Warmup)
	}
	fmt.Fprintf(p.W, "run %d: %s on %s, %d clients, %s, %s, seed %d\n", s.RunID, s.Workload, s.Target, p.cfg.Clients, mode, length, p.cfg.Seed)
}

func (p *RunLines) clearBar() {
	if p.Bar != nil {
		fmt.Fprint(p.Bar, "\r\033[K")
	}
}

// Interval prints an interval's line.
func (p *RunLines) Interval(iv *measure.Interval) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearBar()
	t := iv.Total()
	secs := iv.Seconds()
	rate := func(n int64) float64 {
		if secs <= 0 {
			return 0
		}
		return float64(n) / secs
	}
	lat := measure.LatencyOf(t.Latency)
	tag := ""
	if iv.Warmup {
		tag = " warmup"
	}
	var extra strings.Builder
	if p.cfg.Rate > 0 {
		fmt.Fprintf(&extra, " late: %d dropped: %d", t.Late, t.Dropped)
	}
	if t.Retries > 0 {
		fmt.Fprintf(&extra, " retries: %d", t.Retries)
	}
	if nopm, tpm := measure.PerMinute(iv, secs); tpm > 0 {
		fmt.Fprintf(&extra, " nopm: %.0f tpm: %.0f", nopm, tpm)
	}
	fmt.Fprintf(p.W, "[ %s%s ] thds: %d tps: %.2f qps: %.2f lat (ms) p50: %s p95: %s p99: %s err/s: %.2f reconn: %d%s\n",
		fmtElapsed(iv.End), tag, p.cfg.Clients, rate(t.OK), rate(t.Statements),
		measure.FormatMS(lat.P50), measure.FormatMS(lat.P95), measure.FormatMS(lat.P99), rate(t.ErrorTotal()), iv.Reconnects, extra.String())
	if p.Bar != nil {
		p.progress(iv.End)
	}
}

func (p *RunLines) progress(elapsed time.Duration) {
	total := p.cfg.Warmup + p.cfg.Duration
	if total <= 0 {
		return // by transactions: no known end
	}
	frac := float64(elapsed) / float64(total)
	if frac > 1 {
		frac = 1
	}
	const width = 30
	n := int(frac * width)
	left := (total - elapsed).Round(time.Second)
	if left < 0 {
		left = 0
	}
	fmt.Fprintf(p.Bar, "[%s%s] %3.0f%% %s left", strings.Repeat("=", n), strings.Repeat(" ", width-n), frac*100, left)
}

// Error prints a distinct error as the run first meets it (ErrorListener), on Warn:
// its repeats are counted, not printed.
func (p *RunLines) Error(e measure.SeenError) {
	if p.Warn == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearBar()
	p.errs++
	fmt.Fprintf(p.Warn, "fathom: error: %s\n", errorText(e, p.errs == measure.KeptErrors))
}

// errorText is a distinct error in one line: who met it, when and where, its class,
// code and message, and whether it aborted its client; last adds that further
// distinct errors are only counted.
func errorText(e measure.SeenError, last bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "client %d at %s", e.Client, fmtElapsed(time.Duration(e.AtNs).Round(time.Millisecond)))
	switch {
	case e.Where != "":
		fmt.Fprintf(&b, " in %s", e.Where)
	case e.Txn != "":
		fmt.Fprintf(&b, " in %s", e.Txn)
	}
	fmt.Fprintf(&b, ": %s", e.Class)
	if e.Code != "" {
		fmt.Fprintf(&b, " %s", e.Code)
	}
	fmt.Fprintf(&b, ": %s", e.Message)
	if e.Aborted {
		b.WriteString(" (the client aborted)")
	}
	if last {
		fmt.Fprintf(&b, " (the first %d distinct errors are shown; more are counted in the summary)", measure.KeptErrors)
	}
	return b.String()
}

// Finished clears the progress bar.
func (p *RunLines) Finished() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearBar()
}

// Warning prints a warning line.
func (p *RunLines) Warning(msg string) {
	if p.Warn != nil {
		p.mu.Lock()
		defer p.mu.Unlock()
		fmt.Fprintf(p.Warn, "fathom: warning: %s\n", msg)
	}
}

func fmtElapsed(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", int64(d/time.Second))
	}
	return fmt.Sprintf("%.3gs", d.Seconds())
}
