package collect

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/procfs"

	"github.com/fathom-lab/fathom/internal/sample"
	"github.com/fathom-lab/fathom/internal/target"
)

// Options configure a Sampler.
type Options struct {
	// Kind is the target's database kind (its bundle in internal/db gives it); nil
	// for none (no server side).
	Kind Database
	// Server and Host are the collectors to run; nil means all of Kind's and all OS
	// collectors (see Select).
	Server, Host []Collector
	// NoServer and NoHost turn a side off entirely.
	NoServer, NoHost bool
	// Timeout is the default per-collector timeout (default 2s).
	Timeout time.Duration
	// DSN is the target's DSN, used only to find a SQLite file's directory.
	DSN string
	// NoProcfs takes the portable path on Linux too: no /proc reads, the OS
	// collectors report themselves skipped as unsupported, as on systems without
	// /proc (see OSMetrics).
	NoProcfs bool
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
	srv    *sample.Server
	connMu sync.Mutex
	// rediscovered is what a reconnection learnt, taken over once the sample is done
	// (the OS collectors read srv meanwhile).
	rediscovered *sample.Server

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
	s.server, s.host = opts.Server, opts.Host
	if s.server == nil && !opts.NoServer && opts.Kind != nil {
		s.server = opts.Kind.Collectors()
	}
	if s.host == nil && !opts.NoHost {
		s.host = HostCollectors()
	}
	if opts.NoServer {
		s.server = nil
	}
	if opts.NoHost {
		s.host = nil
	}
	s.fs, s.fsErr = openProcfs(!opts.NoProcfs)
	return s
}

// Start opens the sampler's connection and learns about the server. A server that
// cannot be reached is not an error here: its collectors fail in each sample (and the
// sampler reconnects) while the OS collectors go on.
func (s *Sampler) Start(ctx context.Context) *sample.Server {
	var conn target.Conn
	if s.tgt != nil && !embedded(s.opts.Kind) && !s.opts.NoServer {
		conn, _ = s.connect(ctx)
	}
	s.srv = discover(ctx, s.opts.Kind, conn, s.opts.DSN, !s.opts.NoProcfs)
	return s.srv
}

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
	if ss, ok := s.opts.Kind.(SessionSetup); ok {
		// Name the session so that it is recognisable, and keep the planner quick.
		_, _ = c.Query(cctx, ss.SessionSetup())
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
	res    sample.Result
	scrape *Scrape
	coll   Collector
}

// Sample runs every collector once: the server's in turn on the sampler's connection,
// the OS's meanwhile in parallel, each bounded by its timeout. It never fails: each
// collector's outcome is in the Results.
func (s *Sampler) Sample(ctx context.Context, index int, at time.Time) *sample.Sample {
	out := &sample.Sample{Index: index, At: at}
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
		if sc.res.Status == sample.StatusOK {
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
		sc := scraped{coll: c, res: sample.Result{Collector: c.Name(), Source: kind}}
		start := time.Now()
		sc.res.At = start
		if ctx.Err() != nil {
			sc.res.Status, sc.res.Error = sample.StatusFailed, "stopped"
			out = append(out, sc)
			continue
		}
		// Version gate (skipped while the version is unknown: the server was down).
		if srv != nil && !srv.Version.IsZero() {
			if min := c.MinVersion(); !min.IsZero() && (min.Flavor == "" || min.Flavor == srv.Flavor) && srv.Version.Less(min) {
				sc.res.Status, sc.res.Error = sample.StatusSkipped, fmt.Sprintf("needs %s %s (server is %s)", flavorName(s.opts.Kind, min.Flavor), min, srv.Version)
				out = append(out, sc)
				continue
			}
			if min := c.MinVersion(); min.Flavor != "" && min.Flavor != srv.Flavor {
				sc.res.Status, sc.res.Error = sample.StatusSkipped, fmt.Sprintf("needs %s %s", flavorName(s.opts.Kind, min.Flavor), min)
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
					s.rediscovered = discover(ctx, s.opts.Kind, conn, s.opts.DSN, !s.opts.NoProcfs)
					srv = s.rediscovered
				}
			} else {
				conn = nil
			}
		}
		if conn == nil {
			msg := "no connection"
			if connErr != nil {
				msg = "no connection: " + OneLine(connErr)
			}
			sc.res.Status, sc.res.Error = sample.StatusFailed, msg
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
			sc.res.Status, sc.res.Error = sample.StatusTimeout, fmt.Sprintf("no answer within %s", s.timeout(c))
		case err != nil:
			sc.res.Status, sc.res.Error = sample.StatusFailed, OneLine(err)
		default:
			sc.res.Status = sample.StatusOK
		}
		out = append(out, sc)
	}
	return out
}

func flavorName(k Database, flavor string) string {
	if ft, ok := k.(FlavorTitle); ok {
		if t := ft.FlavorTitle(flavor); t != "" {
			return t
		}
	}
	if k != nil {
		return k.Title()
	}
	return ""
}

func (s *Sampler) runHost(ctx context.Context, srv *sample.Server) []scraped {
	out := make([]scraped, 0, len(s.host))
	for _, c := range s.host {
		sc := scraped{coll: c, res: sample.Result{Collector: c.Name(), Source: "os"}}
		start := time.Now()
		sc.res.At = start
		if errors.Is(s.fsErr, errors.ErrUnsupported) {
			// Not a failure: this system (or the portable path) has no /proc to read.
			sc.res.Status, sc.res.Error = sample.StatusSkipped, OneLine(s.fsErr)
			out = append(out, sc)
			continue
		}
		if s.fsErr != nil {
			sc.res.Status, sc.res.Error = sample.StatusFailed, "no /proc: "+OneLine(s.fsErr)
			out = append(out, sc)
			continue
		}
		s.stuckM.Lock()
		stuck := s.stuck[c.Name()]
		s.stuckM.Unlock()
		if stuck {
			sc.res.Status, sc.res.Error = sample.StatusSkipped, "previous call still running"
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
			sc.res.Status, sc.res.Error = sample.StatusTimeout, fmt.Sprintf("no answer within %s", s.timeout(c))
			sc.scrape = nil
		case err != nil:
			sc.res.Status, sc.res.Error = sample.StatusFailed, OneLine(err)
		default:
			sc.res.Status = sample.StatusOK
		}
		out = append(out, sc)
	}
	return out
}

var errTimeout = errors.New("timeout")

// readings turns one successful scrape into readings with rates.
func (s *Sampler) readings(out *sample.Sample, sc *scraped) {
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
	add := func(p point) {
		r := sample.Reading{Name: p.Name, Collector: name, Kind: p.Kind, Unit: p.Unit, Value: p.Value, At: at}
		if p.Kind == sample.Counter {
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
			add(point{Name: n, Kind: sample.Gauge, Unit: unit})
		}
	}
}

// derive adds the points Derivers compute from this sample's rates.
func (s *Sampler) derive(out *sample.Sample, all []scraped) {
	var rates map[string]float64
	for _, sc := range all {
		d, ok := sc.coll.(Deriver)
		if !ok || sc.res.Status != sample.StatusOK {
			continue
		}
		if rates == nil {
			rates = map[string]float64{}
			for _, r := range out.Readings {
				if r.Kind == sample.Counter && r.HasRate {
					rates[r.Name] = r.Rate
				}
			}
		}
		d.Derive(func(n string) (float64, bool) { v, ok := rates[n]; return v, ok },
			func(n, unit string, v float64) {
				out.Readings = append(out.Readings, sample.Reading{Name: n, Collector: sc.res.Collector, Kind: sample.Gauge, Unit: unit, Value: v, At: sc.res.At})
			})
	}
}

func OneLine(err error) string {
	msg := target.RedactString(err.Error())
	b := []byte(msg)
	for i, c := range b {
		if c == '\n' || c == '\r' || c == '\t' {
			b[i] = ' '
		}
	}
	return string(b)
}
