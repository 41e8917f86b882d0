package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/runner"
)

// livePrinter prints one line per interval, like sysbench's --report-interval, and on a
// terminal keeps a progress bar with the time left on stderr.
type livePrinter struct {
	w        io.Writer
	env      *Env
	cfg      runner.Config
	id       int64
	workload string
	target   string
	bar      bool
}

func newLivePrinter(w io.Writer, env *Env, cfg runner.Config, id int64, wl, tgt string) *livePrinter {
	return &livePrinter{w: w, env: env, cfg: cfg, id: id, workload: wl, target: tgt, bar: env.Terminal && w != io.Discard}
}

func (p *livePrinter) header() {
	mode := "closed loop"
	if p.cfg.Rate > 0 {
		mode = fmt.Sprintf("open loop at %g tx/s (Poisson), latency from intended start", p.cfg.Rate)
	}
	length := fmt.Sprintf("%s", p.cfg.Duration)
	if p.cfg.Transactions > 0 {
		length = fmt.Sprintf("%d transactions per client", p.cfg.Transactions)
	}
	if p.cfg.Warmup > 0 {
		length += fmt.Sprintf(" after %s warm-up", p.cfg.Warmup)
	}
	fmt.Fprintf(p.w, "run %d: %s on %s, %d clients, %s, %s, seed %d\n", p.id, p.workload, p.target, p.cfg.Clients, mode, length, p.cfg.Seed)
}

func (p *livePrinter) clearBar() {
	if p.bar {
		fmt.Fprint(p.env.Stderr, "\r\033[K")
	}
}

func (p *livePrinter) interval(iv *measure.Interval) {
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
	fmt.Fprintf(p.w, "[ %s%s ] thds: %d tps: %.2f qps: %.2f lat (ms) p50: %s p95: %s p99: %s err/s: %.2f reconn: %d%s\n",
		fmtElapsed(iv.End), tag, p.cfg.Clients, rate(t.OK), rate(t.Statements),
		fmtMS(lat.P50), fmtMS(lat.P95), fmtMS(lat.P99), rate(t.ErrorTotal()), iv.Reconnects, extra.String())
	if p.bar {
		p.progress(iv.End)
	}
}

func (p *livePrinter) progress(elapsed time.Duration) {
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
	fmt.Fprintf(p.env.Stderr, "[%s%s] %3.0f%% %s left", strings.Repeat("=", n), strings.Repeat(" ", width-n), frac*100, left)
}

func (p *livePrinter) done() { p.clearBar() }

func fmtElapsed(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", int64(d/time.Second))
	}
	return fmt.Sprintf("%.3gs", d.Seconds())
}

func fmtMS(v float64) string {
	switch {
	case v == 0:
		return "-"
	case v < 10:
		return fmt.Sprintf("%.3f", v)
	case v < 1000:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}
