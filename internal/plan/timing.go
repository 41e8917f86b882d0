package plan

import (
	"fmt"
	"slices"
	"strings"
)

// Most settings act when they are set (or at the restart that applies them). A few
// act at shutdown or startup: a buffer-pool dump is written when the server stops,
// under the value it is running with, and loaded when it starts. Applying such a
// setting and restarting once makes the dump under the previous cell's value; fathom
// restarts a second time, so that the shutdown before the measurement runs under the
// cell's own settings.

// Timing says when a setting acts.
type Timing struct {
	AtShutdown, AtStartup bool
	What                  string
}

// SettingTiming is how a setting of a server kind (postgres, mysql) acts, if it acts
// at shutdown or startup (the kind's KindRules.Timings).
func SettingTiming(kind, name string) (Timing, bool) {
	t, ok := rulesOf(kind).Timings[strings.ToLower(name)]
	return t, ok
}

// actsAtShutdown lists the names among changed that act at shutdown.
func actsAtShutdown(kind string, changed []string) []string {
	var out []string
	for _, n := range changed {
		if t, ok := SettingTiming(kind, n); ok && t.AtShutdown {
			out = append(out, n)
		}
	}
	return out
}

// Warnings are what the plan check says about how the plan will run, beyond its
// mistakes: settings whose timing needs extra restarts, and an interleaved order that
// cannot interleave.
func (p *Plan) Warnings() []string {
	var ws []string
	kind := p.Kind()
	seen := map[string]bool{}
	for _, c := range p.Cells() {
		for _, kv := range c.Settings {
			t, ok := SettingTiming(kind, kv.Name)
			if !ok || seen[kv.Name] || !p.varies(kv.Name) {
				continue
			}
			seen[kv.Name] = true
			switch {
			case t.AtShutdown:
				w := fmt.Sprintf("settings.%s acts at shutdown (it %s): each cell that changes it is applied, restarted, and restarted once more before it is measured, so that the shutdown runs under the cell's own value", kv.Name, t.What)
				if !p.Managed() && p.RestartCommand == "" {
					w = fmt.Sprintf("settings.%s acts at shutdown (it %s), but the plan has no restart_command: the server is never restarted, so the setting does not act for the cell it belongs to; add restart_command", kv.Name, t.What)
				}
				ws = append(ws, w)
			case t.AtStartup:
				ws = append(ws, fmt.Sprintf("settings.%s acts at startup (it %s): each cell that changes it restarts the server", kv.Name, t.What))
			}
		}
	}
	if vals := p.InstanceValues(); len(vals) > 0 && p.numCells() > len(vals) && p.Restart != "each" {
		ws = append(ws, fmt.Sprintf("each value of %s has an instance of its own, stopped while other values' cells run: a run right after a switch starts on a freshly started server (cold caches), a run after one of its own value's does not. restart: each starts every run so", ShortAxis(p.InstanceAxis)))
	}
	if p.Repetitions == 1 && p.Order == OrderInterleaved && p.numCells() > 1 {
		ws = append(ws, "repetitions: 1 with order: interleaved runs each configuration once, in cell order: there is nothing to interleave, so any drift over time (caches warming, tables growing) is confounded with the axes. Use repetitions: 2 or more, or order: random to at least shuffle the cells")
	}
	return ws
}

// varies reports whether settings.name takes more than one value across the cells.
func (p *Plan) varies(name string) bool {
	var vals []string
	for _, c := range p.Cells() {
		v := "\x00unset"
		for _, kv := range c.Settings {
			if kv.Name == name {
				v = kv.Value
			}
		}
		if !slices.Contains(vals, v) {
			vals = append(vals, v)
		}
	}
	return len(vals) > 1
}
