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
	"strconv"
	"strings"
	"time"

	"github.com/fathom-lab/fathom/internal/instance"
)

// Plan is a decoded plan file.
type Plan struct {
	Path string // as given, for messages
	Dir  string // the file's directory: relative workload files and hooks start here
	Data []byte // the file's text, kept with the experiment

	Name        string
	Description string
	// Target is the DSN of an external server; empty with Instance.
	Target     string
	TargetLine int
	// RestartCommand restarts an external server (for settings that need it, and for
	// restart: each).
	RestartCommand string
	Instance       *Instance

	// Base holds the parameters every cell starts from (workload, options.*,
	// settings.*, clients, duration …) in file order.
	Base []Param
	Axes []*Axis

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
	Hooks            Hooks
	// CollectOff turns off sampling server and OS metrics during runs; CollectOnly
	// limits it to these collectors or sources (as fathom run's --collect).
	CollectOff  bool
	CollectOnly []string
	CollectLine int
}

// Instance says what managed servers to start.
type Instance struct {
	Kind         instance.Kind
	Version      string
	Dir          string // base directory of instances ("" = instance.DefaultDir())
	Keep         bool
	StartTimeout time.Duration
	Line         int
}

// Param is one parameter of a run as written: a key (clients, duration, workload,
// instances, options.NAME, settings.NAME …) and its value.
type Param struct {
	Key   string
	Value string
	Line  int
}

// Axis is one dimension of the matrix.
type Axis struct {
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
	Params []Param
}

// Hook is one action before or after runs: SQL statements or a shell command.
type Hook struct {
	Name    string
	SQL     []string
	Shell   string
	Timeout time.Duration
	Line    int
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
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

// Kind is "sql" or "shell".
func (h *Hook) Kind() string {
	if len(h.SQL) > 0 {
		return "sql"
	}
	return "shell"
}

// Hooks are the plan's hooks by phase.
type Hooks struct {
	BeforeExperiment []*Hook
	BeforeRun        []*Hook
	AfterRun         []*Hook
	AfterExperiment  []*Hook
}

// Phases of hooks, as stored.
const (
	BeforeExperiment = "before_experiment"
	BeforeRun        = "before_run"
	AfterRun         = "after_run"
	AfterExperiment  = "after_experiment"
)

// Orders of runs.
const (
	OrderInterleaved = "interleaved"
	OrderRandom      = "random"
	OrderSequential  = "sequential"
)

// Managed reports whether the plan runs on instances fathom starts.
func (p *Plan) Managed() bool { return p.Instance != nil }

// Kind is the server kind the plan runs against: postgres, mysql or sqlite (from the
// target DSN's scheme; instances are postgres or mysql).
func (p *Plan) Kind() string {
	if p.Instance != nil {
		if p.Instance.Kind == instance.MariaDB {
			return "mysql"
		}
		return "postgres"
	}
	return dsnKind(p.Target)
}

func dsnKind(dsn string) string {
	d := strings.ToLower(strings.TrimSpace(dsn))
	switch {
	case strings.HasPrefix(d, "postgres://"), strings.HasPrefix(d, "postgresql://"):
		return "postgres"
	case strings.HasPrefix(d, "mysql://"), strings.HasPrefix(d, "mariadb://"):
		return "mysql"
	case strings.HasPrefix(d, "sqlite:"):
		return "sqlite"
	case strings.Contains(d, "=") && !strings.Contains(d, "://"):
		return "postgres" // libpq key=value
	}
	return ""
}

// Run parameter keys that can be set at the top of a plan and on axes.
var runKeys = []string{"clients", "duration", "transactions", "warmup", "rate", "latency_limit", "report_interval", "max_tries", "query_mode"}

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
	switch key {
	case "clients", "max_tries":
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 || n > 100000 {
			return fmt.Sprintf("%s must be a whole number of at least 1, not %q", key, value)
		}
	case "instances":
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 || n > 64 {
			return fmt.Sprintf("instances must be a whole number from 1 to 64, not %q", value)
		}
	case "transactions":
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil || n < 1 {
			return fmt.Sprintf("transactions (per client) must be a whole number of at least 1, not %q", value)
		}
	case "duration", "warmup", "latency_limit", "report_interval":
		d, err := ParseDuration(value)
		if err != nil {
			return fmt.Sprintf("%s: %v", key, err)
		}
		if key == "duration" && d <= 0 {
			return "duration must be more than 0"
		}
		if key == "report_interval" && d < time.Millisecond {
			return "report_interval must be at least 1ms"
		}
	case "rate":
		f, err := strconv.ParseFloat(value, 64)
		if err != nil || f < 0 || f != f || f > 1e9 {
			return fmt.Sprintf("rate must be a number of transactions per second (0 = closed loop), not %q", value)
		}
	case "query_mode":
		if value != "prepared" && value != "simple" {
			return fmt.Sprintf("query_mode must be prepared or simple, not %q", value)
		}
	case "workload":
		if strings.TrimSpace(value) == "" {
			return "workload must name a built-in workload or a workload file"
		}
	}
	return ""
}

// ParseDuration accepts Go durations ("250ms", "1m30s") and, like pgbench and
// sysbench, a plain number of seconds ("60", "0.5").
func ParseDuration(s string) (time.Duration, error) {
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
