package check

import (
	"errors"
	"strings"
	"testing"
)

func testVars(kv map[string]any) vars {
	vs := vars{}
	for k, v := range kv {
		switch v := v.(type) {
		case float64:
			vs.SetNum(k, v)
		case int:
			vs.SetNum(k, float64(v))
		case string:
			vs.Set(k, v, true)
		}
	}
	return vs
}

var exprTests = []struct {
	src      string
	want     float64
	stateful bool
	err      string // substring of the compile or evaluation error
	baseline bool   // needs a previous run that is not given
	reset    bool
}{
	{src: "Threads_connected / max_connections * 100", want: 25},
	{src: "threads_connected / MAX_CONNECTIONS * 100", want: 25},
	{src: "current{Threads_connected} - lastrun{Threads_connected}", want: 5, stateful: true},
	{src: "current{ Open_table_definitions } - lastrun{Open_table_definitions}", want: 10, stateful: true},
	{src: "delta(Questions)", want: 600, stateful: true},
	{src: "rate(Questions)", want: 60, stateful: true},
	{src: "rate(current{Questions})", want: 60, stateful: true},
	{src: "RATE(Questions)", want: 60, stateful: true},
	{src: "delta(Threads_connected)", want: 5, stateful: true},
	{src: "elapsed()", want: 10, stateful: true},
	{src: "max(Threads_connected, 100)", want: 100},
	{src: "min(Threads_connected, 100, 3)", want: 3},
	{src: "abs(0 - Threads_connected)", want: 50},
	{src: "round(max_connections / 3)", want: 67},
	{src: "ceil(1.2) + floor(1.8)", want: 3},
	{src: "Threads_connected > 40", want: 1},
	{src: "Threads_connected > 40 and max_connections < 100", want: 0},
	{src: "log_bin == \"ON\" ? 1 : 0", want: 1},
	{src: "current(\"weird.name\") * 2", want: 14},
	{src: "current{weird.name}", want: 7},
	{src: "2 ** 10", want: 1024},
	{src: "\"{not a brace}\" == \"x\"", want: 0},
	{src: "rate(Uptime_counter_down)", stateful: true, reset: true},
	{src: "Threads_conected", err: `unknown variable "Threads_conected" (did you mean Threads_connected?)`},
	{src: "nosuchthing_at_all_here", err: `unknown variable "nosuchthing_at_all_here"; `},
	{src: "lastrun{nope}", err: `unknown variable "nope"`, stateful: true},
	{src: "Threads_connected / 0", err: "not a finite number"},
	{src: "log_bin", err: `gives the text "ON"`},
	{src: "log_bin * 2", err: "invalid operation"},
	{src: "rate(log_bin)", err: "not a number", stateful: true},
	{src: "len(log_bin)", err: "unknown function len()"},
	{src: "foo(1)", err: "unknown function foo()"},
	{src: "rate(1 + Questions)", err: "rate() takes a variable name"},
	{src: "rate()", err: "rate() takes one variable name"},
	{src: "current(1)", err: `current() takes a variable name in quotes`},
	{src: "elapsed(3)", err: "elapsed() takes no arguments"},
	{src: "", err: "the expression is empty"},
	{src: "   ", err: "the expression is empty"},
	{src: "1 +", err: "unexpected token"},
	{src: "(1", err: "expression"},
	{src: "current{", err: "current{ is not closed with }"},
	{src: "current{}", err: "want a variable name between the braces"},
	{src: "{1}", err: "'{' is only used as current{NAME}"},
	{src: "\"abc", err: "literal not terminated"},
	{src: "Questions.x", err: "cannot fetch x"},
	// Numbers are floats: integer literals past 2^63 do not wrap negative (which would
	// alert CRITICAL on a "below 0" threshold); % is the float remainder.
	{src: "9223372036854775807 + 1", want: 9223372036854775808},
	{src: "9223372036854775807 + 9223372036854775807 > 0", want: 1},
	{src: "9223372036854775807 * 4", want: 4 * 9223372036854775808.0},
	{src: "-9223372036854775807 - 10 < 0", want: 1},
	{src: "-(3) * 2", want: -6},
	{src: "7 % 2", want: 1},
	{src: "Questions % 7", want: 4},
	{src: "(Questions + 0.5) % 7", want: 4.5},
	{src: "5 % 0", err: "not a finite number"},
	{src: "log_bin % 2", err: "% takes numbers"},
	{src: "$mod(1, 2)", err: "unknown function"},
	{src: "99999999999999999999", err: "out of range"},
}

func TestExpressions(t *testing.T) {
	cur := testVars(map[string]any{
		"Threads_connected": 50, "max_connections": 200, "Open_table_definitions": 110,
		"Questions": 1600, "log_bin": "ON", "weird.name": 7, "Uptime_counter_down": 5,
	})
	last := testVars(map[string]any{
		"Threads_connected": 45, "max_connections": 200, "Open_table_definitions": 100,
		"Questions": 1000, "log_bin": "ON", "weird.name": 7, "Uptime_counter_down": 50,
	})
	for _, tt := range exprTests {
		e, err := parseExpression(tt.src)
		if err == nil {
			if e.Stateful != tt.stateful {
				t.Errorf("%q: Stateful = %v, want %v", tt.src, e.Stateful, tt.stateful)
			}
			var got float64
			got, err = e.eval(cur, last, true, 10)
			if err == nil && tt.err == "" && !tt.reset && got != tt.want {
				t.Errorf("%q = %v, want %v", tt.src, got, tt.want)
			}
			if tt.stateful && tt.err == "" {
				if _, err := e.eval(cur, nil, false, 0); !errors.Is(err, errBaseline) {
					t.Errorf("%q without a previous run: %v, want the baseline error", tt.src, err)
				}
			}
		}
		var re *resetError
		switch {
		case tt.reset:
			if !errors.As(err, &re) {
				t.Errorf("%q: %v, want a counter reset", tt.src, err)
			}
		case tt.err == "" && err != nil:
			t.Errorf("%q: %v", tt.src, err)
		case tt.err != "" && err == nil:
			t.Errorf("%q: no error, want one containing %q", tt.src, tt.err)
		case tt.err != "" && !strings.Contains(err.Error(), tt.err):
			t.Errorf("%q: error %q, want it to contain %q", tt.src, err, tt.err)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error has more than one line: %q", tt.src, err)
		}
	}
}

func TestExpressionVars(t *testing.T) {
	e, err := parseExpression("rate(Com_select) + Threads_connected / current{max_connections} - lastrun{Uptime}")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(e.Vars, ","); got != "com_select,max_connections,threads_connected,uptime" {
		t.Errorf("Vars = %s", got)
	}
	if got := strings.Join(e.Needs, ","); got != "com_select,uptime" {
		t.Errorf("Needs = %s", got)
	}
}

func FuzzParseExpression(f *testing.F) {
	for _, tt := range exprTests {
		f.Add(tt.src)
	}
	vars := testVars(map[string]any{"a": 1, "b": 2.5, "s": "x", "Questions": 10})
	f.Fuzz(func(t *testing.T, src string) {
		e, err := parseExpression(src)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error for %q: %q", src, err)
			}
			return
		}
		_, err = e.eval(vars, vars, true, 1)
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Fatalf("multi-line evaluation error for %q: %q", src, err)
		}
	})
}
