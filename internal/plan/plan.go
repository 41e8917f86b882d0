// Package plan reads experiment plans: a workload run many times over a matrix of run
// options, workload options and server settings, with repetitions in an interleaved
// order, hooks around each run, and either an external server or throwaway instances.
//
// Decoding is strict: every unknown key, wrong type and bad value in the file is
// reported at once, each with its line. Expand turns a plan into its cells (one per
// combination of axis values) and Schedule orders the runs.
package plan

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/target"
)

// Plan is a decoded plan file.
type Plan struct {
	Path string // as given, for messages
	Dir  string // the file's directory: relative workload files and hooks start here
	Data []byte // the file's text, kept with the experiment

	Name        string
	Description string
	// Target is the DSN of an external server; empty with Instance, and when an
	// axis's values name the targets (TargetAxis).
	Target     string
	TargetLine int
	// TargetAxis is the axis whose named values each set a target (servers, or
	// instances of different engines or versions): "" when the plan has one target.
	TargetAxis string
	// InstanceAxis is the axis whose named values each give a throwaway instance of
	// their own (instance: {kind: postgres, version: 16}): "" when none does.
	InstanceAxis string
	// RestartCommand restarts an external server (for settings that need it, and for
	// restart: each).
	RestartCommand string
	Instance       *Instance

	// Base holds the parameters every cell starts from (workload, options.*,
	// settings.*, clients, duration …) in file order.
	Base []param
	Axes []*axis
	// Baseline is the value comparisons along an axis start from, by short axis name
	// (default: the axis's first value listed); Judge is the transaction type or
	// client group a cell is judged by ("" every transaction).
	Baseline  map[string]string
	Judge     string
	JudgeLine int
	// OSRoot is where OS settings (settings.os.NAME) are written: /proc/sys unless a
	// test says otherwise.
	OSRoot string

	Repetitions      int
	Order            string // interleaved (default), random or sequential
	Cooldown         time.Duration
	Restart          string // auto (when a setting needs it) or each (before every run)
	Prepare          string // auto, each or never
	OnError          string // stop (default) or continue
	Seed             uint64
	HasSeed          bool
	ConnectTimeout   time.Duration
	ReconnectTimeout time.Duration
	Labels           map[string]string
	Hooks            hooks
	// CollectOff turns off sampling server and OS metrics during runs; CollectOnly
	// limits it to these collectors or sources (as fathom run's --collect).
	CollectOff  bool
	CollectOnly []string
	CollectLine int
	// Thresholds are pass/fail bars every run of the plan is checked against, as
	// fathom run's --threshold (thresholds: ["p99<20ms", "tps>1000;abort"]).
	Thresholds []measure.Threshold
	// MeasureRestart lists the files a Redis instance is restarted from after each
	// run, each restart timed until the server answers (rdb, aof, aof-plain).
	MeasureRestart []string
}

// Instance says what managed servers to start.
type Instance struct {
	Kind    instance.Kind
	Version string
	// Bin is the directory of the server's programs ("": the installed ones), as
	// fathom instance create's --bin.
	Bin          string
	Dir          string // base directory of instances ("" = instance.DefaultDir())
	Keep         bool
	StartTimeout time.Duration
	// Ports is where the instances' ports must be (port: N, port_range: A-B); nil: any
	// free port.
	Ports *instance.Ports
	// PortLine is the line of port or port_range (0: none).
	PortLine int
	Line     int
}

// param is one parameter of a run as written: a key (clients, duration, workload,
// instances, options.NAME, settings.NAME …) and its value.
type param struct {
	Key   string
	Value string
	Line  int
}

// axis is one dimension of the matrix.
type axis struct {
	Name string
	Line int
	// Named axes have labelled values, each setting one or more parameters (e.g.
	// durability: {relaxed: {settings: …}, durable: {settings: …}}).
	Named  bool
	Values []*AxisValue
}

// AxisValue is one value of an axis: its label and the parameters it sets.
type AxisValue struct {
	Label  string
	Line   int
	Params []param
	// Instance is the throwaway instance the value's cells run on (an axis of
	// instances), nil otherwise.
	Instance *Instance
}

// Hook is one action before, during or after runs: SQL statements, Redis commands
// (SQL holds them, Redis is set) or a shell command.
type Hook struct {
	Name    string
	SQL     []string
	Redis   bool
	Shell   string
	Timeout time.Duration
	// At is when a during_run hook fires: this long after the start of the run's
	// first interval (warm-up included), on the run's clock.
	At time.Duration
	// When limits the hook to the cells with one of the listed values on each axis
	// named (by its short name); nil: every cell.
	When map[string][]string
	Line int
}

// Applies reports whether the hook runs in cell c (When).
func (h *Hook) Applies(c *Cell) bool {
	for axis, values := range h.When {
		ok := false
		for _, co := range c.Coords {
			if co.Axis == axis && slices.Contains(values, co.Value) {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// Describe is the hook's name, or its command shortened.
func (h *Hook) Describe() string {
	if h.Name != "" {
		return h.Name
	}
	s := h.Shell
	if len(h.SQL) > 0 {
		s = strings.Join(h.SQL, "; ")
	}
	s = strings.Join(strings.Fields(target.MaskText(s)), " ")
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

// Kind is "sql", "redis" or "shell".
func (h *Hook) Kind() string {
	switch {
	case h.Redis:
		return "redis"
	case len(h.SQL) > 0:
		return "sql"
	}
	return "shell"
}

// hooks are the plan's hooks by phase.
type hooks struct {
	BeforeExperiment []*Hook
	BeforeRun        []*Hook
	DuringRun        []*Hook // each fires at its At into every run
	AfterRun         []*Hook
	AfterExperiment  []*Hook
}

// Phases of hooks, as stored.
const (
	BeforeExperiment = "before_experiment"
	BeforeRun        = "before_run"
	DuringRun        = "during_run"
	AfterRun         = "after_run"
	AfterExperiment  = "after_experiment"
	// Restart is the phase a measured restart (MeasureRestart) is stored under.
	Restart = "restart"
)

// Formats a Redis restart can load, for measure_restart: the RDB snapshot, the AOF
// with its RDB preamble (aof-use-rdb-preamble yes, Redis's default) and the AOF as
// commands only (aof-use-rdb-preamble no).
const (
	restartRDB      = "rdb"
	RestartAOF      = "aof"
	RestartAOFPlain = "aof-plain"
)

// Orders of runs.
const (
	OrderInterleaved = "interleaved"
	OrderRandom      = "random"
	OrderSequential  = "sequential"
)

// Managed reports whether the plan runs on instances fathom starts (the plan's, or
// those of its axis of instances).
func (p *Plan) Managed() bool { return p.Instance != nil || p.InstanceAxis != "" }

// InstanceValues lists the values of the plan's axis of instances, in the order given
// (nil without one).
func (p *Plan) InstanceValues() []*AxisValue {
	for _, ax := range p.Axes {
		if ax.Name == p.InstanceAxis && p.InstanceAxis != "" {
			return ax.Values
		}
	}
	return nil
}

// Kind is the server kind the plan runs against ("postgres"): the kind that owns the
// target DSN, or whose throwaway instances the plan starts, or of every target of
// its target axis or of every instance of its axis of instances ("" when none does,
// or they are of several kinds).
func (p *Plan) Kind() string {
	if p.Instance != nil {
		return kindOfInstance(p.Instance.Kind)
	}
	if p.InstanceAxis != "" {
		kind := ""
		for i, av := range p.InstanceValues() {
			k := ""
			if av.Instance != nil {
				k = kindOfInstance(av.Instance.Kind)
			}
			if i > 0 && k != kind {
				return ""
			}
			kind = k
		}
		return kind
	}
	if p.TargetAxis != "" {
		kind := ""
		for i, t := range p.Targets() {
			k := kindOfDSN(t)
			if i > 0 && k != kind {
				return ""
			}
			kind = k
		}
		return kind
	}
	return kindOfDSN(p.Target)
}

// Targets lists the external servers the plan runs on, in the order given: its
// target, or the targets of its target axis (none with throwaway instances).
func (p *Plan) Targets() []string {
	if p.Target != "" {
		return []string{p.Target}
	}
	var out []string
	for _, ax := range p.Axes {
		if ax.Name != p.TargetAxis {
			continue
		}
		for _, av := range ax.Values {
			for _, prm := range av.Params {
				if prm.Key == "target" {
					out = append(out, prm.Value)
				}
			}
		}
	}
	return out
}

// Run parameter keys that can be set at the top of a plan and on axes.
var runKeys = []string{"clients", "agents", "duration", "transactions", "warmup", "rate", "latency_limit", "report_interval", "max_tries", "query_mode"}

func isRunKey(k string) bool {
	for _, r := range runKeys {
		if r == k {
			return true
		}
	}
	return false
}

// checkParam checks one parameter's value and returns the problem, if any.
func checkParam(key, value string) string {
	if strings.HasPrefix(key, "table.") {
		return checkTable(strings.TrimPrefix(key, "table."), value)
	}
	if check := paramChecks[key]; check != nil {
		return check(key, value)
	}
	return ""
}

// paramChecks holds the check of each parameter that has one: it returns the problem
// with the value, or "".
var paramChecks = map[string]func(key, value string) string{
	"target":          checkTarget,
	"clients":         checkAtLeastOne,
	"max_tries":       checkAtLeastOne,
	"agents":          checkAgents,
	"instances":       checkInstances,
	"transactions":    checkTransactions,
	"duration":        checkDurationParam,
	"warmup":          checkDurationParam,
	"latency_limit":   checkDurationParam,
	"report_interval": checkDurationParam,
	"rate":            checkRate,
	"query_mode":      checkQueryMode,
	"workload":        checkWorkload,
}

func checkTarget(_, value string) string {
	if kindOfDSN(value) == "" {
		return "target: not a DSN fathom knows: use postgres://…, mysql://…, redis://… or sqlite:PATH"
	}
	return ""
}

func checkAtLeastOne(key, value string) string {
	n, err := strconv.Atoi(value)
	if err != nil || n < 1 || n > 100000 {
		return fmt.Sprintf("%s must be a whole number of at least 1, not %q", key, value)
	}
	return ""
}

func checkAgents(_, value string) string {
	n, err := strconv.Atoi(value)
	if err != nil || n < 0 || n > 10000 {
		return fmt.Sprintf("agents must be a whole number of 0 (this machine) or more, not %q", value)
	}
	return ""
}

func checkInstances(_, value string) string {
	n, err := strconv.Atoi(value)
	if err != nil || n < 1 || n > 64 {
		return fmt.Sprintf("instances must be a whole number from 1 to 64, not %q", value)
	}
	return ""
}

func checkTransactions(_, value string) string {
	n, err := strconv.ParseInt(value, 10, 64)
	if err != nil || n < 1 {
		return fmt.Sprintf("transactions (per client) must be a whole number of at least 1, not %q", value)
	}
	return ""
}

func checkDurationParam(key, value string) string {
	d, err := parseDuration(value)
	if err != nil {
		return fmt.Sprintf("%s: %v", key, err)
	}
	if key == "duration" && d <= 0 {
		return "duration must be more than 0"
	}
	if key == "report_interval" && d < time.Millisecond {
		return "report_interval must be at least 1ms"
	}
	return ""
}

func checkRate(_, value string) string {
	f, err := strconv.ParseFloat(value, 64)
	if err != nil || f < 0 || f != f || f > 1e9 {
		return fmt.Sprintf("rate must be a number of transactions per second (0 = closed loop), not %q", value)
	}
	return ""
}

func checkQueryMode(_, value string) string {
	if value != "prepared" && value != "simple" {
		return fmt.Sprintf("query_mode must be prepared or simple, not %q", value)
	}
	return ""
}

func checkWorkload(_, value string) string {
	if strings.TrimSpace(value) == "" {
		return "workload must name a built-in workload or a workload file"
	}
	return ""
}

// parseDuration accepts Go durations ("250ms", "1m30s") and, like pgbench and
// sysbench, a plain number of seconds ("60", "0.5").
func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if f < 0 || f > 1e9 {
			return 0, fmt.Errorf("%q is out of range", s)
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (e.g. 30, 30s, 250ms, 5m)", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("%q is negative", s)
	}
	return d, nil
}

func (p *Plan) osRoot() string {
	if p.OSRoot != "" {
		return p.OSRoot
	}
	return ProcSys
}

// OSRootDir is where the plan's OS settings are written.
func (p *Plan) OSRootDir() string { return p.osRoot() }

// ServerVersion is the version of the server programs the instance would run: those in
// Bin, or the installed ones of its kind (and Version).
func (in *Instance) ServerVersion() (string, error) {
	if in.Bin != "" {
		_, v, err := instance.FindIn(in.Kind, in.Bin, in.Version)
		return v, err
	}
	return instance.Version(in.Kind, in.Version)
}

// Describe is the instance for messages: its kind and the version it would run
// ("postgres 16.4"), or what was asked for when no such programs are found.
func (in *Instance) Describe() string {
	v, err := in.ServerVersion()
	if err != nil || v == "" {
		v = in.Version
	}
	return strings.TrimSpace(fmt.Sprintf("%s %s", in.Kind, v))
}
