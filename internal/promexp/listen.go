package promexp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/fathom-lab/fathom/internal/errkind"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/run"
	"github.com/fathom-lab/fathom/internal/store"
)

// exposer serves the metrics of one run, fed by the run's own events: it is a
// run.Listener that passes every event on to the next one. The run is exposed from
// its Started event to its Finished event.
type exposer struct {
	next run.Listener
	ln   net.Listener
	srv  *http.Server
	done chan struct{}

	mu     sync.Mutex
	run    *runState
	rd     reader
	failed bool // an interval could not be read: said once, the run is no longer exposed
}

// listen binds addr (host:port; ":9464" is every interface, "127.0.0.1:0" a free
// port on loopback) and serves the metrics of the run whose events it is given on
// /metrics until Close. next receives every event too.
func listen(addr string, next run.Listener) (*exposer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	e := &exposer{next: next, ln: ln, done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.Handle("/metrics", newHTTPHandler(&collector{gather: e.gather}, true))
	e.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(e.done)
		_ = e.srv.Serve(ln)
	}()
	return e, nil
}

// ForRun is what `fathom run --metrics-addr ADDR` does: with an empty addr it returns
// next and a no-op; otherwise it listens on addr, says where on w, and returns the
// Exposer in front of next and the function that stops it. A bind error is the
// user's to fix (another port, or an address of this machine).
func ForRun(addr string, next run.Listener, w io.Writer) (run.Listener, func(), error) {
	if addr == "" {
		return next, func() {}, nil
	}
	e, err := listen(addr, next)
	if err != nil {
		return nil, nil, errkind.Usagef("--metrics-addr %s: %v; give a free host:port of this machine, e.g. :9464 or 127.0.0.1:9464", addr, unwrapOp(err))
	}
	fmt.Fprintf(w, "fathom: metrics of this run at http://%s/metrics\n", e.addr())
	return e, func() { _ = e.Close() }, nil
}

// unwrapOp drops net.OpError's "listen tcp ADDR:" prefix, which repeats the address.
func unwrapOp(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err
	}
	return err
}

// addr is the address served (with the port chosen when addr asked for port 0).
func (e *exposer) addr() string { return e.ln.Addr().String() }

// Close stops serving; a scrape in progress is given a second to finish.
func (e *exposer) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := e.srv.Shutdown(ctx)
	if err != nil {
		err = e.srv.Close()
	}
	<-e.done
	return err
}

func (e *exposer) gather(emit func(*runState)) *bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.run != nil {
		emit(e.run)
	}
	return nil
}

// Started begins exposing the run.
func (e *exposer) Started(s *run.Started) {
	if s.Run != nil {
		st := newRunState(s.Run)
		e.mu.Lock()
		e.run, e.failed = st, false
		e.mu.Unlock()
	}
	e.next.Started(s)
}

// Interval adds the interval, encoded as the store keeps it.
func (e *exposer) Interval(iv *measure.Interval) {
	enc := store.EncodedInterval{Index: iv.Index, Start: iv.Start, End: iv.End, Warmup: iv.Warmup, Reconnects: iv.Reconnects,
		Types: make([]store.EncodedType, len(iv.Types))}
	for i := range iv.Types {
		t := &iv.Types[i]
		enc.Types[i] = store.EncodedType{Name: t.Name, Counts: t.Counts, Latency: measure.EncodeV2(t.Latency)}
	}
	e.mu.Lock()
	var err error
	if e.run != nil {
		if err = e.run.add(&e.rd, []store.EncodedInterval{enc}); err != nil {
			e.run, e.failed = nil, true
		}
	}
	e.mu.Unlock()
	if err != nil {
		e.next.Warning(fmt.Sprintf("metrics: the run is no longer exposed: %v", err))
	}
	e.next.Interval(iv)
}

// Finished stops exposing the run: its series end.
func (e *exposer) Finished() {
	e.mu.Lock()
	e.run = nil
	e.mu.Unlock()
	e.next.Finished()
}

// Warning passes the warning on.
func (e *exposer) Warning(msg string) { e.next.Warning(msg) }

// Error passes a run's distinct error on (run.ErrorListener).
func (e *exposer) Error(se measure.SeenError) {
	if el, ok := e.next.(run.ErrorListener); ok {
		el.Error(se)
	}
}
