package plan

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/yamlfile"
)

// Decode decodes a plan strictly and returns every problem at once as an *Error.
// dir is the plan's directory (for relative workload files and hooks). It checks the
// file itself; Check adds what needs the workloads and the server's settings.
func Decode(path, dir string, data []byte) (*Plan, error) {
	p, probs := decode(path, dir, data)
	if err := probs.Err(path); err != nil {
		return nil, err
	}
	return p, nil
}

func decode(path, dir string, data []byte) (*Plan, *problems) {
	d := &decoder{p: &Plan{Path: path, Dir: dir, Data: data}}
	root := d.probs.Document(data, "a plan", "the file is empty: a plan needs at least experiment, a target or instance, and a workload")
	if root == nil {
		return d.p, &d.probs
	}
	d.plan(root)
	return d.p, &d.probs
}

type decoder struct {
	p     *Plan
	probs problems
}

// topKeys are the keys a plan may have, in the order the documentation gives them.
var topKeys = append([]string{"experiment", "description", "target", "restart_command", "instance", "workload", "options", "table", "settings"},
	append(append([]string(nil), runKeys...), "seed", "connect_timeout", "reconnect_timeout", "repetitions", "order", "cooldown",
		"restart", "prepare", "on_error", "labels", "collect", "matrix", "baseline", "judge", "hooks", "measure_restart", "thresholds")...)

var (
	expNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]{0,62}$`)
	keyRE     = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*$`)
	axisRE    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

func (d *decoder) plan(root *yaml.Node) {
	p := d.p
	f, ok := d.fields(root, "the plan", topKeys...)
	if !ok {
		return
	}
	d.header(root, f)
	d.baseParams(root, f)
	d.schedule(f)
	if n := f["labels"]; n != nil {
		d.labels(n)
	}
	if n := f["collect"]; n != nil {
		d.collect(n)
	}
	if n := f["matrix"]; n != nil {
		d.matrix(n)
	}
	d.targetAxis(root, f)
	if p.Restart == "each" && !p.Managed() && f["restart_command"] == nil && (p.Target != "" || f["instance"] == nil && f["target"] == nil) {
		d.probs.At(f["restart"], "restart: each on an external server needs restart_command (how to restart it)")
	}
	if f["workload"] == nil && !d.axisSetsEverywhere("workload") {
		d.probs.Add(root.Line, "missing workload: name a built-in workload (see `fathom workloads`) or a workload file, at the top or on every value of an axis")
	}
	if n := f["judge"]; n != nil {
		p.Judge, p.JudgeLine = d.str(n, "judge"), n.Line
		if strings.TrimSpace(p.Judge) == "" {
			d.probs.At(n, "judge: name a transaction type or client group (e.g. judge: writers or judge: writers/insert_a)")
		}
	}
	if n := f["baseline"]; n != nil {
		d.baseline(n)
	}
	if n := f["hooks"]; n != nil {
		d.hooks(n)
	}
	if n := f["measure_restart"]; n != nil {
		d.measureRestart(n)
	}
	if n := f["thresholds"]; n != nil {
		d.thresholds(n)
	}
	d.checkCombination()
}

// header reads what the experiment is called and where it runs: its name,
// description, target or instance, and restart_command.
func (d *decoder) header(root *yaml.Node, f map[string]*yaml.Node) {
	p := d.p
	if n := f["experiment"]; n != nil {
		p.Name = d.str(n, "experiment")
		if p.Name != "" && !expNameRE.MatchString(p.Name) {
			d.probs.At(n, "experiment %q: name it with letters, digits, '.', '_' and '-', starting with a letter (at most 63)", p.Name)
		}
	} else {
		d.probs.Add(root.Line, "missing experiment: give the experiment a name (experiment: durability-ab)")
	}
	if n := f["description"]; n != nil {
		p.Description = d.str(n, "description")
	}
	if n := f["target"]; n != nil {
		p.Target, p.TargetLine = d.str(n, "target"), n.Line
		if p.Target != "" && kindOfDSN(p.Target) == "" {
			d.probs.At(n, "target: not a DSN fathom knows: use postgres://…, mysql://…, redis://… or sqlite:PATH")
		}
	}
	if n := f["instance"]; n != nil {
		d.instance(n)
	}
	if p.Target != "" && p.Instance != nil {
		d.probs.At(f["instance"], "give either target (a server you run) or instance (servers fathom starts), not both")
	}
	if n := f["restart_command"]; n != nil {
		p.RestartCommand = d.str(n, "restart_command")
		if p.Instance != nil {
			d.probs.At(n, "restart_command is for an external target: fathom restarts its own instances")
		}
	}
}

// baseParams reads the base parameters, in file order.
func (d *decoder) baseParams(root *yaml.Node, f map[string]*yaml.Node) {
	p := d.p
	rm := yamlfile.Deref(root)
	for i := 0; i+1 < len(rm.Content); i += 2 {
		k, v := rm.Content[i], rm.Content[i+1]
		if f[k.Value] != v {
			continue // unknown or given twice: reported
		}
		switch key := k.Value; {
		case key == "workload" || isRunKey(key):
			if s, ok := d.scalar(v, key); ok {
				d.param(&p.Base, key, s, v)
			}
		case key == "options" || key == "settings" || key == "table":
			d.paramMap(&p.Base, key, v)
		}
	}
}

// schedule reads how the experiment runs its cells: seed, timeouts, repetitions,
// order, restarts, preparation and what an error does.
func (d *decoder) schedule(f map[string]*yaml.Node) {
	p := d.p
	if n := f["seed"]; n != nil {
		if s, ok := d.scalar(n, "seed"); ok {
			v, err := strconv.ParseUint(s, 10, 63)
			if err != nil {
				d.probs.At(n, "seed must be a non-negative whole number, not %q", s)
			}
			p.Seed, p.HasSeed = v, true
		}
	}
	p.ConnectTimeout = d.duration(f["connect_timeout"], "connect_timeout", 10*time.Second)
	p.ReconnectTimeout = d.duration(f["reconnect_timeout"], "reconnect_timeout", 30*time.Second)
	p.Cooldown = d.duration(f["cooldown"], "cooldown", 0)
	p.Repetitions = 1
	if n := f["repetitions"]; n != nil {
		if s, ok := d.scalar(n, "repetitions"); ok {
			v, err := strconv.Atoi(s)
			if err != nil || v < 1 || v > 10000 {
				d.probs.At(n, "repetitions must be a whole number from 1 to 10000, not %q", s)
			} else {
				p.Repetitions = v
			}
		}
	}
	p.Order = d.choice(f["order"], "order", OrderInterleaved, OrderInterleaved, OrderRandom, OrderSequential)
	p.Restart = d.choice(f["restart"], "restart", "auto", "auto", "each")
	p.Prepare = d.choice(f["prepare"], "prepare", "auto", "auto", "each", "never")
	p.OnError = d.choice(f["on_error"], "on_error", "stop", "stop", "continue")
}

// labels reads labels: {name: value, …}.
func (d *decoder) labels(n *yaml.Node) {
	p := d.p
	p.Labels = map[string]string{}
	if m, ok := d.mapping(n, "labels"); ok {
		for i := 0; i+1 < len(m.Content); i += 2 {
			k, v := m.Content[i], m.Content[i+1]
			if !keyRE.MatchString(k.Value) {
				d.probs.At(k, "label %q: use letters, digits, '_', '-' and '.'", k.Value)
				continue
			}
			if s, ok := d.scalar(v, "label "+k.Value); ok {
				p.Labels[k.Value] = s
			}
		}
	}
}

// collect reads collect: true, false or a list of collectors.
func (d *decoder) collect(n *yaml.Node) {
	p := d.p
	p.CollectLine = n.Line
	if m := yamlfile.Deref(n); m != nil && m.Kind == yaml.SequenceNode {
		for _, it := range m.Content {
			if s, ok := d.scalar(it, "a collector in collect"); ok {
				p.CollectOnly = append(p.CollectOnly, s)
			}
		}
		if len(p.CollectOnly) == 0 {
			d.probs.At(n, "collect: list collectors or sources (os, postgres, mysql …), or say false")
		}
	} else {
		p.CollectOff = !d.boolean(n, "collect (true, false, or a list of collectors)")
	}
}

// thresholds reads a list of thresholds in fathom run --threshold's syntax.
func (d *decoder) thresholds(n *yaml.Node) {
	m := yamlfile.Deref(n)
	if m == nil || m.Kind != yaml.SequenceNode {
		d.probs.At(n, "thresholds: give a list of bars, e.g. thresholds: [\"p99<20ms\", \"tps>1000\", \"errors<0.1%%\"]")
		return
	}
	for _, it := range m.Content {
		s, ok := d.scalar(it, "a threshold")
		if !ok {
			continue
		}
		t, err := measure.ParseThreshold(s)
		if err != nil {
			d.probs.At(it, "thresholds: %v", err)
			continue
		}
		d.p.Thresholds = append(d.p.Thresholds, t)
	}
}

// baseline reads {axis: value, …}: the value each comparison along an axis starts
// from (default: the first value listed).
func (d *decoder) baseline(n *yaml.Node) {
	m, ok := d.mapping(n, "baseline (axis: value, e.g. baseline: {durability: relaxed})")
	if !ok {
		return
	}
	d.p.Baseline = map[string]string{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		val, ok := d.scalar(v, "baseline "+k.Value)
		if !ok {
			continue
		}
		var ax *axis
		for _, a := range d.p.Axes {
			if a.Name == k.Value || ShortAxis(a.Name) == k.Value {
				ax = a
			}
		}
		if ax == nil {
			var names []string
			for _, a := range d.p.Axes {
				names = append(names, ShortAxis(a.Name))
			}
			d.probs.At(k, "baseline %s: the matrix has no such axis (axes: %s)", k.Value, strings.Join(names, ", "))
			continue
		}
		found := false
		var labels []string
		for _, av := range ax.Values {
			labels = append(labels, av.Label)
			found = found || av.Label == val
		}
		if !found {
			d.probs.At(v, "baseline %s: %q is not one of its values (%s)", k.Value, val, strings.Join(labels, ", "))
			continue
		}
		d.p.Baseline[ShortAxis(ax.Name)] = val
	}
}

func (d *decoder) instance(n *yaml.Node) {
	d.p.Instance = d.instanceSpec(n, "instance", true)
}

// instanceSpec reads an instance: mapping, the plan's (top: count allowed) or an axis
// value's (what names it in messages).
func (d *decoder) instanceSpec(n *yaml.Node, what string, top bool) *Instance {
	known := []string{"kind", "version", "bin", "count", "dir", "keep", "start_timeout", "port", "port_range"}
	if !top {
		known = slices.DeleteFunc(known, func(k string) bool { return k == "count" })
	}
	f, ok := d.fields(n, what, known...)
	if !ok {
		return nil
	}
	in := &Instance{Line: n.Line}
	if k := f["kind"]; k != nil {
		if s, ok := d.scalar(k, what+" kind"); ok {
			kind, err := instance.ParseKind(s)
			if err != nil {
				d.probs.At(k, "%v", err)
			}
			in.Kind = kind
		}
	} else {
		d.probs.At(n, "%s: missing kind (postgres, mariadb or redis)", what)
	}
	if v := f["version"]; v != nil {
		// Any version is accepted here: it is checked against the installed server.
		in.Version, _ = d.scalar(v, what+" version")
	}
	if v := f["bin"]; v != nil {
		in.Bin = d.str(v, what+" bin")
		if in.Bin != "" && !filepath.IsAbs(in.Bin) {
			in.Bin = filepath.Join(d.p.Dir, in.Bin)
		}
	}
	if v := f["count"]; v != nil {
		if s, ok := d.scalar(v, "instance count"); ok {
			if msg := checkParam("instances", s); msg != "" {
				d.probs.At(v, "instance count: %s", strings.TrimPrefix(msg, "instances "))
			} else {
				d.param(&d.p.Base, "instances", s, v)
			}
		}
	}
	if v := f["dir"]; v != nil {
		in.Dir = d.str(v, what+" dir")
		if in.Dir != "" && !filepath.IsAbs(in.Dir) {
			in.Dir = filepath.Join(d.p.Dir, in.Dir)
		}
	}
	if v := f["keep"]; v != nil {
		in.Keep = d.boolean(v, what+" keep")
	}
	in.StartTimeout = d.duration(f["start_timeout"], what+" start_timeout", 60*time.Second)
	switch p, r := f["port"], f["port_range"]; {
	case p != nil && r != nil:
		d.probs.At(r, "%s: give port or port_range, not both", what)
	case p != nil:
		if s, ok := d.scalar(p, what+" port"); ok {
			n, err := strconv.Atoi(s)
			if err == nil {
				in.Ports, err = instance.PortOf(n)
			} else {
				err = fmt.Errorf("%q is not a port number", s)
			}
			if err != nil {
				d.probs.At(p, "%s port: %v", what, err)
			}
			in.PortLine = p.Line
		}
	case r != nil:
		if s, ok := d.scalar(r, what+" port_range"); ok {
			var err error
			if in.Ports, err = instance.ParsePorts(s); err != nil {
				d.probs.At(r, "%s port_range: %v", what, err)
			}
			in.PortLine = r.Line
		}
	}
	return in
}

// param appends a checked parameter.
func (d *decoder) param(list *[]param, key, value string, n *yaml.Node) {
	if msg := checkParam(key, value); msg != "" {
		d.probs.At(n, "%s", msg)
		return
	}
	*list = append(*list, param{Key: key, Value: value, Line: n.Line})
}

// paramMap reads options: or settings: as parameters options.NAME / settings.NAME.
func (d *decoder) paramMap(list *[]param, what string, n *yaml.Node) {
	m, ok := d.mapping(n, what)
	if !ok {
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Kind != yaml.ScalarNode || !keyRE.MatchString(k.Value) {
			d.probs.At(k, "%s: %q is not a name (letters, digits, '_', '-', '.')", what, k.Value)
			continue
		}
		name := k.Value
		if what == "settings" {
			name = d.settingKey(name)
		}
		if seen[name] {
			d.probs.At(k, "%s: %s is given twice", what, k.Value)
			continue
		}
		seen[name] = true
		if s, ok := d.scalar(v, what+" "+k.Value); ok {
			if what == "table" {
				if msg := checkParam("table."+name, s); msg != "" {
					d.probs.At(v, "%s", msg)
					continue
				}
			}
			if what == "settings" && strings.ContainsAny(s, "\n\r") {
				d.probs.At(v, "setting %s: the value must be one line", k.Value)
				continue
			}
			*list = append(*list, param{Key: what + "." + name, Value: s, Line: v.Line})
		}
	}
}

// settingKey is the spelling settings are compared by: MySQL's option files accept
// '-' for '_'. Redis's names are kept as written: it has both (aof-use-rdb-preamble,
// bgsave_cpulist), as distinct names.
func (d *decoder) settingKey(name string) string {
	if k := rulesOf(d.p.Kind()).SettingKey; k != nil {
		return k(name)
	}
	return strings.ReplaceAll(name, "-", "_")
}

func (d *decoder) matrix(n *yaml.Node) {
	m, ok := d.mapping(n, "matrix")
	if !ok {
		return
	}
	if len(m.Content) == 0 {
		d.probs.At(m, "matrix is empty: give at least one axis (e.g. clients: [1, 2, 4]) or leave matrix out")
	}
	owner := map[string]string{} // parameter key -> axis that sets it
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		name := k.Value
		ax := &axis{Name: name, Line: k.Line}
		if isParamAxis(name) {
			ok = d.paramAxis(ax, k, v, owner)
		} else {
			ok = d.namedAxis(ax, k, v, owner)
		}
		if !ok {
			continue
		}
		d.checkAxisName(ax, k)
		d.p.Axes = append(d.p.Axes, ax)
	}
}

// isParamAxis reports whether a matrix axis is named by the parameter it sets, and so
// lists its values.
func isParamAxis(name string) bool {
	return name == "workload" || name == "instances" || isRunKey(name) ||
		strings.HasPrefix(name, "options.") || strings.HasPrefix(name, "settings.") || strings.HasPrefix(name, "table.")
}

// paramAxis decodes the list of values of an axis named by the parameter it sets
// (clients: [1, 2, 4]). It returns false when the axis is unusable and is left out.
func (d *decoder) paramAxis(ax *axis, k, v *yaml.Node, owner map[string]string) bool {
	name := ax.Name
	key := name
	if strings.HasPrefix(name, "settings.") {
		key = "settings." + d.settingKey(strings.TrimPrefix(name, "settings."))
		if !keyRE.MatchString(strings.TrimPrefix(name, "settings.")) {
			d.probs.At(k, "matrix: %q does not name a setting", name)
			return false
		}
	}
	if strings.HasPrefix(name, "options.") && !keyRE.MatchString(strings.TrimPrefix(name, "options.")) {
		d.probs.At(k, "matrix: %q does not name a workload option", name)
		return false
	}
	items, ok := d.list(v, "matrix "+name)
	if !ok {
		if v.Kind == yaml.MappingNode {
			d.probs.At(v, "matrix %s: give its values as a list, e.g. %s: [a, b]; a mapping of named values is for an axis with its own name", name, name)
		}
		return false
	}
	seen := map[string]bool{}
	for _, it := range items {
		s, ok := d.scalar(it, "a value of matrix "+name)
		if !ok {
			continue
		}
		if seen[s] {
			d.probs.At(it, "matrix %s: %q is listed twice", name, s)
			continue
		}
		seen[s] = true
		av := &AxisValue{Label: s, Line: it.Line}
		d.param(&av.Params, key, s, it)
		ax.Values = append(ax.Values, av)
	}
	if prev, dup := owner[key]; dup {
		d.probs.At(k, "matrix: %s and %s both set %s", prev, name, key)
	}
	owner[key] = name
	return true
}

// namedAxis decodes an axis of the user's naming, whose named values each bundle
// parameters (server: {pg: {target: …}, maria: {…}}). It returns false when the axis
// is unusable and is left out.
func (d *decoder) namedAxis(ax *axis, k, v *yaml.Node, owner map[string]string) bool {
	name := ax.Name
	if !axisRE.MatchString(name) {
		d.probs.At(k, "matrix: %q is not a parameter (clients, duration, transactions, warmup, rate, query_mode, workload, instances, options.NAME, settings.NAME) nor a name for an axis of named values (letters, digits, _)", name)
		return false
	}
	if vv := yamlfile.Deref(v); vv != nil && vv.Kind == yaml.SequenceNode && name == "target" {
		d.probs.At(k, "matrix: name the targets, so that results say which is which (and no DSN is a label): server: {pg: {target: postgres://…}, maria: {target: mysql://…}}")
		return false
	}
	if vv := yamlfile.Deref(v); vv != nil && vv.Kind == yaml.SequenceNode {
		d.probs.At(k, "matrix: unknown parameter %q (known: %s, workload, instances, options.NAME, settings.NAME); an axis of your own naming takes named values: %s: {a: {settings: {…}}, b: {…}}", name, strings.Join(runKeys, ", "), name)
		return false
	}
	vm, ok := d.mapping(v, "matrix "+name)
	if !ok {
		return false
	}
	ax.Named = true
	keys := map[string]bool{}
	for j := 0; j+1 < len(vm.Content); j += 2 {
		lk, lv := vm.Content[j], vm.Content[j+1]
		if lk.Kind != yaml.ScalarNode || lk.Value == "" {
			d.probs.At(lk, "matrix %s: values are named by plain text", name)
			continue
		}
		if keys[lk.Value] {
			d.probs.At(lk, "matrix %s: %q is given twice", name, lk.Value)
			continue
		}
		keys[lk.Value] = true
		av := &AxisValue{Label: lk.Value, Line: lk.Line}
		d.bundle(av, name, lv)
		ax.Values = append(ax.Values, av)
	}
	seenKey := map[string]bool{}
	for _, av := range ax.Values {
		for _, prm := range av.Params {
			if seenKey[prm.Key] {
				continue
			}
			seenKey[prm.Key] = true
			if prev, dup := owner[prm.Key]; dup && prev != name {
				d.probs.At(k, "matrix: %s and %s both set %s", prev, name, prm.Key)
			}
			owner[prm.Key] = name
		}
	}
	return true
}

// checkAxisName checks a decoded axis has values and a name of its own in results.
func (d *decoder) checkAxisName(ax *axis, k *yaml.Node) {
	name := ax.Name
	if len(ax.Values) == 0 {
		d.probs.At(k, "matrix %s has no values", name)
	}
	for _, prev := range d.p.Axes {
		if ShortAxis(prev.Name) == ShortAxis(name) {
			d.probs.At(k, "matrix: axes %s and %s would both be called %s in results: rename one", prev.Name, name, ShortAxis(name))
		}
	}
	if name == "rep" || name == "repetition" || name == "experiment" {
		d.probs.At(k, "matrix: %s names the experiment's own labels; choose another axis name", name)
	}
}

// axisSetsEverywhere reports whether one axis sets key in every one of its values (a
// workload axis needs no workload at the top).
func (d *decoder) axisSetsEverywhere(key string) bool {
	for _, ax := range d.p.Axes {
		n := 0
		for _, av := range ax.Values {
			if slices.ContainsFunc(av.Params, func(p param) bool { return p.Key == key }) {
				n++
			}
		}
		if n > 0 && n == len(ax.Values) {
			return true
		}
	}
	return false
}

// targetAxis checks where the plan runs: its target, its instances, or the targets or
// throwaway instances an axis's named values give (one axis, every value with its own
// target, or every value with its own instance).
func (d *decoder) targetAxis(root *yaml.Node, f map[string]*yaml.Node) {
	p := d.p
	var axes []string
	for _, ax := range p.Axes {
		targets, instances, line := 0, 0, 0
		for _, av := range ax.Values {
			if av.Instance != nil {
				instances++
				line = av.Instance.Line
			}
			for _, prm := range av.Params {
				if prm.Key == "target" {
					targets++
					line = prm.Line
				}
			}
		}
		if targets+instances == 0 {
			continue
		}
		axes = append(axes, ax.Name)
		if instances > 0 {
			p.InstanceAxis = ax.Name
		} else {
			p.TargetAxis = ax.Name
		}
		switch {
		case targets > 0 && instances > 0:
			d.probs.Add(ax.Line, "matrix %s: give every value a target (servers you run) or every value an instance (servers fathom starts), not some of each", ax.Name)
		case targets+instances < len(ax.Values) && instances > 0:
			d.probs.Add(ax.Line, "matrix %s: give every value an instance (a value without one would have nowhere to run)", ax.Name)
		case targets < len(ax.Values) && targets > 0:
			d.probs.Add(ax.Line, "matrix %s: give every value a target (a value without one would have nowhere to run)", ax.Name)
		case p.Target != "" || p.Instance != nil:
			what := "targets"
			if instances > 0 {
				what = "instances"
			}
			d.probs.Add(line, "matrix %s names %s: leave out the plan's target and instance (each value of %s says where its cells run)", ax.Name, what, ax.Name)
		case p.RestartCommand != "" && instances > 0:
			d.probs.Add(line, "matrix %s names instances: restart_command is for an external target (fathom restarts its own instances)", ax.Name)
		case p.RestartCommand != "":
			d.probs.Add(line, "matrix %s names several targets: restart_command restarts one server, so it cannot be used with them", ax.Name)
		}
	}
	if len(axes) > 1 {
		d.probs.Add(root.Line, "matrix: %s all name targets or instances: name where the cells run on one axis", strings.Join(axes, " and "))
	}
	if p.InstanceAxis != "" {
		for _, ax := range p.Axes {
			for _, av := range ax.Values {
				for _, prm := range av.Params {
					if prm.Key == "instances" {
						d.probs.Add(prm.Line, "instances: each value of %s runs on one instance of its own; several instances per cell need the plan's instance: (instance: {kind: postgres}) instead of an axis of instances", p.InstanceAxis)
					}
				}
			}
		}
	}
	if f["target"] == nil && f["instance"] == nil && len(axes) == 0 {
		d.probs.Add(root.Line, "missing target or instance: say where to run (target: postgres://… for your server, instance: {kind: postgres} for a throwaway one, or an axis of named targets or instances: matrix: {server: {pg: {target: postgres://…}, maria: {target: mysql://…}}} or {server: {pg: {instance: {kind: postgres}}, maria: {instance: {kind: mariadb}}}})")
	}
}

// bundle reads a named axis value: a mapping of parameters.
func (d *decoder) bundle(av *AxisValue, axis string, n *yaml.Node) {
	what := fmt.Sprintf("matrix %s %s", axis, av.Label)
	known := append([]string{"workload", "instances", "target", "instance", "options", "table", "settings"}, runKeys...)
	f, ok := d.fields(n, what, known...)
	if !ok {
		return
	}
	if len(f) == 0 {
		d.probs.At(n, "%s sets nothing: give settings, options or run parameters", what)
	}
	m := yamlfile.Deref(n)
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if f[k.Value] != v {
			continue // unknown or duplicate, already reported
		}
		switch k.Value {
		case "options", "settings", "table":
			d.paramMap(&av.Params, k.Value, v)
		case "instance":
			av.Instance = d.instanceSpec(v, what+" instance", false)
		default:
			if s, ok := d.scalar(v, what+" "+k.Value); ok {
				d.param(&av.Params, k.Value, s, v)
			}
		}
	}
	hasDur, hasTx := false, false
	for _, prm := range av.Params {
		hasDur = hasDur || prm.Key == "duration"
		hasTx = hasTx || prm.Key == "transactions"
	}
	if hasDur && hasTx {
		d.probs.At(n, "%s: give duration or transactions, not both", what)
	}
}

// allRedis reports whether the plan runs on throwaway Redis instances only.
func (d *decoder) allRedis() bool {
	if d.p.Instance != nil {
		return d.p.Instance.Kind == instance.Redis
	}
	values := d.p.InstanceValues()
	for _, av := range values {
		if av.Instance == nil || av.Instance.Kind != instance.Redis {
			return false
		}
	}
	return len(values) > 0
}

// measureRestart reads measure_restart: [rdb, aof, aof-plain].
func (d *decoder) measureRestart(n *yaml.Node) {
	const how = "measure_restart: list what a Redis instance restarts from after each run: rdb, aof (with the RDB preamble), aof-plain"
	if !d.allRedis() {
		d.probs.At(n, "measure_restart is for throwaway Redis instances (instance: {kind: redis}): fathom stops and starts them")
		return
	}
	m := yamlfile.Deref(n)
	if m == nil || m.Kind != yaml.SequenceNode || len(m.Content) == 0 {
		d.probs.At(n, "%s", how)
		return
	}
	for _, it := range m.Content {
		s, ok := d.scalar(it, "measure_restart")
		if !ok {
			continue
		}
		switch {
		case s != restartRDB && s != RestartAOF && s != RestartAOFPlain:
			d.probs.At(it, "measure_restart: %q is not a file Redis restarts from: use rdb, aof (with the RDB preamble) or aof-plain", s)
		case slices.Contains(d.p.MeasureRestart, s):
			d.probs.At(it, "measure_restart: %s is listed twice", s)
		default:
			d.p.MeasureRestart = append(d.p.MeasureRestart, s)
		}
	}
}

func (d *decoder) hooks(n *yaml.Node) {
	f, ok := d.fields(n, "hooks", BeforeExperiment, BeforeRun, DuringRun, AfterRun, AfterExperiment)
	if !ok {
		return
	}
	h := &d.p.Hooks
	for _, ph := range []struct {
		name string
		dst  *[]*Hook
	}{{BeforeExperiment, &h.BeforeExperiment}, {BeforeRun, &h.BeforeRun}, {DuringRun, &h.DuringRun}, {AfterRun, &h.AfterRun}, {AfterExperiment, &h.AfterExperiment}} {
		v := f[ph.name]
		if v == nil {
			continue
		}
		items, ok := d.list(v, "hooks "+ph.name)
		if !ok {
			continue
		}
		for _, it := range items {
			if hk := d.hook(it, ph.name); hk != nil {
				*ph.dst = append(*ph.dst, hk)
			}
		}
	}
}

func (d *decoder) hook(n *yaml.Node, phase string) *Hook {
	what := "a hook in " + phase
	// own is the key of hooks in the plan's kind's own commands ("redis"), "" when its
	// hooks give sql; the registered kinds' such keys are known here (a plan rule).
	own, keys := rulesOf(d.p.Kind()).CommandHooks, commandHookKeys()
	f, ok := d.fields(n, what, append(append([]string{"name", "when", "at", "sql"}, keys...), "shell", "timeout")...)
	if !ok {
		return nil
	}
	h := &Hook{Line: yamlfile.Deref(n).Line}
	if v := f["when"]; v != nil {
		if phase == BeforeExperiment || phase == AfterExperiment {
			d.probs.At(v, "%s: when is for hooks around runs (before_run, during_run, after_run): %s hooks run once", what, phase)
		} else {
			h.When = d.when(v, what)
		}
	}
	if v := f["at"]; v != nil {
		if phase != DuringRun {
			d.probs.At(v, "%s: at is for during_run hooks (when, into the run, the hook fires)", what)
		} else if h.At = d.duration(v, what+": at", 0); h.At <= 0 {
			d.probs.At(v, "%s: at must be more than 0 (e.g. at: 4s, counted from the start of the run's warm-up)", what)
		}
	} else if phase == DuringRun {
		d.probs.At(n, "%s: give at, when into the run it fires (e.g. at: 4s, counted from the start of the run's warm-up)", what)
	}
	for _, key := range keys {
		v := f[key]
		if v == nil {
			continue
		}
		if key != own {
			d.probs.At(v, "%s: %s is for %s plans; give sql (statements) or shell (a command)", what, key, commandHookTitle(key))
		}
		h.SQL, h.Redis = d.lines(v, what+": "+key), true
		if len(h.SQL) == 0 {
			d.probs.At(v, "%s: %s is empty: give a command (BGREWRITEAOF) or a list of them", what, key)
		}
	}
	if v := f["name"]; v != nil {
		h.Name = d.str(v, what+": name")
	}
	if v := f["sql"]; v != nil {
		h.SQL = d.lines(v, what+": sql")
		if len(h.SQL) == 0 {
			d.probs.At(v, "%s: sql is empty", what)
		}
	}
	if v := f["shell"]; v != nil {
		h.Shell = strings.TrimSpace(d.str(v, what+": shell"))
		if h.Shell == "" {
			d.probs.At(v, "%s: shell is empty", what)
		}
	}
	given := 0
	for _, k := range append([]string{"sql", "shell"}, keys...) {
		if f[k] != nil {
			given++
		}
	}
	switch {
	case given > 1 && own != "":
		d.probs.At(n, "%s: give one of %s, sql or shell, not two (use two hooks)", what, own)
	case given > 1:
		d.probs.At(n, "%s: give sql or shell, not both (use two hooks)", what)
	case given == 0 && own != "":
		d.probs.At(n, "%s: give %s (commands to send) or shell (a command)", what, own)
	case given == 0:
		d.probs.At(n, "%s: give sql (statements to run) or shell (a command)", what)
	}
	h.Timeout = d.duration(f["timeout"], what+": timeout", 10*time.Minute)
	if f["timeout"] != nil && h.Timeout == 0 {
		d.probs.At(f["timeout"], "%s: timeout must be more than 0", what)
	}
	return h
}

// when reads a hook's {axis: value or [values]}, each axis and value one of the
// matrix's.
func (d *decoder) when(n *yaml.Node, what string) map[string][]string {
	m, ok := d.mapping(n, what+": when (axis: value, e.g. when: {persistence: rdb})")
	if !ok {
		return nil
	}
	out := map[string][]string{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		var ax *axis
		var names []string
		for _, a := range d.p.Axes {
			names = append(names, ShortAxis(a.Name))
			if a.Name == k.Value || ShortAxis(a.Name) == k.Value {
				ax = a
			}
		}
		if ax == nil {
			d.probs.At(k, "%s: when %s: the matrix has no such axis (axes: %s)", what, k.Value, strings.Join(names, ", "))
			continue
		}
		var labels []string
		for _, av := range ax.Values {
			labels = append(labels, av.Label)
		}
		vals := d.lines(v, what+": when "+k.Value)
		if len(vals) == 0 {
			d.probs.At(v, "%s: when %s: give a value (%s)", what, k.Value, strings.Join(labels, ", "))
		}
		for _, val := range vals {
			if !slices.Contains(labels, val) {
				d.probs.At(v, "%s: when %s: %q is not one of its values (%s)", what, k.Value, val, strings.Join(labels, ", "))
			}
		}
		out[ShortAxis(ax.Name)] = vals
	}
	return out
}

// lines reads one text or a list of them, each trimmed, the empty ones left out.
func (d *decoder) lines(v *yaml.Node, what string) []string {
	var out []string
	if v2 := yamlfile.Deref(v); v2 != nil && v2.Kind == yaml.SequenceNode {
		for _, it := range v2.Content {
			if s, ok := d.scalar(it, what); ok && strings.TrimSpace(s) != "" {
				out = append(out, strings.TrimSpace(s))
			}
		}
	} else if s, ok := d.scalar(v, what); ok && strings.TrimSpace(s) != "" {
		out = []string{strings.TrimSpace(s)}
	}
	return out
}

// checkCombination reports problems between keys: managed-only parameters on an
// external target, duration and transactions together.
func (d *decoder) checkCombination() {
	p := d.p
	hasDur, hasTx := 0, 0
	for _, prm := range p.Base {
		if prm.Key == "duration" {
			hasDur = prm.Line
		}
		if prm.Key == "transactions" {
			hasTx = prm.Line
		}
	}
	if hasDur > 0 && hasTx > 0 {
		d.probs.Add(hasTx, "give duration or transactions (per client), not both")
	}
	if p.Instance == nil && p.InstanceAxis == "" {
		for _, ax := range p.Axes {
			for _, av := range ax.Values {
				for _, prm := range av.Params {
					if prm.Key == "instances" {
						d.probs.Add(prm.Line, "instances is for managed instances (instance: in the plan), not an external target")
					}
				}
			}
		}
	}
	if no := rulesOf(p.Kind()).NoSettings; no != "" {
		for _, prm := range p.allParams() {
			if strings.HasPrefix(prm.Key, "settings.") && !strings.HasPrefix(prm.Key, "settings."+OSPrefix) {
				d.probs.Add(prm.Line, "%s", no)
				break
			}
		}
	}
}

// allParams lists the base parameters and those of every axis value.
func (p *Plan) allParams() []param {
	out := append([]param(nil), p.Base...)
	for _, ax := range p.Axes {
		for _, av := range ax.Values {
			out = append(out, av.Params...)
		}
	}
	return out
}

// --- node helpers ---

// The checks shared with the workload file's decoder (package yamlfile), on this
// plan's problems.

func describe(n *yaml.Node) string { return yamlfile.Describe(n) }

func (d *decoder) fields(n *yaml.Node, what string, known ...string) (map[string]*yaml.Node, bool) {
	return d.probs.Fields(n, what, known...)
}

func (d *decoder) mapping(n *yaml.Node, what string) (*yaml.Node, bool) {
	return d.probs.Mapping(n, what)
}

func (d *decoder) list(n *yaml.Node, what string) ([]*yaml.Node, bool) {
	m := yamlfile.Deref(n)
	if m == nil || m.Kind != yaml.SequenceNode {
		if m == nil || m.Kind != yaml.MappingNode {
			d.probs.At(n, "%s must be a list, e.g. [1, 2, 4], not %s", what, describe(n))
		}
		return nil, false
	}
	return m.Content, true
}

func (d *decoder) scalar(n *yaml.Node, what string) (string, bool) {
	return d.probs.Scalar(n, what)
}

func (d *decoder) str(n *yaml.Node, what string) string { return d.probs.Str(n, what) }

func (d *decoder) boolean(n *yaml.Node, what string) bool { return d.probs.Bool(n, what) }

func (d *decoder) duration(n *yaml.Node, what string, def time.Duration) time.Duration {
	if n == nil {
		return def
	}
	s, ok := d.scalar(n, what)
	if !ok {
		return def
	}
	v, err := parseDuration(s)
	if err != nil {
		d.probs.At(n, "%s: %v", what, err)
		return def
	}
	return v
}

func (d *decoder) choice(n *yaml.Node, what, def string, allowed ...string) string {
	if n == nil {
		return def
	}
	s, ok := d.scalar(n, what)
	if !ok {
		return def
	}
	if !slices.Contains(allowed, s) {
		d.probs.At(n, "%s must be %s, not %q", what, orList(allowed), s)
		return def
	}
	return s
}

// orList renders a, b or c.
func orList(xs []string) string {
	if len(xs) < 2 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " or " + xs[len(xs)-1]
}
