package collect

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/procfs"

	"github.com/fathom-lab/fathom/internal/sample"
	"github.com/fathom-lab/fathom/internal/target"
)

// Collector is one small source of samples, shaped like mysqld_exporter's scrapers: a
// name, a help line, the oldest server version it works with, a timeout, and a
// Collect that adds points to a Scrape. A Collector may keep state between calls (each
// Sampler builds its own), but it is only ever called from one goroutine at a time.
type Collector interface {
	// Name is unique within its registry list, e.g. "pg_stat_database".
	Name() string
	// Help says in one line what is read.
	Help() string
	// MinVersion is the oldest server version the collector works with; the zero
	// Version works with every version. OS collectors return the zero Version.
	MinVersion() sample.Version
	// Timeout bounds one Collect; 0 means the sampler's default.
	Timeout() time.Duration
	// Collect reads its source and adds points to s. An error is recorded for this
	// collector in this sample and never affects the others.
	Collect(ctx context.Context, s *Scrape) error
	// Metrics declares what Collect (and Derive) may add (Desc).
	Metrics() []Desc
}

// Deriver is an optional ability: after the rates of a sample are known, Derive adds
// points computed from them (disk await from time and operation rates, for example).
type Deriver interface {
	Derive(rate func(name string) (float64, bool), add func(name, unit string, v float64))
}

// ParseVersion reads the leading "major.minor[.patch]" of a version string.
func ParseVersion(s string) sample.Version { return sample.ParseVersion(s) }

// point is one metric's reading in a scrape.
type point struct {
	Name  string
	Kind  sample.Kind
	Unit  string
	Value float64
	// sparse gauges (per wait event, per state) read as 0 in later scrapes of the
	// same collector that do not mention them.
	sparse bool
}

// Scrape is what a collector reads from and writes to during one Collect.
type Scrape struct {
	// Conn is the sampler's own database connection (nil for OS collectors and when
	// the server cannot be reached).
	Conn target.Conn
	// Server is what was learnt about the server when sampling started.
	Server *sample.Server
	// FS reads /proc.
	FS procfs.FS

	points []point
	epoch  string
	uptime float64
	hasUp  bool
}

// Counter adds a counter reading.
func (s *Scrape) Counter(name, unit string, v float64) {
	s.points = append(s.points, point{Name: name, Kind: sample.Counter, Unit: unit, Value: v})
}

// Gauge adds a gauge reading.
func (s *Scrape) Gauge(name, unit string, v float64) {
	s.points = append(s.points, point{Name: name, Kind: sample.Gauge, Unit: unit, Value: v})
}

// SparseGauge adds a gauge from a group whose members come and go (sessions per wait
// event): a later scrape that does not mention it reads it as 0.
func (s *Scrape) SparseGauge(name, unit string, v float64) {
	s.points = append(s.points, point{Name: name, Kind: sample.Gauge, Unit: unit, Value: v, sparse: true})
}

// Epoch names the lifetime of this collector's counters (server start plus the last
// statistics reset). When it changes between scrapes, every counter of the collector
// is marked reset for that sample.
func (s *Scrape) Epoch(e string) { s.epoch = e }

// Uptime gives the seconds since the counters last started from zero. When it goes
// down between scrapes, every counter of the collector is marked reset.
func (s *Scrape) Uptime(sec float64) { s.uptime, s.hasUp = sec, true }

// Points returns what was added so far.
func (s *Scrape) Points() []point { return s.points }

// Query runs SQL on the scrape's connection.
func (s *Scrape) Query(ctx context.Context, sql string) ([][]string, error) {
	if s.Conn == nil {
		return nil, ErrNoConn
	}
	return s.Conn.Query(ctx, sql)
}

var ErrNoConn = fmt.Errorf("no connection to the server")

// Num parses a number from a text column; "" and NULL read as 0, ok false.
func Num(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	return f, true
}

// fn is a collector built from a function: most collectors are one query or one file.
type fn struct {
	name, help string
	min        sample.Version
	timeout    time.Duration
	collect    func(ctx context.Context, s *Scrape) error
	metrics    []Desc
}

func (c *fn) Name() string                                 { return c.name }
func (c *fn) Help() string                                 { return c.help }
func (c *fn) MinVersion() sample.Version                   { return c.min }
func (c *fn) Timeout() time.Duration                       { return c.timeout }
func (c *fn) Collect(ctx context.Context, s *Scrape) error { return c.collect(ctx, s) }

// Func is a collector built from a function (most are one query or one file), as a
// kind's collectors declare theirs: its name, help line, the oldest server version it
// works with (zero: every version), a timeout (0: the sampler's default), Collect, and
// the metrics Collect may add.
type Func struct {
	Name, Help string
	Min        sample.Version
	Timeout    time.Duration
	Collect    func(ctx context.Context, s *Scrape) error
	Metrics    []Desc
}

// Collector is f as a Collector.
func (f Func) Collector() Collector {
	return &fn{name: f.Name, help: f.Help, min: f.Min, timeout: f.Timeout, collect: f.Collect, metrics: f.Metrics}
}
