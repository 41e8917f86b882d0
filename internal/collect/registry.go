package collect

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/fathom-lab/fathom/internal/sample"
	"github.com/fathom-lab/fathom/internal/suggest"
	"github.com/fathom-lab/fathom/internal/target"
)

// hostCollectors are the OS collectors ("os"). Each Sampler builds its own instances,
// so collectors may keep state between scrapes. A database kind's server collectors
// come from its Database.
var hostCollectors = []func() Collector{newOSMeminfo, newOSVMStat, newOSCPU, newOSDisk, newOSPressure, newOSProcess}

// HostCollectors returns fresh instances of the OS collectors.
func HostCollectors() []Collector { return Fresh(hostCollectors...) }

// sourceCollectors are the collectors of k (nil: none) and of the host, by source.
func sourceCollectors(kinds ...Database) map[string][]Collector {
	out := map[string][]Collector{"os": HostCollectors()}
	for _, k := range kinds {
		if k != nil {
			out[k.Name()] = k.Collectors()
		}
	}
	return out
}

// collectorInfo describes a registered collector.
type collectorInfo struct {
	Source     string `json:"source"`
	Name       string `json:"name"`
	Help       string `json:"help"`
	MinVersion string `json:"min_version,omitempty"`
	// Metrics are the collector's declarations.
	Metrics []metricInfo `json:"metrics"`
}

// metricInfo is a metric declaration for listings: a family's name ends in "." and
// its members are named by the server.
type metricInfo struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	Unit   string `json:"unit,omitempty"`
	Help   string `json:"help"`
	Family bool   `json:"family,omitempty"`
}

// List describes the OS collectors and those of kinds, by source then name.
func List(kinds ...Database) []collectorInfo {
	var out []collectorInfo
	for src, list := range sourceCollectors(kinds...) {
		for _, c := range list {
			ci := collectorInfo{Source: src, Name: c.Name(), Help: c.Help()}
			for _, d := range c.Metrics() {
				ci.Metrics = append(ci.Metrics, metricInfo{Name: d.Name, Kind: d.kindName(), Unit: d.Unit, Help: d.Help, Family: d.Family})
			}
			if v := c.MinVersion(); !v.IsZero() {
				ci.MinVersion = v.String()
			}
			out = append(out, ci)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Source != out[j].Source {
			return out[i].Source < out[j].Source
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// Select filters collectors by the user's choice: names or sources to keep (empty
// keeps all) and names or sources to leave out. An unknown name is an error that
// lists the known ones.
func Select(k Database, only, skip []string) (server, host []Collector, err error) {
	kind := kindName(k)
	known := map[string]bool{"os": true}
	if k != nil {
		known[kind] = true
	}
	for _, c := range List(k) {
		known[c.Name] = true
	}
	for _, n := range append(append([]string{}, only...), skip...) {
		if !known[n] {
			var names []string
			for _, c := range List(k) {
				if c.Source == kind || c.Source == "os" {
					names = append(names, c.Name)
				}
			}
			return nil, nil, fmt.Errorf("unknown collector %q%s: use os, %s, or one of %s", n, suggest.Hint(n, append([]string{"os", kind}, names...)), kind, strings.Join(names, ", "))
		}
	}
	in := func(list []string, c Collector, src string) bool {
		for _, n := range list {
			if n == c.Name() || n == src {
				return true
			}
		}
		return false
	}
	keep := func(c Collector, src string) bool {
		return (len(only) == 0 || in(only, c, src)) && !in(skip, c, src)
	}
	var list []Collector
	if k != nil {
		list = k.Collectors()
	}
	for _, c := range list {
		if keep(c, kind) {
			server = append(server, c)
		}
	}
	for _, c := range HostCollectors() {
		if keep(c, "os") {
			host = append(host, c)
		}
	}
	return server, host, nil
}

// ScrapeOnce runs the named collectors of source once on conn, for a server of the
// given version, and returns their points: for live readers (check) that need a few
// of the sampler's figures under the same names, read the same way on every version,
// without running a sampler. Collectors newer than the server are skipped; a
// collector's error is returned with its name.
func ScrapeOnce(ctx context.Context, conn target.Conn, k Database, v sample.Version, names ...string) ([]point, error) {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var out []point
	for _, c := range k.Collectors() {
		if !want[c.Name()] {
			continue
		}
		delete(want, c.Name())
		if min := c.MinVersion(); !min.IsZero() && v.Less(min) {
			continue
		}
		s := &Scrape{Conn: conn, Server: &sample.Server{Version: v}}
		if err := c.Collect(ctx, s); err != nil {
			return out, fmt.Errorf("%s: %w", c.Name(), err)
		}
		out = append(out, s.Points()...)
	}
	for n := range want {
		return out, fmt.Errorf("no collector %q for %s", n, k.Name())
	}
	return out, nil
}
