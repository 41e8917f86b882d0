package check

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"
)

// Flags are the check command's flags that say what to check: one check made of
// them, or the checks of a --config file.
type Flags struct {
	Mode, Expression, Warning, Critical, CmpWarning, CmpCritical string
	Shortname, UOM, Min, Max, Config, Baseline                   string
	Heartbeat                                                    bool
	HeartbeatTable                                               string
	ServerID                                                     int64
	Channel                                                      string
	MinReplicas                                                  int
	WarnBytes, CritBytes                                         string
}

// Register adds the flags to fs.
func (f *Flags) Register(fs *pflag.FlagSet) {
	fs.StringVarP(&f.Mode, "mode", "m", "varcomp", "what to check: "+modeNames())
	fs.StringVarP(&f.Expression, "expression", "e", "", "varcomp: the expression, e.g. 'Threads_connected / max_connections * 100'")
	fs.StringVarP(&f.Warning, "warning", "w", "", "warning threshold (Nagios range)")
	fs.StringVarP(&f.Critical, "critical", "c", "", "critical threshold (Nagios range)")
	fs.StringVar(&f.CmpWarning, "comparison-warning", "", `warning as a comparison: "> 75", ">= 75", "< 10", "== 0" …`)
	fs.StringVar(&f.CmpCritical, "comparison-critical", "", `critical as a comparison: "> 80" …`)
	fs.StringVarP(&f.Shortname, "shortname", "n", "", "name at the start of the output and perfdata label (default: the mode)")
	fs.StringVar(&f.UOM, "uom", "", "perfdata unit: s, ms, us, %, B, KB, MB, TB or c")
	fs.StringVar(&f.Min, "min", "", "perfdata minimum")
	fs.StringVar(&f.Max, "max", "", "perfdata maximum")
	fs.StringVar(&f.Config, "config", "", "run the named checks of this YAML file (see docs/checks.md) in one invocation")
	fs.StringVar(&f.Baseline, "baseline-status", "unknown", "status of a run with no previous run to compare with, or after a counter reset")
	fs.BoolVar(&f.Heartbeat, "heartbeat", false, "replication-lag: measure lag from the heartbeat row that fathom heartbeat writes on the primary")
	fs.StringVar(&f.HeartbeatTable, "heartbeat-table", DefaultHeartbeatTable, "heartbeat table ([schema.]name)")
	fs.Int64Var(&f.ServerID, "server-id", 0, "heartbeat: the primary's server id (default: MySQL Master_Server_Id, PostgreSQL system identifier)")
	fs.StringVar(&f.Channel, "channel", "", "replication-lag, MySQL: only this replication channel (default: all)")
	fs.IntVar(&f.MinReplicas, "min-replicas", 1, "replication-lag on a PostgreSQL primary: standbys that must be streaming")
	fs.StringVar(&f.WarnBytes, "warning-bytes", "", "replication-lag on a PostgreSQL primary: warning range for the bytes of WAL a standby has not replayed")
	fs.StringVar(&f.CritBytes, "critical-bytes", "", "replication-lag on a PostgreSQL primary: critical range for the bytes of WAL a standby has not replayed")
}

// Checks builds the checks from --config or from the flags (fs says which were given).
func (o *Flags) Checks(fs *pflag.FlagSet) ([]*Check, string, error) {
	baseline, err := ParseStatus(o.Baseline)
	if err != nil {
		return nil, "", fmt.Errorf("--baseline-status: %v", err)
	}
	if o.Config != "" {
		for _, f := range []string{"expression", "warning", "critical", "comparison-warning", "comparison-critical", "uom", "min", "max", "heartbeat", "server-id", "channel", "min-replicas", "warning-bytes", "critical-bytes"} {
			if fs.Changed(f) {
				return nil, "", fmt.Errorf("--%s goes in the config file's checks when --config is given", f)
			}
		}
		if fs.Changed("mode") {
			return nil, "", errors.New("--mode goes in the config file's checks when --config is given")
		}
		f, err := os.Open(o.Config)
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				return nil, "", fmt.Errorf("config %s: %v", o.Config, pe.Err)
			}
			return nil, "", err
		}
		defer f.Close()
		cfg, err := parseConfig(f)
		if err != nil {
			return nil, "", fmt.Errorf("config %s: %v", o.Config, err)
		}
		if fs.Changed("baseline-status") {
			for _, c := range cfg.Checks {
				if c.Baseline == nil {
					c.Baseline = &baseline
				}
			}
		}
		if o.Shortname != "" {
			cfg.Name = o.Shortname
		}
		return cfg.Checks, cfg.Name, nil
	}
	c := &Check{
		Name: o.Shortname, Mode: o.Mode, Expression: o.Expression, UOM: o.UOM, Baseline: &baseline,
		Heartbeat: o.Heartbeat, HeartbeatTable: o.HeartbeatTable, ServerID: o.ServerID,
		Channel: o.Channel, MinReplicas: o.MinReplicas,
	}
	if c.Warning, c.Critical, err = Thresholds(o.Warning, o.Critical, o.CmpWarning, o.CmpCritical); err != nil {
		return nil, "", err
	}
	if c.WarningBytes, err = parseRange(o.WarnBytes); err != nil {
		return nil, "", fmt.Errorf("--warning-bytes %v", err)
	}
	if c.CriticalBytes, err = parseRange(o.CritBytes); err != nil {
		return nil, "", fmt.Errorf("--critical-bytes %v", err)
	}
	for _, m := range []struct {
		v, flag string
		dst     **float64
	}{{o.Min, "--min", &c.Min}, {o.Max, "--max", &c.Max}} {
		if m.v == "" {
			continue
		}
		r, err := parseRange("~:" + m.v)
		if err != nil {
			return nil, "", fmt.Errorf("%s %q is not a number", m.flag, m.v)
		}
		f := r.End
		*m.dst = &f
	}
	if o.Heartbeat && c.Mode != "replication-lag" {
		return nil, "", fmt.Errorf("--heartbeat goes with --mode replication-lag")
	}
	if err := c.Prepare(); err != nil {
		return nil, "", err
	}
	return []*Check{c}, c.Name, nil
}
