package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// hub keeps one feed per run that someone watches live: the run is read from the
// store once per poll however many pages watch it, and each page is sent the new
// state when it changed (a finished interval, or the run's end).
type hub struct {
	s     *server
	mu    sync.Mutex
	feeds map[int64]*feed
	done  chan struct{}
	once  sync.Once
}

type feed struct {
	id       int64
	mu       sync.Mutex
	subs     int
	payload  []byte
	version  int
	changed  chan struct{} // closed and replaced at each new version
	finished bool
	err      string
}

func newHub(s *server) *hub { return &hub{s: s, feeds: map[int64]*feed{}, done: make(chan struct{})} }

func (h *hub) close() { h.once.Do(func() { close(h.done) }) }

func (h *hub) subscribe(id int64) *feed {
	h.mu.Lock()
	defer h.mu.Unlock()
	f := h.feeds[id]
	if f == nil {
		f = &feed{id: id, changed: make(chan struct{})}
		h.feeds[id] = f
		go h.poll(f)
	}
	f.mu.Lock()
	f.subs++
	f.mu.Unlock()
	return f
}

func (h *hub) unsubscribe(f *feed) {
	f.mu.Lock()
	f.subs--
	f.mu.Unlock()
}

// poll rebuilds the run's page until nobody watches or the run has ended. It waits
// at least the poll period between reads, and longer when a read takes long (twice
// its time), so that a long run does not keep the server busy.
func (h *hub) poll(f *feed) {
	var lastN int
	lastStatus := ""
	for {
		t0 := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		p, err := h.s.buildRun(ctx, f.id)
		cancel()
		took := time.Since(t0)
		f.mu.Lock()
		switch {
		case err != nil:
			f.err, f.finished = err.Error(), true
			f.version++
			close(f.changed)
		case p.Intervals != lastN || p.Run.Status != lastStatus || f.version == 0:
			lastN, lastStatus = p.Intervals, p.Run.Status
			f.payload, _ = json.Marshal(p)
			f.finished = p.Run.Status != "running"
			f.version++
			close(f.changed)
			f.changed = make(chan struct{})
		}
		stop := f.finished || f.subs == 0
		f.mu.Unlock()
		if stop {
			h.mu.Lock()
			f.mu.Lock()
			// A page may have subscribed since: keep going for it unless the run ended.
			if f.finished || f.subs == 0 {
				delete(h.feeds, f.id)
				f.mu.Unlock()
				h.mu.Unlock()
				return
			}
			f.mu.Unlock()
			h.mu.Unlock()
		}
		select {
		case <-time.After(max(h.s.o.Poll, 2*took)):
		case <-h.done:
			return
		}
	}
}

// apiLive streams a run's page as server-sent events: "run" with the page each time
// it changes, then "end" when the run is over (or "fail" with an error).
func (s *server) apiLive(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		apiError(w, http.StatusInternalServerError, "streaming is not supported here")
		return
	}
	f := s.live.subscribe(id)
	defer s.live.unsubscribe(f)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	sent := 0
	for {
		f.mu.Lock()
		payload, version, ch, fin, ferr := f.payload, f.version, f.changed, f.finished, f.err
		f.mu.Unlock()
		if ferr != "" {
			b, _ := json.Marshal(map[string]string{"error": ferr})
			fmt.Fprintf(w, "event: fail\ndata: %s\n\n", b)
			fl.Flush()
			return
		}
		if version > sent && payload != nil {
			fmt.Fprintf(w, "event: run\ndata: %s\n\n", payload)
			sent = version
			fl.Flush()
		}
		if fin {
			fmt.Fprint(w, "event: end\ndata: {}\n\n")
			fl.Flush()
			return
		}
		select {
		case <-ch:
		case <-r.Context().Done():
			return
		case <-s.live.done:
			return
		}
	}
}
