// Package sample holds the records of server and OS sampling that the collectors
// produce and the store keeps: samples, readings, collector results, what was learnt
// about the server. Both collect and store use them; neither imports the other.
package sample

import (
	"strconv"
	"strings"
	"time"
)

// Kind says how a metric's value is read.
type Kind uint8

const (
	// Gauge is a level: the value is what is charted (sessions, dirty bytes).
	Gauge Kind = iota
	// Counter only grows until a reset: its per-second rate is what is charted.
	Counter
)

func (k Kind) String() string {
	if k == Counter {
		return "counter"
	}
	return "gauge"
}

// Version is a server version. Flavor, when set, restricts a MinVersion to one family
// ("mariadb" or "mysql"); it is ignored for PostgreSQL.
type Version struct {
	Flavor              string
	Major, Minor, Patch int
}

// IsZero reports whether v is the zero Version (any version).
func (v Version) IsZero() bool { return v == Version{} }

// Less compares the numbers.
func (v Version) Less(o Version) bool {
	if v.Major != o.Major {
		return v.Major < o.Major
	}
	if v.Minor != o.Minor {
		return v.Minor < o.Minor
	}
	return v.Patch < o.Patch
}

func (v Version) String() string {
	s := strconv.Itoa(v.Major) + "." + strconv.Itoa(v.Minor)
	if v.Patch > 0 {
		s += "." + strconv.Itoa(v.Patch)
	}
	return s
}

// ParseVersion reads the leading "major.minor[.patch]" of a version string.
func ParseVersion(s string) Version {
	var v Version
	parts := strings.SplitN(strings.TrimSpace(s), ".", 3)
	nums := []*int{&v.Major, &v.Minor, &v.Patch}
	for i, p := range parts {
		end := 0
		for end < len(p) && p[end] >= '0' && p[end] <= '9' {
			end++
		}
		if end == 0 {
			break
		}
		*nums[i], _ = strconv.Atoi(p[:end])
		if end < len(p) {
			break
		}
	}
	return v
}

// Status of one collector in one sample.
type Status string

const (
	StatusOK      Status = "ok"
	StatusFailed  Status = "failed"
	StatusTimeout Status = "timeout"
	// StatusSkipped: the server is older than the collector's MinVersion, a
	// previous call of an OS collector is still stuck, or OS metrics are unsupported
	// here (no /proc: every system but Linux).
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

// Server is what the sampler learnt about the database server when it started: its
// version, where its data lives, and whether it runs on this host (then the OS
// collectors read its processes and the disk holding its data directory).
type Server struct {
	Kind    string  `json:"kind"`   // postgres, mysql, sqlite
	Flavor  string  `json:"flavor"` // postgresql, mariadb, mysql, sqlite
	Version Version `json:"version"`
	// VersionString is the server's own version text.
	VersionString string `json:"version_string,omitempty"`
	DataDir       string `json:"data_dir,omitempty"`
	// Local: the server's processes were found on this host. Without /proc
	// (OSMetrics unsupported) they are not looked for, so false says nothing.
	Local bool `json:"local"`
	// OSMetrics is where the OS side was read from (see the function OSMetrics).
	OSMetrics string `json:"os_metrics,omitempty"`
	// PID is the main server process (postmaster, mysqld) when Local.
	PID int `json:"pid,omitempty"`
	// Children: the server works in child processes of PID (PostgreSQL's backends),
	// which the process collector sums with it. Set by discovery, not stored.
	Children bool `json:"-"`
	// Devices are the block devices the disk collector sums: the one holding the data
	// directory, or every disk when it cannot be found.
	Devices []string `json:"devices,omitempty"`
	// DiskScope says which: "data directory" or "all disks".
	DiskScope string `json:"disk_scope,omitempty"`
	// Settings holds the server (and vm.*) settings that govern the patterns stall
	// analysis knows, as the server shows them.
	Settings map[string]string `json:"settings,omitempty"`
	// Notes say what could not be learnt and why.
	Notes []string `json:"notes,omitempty"`
}
