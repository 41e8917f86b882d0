package serve

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fathom-lab/fathom/internal/errkind"
	"github.com/fathom-lab/fathom/internal/report"
	"github.com/fathom-lab/fathom/internal/safefile"
	"github.com/fathom-lab/fathom/internal/store"
)

// Changes as runs arrive. serve watches the store; when a run completes, it looks for
// changes in the run's series (as `fathom history` does with its defaults: tps, p99 and
// errors, E-Divisive Means, alpha 0.01, 5% minimum change) and keeps the history it
// built for the series' page. With a webhook, the changes that run made visible are
// posted (generic JSON or Slack-compatible, as `fathom regressions --webhook` posts
// them) with a link to the series' history page, each change once: what was sent is
// remembered in a private state file.
//
// "Made visible": a change is found once --min-runs (3) runs follow it, and the
// search over a longer series can find a change it could not see before. A change is
// sent when a run arriving while serve watches makes it appear: the first time serve
// looks at a series, the changes found without the runs that arrived since serve
// started are recorded as known, not sent (they were there to be seen before).

// watch configures the change watcher (Options.Watch).
type watch struct {
	// Webhook is the URL changes are posted to ("" none: the watcher only keeps the
	// histories of the series runs join).
	Webhook string
	// Format is the payload: report.WebhookFormats ("json" default, or "slack").
	Format string
	// Link is the address the history page is linked on (this server's, as its users
	// reach it).
	Link string
	// State is the private file that remembers what was sent (needed with Webhook).
	State string
	// Every is how often the store is looked at (default 5s).
	Every time.Duration
	// Warn hears what went wrong (a webhook that did not answer 2xx …); nil: dropped.
	Warn func(msg string)
	// Client posts to the webhook (default: a client with a 30 s timeout).
	Client *http.Client
}

// watcher is the state of Server.WatchChanges.
type watcher struct {
	s       *server
	w       watch
	start   int64          // the store's newest run when serve started watching
	hi      int64          // the newest run looked at
	pending map[int64]bool // runs looked at that had not finished
	mu      sync.Mutex
	state   watchState
}

// watchState is the state file: per store (its path), per series, the changes known
// ("tps@123": the metric and the first run after the change).
type watchState struct {
	Version int                                     `json:"version"`
	Stores  map[string]map[string]map[string]string `json:"stores"` // store → series → change key → when sent ("" known, not sent)
}

// watchChanges watches the store for runs that complete until ctx ends. It returns an
// error at once when the state file cannot be used or the store read.
func (s *server) watchChanges(ctx context.Context, w watch) error {
	x, err := s.newWatcher(ctx, w)
	if err != nil {
		return err
	}
	x.run(ctx)
	return nil
}

// run steps until ctx ends.
func (x *watcher) run(ctx context.Context) {
	x.warm(ctx)
	t := time.NewTicker(x.w.Every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			x.step(ctx)
		}
	}
}

// warmSeries is how many of the most recently run series have their history built
// when serve starts, so that their pages are ready: a long series' first build takes
// about half a second of CPU, and more on a busy machine.
const warmSeries = 8

// warm builds the histories of the warmSeries most recently run series.
func (x *watcher) warm(ctx context.Context) {
	l, err := report.ListSeries(ctx, x.s.o.Store, nil)
	if err != nil {
		if ctx.Err() == nil {
			x.w.Warn(fmt.Sprintf("building the histories of the latest series: %v", err))
		}
		return
	}
	for i, ss := range l.Series {
		if i == warmSeries || ctx.Err() != nil {
			return
		}
		latest, err := x.s.o.Store.LatestRunID(ctx)
		if err != nil {
			return
		}
		if _, err := x.s.buildHistory(ctx, ss.ID, latest); err != nil && ctx.Err() == nil {
			x.w.Warn(fmt.Sprintf("series %s: %v", ss.ID, err))
		}
	}
}

func (s *server) newWatcher(ctx context.Context, w watch) (*watcher, error) {
	if w.Every <= 0 {
		w.Every = 5 * time.Second
	}
	if w.Format == "" {
		w.Format = "json"
	}
	if w.Client == nil {
		w.Client = &http.Client{Timeout: 30 * time.Second}
	}
	if w.Warn == nil {
		w.Warn = func(string) {}
	}
	x := &watcher{s: s, w: w, pending: map[int64]bool{}, state: watchState{Version: 1, Stores: map[string]map[string]map[string]string{}}}
	if w.Webhook != "" {
		if w.State == "" {
			return nil, errors.New("serve: a webhook needs a state file (Watch.State) to remember what it sent")
		}
		if err := safefile.Dir(filepath.Dir(w.State), 0o700); err != nil {
			return nil, errkind.Usagef("--webhook-state %s: %v", w.State, err)
		}
		if err := x.load(); err != nil {
			return nil, errkind.Usagef("--webhook-state %s: %v", w.State, err)
		}
	}
	latest, err := s.o.Store.LatestRunID(ctx)
	if errors.Is(err, store.ErrNotFound) {
		latest, err = 0, nil // no run yet
	}
	if err != nil {
		return nil, err
	}
	x.start, x.hi = latest, latest
	return x, nil
}

// load reads the state file; a missing one is empty.
func (x *watcher) load() error {
	if err := safefile.Check(x.w.State); err != nil {
		return err
	}
	data, err := os.ReadFile(x.w.State)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, &x.state); err != nil {
		return fmt.Errorf("not fathom serve's webhook state (%v): remove it to start afresh", err)
	}
	if x.state.Stores == nil {
		x.state.Stores = map[string]map[string]map[string]string{}
	}
	return nil
}

func (x *watcher) save() error {
	data, err := json.MarshalIndent(x.state, "", " ")
	if err != nil {
		return err
	}
	return safefile.WriteFile(x.w.State, data)
}

// step looks at the runs stored since the last step and at those that had not
// finished, and handles the series of each that completed.
func (x *watcher) step(ctx context.Context) {
	warn := x.w.Warn
	x.w.Warn = func(msg string) {
		if ctx.Err() == nil { // stopping is no news
			warn(msg)
		}
	}
	defer func() { x.w.Warn = warn }()
	st := x.s.o.Store
	latest, err := st.LatestRunID(ctx)
	if errors.Is(err, store.ErrNotFound) {
		return // no run yet
	}
	if err != nil {
		x.w.Warn(fmt.Sprintf("watching for changes: %v", err))
		return
	}
	for id := max(x.hi+1, latest-historyGap*4); id <= latest; id++ {
		x.pending[id] = true
	}
	x.hi = max(x.hi, latest)
	bySeries := map[string][]int64{}
	var order []string
	for _, id := range slices.Sorted(maps.Keys(x.pending)) {
		r, err := st.Run(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			delete(x.pending, id)
			continue
		}
		if err != nil {
			x.w.Warn(fmt.Sprintf("watching for changes: run %d: %v", id, err))
			return
		}
		if r.Status == "running" {
			continue
		}
		delete(x.pending, id)
		if r.Status != "complete" {
			continue
		}
		sid := report.KeyOf(r, nil).ID()
		if bySeries[sid] == nil {
			order = append(order, sid)
		}
		bySeries[sid] = append(bySeries[sid], id)
	}
	for _, sid := range order {
		if err := x.series(ctx, sid, bySeries[sid]); err != nil {
			x.w.Warn(fmt.Sprintf("series %s: %v", sid, err))
		}
	}
}

func changeKey(c report.HistoryChange) string { return c.Metric + "@" + strconv.FormatInt(c.RunID, 10) }

// sameChange finds c among the known changes: the same metric at the same run, or
// within report.NearbyRuns runs of it in the series. A change point's place is an
// estimate, which more runs can move by a run or two; two changes of one metric are
// never that close (each has at least three runs either side), so a known change that
// near is this one.
func sameChange(h *report.History, known map[string]string, c report.HistoryChange) (string, bool) {
	if _, ok := known[changeKey(c)]; ok {
		return changeKey(c), true
	}
	for i := max(0, c.Index-report.NearbyRuns); i <= min(len(h.Points)-1, c.Index+report.NearbyRuns); i++ {
		k := c.Metric + "@" + strconv.FormatInt(h.Points[i].RunID, 10)
		if _, ok := known[k]; ok {
			return k, true
		}
	}
	return "", false
}

// series looks for changes in series sid, which the runs arrived joined, keeps its
// history for the page, and posts the changes they made visible.
func (x *watcher) series(ctx context.Context, sid string, arrived []int64) error {
	st := x.s.o.Store
	latest, err := st.LatestRunID(ctx)
	if err != nil {
		return err
	}
	e, err := x.s.buildHistory(ctx, sid, latest)
	if err != nil {
		return err
	}
	if x.w.Webhook == "" {
		return nil
	}
	h := e.h
	x.mu.Lock()
	defer x.mu.Unlock()
	byStore := x.state.Stores[st.Path()]
	if byStore == nil {
		byStore = map[string]map[string]string{}
		x.state.Stores[st.Path()] = byStore
	}
	known := byStore[sid]
	if known == nil {
		known = map[string]string{}
		before, err := x.baseline(h)
		if err != nil {
			return err
		}
		for _, c := range before {
			known[changeKey(c)] = ""
		}
		byStore[sid] = known
	}
	r := &report.Regressions{History: h, NewestRuns: arrived, Found: []report.HistoryChange{}, Better: []report.HistoryChange{}}
	for _, c := range h.Changes {
		if k, ok := sameChange(h, known, c); ok {
			// The change as it was sent or known, its place re-estimated: known under
			// its new name too, so that it stays known as it moves.
			if _, seen := known[changeKey(c)]; !seen {
				known[changeKey(c)] = known[k]
			}
			continue
		}
		if c.Worse {
			r.Found = append(r.Found, c)
		} else {
			r.Better = append(r.Better, c)
		}
	}
	if len(r.Found)+len(r.Better) > 0 {
		if err := x.post(ctx, r); err != nil {
			_ = x.save() // the baseline, at least
			return err
		}
		now := time.Now().UTC().Format(time.RFC3339)
		for _, c := range append(slices.Clone(r.Found), r.Better...) {
			known[changeKey(c)] = now
		}
	}
	return x.save()
}

// baseline is the changes of h's series without the runs stored since serve started
// watching: those that were there to be seen before.
func (x *watcher) baseline(h *report.History) ([]report.HistoryChange, error) {
	var runs []*store.Run
	for _, p := range h.Points {
		if p.RunID <= x.start {
			runs = append(runs, p.Run)
		}
	}
	if len(runs) == len(h.Points) {
		return h.Changes, nil
	}
	hb, err := report.BuildHistory(h.ID, h.Key, runs, h.Metrics, h.Options)
	if err != nil {
		return nil, err
	}
	return hb.Changes, nil
}

// post sends r's changes to the webhook. Its errors name the webhook's host only: a
// webhook's path is its secret.
func (x *watcher) post(ctx context.Context, r *report.Regressions) error {
	slices.SortFunc(r.Found, func(a, b report.HistoryChange) int { return cmp.Compare(a.RunID, b.RunID) })
	body, err := report.WebhookPayload(r, x.w.Format, report.HistoryLink(x.w.Link, r.History.ID))
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, x.w.Webhook, bytes.NewReader(body))
	if err != nil {
		return errors.New("the webhook is not an http:// or https:// URL")
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := x.w.Client.Do(req)
	if err != nil {
		host := req.URL.Host
		return fmt.Errorf("posting to the webhook on %s failed: %s", host, strings.ReplaceAll(err.Error(), x.w.Webhook, host))
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("the webhook on %s answered %s", req.URL.Host, resp.Status)
	}
	return nil
}
