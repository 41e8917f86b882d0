package serve

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fathom-lab/fathom/internal/store"
)

// runRow is one run as the runs page lists it.
type runRow struct {
	ID       int64             `json:"id"`
	Workload string            `json:"workload"`
	Kind     string            `json:"target_kind"`
	Status   string            `json:"status"`
	Reason   string            `json:"reason,omitempty"`
	Clients  int               `json:"clients"`
	Rate     float64           `json:"rate,omitempty"`
	Started  time.Time         `json:"started_at"`
	Seconds  float64           `json:"seconds"`
	TPS      *float64          `json:"tps"` // null: no summary (still running, failed early)
	P99      *float64          `json:"p99_ms"`
	Errors   int64             `json:"errors"`
	Labels   map[string]string `json:"labels"`
}

type rowSummary struct {
	Seconds float64 `json:"seconds"`
	TPS     float64 `json:"tps"`
	Errors  int64   `json:"errors"`
	Latency struct {
		P99 float64 `json:"p99"`
	} `json:"latency_ms"`
}

// summaryCache keeps the list figures parsed from each run's stored summary, so that
// a list of 10,000 runs does not parse 10,000 summaries per request; an entry is used
// only while the run's status, end and summary are what they were.
type summaryCache struct {
	mu sync.Mutex
	m  map[int64]cachedSummary
}

type cachedSummary struct {
	status string
	ended  time.Time
	size   int
	sum    rowSummary
	ok     bool
}

func (c *summaryCache) get(r *store.Run) (rowSummary, bool) {
	c.mu.Lock()
	e, hit := c.m[r.ID]
	c.mu.Unlock()
	if hit && e.status == r.Status && e.ended.Equal(r.EndedAt) && e.size == len(r.Summary) {
		return e.sum, e.ok
	}
	var s rowSummary
	ok := len(r.Summary) > 0 && json.Unmarshal(r.Summary, &s) == nil
	c.mu.Lock()
	if c.m == nil {
		c.m = map[int64]cachedSummary{}
	}
	c.m[r.ID] = cachedSummary{r.Status, r.EndedAt, len(r.Summary), s, ok}
	c.mu.Unlock()
	return s, ok
}

func (s *server) rowOf(r *store.Run) runRow {
	row := runRow{ID: r.ID, Workload: r.Workload, Kind: r.TargetKind, Status: r.Status, Reason: r.Reason, Clients: r.Clients,
		Rate: r.Rate, Started: r.StartedAt, Labels: r.Labels}
	if row.Labels == nil {
		row.Labels = map[string]string{}
	}
	if !r.EndedAt.IsZero() {
		row.Seconds = r.EndedAt.Sub(r.StartedAt).Seconds()
	}
	if sum, ok := s.sums.get(r); ok && r.Workload != "watch" { // a watch ran no transactions: no figures
		row.TPS, row.P99, row.Errors = &sum.TPS, &sum.Latency.P99, sum.Errors
		if sum.Seconds > 0 {
			row.Seconds = sum.Seconds
		}
	}
	return row
}

// runQuery is the runs page's filter, sort and page.
type runQuery struct {
	workload, kind, status string
	labels                 map[string]string
	since, until           time.Time
	sort                   string
	desc                   bool
	offset, limit          int
}

func parseRunQuery(q map[string][]string) (runQuery, error) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return strings.TrimSpace(v[0])
		}
		return ""
	}
	rq := runQuery{workload: get("workload"), kind: get("kind"), status: get("status"), labels: map[string]string{},
		sort: cmp.Or(get("sort"), "id"), desc: get("order") != "asc", limit: 100}
	for _, l := range q["label"] {
		if l = strings.TrimSpace(l); l == "" {
			continue
		}
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" {
			return rq, errf("label %q: give key=value", l)
		}
		rq.labels[k] = v
	}
	var err error
	if rq.since, err = parseDay(get("since"), false); err != nil {
		return rq, err
	}
	if rq.until, err = parseDay(get("until"), true); err != nil {
		return rq, err
	}
	switch rq.sort {
	case "id", "started", "workload", "kind", "status", "clients", "tps", "p99", "seconds":
	default:
		return rq, errf("sort %q: use id, started, workload, kind, status, clients, tps, p99 or seconds", rq.sort)
	}
	if v := get("offset"); v != "" {
		if rq.offset, err = strconv.Atoi(v); err != nil || rq.offset < 0 {
			return rq, errf("offset %q: give a whole number from 0", v)
		}
	}
	if v := get("limit"); v != "" {
		if rq.limit, err = strconv.Atoi(v); err != nil || rq.limit < 1 || rq.limit > 5000 {
			return rq, errf("limit %q: give a whole number from 1 to 5000", v)
		}
	}
	return rq, nil
}

// parseDay reads 2026-11-23 (the whole day) or an RFC 3339 time.
func parseDay(s string, end bool) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	t, err := time.ParseInLocation("2006-01-02", s, time.UTC)
	if err != nil {
		return time.Time{}, errf("date %q: give YYYY-MM-DD or an RFC 3339 time", s)
	}
	if end {
		t = t.Add(24*time.Hour - time.Nanosecond)
	}
	return t, nil
}

func (q *runQuery) match(r *runRow) bool {
	if q.workload != "" && r.Workload != q.workload || q.kind != "" && r.Kind != q.kind || q.status != "" && r.Status != q.status {
		return false
	}
	if !q.since.IsZero() && r.Started.Before(q.since) || !q.until.IsZero() && r.Started.After(q.until) {
		return false
	}
	for k, v := range q.labels {
		if got, ok := r.Labels[k]; !ok || (v != "*" && got != v) {
			return false
		}
	}
	return true
}

func nilLast(a, b *float64) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	return cmp.Compare(*a, *b)
}

func (q *runQuery) compare(a, b *runRow) int {
	var c int
	switch q.sort {
	case "started":
		c = a.Started.Compare(b.Started)
	case "workload":
		c = strings.Compare(a.Workload, b.Workload)
	case "kind":
		c = strings.Compare(a.Kind, b.Kind)
	case "status":
		c = strings.Compare(a.Status, b.Status)
	case "clients":
		c = cmp.Compare(a.Clients, b.Clients)
	case "seconds":
		c = cmp.Compare(a.Seconds, b.Seconds)
	case "tps":
		c = nilLast(a.TPS, b.TPS)
	case "p99":
		c = nilLast(a.P99, b.P99)
	}
	if q.desc {
		c = -c
	}
	if c == 0 {
		c = -cmp.Compare(a.ID, b.ID) // newest first among equals
	}
	return c
}

// runsPage is what GET /api/runs answers.
type runsPage struct {
	Total   int       `json:"total"` // runs matching the filter
	All     int       `json:"all"`   // runs in the store
	Offset  int       `json:"offset"`
	Rows    []runRow  `json:"rows"`
	Facets  facets    `json:"facets"`
	Elapsed float64   `json:"elapsed_ms"` // server time to answer
	AsOf    time.Time `json:"as_of"`      // when the store's list was read
}

type facets struct {
	Workloads []string `json:"workloads"`
	Kinds     []string `json:"kinds"`
	Statuses  []string `json:"statuses"`
	Labels    []string `json:"labels"` // label keys
}

func (s *server) apiRuns(w http.ResponseWriter, r *http.Request) {
	t0 := time.Now()
	q, err := parseRunQuery(r.URL.Query())
	if err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	l, err := s.list.get(r.Context(), s)
	if err != nil {
		apiError(w, http.StatusInternalServerError, err.Error())
		return
	}
	page := runsPage{All: len(l.rows), Offset: q.offset, Facets: l.facets, AsOf: l.at}
	var rows []runRow
	for i := range l.rows {
		if q.match(&l.rows[i]) {
			rows = append(rows, l.rows[i])
		}
	}
	slices.SortStableFunc(rows, func(a, b runRow) int { return q.compare(&a, &b) })
	page.Total = len(rows)
	lo := min(q.offset, len(rows))
	hi := min(lo+q.limit, len(rows))
	page.Rows = rows[lo:hi]
	if page.Rows == nil {
		page.Rows = []runRow{}
	}
	page.Elapsed = float64(time.Since(t0).Microseconds()) / 1000
	writeJSON(w, page)
}

// runList is the store's runs as the list shows them, read at most every few seconds
// (more often than the read takes, times five) however many pages ask: the runs page
// says when it was read. A list older than that is never answered: a request waits
// for the read it starts (or the one in flight), so that a page loaded after a quiet
// while shows the store as it is now, not as it was at the last request. A change
// made through this server reads it again at once.
type runList struct {
	mu      sync.Mutex
	cur     *listSnapshot
	loading chan struct{} // closed when the load in flight ends
	stale   bool
}

type listSnapshot struct {
	rows   []runRow
	facets facets
	at     time.Time
	took   time.Duration
	err    error
}

func (c *runList) maxAge(l *listSnapshot) time.Duration { return max(2*time.Second, 5*l.took) }

// get answers the current list: a fresh one without waiting, else the read it starts
// (or the one already in flight, which began after the list went out of date).
func (c *runList) get(ctx context.Context, s *server) (*listSnapshot, error) {
	c.mu.Lock()
	cur := c.cur
	if cur != nil && cur.err == nil && !c.stale && time.Since(cur.at) < c.maxAge(cur) {
		c.mu.Unlock()
		return cur, nil
	}
	ch := c.loading
	if ch == nil {
		ch = make(chan struct{})
		c.loading = ch
		c.stale = false
		go c.load(s, ch)
	}
	c.mu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cur, c.cur.err
}

// refresh reads the list again now and waits for it (after a change).
func (c *runList) refresh(ctx context.Context, s *server) {
	for {
		c.mu.Lock()
		if ch := c.loading; ch != nil { // a read that began before the change
			c.mu.Unlock()
			select {
			case <-ch:
			case <-ctx.Done():
				return
			}
			continue
		}
		c.stale = true
		c.cur = nil
		c.mu.Unlock()
		_, _ = c.get(ctx, s)
		return
	}
}

func (c *runList) load(s *server, done chan struct{}) {
	t0 := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	list := s.o.Store.Runs
	if l, ok := s.o.Store.(store.RunLister); ok { // without the provenance the rows do not show
		list = l.RunList
	}
	runs, err := list(ctx, store.RunFilter{})
	l := &listSnapshot{at: t0, err: err}
	if err == nil {
		seen := map[string]map[string]bool{"w": {}, "k": {}, "s": {}, "l": {}}
		l.rows = make([]runRow, 0, len(runs))
		for i := range runs {
			row := s.rowOf(&runs[i])
			seen["w"][row.Workload] = true
			seen["k"][row.Kind] = true
			seen["s"][row.Status] = true
			for k := range row.Labels {
				seen["l"][k] = true
			}
			l.rows = append(l.rows, row)
		}
		l.facets = facets{Workloads: sortedSet(seen["w"]), Kinds: sortedSet(seen["k"]), Statuses: sortedSet(seen["s"]), Labels: sortedSet(seen["l"])}
	}
	l.took = time.Since(t0)
	c.mu.Lock()
	c.cur = l
	c.loading = nil
	c.mu.Unlock()
	close(done)
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
