package report

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fathom-lab/fathom/internal/store"
)

// A series is the runs that measure the same thing, so that their figures can be
// followed over time. Its key, by default:
//
//   - the workload and every workload option (scale, tables, script …);
//   - the target: its kind and its address as stored (user, host, port, database;
//     no password);
//   - clients, rate, duration (or transaction count);
//   - for a run of an experiment, the experiment's name and the run's cell (its axis
//     labels: every label but rep and note), so each cell is its own series;
//   - the labels the reader names as part of the key (history --key-label).
//
// Settings, server version, host and fathom's version are not in the key: a change in
// them is what a series is there to show. A run given --series NAME (the label
// "series") belongs to the series NAME whatever else it has.

// SeriesLabel is the label naming a run's series explicitly (fathom run --series).
const SeriesLabel = "series"

// seriesKey is what makes runs comparable.
type seriesKey struct {
	Name         string            `json:"name,omitempty"` // the series label, when the run has one
	Workload     string            `json:"workload,omitempty"`
	Options      map[string]string `json:"options,omitempty"`
	TargetKind   string            `json:"target_kind,omitempty"`
	Target       string            `json:"target,omitempty"`
	Clients      int               `json:"clients,omitempty"`
	Rate         float64           `json:"rate,omitempty"`
	Duration     time.Duration     `json:"duration_ns,omitempty"`
	Transactions int64             `json:"transactions,omitempty"`
	Labels       map[string]string `json:"labels,omitempty"`
}

// notKeyLabels are labels that never split a series: a repetition's number and a note.
var notKeyLabels = map[string]bool{"rep": true, "note": true, SeriesLabel: true}

// KeyOf is run r's series key; keyLabels are labels the reader counts as part of it.
func KeyOf(r *store.Run, keyLabels []string) seriesKey {
	if name := r.Labels[SeriesLabel]; name != "" {
		return seriesKey{Name: name}
	}
	k := seriesKey{Workload: r.Workload, Options: r.Options, TargetKind: r.TargetKind, Target: r.Target,
		Clients: r.Clients, Rate: r.Rate, Duration: r.Duration, Transactions: r.Transactions}
	if len(k.Options) == 0 {
		k.Options = nil
	}
	labels := map[string]string{}
	if r.Labels["experiment"] != "" {
		for l, v := range r.Labels {
			if !notKeyLabels[l] {
				labels[l] = v
			}
		}
	}
	for _, l := range keyLabels {
		if v, ok := r.Labels[l]; ok {
			labels[l] = v
		}
	}
	if len(labels) > 0 {
		k.Labels = labels
	}
	return k
}

// ID names the series in one word: its name when it has one, else "s" and 10 hex
// digits of the key's hash (stable: the key's JSON has its maps sorted).
func (k seriesKey) ID() string {
	if k.Name != "" {
		return k.Name
	}
	js, _ := json.Marshal(k)
	h := sha256.Sum256(js)
	return "s" + hex.EncodeToString(h[:5])
}

// String describes the key for a person: "tpcb scale=10 · postgres://u@h/db · 8 clients · 30s".
func (k seriesKey) String() string {
	if k.Name != "" {
		return k.Name
	}
	var parts []string
	w := k.Workload
	for _, o := range slices.Sorted(maps.Keys(k.Options)) {
		w += " " + o + "=" + k.Options[o]
	}
	parts = append(parts, w, k.Target)
	c := strconv.Itoa(k.Clients) + " clients"
	if k.Clients == 1 {
		c = "1 client"
	}
	parts = append(parts, c)
	if k.Rate > 0 {
		parts = append(parts, strconv.FormatFloat(k.Rate, 'f', -1, 64)+"/s")
	}
	switch {
	case k.Duration > 0:
		parts = append(parts, k.Duration.String())
	case k.Transactions > 0:
		parts = append(parts, strconv.FormatInt(k.Transactions, 10)+" transactions")
	}
	if len(k.Labels) > 0 {
		var ls []string
		for _, l := range slices.Sorted(maps.Keys(k.Labels)) {
			ls = append(ls, l+"="+k.Labels[l])
		}
		parts = append(parts, strings.Join(ls, ","))
	}
	return strings.Join(parts, " · ")
}

// provenanceDiff lists what differs between two runs of a series besides their
// figures: server version, settings, fathom's version, host, workload options,
// target, labels. Each line reads "what: before → after".
func provenanceDiff(a, b *store.Run) []string {
	var out []string
	add := func(what, x, y string) {
		if x != y {
			out = append(out, fmt.Sprintf("%s: %s → %s", what, orNone(x), orNone(y)))
		}
	}
	add("server version", a.ServerVersion, b.ServerVersion)
	for _, s := range unionKeys(a.Settings, b.Settings) {
		add("setting "+s, a.Settings[s], b.Settings[s])
	}
	add("fathom version", a.ToolVersion, b.ToolVersion)
	add("host", a.Host.Hostname, b.Host.Hostname)
	add("host kernel", a.Host.Kernel, b.Host.Kernel)
	add("host CPU", a.Host.CPUModel, b.Host.CPUModel)
	add("host CPUs", strconv.Itoa(a.Host.CPUs), strconv.Itoa(b.Host.CPUs))
	add("host memory", strconv.FormatUint(a.Host.MemoryBytes, 10), strconv.FormatUint(b.Host.MemoryBytes, 10))
	add("Go runtime", a.Host.Runtime, b.Host.Runtime)
	add("workload", a.Workload, b.Workload)
	for _, o := range unionKeys(a.Options, b.Options) {
		add("option "+o, a.Options[o], b.Options[o])
	}
	add("target", a.Target, b.Target)
	add("clients", strconv.Itoa(a.Clients), strconv.Itoa(b.Clients))
	add("query mode", a.QueryMode, b.QueryMode)
	for _, l := range unionKeys(a.Labels, b.Labels) {
		if l != "rep" && l != "note" {
			add("label "+l, a.Labels[l], b.Labels[l])
		}
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func unionKeys(a, b map[string]string) []string {
	m := map[string]bool{}
	for k := range a {
		m[k] = true
	}
	for k := range b {
		m[k] = true
	}
	return slices.Sorted(maps.Keys(m))
}
