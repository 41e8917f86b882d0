package check

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"

	"strings"

	"gopkg.in/yaml.v3"
)

// config is a --config file: named checks run in one invocation on one sample.
//
//	name: db1                 # first word of the combined output (default FATHOM)
//	checks:
//	  - name: connections
//	    mode: connections
//	    warning: 75
//	    critical: 80
//	  - name: open_table_definitions
//	    mode: lastrun-varcomp
//	    expression: current{Open_table_definitions} - lastrun{Open_table_definitions}
//	    comparison_warning: "> 10"
type config struct {
	Name   string
	Checks []*Check
}

// scalar accepts any YAML scalar as text (warning: 75 and warning: "~:75" alike).
var unknownField = regexp.MustCompile(`field (\S+) not found in type \S+`)

type scalar string

func (s *scalar) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a single value", n.Line)
	}
	*s = scalar(n.Value)
	return nil
}

type configFile struct {
	Name   string        `yaml:"name"`
	Checks []configCheck `yaml:"checks"`
}

type configCheck struct {
	Name               string  `yaml:"name"`
	Mode               string  `yaml:"mode"`
	Expression         string  `yaml:"expression"`
	Warning            scalar  `yaml:"warning"`
	Critical           scalar  `yaml:"critical"`
	ComparisonWarning  scalar  `yaml:"comparison_warning"`
	ComparisonCritical scalar  `yaml:"comparison_critical"`
	UOM                string  `yaml:"uom"`
	Min                *scalar `yaml:"min"`
	Max                *scalar `yaml:"max"`
	Baseline           string  `yaml:"baseline"`
	Heartbeat          bool    `yaml:"heartbeat"`
	HeartbeatTable     string  `yaml:"heartbeat_table"`
	ServerID           int64   `yaml:"server_id"`
	Channel            string  `yaml:"channel"`
	MinReplicas        *int    `yaml:"min_replicas"`
	WarningBytes       scalar  `yaml:"warning_bytes"`
	CriticalBytes      scalar  `yaml:"critical_bytes"`
}

// parseConfig reads a config file. Errors are one line naming the check and field.
func parseConfig(r io.Reader) (*config, error) {
	b, err := io.ReadAll(io.LimitReader(r, 1<<20))
	if err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var f configFile
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("the config file is empty: it needs a list of checks under checks:")
		}
		msg := strings.Join(strings.Fields(err.Error()), " ")
		msg = strings.TrimPrefix(msg, "yaml: ")
		msg = strings.TrimPrefix(msg, "unmarshal errors: ")
		msg = unknownField.ReplaceAllString(msg, "unknown field $1 (see docs/checks.md)")
		return nil, errors.New(msg)
	}
	if len(f.Checks) == 0 {
		return nil, errors.New("the config file has no checks: list them under checks:")
	}
	cfg := &config{Name: f.Name}
	if cfg.Name == "" {
		cfg.Name = "FATHOM"
	}
	if strings.ContainsAny(cfg.Name, "\n|") {
		return nil, fmt.Errorf("name %s cannot contain a newline or a vertical bar", PluginText(strconv.Quote(cfg.Name)))
	}
	seen := map[string]bool{}
	for i, cc := range f.Checks {
		where := fmt.Sprintf("check %d", i+1)
		if cc.Name == "" {
			return nil, fmt.Errorf("%s: give it a name (its perfdata label and state file)", where)
		}
		where = fmt.Sprintf("check %q", cc.Name)
		if seen[strings.ToLower(cc.Name)] {
			return nil, fmt.Errorf("%s: two checks have this name", where)
		}
		seen[strings.ToLower(cc.Name)] = true
		c, err := cc.check()
		if err != nil {
			return nil, fmt.Errorf("%s: %v", where, err)
		}
		cfg.Checks = append(cfg.Checks, c)
	}
	return cfg, nil
}

func (cc configCheck) check() (*Check, error) {
	c := &Check{
		Name: cc.Name, Mode: cc.Mode, Expression: cc.Expression, UOM: cc.UOM,
		Heartbeat: cc.Heartbeat, HeartbeatTable: cc.HeartbeatTable, ServerID: cc.ServerID,
		Channel: cc.Channel, MinReplicas: 1,
	}
	if cc.MinReplicas != nil {
		c.MinReplicas = *cc.MinReplicas
	}
	var err error
	if c.Warning, c.Critical, err = Thresholds(string(cc.Warning), string(cc.Critical), string(cc.ComparisonWarning), string(cc.ComparisonCritical)); err != nil {
		return nil, err
	}
	if c.WarningBytes, err = parseRange(string(cc.WarningBytes)); err != nil {
		return nil, fmt.Errorf("warning_bytes %v", err)
	}
	if c.CriticalBytes, err = parseRange(string(cc.CriticalBytes)); err != nil {
		return nil, fmt.Errorf("critical_bytes %v", err)
	}
	if cc.Baseline != "" {
		st, err := ParseStatus(cc.Baseline)
		if err != nil {
			return nil, fmt.Errorf("baseline: %v", err)
		}
		c.Baseline = &st
	}
	for _, m := range []struct {
		v   *scalar
		dst **float64
		key string
	}{{cc.Min, &c.Min, "min"}, {cc.Max, &c.Max, "max"}} {
		if m.v == nil {
			continue
		}
		f, ok := ParseNumber(string(*m.v))
		if !ok {
			return nil, fmt.Errorf("%s: %q is not a number", m.key, string(*m.v))
		}
		*m.dst = &f
	}
	if err := c.Prepare(); err != nil {
		return nil, err
	}
	return c, nil
}

// Thresholds parses the warning and critical thresholds given either as Nagios ranges
// or in the comparison form, not both.
func Thresholds(warning, critical, cmpWarning, cmpCritical string) (w, c thresholdRange, err error) {
	if warning != "" && cmpWarning != "" {
		return w, c, errors.New("give the warning threshold once: as a range (-w) or as a comparison (--comparison_warning)")
	}
	if critical != "" && cmpCritical != "" {
		return w, c, errors.New("give the critical threshold once: as a range (-c) or as a comparison (--comparison_critical)")
	}
	if w, err = parseRange(warning); err != nil {
		return w, c, fmt.Errorf("warning %v", err)
	}
	if c, err = parseRange(critical); err != nil {
		return w, c, fmt.Errorf("critical %v", err)
	}
	if cmpWarning != "" {
		if w, err = parseComparison(cmpWarning); err != nil {
			return w, c, fmt.Errorf("warning %v", err)
		}
	}
	if cmpCritical != "" {
		if c, err = parseComparison(cmpCritical); err != nil {
			return w, c, fmt.Errorf("critical %v", err)
		}
	}
	return w, c, nil
}
