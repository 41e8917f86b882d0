package cli

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// durationValue accepts Go durations ("250ms", "1m30s") and, like pgbench and
// sysbench, a plain number of seconds ("60", "0.5").
type durationValue struct {
	d        *time.Duration
	positive bool          // zero is refused: the flag has no meaning at zero
	unit     time.Duration // what a plain number counts (0: seconds); pgbench's -L counts ms
}

func (v durationValue) String() string {
	if v.d == nil || *v.d == 0 {
		return "0"
	}
	return v.d.String()
}
func (v durationValue) Type() string { return "duration" }
func (v durationValue) Set(s string) error {
	d, err := parseDurationUnit(s, v.unit)
	if err != nil {
		return err
	}
	if v.positive && d <= 0 {
		return fmt.Errorf("%q is zero: give a duration above zero (e.g. 30s or 250ms)", s)
	}
	*v.d = d
	return nil
}

func parseDuration(s string) (time.Duration, error) { return parseDurationUnit(s, time.Second) }

// parseDurationUnit reads a Go duration, or a plain number of units (0: seconds).
func parseDurationUnit(s string, unit time.Duration) (time.Duration, error) {
	if unit == 0 {
		unit = time.Second
	}
	s = strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if f < 0 || f*float64(unit) > 1e9*float64(time.Second) || f != f {
			return 0, fmt.Errorf("%q is out of range", s)
		}
		return time.Duration(f * float64(unit)), nil
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

func durationVarP(fs *pflag.FlagSet, p *time.Duration, name, short string, def time.Duration, usage string) {
	*p = def
	fs.VarP(durationValue{d: p}, name, short, usage)
}

// positiveDurationVarP is a duration flag that refuses zero when given: a timeout, an
// interval or a length of zero cannot be right (and must not silently become a default).
func positiveDurationVarP(fs *pflag.FlagSet, p *time.Duration, name, short string, def time.Duration, usage string) {
	*p = def
	fs.VarP(durationValue{d: p, positive: true}, name, short, usage)
}

// millisDurationVarP is a positive duration flag whose plain numbers are milliseconds,
// as pgbench's -L ("-L 5" is 5 ms); Go durations ("5ms", "1s") are taken too.
func millisDurationVarP(fs *pflag.FlagSet, p *time.Duration, name, short string, def time.Duration, usage string) {
	*p = def
	fs.VarP(durationValue{d: p, positive: true, unit: time.Millisecond}, name, short, usage)
}

// positiveInt is an integer flag that refuses zero and negative values when given.
type positiveInt[T int | int64] struct{ p *T }

func (v positiveInt[T]) String() string {
	if v.p == nil {
		return "0"
	}
	return strconv.FormatInt(int64(*v.p), 10)
}
func (v positiveInt[T]) Type() string { return "int" }
func (v positiveInt[T]) Set(s string) error {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return fmt.Errorf("%q is not a whole number", s)
	}
	if n < 1 {
		return fmt.Errorf("%d is not above zero: give 1 or more", n)
	}
	if int64(T(n)) != n {
		return fmt.Errorf("%q is too large", s)
	}
	*v.p = T(n)
	return nil
}

func positiveIntVarP[T int | int64](fs *pflag.FlagSet, p *T, name, short string, def T, usage string) {
	*p = def
	fs.VarP(positiveInt[T]{p}, name, short, usage)
}

// fractionValue is a float flag in (0, 1].
type fractionValue struct{ p *float64 }

func (v fractionValue) String() string {
	if v.p == nil {
		return "0"
	}
	return strconv.FormatFloat(*v.p, 'g', -1, 64)
}
func (v fractionValue) Type() string { return "fraction" }
func (v fractionValue) Set(s string) error {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return fmt.Errorf("%q is not a number", s)
	}
	if !(f > 0 && f <= 1) {
		return fmt.Errorf("%v is not a fraction above 0 and at most 1 (e.g. 0.5)", f)
	}
	*v.p = f
	return nil
}

func fractionVar(fs *pflag.FlagSet, p *float64, name string, def float64, usage string) {
	*p = def
	fs.Var(fractionValue{p}, name, usage)
}

// parseKV splits "key=value".
func parseKV(s, what string) (string, string, error) {
	k, v, ok := strings.Cut(s, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		return "", "", fmt.Errorf("%s %q must look like key=value", what, s)
	}
	return k, v, nil
}
