package plan

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/suggest"
	"github.com/fathom-lab/fathom/internal/workload"
	"github.com/fathom-lab/fathom/internal/workload/builtin"
	"github.com/fathom-lab/fathom/internal/workload/spec"
)

// Read decodes a plan and checks it (check), reporting every problem of both at once:
// what decoded is checked too, so that one typo does not hide another mistake.
func Read(path, dir string, data []byte) (*Plan, error) {
	p, probs := decode(path, dir, data)
	p.check(probs)
	if err := probs.Err(path); err != nil {
		return nil, err
	}
	return p, nil
}

// ReadFile reads and checks the plan file at path.
func ReadFile(path string) (*Plan, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		msg := err.Error()
		if errors.Is(err, os.ErrNotExist) {
			msg = "no such file"
		}
		return nil, &Error{File: path, Problems: []problem{{Line: 0, Msg: msg}}}
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		dir = filepath.Dir(path)
	}
	return Read(path, dir, data)
}

func (p *Plan) check(probs *problems) {
	if n := p.numCells() * p.Repetitions; n > maxRuns || n < 0 {
		probs.Add(0, "the plan has more than %d runs (cells × repetitions): split it", maxRuns)
		return
	}
	cells := p.Cells()
	p.checkWorkloads(cells, probs)
	for _, h := range p.Hooks.DuringRun {
		for _, c := range cells {
			if c.Duration > 0 && h.At >= c.Planned() {
				probs.Add(h.Line, "a hook in during_run: at %s is not within the runs of cell %s, which last %s (warm-up %s + duration %s)",
					h.At, c.Key(), c.Planned(), c.Warmup, c.Duration)
				break
			}
		}
	}
	seen := map[string]bool{}
	for _, prm := range p.allParams() {
		if key, ok := strings.CutPrefix(prm.Key, "settings."+OSPrefix); ok && !seen[key] {
			seen[key] = true
			if err := CheckOSSetting(p.osRoot(), key); err != nil {
				probs.Add(prm.Line, "%v", err)
			}
		}
	}
	if in := p.Instance; in != nil && in.Ports.Fixed() {
		for _, c := range cells {
			if c.Instances > 1 {
				probs.Add(in.PortLine, "instance port: cell %s runs %d instances, which cannot share port %d: give port_range (e.g. %d-%d)",
					c.Key(), c.Instances, in.Ports.Min, in.Ports.Min, in.Ports.Min+c.Instances-1)
				break
			}
		}
	}
	if p.Instance != nil && p.Instance.Kind != "" {
		cat, err := instance.CatalogIn(p.Instance.Kind, p.Instance.Bin, p.Instance.Version)
		if err != nil {
			probs.Add(p.Instance.Line, "instance: %v%s", err, binHint(p.Instance))
			return
		}
		v, _ := p.Instance.ServerVersion()
		p.checkSettings(probs, cat, fmt.Sprintf("%s %s", serverName(p.Instance.Kind), v), true)
	}
	p.checkInstanceAxis(probs)
}

// binHint tells where else an instance's programs can come from, when it names none.
func binHint(in *Instance) string {
	if in.Bin != "" {
		return ""
	}
	return " (or give bin: the directory of its programs, e.g. an unpacked build's bin/)"
}

// checkInstanceAxis checks each value of an axis of instances: its programs are there,
// and its settings are settings of its server. Settings outside the values (the
// plan's, other axes') are checked on every value's server when all are of one kind,
// else when they are applied.
func (p *Plan) checkInstanceAxis(probs *problems) {
	values := p.InstanceValues()
	sameKind := p.Kind() != ""
	var shared []param
	if sameKind {
		shared = append(shared, p.Base...)
		for _, ax := range p.Axes {
			if ax.Name == p.InstanceAxis {
				continue
			}
			for _, av := range ax.Values {
				shared = append(shared, av.Params...)
			}
		}
	}
	for _, av := range values {
		in := av.Instance
		if in == nil || in.Kind == "" {
			continue
		}
		kind := kindOfInstance(in.Kind)
		if kind == "" {
			continue
		}
		cat, err := instance.CatalogIn(in.Kind, in.Bin, in.Version)
		if err != nil {
			probs.Add(in.Line, "matrix %s %s instance: %v%s", p.InstanceAxis, av.Label, err, binHint(in))
			continue
		}
		v, _ := in.ServerVersion()
		params := append(append([]param(nil), shared...), av.Params...)
		p.checkSettingsOf(probs, params, kind, cat, fmt.Sprintf("%s %s", serverName(in.Kind), v), true)
	}
}

// maxRuns bounds the runs of one plan.
const maxRuns = 100000

// numCells is the number of cells (product of the axes' lengths), capped just above
// maxRuns.
func (p *Plan) numCells() int {
	n := 1
	for _, ax := range p.Axes {
		n *= len(ax.Values)
		if n > maxRuns {
			return maxRuns + 1
		}
	}
	return n
}

func serverName(k instance.Kind) string { return instance.TitleOf(k) }

// WorkloadPath resolves a workload name: a workload file is relative to the plan.
func (p *Plan) WorkloadPath(name string) string {
	if builtin.IsFile(name) && !filepath.IsAbs(name) {
		return filepath.Join(p.Dir, name)
	}
	return name
}

// OpenWorkload resolves a cell's workload and options.
func (p *Plan) OpenWorkload(c *Cell) (workload.Workload, error) {
	sp, err := builtin.Lookup(p.WorkloadPath(c.Workload))
	if err != nil {
		return nil, err
	}
	return sp.New(workload.Params(c.OptionMap()))
}

func (p *Plan) checkWorkloads(cells []*Cell, probs *problems) {
	lineOf := func(key, value string) int {
		for _, prm := range p.allParams() {
			if prm.Key == key && (value == "" || prm.Value == value) {
				return prm.Line
			}
		}
		return 0
	}
	seen := map[string]bool{}
	for _, c := range cells {
		if c.Workload == "" {
			continue
		}
		key := c.Workload + "\x00" + fmt.Sprint(c.Options)
		if seen[key] {
			continue
		}
		seen[key] = true
		wline := lineOf("workload", c.Workload)
		sp, err := builtin.Lookup(p.WorkloadPath(c.Workload))
		if err != nil {
			var se *spec.Error
			if errors.As(err, &se) {
				for _, wp := range se.Problems {
					loc := se.File
					if wp.Line > 0 {
						loc += ":" + strconv.Itoa(wp.Line)
					}
					probs.Add(wline, "workload %s: %s", loc, wp.Msg)
				}
			} else {
				probs.Add(wline, "%v", err)
			}
			continue
		}
		w, err := sp.New(workload.Params(c.OptionMap()))
		if err == nil && p.Judge != "" && !judgeFits(p.Judge, w.TxnTypes()) {
			probs.Add(p.JudgeLine, "judge %s: workload %s has no such transaction type or client group (it has: %s)",
				p.Judge, c.Workload, strings.Join(judgeNames(w.TxnTypes()), ", "))
		}
		if err != nil {
			line := wline
			for _, o := range c.Options {
				if strings.Contains(err.Error(), o.Name) {
					line = o.Line
					break
				}
			}
			probs.Add(line, "workload %s: %v", c.Workload, oneLine(err.Error()))
		}
	}
}

// judgeFits reports whether judge names one of types or a group of them ("writers"
// for "writers/insert_a").
func judgeFits(judge string, types []string) bool {
	for _, t := range types {
		if t == judge || strings.HasPrefix(t, judge+"/") {
			return true
		}
	}
	return false
}

// judgeNames lists the groups and types a judge may name.
func judgeNames(types []string) []string {
	var out []string
	for _, t := range types {
		if g, _, ok := strings.Cut(t, "/"); ok && !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return append(out, types...)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// SettingsCatalog lists the settings a server has: by name, whether it can be set,
// and whether changing it needs a restart.
type SettingsCatalog = map[string]instance.SettingInfo

// CheckSettings checks the plan's settings against a server's catalog (for an
// external server, read from it before anything runs). server names it in messages.
func (p *Plan) CheckSettings(cat SettingsCatalog, server string) error {
	var probs problems
	p.checkSettings(&probs, cat, server, false)
	return probs.Err(p.Path)
}

func (p *Plan) checkSettings(probs *problems, cat SettingsCatalog, server string, managed bool) {
	p.checkSettingsOf(probs, p.allParams(), p.Kind(), cat, server, managed)
}

// checkSettingsOf checks the settings among params, for a server of kind.
func (p *Plan) checkSettingsOf(probs *problems, params []param, kindName string, cat SettingsCatalog, server string, managed bool) {
	rules := rulesOf(kindName)
	kind := rules.Instance
	names := make([]string, 0, len(cat))
	for n := range cat {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, prm := range params {
		if !strings.HasPrefix(prm.Key, "settings.") || strings.HasPrefix(prm.Key, "settings."+OSPrefix) {
			continue
		}
		name := instance.NormalizeName(kind, strings.TrimPrefix(prm.Key, "settings."))
		if managed && slices.Contains(rules.Reserved, name) {
			if name == "port" {
				probs.Add(prm.Line, "setting port: fathom sets an instance's port itself, where it and its clients look for the server: use instance: {port: N} or {port_range: A-B}")
			} else {
				probs.Add(prm.Line, "setting %s: fathom sets it itself on an instance", name)
			}
			continue
		}
		info, ok := cat[name]
		if !ok {
			probs.Add(prm.Line, "setting %s: %s has no such setting%s", name, server, suggest.Hint(name, names))
			continue
		}
		if info.ReadOnly() {
			probs.Add(prm.Line, "setting %s: %s does not allow changing it (it is fixed when the server is built or initialised)", name, server)
			continue
		}
		if info.Context == instance.Immutable && !managed && p.RestartCommand == "" {
			probs.Add(prm.Line, "setting %s: %s cannot change it while running (CONFIG SET refuses it): give restart_command, or use a throwaway instance (instance: {kind: redis})", name, server)
			continue
		}
		if msg := checkValue(info, prm.Value); msg != "" {
			probs.Add(prm.Line, "setting %s: %s", name, msg)
		}
	}
}

// checkValue checks a value against a PostgreSQL setting's type.
func checkValue(info instance.SettingInfo, v string) string {
	switch info.Type {
	case "BOOLEAN", "bool":
		if _, ok := parseBool(v); !ok {
			return fmt.Sprintf("%q is not on or off", v)
		}
	case "INTEGER", "REAL", "integer", "real":
		if _, _, ok := SplitNumber(v); !ok {
			return fmt.Sprintf("%q is not a number (with an optional unit such as MB, s or ms)", v)
		}
	}
	return ""
}
