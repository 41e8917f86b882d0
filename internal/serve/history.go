package serve

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/fathom-lab/fathom/internal/analyze"
	"github.com/fathom-lab/fathom/internal/errkind"
	"github.com/fathom-lab/fathom/internal/report"
	"github.com/fathom-lab/fathom/internal/store"
)

// The history pages: one series over time (fathom history in a browser), drawn on
// the server as SVG so that 10,000 runs chart without a script:
//
//	GET /history/{series}           the page (?metric=tps|p50|…; the changes of every default metric)
//	GET /history/run/{id}           the page of a run's series (linked from the run page)
//	GET /api/history/{series}       the History as JSON

func (s *server) historyRoutes() {
	s.mux.HandleFunc("GET /history/{series}", s.historyPage)
	s.mux.HandleFunc("GET /history/run/{id}", s.historyOfRun)
	s.mux.HandleFunc("GET /api/history/{series}", s.apiHistory)
}

// historyCache keeps the histories built lately: change detection over a long
// series takes a while, and a page shown again with no new run in its series is the
// same page. An entry is used while its series is as it was when built (no run of it
// stored since, its unfinished runs still running: stillCurrent), for at most
// historyTTL (a label edited elsewhere can move a run to another series). serve's
// change watcher (changes.go) puts the history of each series a run joins here as the
// run arrives, so the page after a run is served from the cache too.
type historyCache struct {
	mu      sync.Mutex
	entries map[string]historyEntry
}

type historyEntry struct {
	latest  int64 // the store's newest run when the entry was built
	built   time.Time
	h       *report.History
	pending []int64 // the series' runs that were not finished then
}

const (
	historyTTL     = 5 * time.Minute
	historyEntries = 32
	// historyGap: when more runs than this were stored since an entry was built,
	// it is rebuilt rather than each new run looked at.
	historyGap = 64
)

func (c *historyCache) get(arg string) (historyEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[arg]
	return e, ok
}

func (c *historyCache) put(arg string, e historyEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= historyEntries {
		c.entries = map[string]historyEntry{}
	}
	c.entries[arg] = e
}

// clear drops every entry (a run was deleted or relabelled).
func (c *historyCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries = nil
}

// loadHistory builds a series' history as `fathom history` does with its defaults,
// or takes it from the cache while it is current.
func (s *server) loadHistory(r *http.Request, arg string) (*report.History, error) {
	ctx := r.Context()
	latest, err := s.o.Store.LatestRunID(ctx)
	if err != nil {
		return nil, err
	}
	if e, ok := s.hist.get(arg); ok && time.Since(e.built) < historyTTL && s.stillCurrent(ctx, e, latest) {
		return e.h, nil
	}
	e, err := s.buildHistory(ctx, arg, latest)
	if err != nil {
		return nil, err
	}
	return e.h, nil
}

// buildHistory loads and analyses a series and keeps it in the cache; latest is the
// store's newest run, read before the series' runs.
func (s *server) buildHistory(ctx context.Context, arg string, latest int64) (historyEntry, error) {
	id, key, runs, err := report.LoadSeries(ctx, s.o.Store, arg, nil)
	if err != nil {
		return historyEntry{}, err
	}
	h, err := report.BuildHistory(id, key, runs, report.DefaultHistoryMetrics, analyze.ChangeOptions{})
	if err != nil {
		return historyEntry{}, err
	}
	e := historyEntry{latest: latest, built: time.Now(), h: h}
	for _, r := range runs {
		if r.Status == "running" {
			e.pending = append(e.pending, r.ID)
		}
	}
	s.hist.put(arg, e)
	return e, nil
}

// stillCurrent reports whether e's series is as it was when e was built: each run
// stored since (up to historyGap of them) belongs to another series, and the runs
// that were unfinished then are still running. Each is one read of one run.
func (s *server) stillCurrent(ctx context.Context, e historyEntry, latest int64) bool {
	if latest-e.latest > historyGap {
		return false
	}
	for id := e.latest + 1; id <= latest; id++ {
		r, err := s.o.Store.Run(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil || report.KeyOf(r, nil).ID() == e.h.ID {
			return false
		}
	}
	for _, id := range e.pending {
		if r, err := s.o.Store.Run(ctx, id); err != nil || r.Status != "running" {
			return false
		}
	}
	return true
}

func historyError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	if errkind.KindOf(err) == errkind.Usage {
		code = http.StatusNotFound
	}
	http.Error(w, err.Error(), code)
}

func (s *server) apiHistory(w http.ResponseWriter, r *http.Request) {
	h, err := s.loadHistory(r, r.PathValue("series"))
	if err != nil {
		historyError(w, err)
		return
	}
	writeJSON(w, h)
}

func (s *server) historyOfRun(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		http.Error(w, "not a run id", http.StatusBadRequest)
		return
	}
	run, err := s.o.Store.Run(r.Context(), id)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	http.Redirect(w, r, "/history/"+url.PathEscape(report.KeyOf(run, nil).ID()), http.StatusFound)
}

func (s *server) historyPage(w http.ResponseWriter, r *http.Request) {
	h, err := s.loadHistory(r, r.PathValue("series"))
	if err != nil {
		historyError(w, err)
		return
	}
	metric := r.URL.Query().Get("metric")
	if metric == "" {
		metric = "tps"
	}
	var b bytes.Buffer
	if err := report.WriteHistoryHTML(&b, h, report.HistoryPage{Metric: metric}); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'self'")
	_, _ = w.Write(b.Bytes())
}
