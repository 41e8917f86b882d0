package sblua

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/fathom-lab/fathom/internal/workload"
)

type lockedBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func load(t *testing.T, path string, p workload.Params) *Workload {
	t.Helper()
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := newWorkload(s, p)
	if err != nil {
		t.Fatal(err)
	}
	w.driver = "mysql"
	return w
}

// TestAPI runs a script's parallel command that checks sysbench.opt (typed by the
// declared defaults, overridden as given), require from the search path,
// string.format's C conversions, the ranges of every sysbench.rand function and the
// accepted ffi calls, in each of --threads states.
func TestAPI(t *testing.T) {
	w := load(t, "testdata/api.lua", workload.Params{"rows": "7", "fast": "on", "threads": "3"})
	var out lockedBuf
	w.SetOutput(&out)
	if err := w.Command(context.Background(), "check", nil); err != nil {
		t.Fatal(err)
	}
	for _, tid := range []string{"0", "1", "2"} {
		if !strings.Contains(out.b.String(), "checked\t"+tid+"\n") {
			t.Errorf("thread %s did not run the command: %q", tid, out.b.String())
		}
	}
}

// TestErrorsAreOneLine: a script's mistake is one line naming the file, the line
// and the error, or the ffi call that fathom does not provide.
func TestErrorsAreOneLine(t *testing.T) {
	w := load(t, "testdata/api.lua", nil)
	for _, c := range []struct{ cmd, want string }{
		{"oops", `^testdata/api\.lua:\d+: attempt to index a non-table object\(nil\) with key 'field'$`},
		{"badffi", `ffi\.new is not supported in fathom`},
		{"badc", `ffi\.C\.getpid is not available in fathom`},
		{"nosuch", `testdata/api\.lua has no nosuch command`},
	} {
		err := w.Command(context.Background(), c.cmd, nil)
		if err == nil || !regexp.MustCompile(c.want).MatchString(err.Error()) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want one line matching %s", c.cmd, err, c.want)
		}
	}
	_, err := Load("testdata/syntax.lua")
	if err == nil || !strings.Contains(err.Error(), "testdata/syntax.lua") || !strings.Contains(err.Error(), "line:2") && !strings.Contains(err.Error(), ":2:") || strings.Contains(err.Error(), "\n") {
		t.Errorf("syntax error: %v", err)
	}
	if _, err := Load("testdata/none.lua"); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: %v", err)
	}
}

func TestOptionMistakes(t *testing.T) {
	s, err := Load("testdata/api.lua")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		p    workload.Params
		want string
	}{
		{workload.Params{"nope": "1"}, "declares no option nope (its options: --fast --label --list --rows)"},
		{workload.Params{"rows": "many"}, "--rows=many: not a number"},
		{workload.Params{"fast": "maybe"}, "--fast=maybe: use on or off"},
		{workload.Params{"rand_type": "weird"}, "--rand-type=weird: use uniform, gaussian, special, pareto or zipfian"},
		{workload.Params{"rand-spec-res": "100"}, "--rand-spec-res=100: give 0 to 99"},
	} {
		if _, err := newWorkload(s, c.p); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want %q", c.p, err, c.want)
		}
	}
}

// TestRandDefault: --rand-type picks sysbench.rand.default's distribution; special
// puts about 75% of the draws in 1% of the range (sysbench's defaults).
func TestRandDefault(t *testing.T) {
	r := newRNG(nil, randParams{kind: "special", iter: 12, pct: 1, res: 75, paretoH: 0.2, zipfExp: 0.8}, newUniqueSeq(1))
	r.g = newTestGen()
	hot := 0
	const n = 20000
	for range n {
		v := r.def(1, 10000)
		if v < 1 || v > 10000 {
			t.Fatalf("out of range: %d", v)
		}
		if v >= 4950 && v <= 5051 {
			hot++
		}
	}
	if f := float64(hot) / n; f < 0.70 || f > 0.85 {
		t.Errorf("special: %.3f of the draws in the hot 1%%, want about 0.75", f)
	}
	u := newRNG(newTestGen(), randParams{kind: "uniform", iter: 12, paretoH: 0.2, zipfExp: 0.8}, newUniqueSeq(1))
	seen := map[int64]bool{}
	for range 2000 {
		seen[u.def(1, 10)] = true
	}
	if len(seen) != 10 {
		t.Errorf("uniform 1..10 drew %d distinct values", len(seen))
	}
	uq := newUniqueSeq(7)
	got := map[uint32]bool{}
	for range 100000 {
		v := uq.draw()
		if got[v] {
			t.Fatalf("sysbench.rand.unique repeated %d", v)
		}
		got[v] = true
	}
}
