package check

import (
	"math"
	"testing"
)

var rangeTests = []struct {
	in     string
	text   string    // canonical form
	alerts []float64 // values that alert
	quiet  []float64 // values that do not
	err    bool
}{
	{in: "10", text: "10", alerts: []float64{-1, 10.5, 11}, quiet: []float64{0, 5, 10}},
	{in: "10:", text: "10:", alerts: []float64{9.99, -5}, quiet: []float64{10, 1e9}},
	{in: "~:10", text: "~:10", alerts: []float64{10.01}, quiet: []float64{-1e9, 10}},
	{in: "10:20", text: "10:20", alerts: []float64{9, 21}, quiet: []float64{10, 15, 20}},
	{in: "@10:20", text: "@10:20", alerts: []float64{10, 15, 20}, quiet: []float64{9.9, 20.1}},
	{in: " @ 10 : 20 ", text: "@10:20", alerts: []float64{12}, quiet: []float64{1}},
	{in: "0:0", text: "0", alerts: []float64{1, -1}, quiet: []float64{0}},
	{in: ":5", text: "5", alerts: []float64{-1, 6}, quiet: []float64{0, 5}},
	{in: "-5:-1", text: "-5:-1", alerts: []float64{0, -6}, quiet: []float64{-3}},
	{in: "1.5:2.25", text: "1.5:2.25", alerts: []float64{1.4}, quiet: []float64{2}},
	{in: "1e3", text: "1000", alerts: []float64{1001}, quiet: []float64{999}},
	{in: "@~:0", text: "@~:0", alerts: []float64{0, -1}, quiet: []float64{0.5}},
	{in: "@5", text: "@5", alerts: []float64{0, 5}, quiet: []float64{-1, 6}},
	{in: "20:10", err: true},
	{in: "abc", err: true},
	{in: "10:~", err: true},
	{in: "@", err: true},
	{in: "~", err: true},
	{in: "nan", err: true},
	{in: "inf", err: true},
	{in: "0x10", err: true},
	{in: "1:2:3", err: true},
	{in: "1e999", err: true},
}

func TestParseRange(t *testing.T) {
	for _, tt := range rangeTests {
		r, err := parseRange(tt.in)
		if tt.err {
			if err == nil {
				t.Errorf("ParseRange(%q) = %v, want an error", tt.in, r)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseRange(%q): %v", tt.in, err)
			continue
		}
		if r.String() != tt.text {
			t.Errorf("ParseRange(%q).String() = %q, want %q", tt.in, r.String(), tt.text)
		}
		for _, v := range tt.alerts {
			if !r.Alert(v) {
				t.Errorf("range %q: %v should alert", tt.in, v)
			}
		}
		for _, v := range tt.quiet {
			if r.Alert(v) {
				t.Errorf("range %q: %v should not alert", tt.in, v)
			}
		}
		// The canonical form means the same.
		r2, err := parseRange(r.String())
		if err != nil || r2.Start != r.Start || r2.End != r.End || r2.Inside != r.Inside {
			t.Errorf("range %q: canonical %q parses to %+v, %v", tt.in, r.String(), r2, err)
		}
	}
	if r, _ := parseRange(""); r.IsSet() || r.Alert(math.NaN()) {
		t.Error("an empty range must be unset and never alert")
	}
}

var comparisonTests = []struct {
	in     string
	text   string
	alerts []float64
	quiet  []float64
	err    bool
}{
	{in: "> 75", text: "~:75", alerts: []float64{75.01}, quiet: []float64{75, -100}},
	{in: ">75", text: "~:75", alerts: []float64{80}, quiet: []float64{70}},
	{in: ">= 75", text: "@75:", alerts: []float64{75, 100}, quiet: []float64{74.9}},
	{in: "< 10", text: "10:", alerts: []float64{9}, quiet: []float64{10}},
	{in: "<= 10", text: "@~:10", alerts: []float64{10, -3}, quiet: []float64{10.1}},
	{in: "== 0", text: "@0", alerts: []float64{0}, quiet: []float64{1, -1}},
	{in: "= 3", text: "@3:3", alerts: []float64{3}, quiet: []float64{2}},
	{in: "!= 0", text: "0", alerts: []float64{1, -1}, quiet: []float64{0}},
	{in: "75", err: true},
	{in: "> x", err: true},
	{in: "=> 5", err: true},
	{in: "> 5 6", err: true},
}

func TestParseComparison(t *testing.T) {
	for _, tt := range comparisonTests {
		r, err := parseComparison(tt.in)
		if tt.err {
			if err == nil {
				t.Errorf("ParseComparison(%q) = %v, want an error", tt.in, r)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseComparison(%q): %v", tt.in, err)
			continue
		}
		if r.String() != tt.text {
			t.Errorf("ParseComparison(%q) = %q, want %q", tt.in, r.String(), tt.text)
		}
		for _, v := range tt.alerts {
			if !r.Alert(v) {
				t.Errorf("comparison %q: %v should alert", tt.in, v)
			}
		}
		for _, v := range tt.quiet {
			if r.Alert(v) {
				t.Errorf("comparison %q: %v should not alert", tt.in, v)
			}
		}
		r2, err := parseRange(r.String())
		if err != nil {
			t.Errorf("comparison %q: its range %q does not parse: %v", tt.in, r.String(), err)
			continue
		}
		for _, v := range append(tt.alerts, tt.quiet...) {
			if r2.Alert(v) != r.Alert(v) {
				t.Errorf("comparison %q and its range %q disagree on %v", tt.in, r.String(), v)
			}
		}
	}
}

func FuzzParseRange(f *testing.F) {
	for _, tt := range rangeTests {
		f.Add(tt.in)
	}
	for _, tt := range comparisonTests {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := parseRange(s)
		if err == nil && r.IsSet() {
			r2, err := parseRange(r.String())
			if err != nil {
				t.Fatalf("canonical form %q of %q does not parse: %v", r.String(), s, err)
			}
			for _, v := range []float64{r.Start, r.End, 0, -1, 1, r.Start - 1, r.End + 1} {
				if r.Alert(v) != r2.Alert(v) {
					t.Fatalf("%q and its canonical form %q disagree on %v", s, r.String(), v)
				}
			}
		}
		c, err := parseComparison(s)
		if err == nil && c.IsSet() {
			if _, err := parseRange(c.String()); err != nil {
				t.Fatalf("comparison %q gives range %q that does not parse: %v", s, c.String(), err)
			}
		}
	})
}
