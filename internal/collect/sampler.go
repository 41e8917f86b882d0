package collect

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/procfs"

	"github.com/fathom-lab/fathom/internal/target"
)

// Status of one collector in one sample.
type Status string

const (
	StatusOK      Status = "ok"
	StatusFailed  Status = "failed"
	StatusTimeout Status = "timeout"
	// StatusSkipped: the server is older than the collector's MinVersion, or a
	// previous call of an OS collector is still stuck.
	StatusSkipped Status = "skipped"
)

// Result is how one collector did in one sample: mysqld_exporter's success flag,
// with the error kept.
type Result struct {
	Collector string        `json:"collector"`
	Source    string        `json:"source"` // server kind or "os"
	Status    Status        `json:"status"`
	Error     string        `json:"error,omitempty"`
	At        time.Time     `json:"at"` // middle of the collection: the time its readings stand for
	Took      time.Duration `json:"took_ns"`
	// Reset: the collector's counters restarted since its previous sample (server
	// restart, FLUSH STATUS, pg_stat_reset()).
	Reset bool `json:"reset,omitempty"`
}

// Reading is one metric in one sample: the raw value, and for counters the
// per-second rate since the collector's previous successful sample.
type Reading struct {
	Name      string  `json:"name"`
	Collector string  `json:"collector"`
	Kind      Kind    `json:"kind"`
	Unit      string  `json:"unit,omitempty"`
	Value     float64 `json:"value"`
	Rate      float64 `json:"rate"`
	// HasRate is false for gauges, for a counter's first reading and after a reset.
	HasRate bool `json:"has_rate"`
	// Reset: the counter restarted (went down, or its collector's epoch changed); no
	// rate is given for this reading and never a negative one.
	Reset bool      `json:"reset,omitempty"`
	At    time.Time `json:"at"`
}

// Plot is the number to chart: the rate of a counter, the value of a gauge; ok is
// false where a counter has no rate.
func (r *Reading) Plot() (float64, bool) {
	if r.Kind == Counter {
		return r.Rate, r.HasRate
	}
	return r.Value, true
}

// Sample is everything collected at one interval boundary.
type Sample struct {
	// Index is the report interval the sample closes (-1 for the baseline taken
	// before the first interval).
	Index    int       `json:"index"`
	At       time.Time `json:"at"` // the boundary
	Results  []Result  `json:"results"`
	Readings []Reading `json:"readings"`
}

// Options configure a Sampler.
type Options struct {
	// Server and Host are the collectors to run; nil means all of the target's kind
	// and all OS collectors (see Select).
	Server, Host []Collector
	// NoServer and NoHost turn a side off entirely.
	NoServer, NoHost bool
	// Timeout is the default per-collector timeout (default 2s).
	Timeout time.Duration
	// DSN is the target's DSN, used only to find a SQLite file's directory.
	DSN string
}

// Sampler runs collectors on its own connection and turns counters into rates. Its
// methods must not be called concurrently (Loop serialises them).
type Sampler struct {
	tgt    target.Target
	opts   Options
	server []Collector
	host   []Collector
	fs     procfs.FS
	fsErr  error

	conn   target.Conn
	srv    *Server
	connMu sync.Mutex
	// rediscovered is what a reconnection learnt, taken over once the sample is done
	// (the OS collectors read srv meanwhile).
	rediscovered *Server

	prev   map[string]prevReading
	epochs map[string]string
	uptime map[string]float64
	sparse map[string]map[string]string // collector → sparse metric → unit
	stuck  map[string]bool              // OS collectors still running past their timeout
	stuckM sync.Mutex
}

type prevReading struct {
	value float64
	at    time.Time
}

// NewSampler prepares a sampler for tgt; it connects in Start.
func NewSampler(tgt target.Target, opts Options) *Sampler {
	if opts.Timeout <= 0 {
		opts.Timeout = 2 * time.Second
	}
	s := &Sampler{tgt: tgt, opts: opts,
		prev: map[string]prevReading{}, epochs: map[string]string{}, uptime: map[string]float64{},
		sparse: map[string]map[string]string{}, stuck: map[string]bool{}}
	kind := ""
	if tgt != nil {
		kind = tgt.Kind()
	}
	s.server, s.host = opts.Server, opts.Host
	if s.server == nil && !opts.NoServer {
		s.server = Collectors(kind)
	}
	if s.host == nil && !opts.NoHost {
		s.host = Collectors("os")
	}
	if opts.NoServer {
		s.server = nil
	}
	if opts.NoHost {
		s.host = nil
	}
	s.fs, s.fsErr = procfs.NewDefaultFS()
	return s
}

// Start opens the sampler's connection and learns about the server. A server that
// cannot be reached is not an error here: its collectors fail in each sample (and the
// sampler reconnects) while the OS collectors go on.
func (s *Sampler) Start(ctx context.Context) *Server {
	kind := ""
	if s.tgt != nil {
		kind = s.tgt.Kind()
	}
	var conn target.Conn
	if s.tgt != nil && kind != "sqlite" && !s.opts.NoServer {
		conn, _ = s.connect(ctx)
	}
	s.srv = Discover(ctx, kind, conn, s.opts.DSN)
	return s.srv
}

// Server is what Start learnt.
func (s *Sampler) Server() *Server { return s.srv }

func (s *Sampler) connect(ctx context.Context) (target.Conn, error) {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	if s.conn != nil && s.conn.Alive() {
		return s.conn, nil
	}
	if s.conn != nil {
		_ = s.conn.Close()
		s.conn = nil
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, err := s.tgt.Connect(cctx)
	if err != nil {
		return nil, err
	}
	if s.tgt.Kind() == "postgres" {
		// Name the session so that it is recognisable, and keep the planner quick.
		_, _ = c.Query(cctx, "SET application_name = 'fathom collector'; SET jit = off")
	}
	s.conn = c
	return c, nil
}

// Close closes the sampler's connection.
func (s *Sampler) Close() {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	if s.conn != nil {
		_ = s.conn.Close()
		s.conn = nil
	}
}

func (s *Sampler) timeout(c Collector) time.Duration {
	if t := c.Timeout(); t > 0 {
		return t
	}
	return s.opts.Timeout
}

type scraped struct {
	res    Result
	scrape *Scrape
	coll   Collector
}

// Sample runs every collector once: the server's in turn on the sampler's connection,
// the OS's meanwhile in parallel, each bounded by its timeout. It never fails: each
// collector's outcome is in the Results.
func (s *Sampler) Sample(ctx context.Context, index int, at time.Time) *Sample {
	out := &Sample{Index: index, At: at}
	var hostRes []scraped
	var wg sync.WaitGroup
	if len(s.host) > 0 {
		wg.Add(1)
		srv := s.srv
		go func() {
			defer wg.Done()
			hostRes = s.runHost(ctx, srv)
		}()
	}
	serverRes := s.runServer(ctx)
	wg.Wait()
	if s.rediscovered != nil {
		s.srv, s.rediscovered = s.rediscovered, nil
	}
	all := append(serverRes, hostRes...)
	for i := range all {
		sc := &all[i]
		if sc.res.Status == StatusOK {
			s.readings(out, sc)
		}
		out.Results = append(out.Results, sc.res)
	}
	s.derive(out, all)
	return out
}

func (s *Sampler) runServer(ctx context.Context) []scraped {
	if len(s.server) == 0 {
		return nil
	}
	kind := s.tgt.Kind()
	var out []scraped
	var connErr error
	tried := false
	srv := s.srv
	for _, c := range s.server {
		sc := scraped{coll: c, res: Result{Collector: c.Name(), Source: kind}}
		start := time.Now()
		sc.res.At = start
		if ctx.Err() != nil {
			sc.res.Status, sc.res.Error = StatusFailed, "stopped"
			out = append(out, sc)
			continue
		}
		// Version gate (skipped while the version is unknown: the server was down).
		if srv != nil && !srv.Version.IsZero() {
			if min := c.MinVersion(); !min.IsZero() && (min.Flavor == "" || min.Flavor == srv.Flavor) && srv.Version.Less(min) {
				sc.res.Status, sc.res.Error = StatusSkipped, fmt.Sprintf("needs %s %s (server is %s)", flavorName(kind, min.Flavor), min, srv.Version)
				out = append(out, sc)
				continue
			}
			if min := c.MinVersion(); min.Flavor != "" && min.Flavor != srv.Flavor {
				sc.res.Status, sc.res.Error = StatusSkipped, fmt.Sprintf("needs %s %s", flavorName(kind, min.Flavor), min)
				out = append(out, sc)
				continue
			}
		}
		conn := s.conn
		if conn == nil || !conn.Alive() {
			if !tried {
				tried = true
				conn, connErr = s.connect(ctx)
				if connErr == nil {
					// Reached again (or for the first time): the server may have been
					// restarted, upgraded or moved; learn about it again. The OS
					// collectors, running meanwhile, see it from the next sample on.
					s.rediscovered = Discover(ctx, kind, conn, s.opts.DSN)
					srv = s.rediscovered
				}
			} else {
				conn = nil
			}
		}
		if conn == nil {
			msg := "no connection"
			if connErr != nil {
				msg = "no connection: " + oneLine(connErr)
			}
			sc.res.Status, sc.res.Error = StatusFailed, msg
			sc.res.Took = time.Since(start)
			out = append(out, sc)
			continue
		}
		sc.scrape = &Scrape{Conn: conn, Server: srv, FS: s.fs}
		tctx, cancel := context.WithTimeout(ctx, s.timeout(c))
		err := c.Collect(tctx, sc.scrape)
		timedOut := tctx.Err() == context.DeadlineExceeded
		cancel()
		sc.res.Took = time.Since(start)
		sc.res.At = start.Add(sc.res.Took / 2)
		switch {
		case err != nil && (timedOut || target.ClassOf(err) == target.ClassTimeout):
			sc.res.Status, sc.res.Error = StatusTimeout, fmt.Sprintf("no answer within %s", s.timeout(c))
		case err != nil:
			sc.res.Status, sc.res.Error = StatusFailed, oneLine(err)
		default:
			sc.res.Status = StatusOK
		}
		out = append(out, sc)
	}
	return out
}

func flavorName(kind, flavor string) string {
	switch {
	case flavor == "mariadb":
		return "MariaDB"
	case flavor == "mysql":
		return "MySQL"
	case kind == "postgres":
		return "PostgreSQL"
	case kind == "mysql":
		return "MySQL/MariaDB"
	}
	return kind
}

func (s *Sampler) runHost(ctx context.Context, srv *Server) []scraped {
	out := make([]scraped, 0, len(s.host))
	for _, c := range s.host {
		sc := scraped{coll: c, res: Result{Collector: c.Name(), Source: "os"}}
		start := time.Now()
		sc.res.At = start
		if s.fsErr != nil {
			sc.res.Status, sc.res.Error = StatusFailed, "no /proc: "+oneLine(s.fsErr)
			out = append(out, sc)
			continue
		}
		s.stuckM.Lock()
		stuck := s.stuck[c.Name()]
		s.stuckM.Unlock()
		if stuck {
			sc.res.Status, sc.res.Error = StatusSkipped, "previous call still running"
			out = append(out, sc)
			continue
		}
		sc.scrape = &Scrape{Server: srv, FS: s.fs}
		// /proc reads take no context: run the collector aside and stop waiting at
		// the timeout. A stuck collector is skipped until it returns.
		done := make(chan error, 1)
		tctx, cancel := context.WithTimeout(ctx, s.timeout(c))
		scr := sc.scrape
		s.stuckM.Lock()
		s.stuck[c.Name()] = true
		s.stuckM.Unlock()
		go func() {
			err := c.Collect(tctx, scr)
			s.stuckM.Lock()
			delete(s.stuck, c.Name())
			s.stuckM.Unlock()
			done <- err
		}()
		var err error
		select {
		case err = <-done:
		case <-tctx.Done():
			err = errTimeout
		}
		cancel()
		sc.res.Took = time.Since(start)
		sc.res.At = start.Add(sc.res.Took / 2)
		switch {
		case errors.Is(err, errTimeout):
			sc.res.Status, sc.res.Error = StatusTimeout, fmt.Sprintf("no answer within %s", s.timeout(c))
			sc.scrape = nil
		case err != nil:
			sc.res.Status, sc.res.Error = StatusFailed, oneLine(err)
		default:
			sc.res.Status = StatusOK
		}
		out = append(out, sc)
	}
	return out
}

var errTimeout = errors.New("timeout")

// readings turns one successful scrape into readings with rates.
func (s *Sampler) readings(out *Sample, sc *scraped) {
	name := sc.res.Collector
	at := sc.res.At
	// Did the collector's counters restart?
	reset := false
	if sc.scrape.epoch != "" {
		if prev, ok := s.epochs[name]; ok && prev != sc.scrape.epoch {
			reset = true
		}
		s.epochs[name] = sc.scrape.epoch
	}
	if sc.scrape.hasUp {
		if prev, ok := s.uptime[name]; ok && sc.scrape.uptime < prev {
			reset = true
		}
		s.uptime[name] = sc.scrape.uptime
	}
	sc.res.Reset = reset
	seen := map[string]bool{}
	add := func(p Point) {
		r := Reading{Name: p.Name, Collector: name, Kind: p.Kind, Unit: p.Unit, Value: p.Value, At: at}
		if p.Kind == Counter {
			prev, ok := s.prev[p.Name]
			switch {
			case !ok:
			case reset || p.Value < prev.value:
				r.Reset = true
			default:
				if dt := at.Sub(prev.at).Seconds(); dt > 0 {
					r.Rate, r.HasRate = (p.Value-prev.value)/dt, true
				}
			}
			s.prev[p.Name] = prevReading{p.Value, at}
		}
		out.Readings = append(out.Readings, r)
	}
	for _, p := range sc.scrape.points {
		if seen[p.Name] {
			continue // a collector must not report a metric twice; keep the first
		}
		seen[p.Name] = true
		if p.sparse {
			if s.sparse[name] == nil {
				s.sparse[name] = map[string]string{}
			}
			s.sparse[name][p.Name] = p.Unit
		}
		add(p)
	}
	for n, unit := range s.sparse[name] {
		if !seen[n] {
			add(Point{Name: n, Kind: Gauge, Unit: unit})
		}
	}
}

// derive adds the points Derivers compute from this sample's rates.
func (s *Sampler) derive(out *Sample, all []scraped) {
	var rates map[string]float64
	for _, sc := range all {
		d, ok := sc.coll.(Deriver)
		if !ok || sc.res.Status != StatusOK {
			continue
		}
		if rates == nil {
			rates = map[string]float64{}
			for _, r := range out.Readings {
				if r.Kind == Counter && r.HasRate {
					rates[r.Name] = r.Rate
				}
			}
		}
		d.Derive(func(n string) (float64, bool) { v, ok := rates[n]; return v, ok },
			func(n, unit string, v float64) {
				out.Readings = append(out.Readings, Reading{Name: n, Collector: sc.res.Collector, Kind: Gauge, Unit: unit, Value: v, At: sc.res.At})
			})
	}
}

func oneLine(err error) string {
	msg := target.RedactString(err.Error())
	b := []byte(msg)
	for i, c := range b {
		if c == '\n' || c == '\r' || c == '\t' {
			b[i] = ' '
		}
	}
	return string(b)
}
