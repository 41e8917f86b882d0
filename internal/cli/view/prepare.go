package view

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// PrepareLines prints a prepare's progress (a run.PrepareListener): a rewritten line on
// Bar (a terminal) when set, otherwise a line on W per table and every 10%; Finish
// prints how long it took.
type PrepareLines struct {
	W   io.Writer
	Bar io.Writer // a terminal, or nil
	Now func() time.Time
	// Quiet leaves out the first line and the progress: only the last line is said.
	Quiet bool

	name string
	mu   sync.Mutex
	last map[string]int64 // last printed tenth per table
	t0   time.Time
	ok   bool
}

// Output is where a workload's script prints (a sysbench script's print()).
func (p *PrepareLines) Output() io.Writer { return p.W }

func (p *PrepareLines) Preparing(wl, target string) {
	p.name, p.t0, p.ok = wl, p.Now(), true
	p.last = map[string]int64{}
	if !p.Quiet {
		fmt.Fprintf(p.W, "preparing %s on %s\n", wl, target)
	}
}

func (p *PrepareLines) Progress(table string, done, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.Quiet {
		return
	}
	if p.Bar != nil {
		if total > 0 {
			fmt.Fprintf(p.Bar, "\r\033[K%s: %d of %d rows (%.0f%%)", table, done, total, 100*float64(done)/float64(total))
		} else {
			fmt.Fprintf(p.Bar, "\r\033[K%s: %d rows", table, done)
		}
		return
	}
	tenth := int64(-1)
	if total > 0 {
		tenth = done * 10 / total
	}
	if prev, ok := p.last[table]; ok && prev == tenth && done != total {
		return
	}
	p.last[table] = tenth
	if total > 0 && (tenth > 0 || done == total) {
		fmt.Fprintf(p.W, "  %s: %d of %d rows (%d%%) %s\n", table, done, total, done*100/total, p.Now().Sub(p.t0).Round(time.Millisecond))
	}
}

// Finish clears the progress line and, after a prepare that got under way, says how
// long it took (err nil) .
func (p *PrepareLines) Finish(err error) {
	if p.Bar != nil && !p.Quiet {
		fmt.Fprint(p.Bar, "\r\033[K")
	}
	if err == nil && p.ok {
		fmt.Fprintf(p.W, "prepared %s in %s\n", p.name, p.Now().Sub(p.t0).Round(time.Millisecond))
	}
}
