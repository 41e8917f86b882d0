package collect

import (
	"fmt"
	"sort"
	"strings"
)

// registry lists the collectors of each source. Each Sampler builds its own
// instances, so collectors may keep state between scrapes. Server sources are named
// by target kind; "os" is the host.
var registry = map[string][]func() Collector{
	"postgres": {newPgStatDatabase, newPgStatBgwriter, newPgStatCheckpointer, newPgStatWAL, newPgWAL,
		newPgActivity, newPgLocks, newPgVacuum},
	"mysql": {newMySQLGlobalStatus, newMySQLInnoDBStatus, newMySQLBinlog, newMySQLProcesslist},
	"os":    {newOSMeminfo, newOSVMStat, newOSCPU, newOSDisk, newOSPressure, newOSProcess},
}

func init() {
	seen := map[string]string{}
	for src, list := range registry {
		for _, mk := range list {
			n := mk().Name()
			if prev, dup := seen[n]; dup {
				panic(fmt.Sprintf("collect: collector %q registered for %s and %s", n, prev, src))
			}
			seen[n] = src
		}
	}
}

// Collectors returns fresh instances of the collectors of a source ("postgres",
// "mysql", "sqlite" or "os"); sqlite has no server collectors.
func Collectors(source string) []Collector {
	var out []Collector
	for _, mk := range registry[source] {
		out = append(out, mk())
	}
	return out
}

// CollectorInfo describes a registered collector.
type CollectorInfo struct {
	Source     string `json:"source"`
	Name       string `json:"name"`
	Help       string `json:"help"`
	MinVersion string `json:"min_version,omitempty"`
}

// List describes every registered collector, by source then name.
func List() []CollectorInfo {
	var out []CollectorInfo
	for src, list := range registry {
		for _, mk := range list {
			c := mk()
			ci := CollectorInfo{Source: src, Name: c.Name(), Help: c.Help()}
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
func Select(kind string, only, skip []string) (server, host []Collector, err error) {
	known := map[string]bool{"os": true, kind: true}
	for _, c := range List() {
		known[c.Name] = true
	}
	for _, n := range append(append([]string{}, only...), skip...) {
		if !known[n] {
			var names []string
			for _, c := range List() {
				if c.Source == kind || c.Source == "os" {
					names = append(names, c.Name)
				}
			}
			return nil, nil, fmt.Errorf("unknown collector %q: use os, %s, or one of %s", n, kind, strings.Join(names, ", "))
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
	for _, c := range Collectors(kind) {
		if keep(c, kind) {
			server = append(server, c)
		}
	}
	for _, c := range Collectors("os") {
		if keep(c, "os") {
			host = append(host, c)
		}
	}
	return server, host, nil
}
