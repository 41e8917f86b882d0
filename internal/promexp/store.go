package promexp

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/fathom-lab/fathom/internal/store"
)

// Reader is what NewHandler reads from a results store; every store.RunStore is one.
type Reader interface {
	// Runs with Status "running" returns the runs in progress: a run whose writing
	// process is gone reads as interrupted and is left out.
	Runs(ctx context.Context, f store.RunFilter) ([]store.Run, error)
	EncodedIntervals(ctx context.Context, run *store.Run) ([]store.EncodedInterval, error)
}

// IntervalsAfter is an optional ability of a Reader: the run's intervals with an
// index greater than after, in order. Without it each scrape reads every interval of
// every run in progress and skips those it has seen.
type IntervalsAfter interface {
	EncodedIntervalsAfter(ctx context.Context, run *store.Run, after int) ([]store.EncodedInterval, error)
}

// Options tune a handler.
type Options struct {
	// Timeout bounds one scrape's reads of the store (default 10s); a scrape's own
	// deadline, when shorter, wins.
	Timeout time.Duration
	// Warn receives one line per read error (nil: dropped); the scrape then says
	// fathom_store_up 0 and leaves out the runs it could not read.
	Warn func(msg string)
	// Runtime adds the Go runtime's and the process's own metrics (go_*, process_*).
	Runtime bool
}

// NewHandler serves the metrics of every run in progress in the store, read at each
// scrape. A run's intervals are read once: each scrape reads only those that arrived
// since the last (with IntervalsAfter) and keeps, per run in progress, the counters
// and the merged latency histograms so far; a run that is no longer in progress is
// forgotten.
func NewHandler(r Reader, o Options) http.Handler {
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	h := &storeHandler{r: r, o: o, runs: map[string]*runState{}}
	h.http = newHTTPHandler(&collector{gather: h.gather}, o.Runtime)
	return h
}

type storeHandler struct {
	r    Reader
	o    Options
	http http.Handler

	mu   sync.Mutex // one scrape at a time; guards ctx and runs
	ctx  context.Context
	runs map[string]*runState // by run UUID
	rd   reader
}

func (h *storeHandler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ctx, cancel := context.WithTimeout(req.Context(), h.o.Timeout)
	defer cancel()
	h.ctx = ctx
	h.http.ServeHTTP(w, req)
	h.ctx = nil
}

func (h *storeHandler) warn(format string, args ...any) {
	if h.o.Warn != nil {
		h.o.Warn(fmt.Sprintf(format, args...))
	}
}

// gather reads the runs in progress and what they stored since the last scrape.
func (h *storeHandler) gather(emit func(*runState)) *bool {
	ctx := h.ctx
	if ctx == nil { // collected outside ServeHTTP (a test's registry)
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.Background(), h.o.Timeout)
		defer cancel()
	}
	up := true
	runs, err := h.r.Runs(ctx, store.RunFilter{Status: "running"})
	if err != nil {
		h.warn("metrics: reading the runs in progress: %v", err)
		up = false
		return &up
	}
	keep := make(map[string]*runState, len(runs))
	for i := range runs {
		run := &runs[i]
		key := runKey(run)
		s := h.runs[key]
		if s == nil {
			s = newRunState(run)
		}
		keep[key] = s // what was read stays read: a scrape that times out makes progress
		if err := h.update(ctx, s, run); err != nil {
			h.warn("metrics: reading run %s: %v", key, err)
			up = false
			continue
		}
		emit(s)
	}
	h.runs = keep
	return &up
}

func (h *storeHandler) update(ctx context.Context, s *runState, run *store.Run) error {
	var ivs []store.EncodedInterval
	var err error
	if ia, ok := h.r.(IntervalsAfter); ok {
		ivs, err = ia.EncodedIntervalsAfter(ctx, run, s.lastIndex)
	} else {
		ivs, err = h.r.EncodedIntervals(ctx, run)
	}
	if err != nil {
		return err
	}
	return s.add(&h.rd, ivs)
}

// newHTTPHandler serves c (and the runtime's metrics) in the format the scraper asks
// for, the Prometheus text format by default.
func newHTTPHandler(c prometheus.Collector, runtime bool) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	if runtime {
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}
