package cli

import (
	"fmt"
	"strconv"
	"strings"
)

// percentValue is a flag holding a percent from 0 to 100, written 1, 0.5 or 2.5%;
// set says whether it was given (0 is a limit: no transaction may fail).
type percentValue struct {
	v   float64
	set bool
}

func (p *percentValue) String() string {
	if !p.set {
		return ""
	}
	return strconv.FormatFloat(p.v, 'f', -1, 64)
}

func (p *percentValue) Set(s string) error {
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
	if err != nil || v < 0 || v > 100 {
		return fmt.Errorf("%q is not a percent from 0 to 100 (e.g. 1, 0.5 or 2.5%%)", s)
	}
	p.v, p.set = v, true
	return nil
}

func (p *percentValue) Type() string { return "PCT" }
