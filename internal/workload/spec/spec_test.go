package spec

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
	"github.com/fathom-lab/fathom/internal/workload/files"
	"github.com/fathom-lab/fathom/internal/workload/gen"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/bad")

// check decodes and resolves a file with its defaults, as `fathom workload check` does.
func check(path string, data []byte) error {
	_, err := checkFile(path, data)
	return err
}

// TestBrokenFiles checks the problems reported for each file in testdata/bad against
// its .want golden file: every problem at once, each with its line.
func TestBrokenFiles(t *testing.T) {
	paths, _ := filepath.Glob("testdata/bad/*.yaml")
	if len(paths) < 8 {
		t.Fatalf("only %d broken files", len(paths))
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			err = check(filepath.Base(path), data)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("want *Error, got %v", err)
			}
			got := err.Error() + "\n"
			golden := strings.TrimSuffix(path, ".yaml") + ".want"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if got != string(want) {
				t.Errorf("problems differ from %s:\n--- got\n%s--- want\n%s", golden, got, want)
			}
			if len(data) > 0 {
				for _, p := range e.Problems {
					if p.Line == 0 && !strings.Contains(p.Msg, "has no") {
						t.Errorf("problem without a line: %s", p.Msg)
					}
				}
			}
		})
	}
}

// Every problem of a file is reported, not just the first.
func TestAllProblemsAtOnce(t *testing.T) {
	data, _ := os.ReadFile("testdata/bad/undefined.yaml")
	err := check("undefined.yaml", data)
	var e *Error
	if !errors.As(err, &e) || len(e.Problems) < 5 {
		t.Fatalf("want at least 5 problems, got %v", err)
	}
	for _, want := range []string{
		"undefined.yaml:8: table t rows: parameter rowz is used but not defined",
		"undefined.yaml:10: sequence ids is not defined",
		"parameter factor is used but not defined",
		":other is not defined",
		"group g runs transaction three, which is not defined",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in\n%v", want, err)
		}
	}
}

func TestShippedFilesResolve(t *testing.T) {
	for _, name := range files.Names() {
		data, file, err := files.Read(name)
		if err != nil {
			t.Fatal(err)
		}
		s, err := Load(file, data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if s.Name != name || s.Description == "" || len(s.Options) == 0 {
			t.Errorf("%s: spec %+v", name, s)
		}
		for _, o := range s.Options {
			if o.Help == "" {
				t.Errorf("%s: option %s has no help", name, o.Name)
			}
		}
	}
}

func TestSetOverrides(t *testing.T) {
	data, file, _ := files.Read("fanout")
	f, err := decodeFile(file, data)
	if err != nil {
		t.Fatal(err)
	}
	w, err := resolve(f, workload.Params{"writers": "36", "readers": "36", "a_rows": "5"})
	if err != nil {
		t.Fatal(err)
	}
	g := w.Groups()
	if len(g) != 2 || g[0].Name != "writers" || g[0].Clients != 36 || g[1].Clients != 36 {
		t.Errorf("groups %+v", g)
	}
	if w.tables[1].rows != 500 {
		t.Errorf("fanout_b rows %d, want a_rows*fanout = 500", w.tables[1].rows)
	}
	if w.Options()["writers"] != "36" || w.Options()["fanout"] != "100" {
		t.Errorf("options %v", w.Options())
	}
	// Mistakes in --set values are reported at the lines that use them.
	_, err = resolve(f, workload.Params{"writers": "0", "c_share": "1.5", "colour": "red"})
	for _, want := range []string{
		"fanout.yaml: workload fanout has no parameter colour (parameters: writers, readers",
		"group writers clients: 0 is out of range (1 to 100000) (from $writers)",
		"probability: 1.5 is out of range (0 to 1) (from $c_share)",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in %v", want, err)
		}
	}
}

func TestYCSBMixes(t *testing.T) {
	data, file, _ := files.Read("ycsb")
	f, err := decodeFile(file, data)
	if err != nil {
		t.Fatal(err)
	}
	weights := func(w *Workload) map[string]float64 {
		out := map[string]float64{}
		for _, t := range w.txns {
			if t.weight > 0 {
				out[t.name] = t.weight
			}
		}
		return out
	}
	for mix, want := range map[string]map[string]float64{
		"a": {"read": 50, "update": 50},
		"B": {"read": 95, "update": 5},
		"c": {"read": 100},
		"d": {"read_latest": 95, "insert": 5},
		"e": {"scan": 95, "insert": 5},
		"f": {"read": 50, "rmw": 50},
	} {
		w, err := resolve(f, workload.Params{"mix": mix})
		if err != nil {
			t.Fatal(err)
		}
		if got := weights(w); len(got) != len(want) || !mapsEqual(got, want) {
			t.Errorf("mix %s: weights %v, want %v", mix, got, want)
		}
	}
	// A --set proportion wins over the preset.
	w, _ := resolve(f, workload.Params{"mix": "b", "update": "10"})
	if got := weights(w); got["update"] != 10 || got["read"] != 95 {
		t.Errorf("mix b with update=10: %v", got)
	}
	if _, err := resolve(f, workload.Params{"mix": "g"}); err == nil || !strings.Contains(err.Error(), "--set mix=g: use one of a, b, c, d, e, f") {
		t.Errorf("mix g: %v", err)
	}
}

func mapsEqual(a, b map[string]float64) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestExpressions(t *testing.T) {
	params := map[string]string{"rows": "1000", "f": "0.25", "name": "x"}
	lookup := func(n string) (string, bool) { v, ok := params[n]; return v, ok }
	for _, c := range []struct {
		in   string
		want float64
		err  string
	}{
		{"42", 42, ""},
		{"1_000", 1000, ""},
		{"2.5", 2.5, ""},
		{"$rows", 1000, ""},
		{"$(rows + 1)", 1001, ""},
		{"$(rows * f - (2 + 3) * 2)", 240, ""},
		{"$(-rows / 4 % 7)", -250 % 7, ""},
		{"$(1 - f)", 0.75, ""},
		{"$nope", 0, "parameter nope is used but not defined"},
		{"$name", 0, `parameter name is "x", not a number`},
		{"$(rows / 0)", 0, "division by zero"},
		{"$(rows +)", 0, "unexpected \")\""},
		{"$(rows *", 0, "ends too early"},
		{"$(rows", 0, "missing )"},
		{"$(rows) x", 0, "unexpected"},
		{"$rows + 1", 0, "use $(…) for arithmetic"},
		{"abc", 0, "not a number"},
		{"$", 0, "must be followed"},
	} {
		got, err := eval(c.in, lookup)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("eval(%q) error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || math.Abs(got-c.want) > 1e-9 {
			t.Errorf("eval(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

func TestBindSQL(t *testing.T) {
	for _, c := range []struct {
		in, out string
		names   []string
		err     string
	}{
		{"SELECT * FROM t WHERE a = :a AND b = :b_2", "SELECT * FROM t WHERE a = ? AND b = ?", []string{"a", "b_2"}, ""},
		{"SELECT ':not', \":nor\", `:this` FROM t WHERE x = :x", "SELECT ':not', \":nor\", `:this` FROM t WHERE x = ?", []string{"x"}, ""},
		{"SELECT 'it''s :no' , :a::bigint", "SELECT 'it''s :no' , ?::bigint", []string{"a"}, ""},
		{"SET @v := :v -- :comment\n/* :c */ SELECT :v", "SET @v := ? -- :comment\n/* :c */ SELECT ?", []string{"v", "v"}, ""},
		{"SELECT 'a\\'b', :x", "SELECT 'a\\'b', ?", []string{"x"}, ""},
		{"SELECT * FROM t WHERE a = ?", "", nil, "name the value instead"},
		{"SELECT 'open", "", nil, "unterminated ' quote"},
		{"SELECT /* open", "", nil, "unterminated /* comment"},
	} {
		out, names, err := bindSQL(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("bindSQL(%q) error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || out != c.out || strings.Join(names, ",") != strings.Join(c.names, ",") {
			t.Errorf("bindSQL(%q) = %q %v %v", c.in, out, names, err)
		}
	}
}

// stats draws n values from g with a fixed seed.
func stats(t *testing.T, g valueGen, n int) (mean, sd float64, vals []int64) {
	t.Helper()
	d := &drawer{r: gen.New(11, 3)}
	vals = make([]int64, n)
	var v target.Value
	for i := range vals {
		d.text = d.text[:0]
		g.draw(d, &v)
		vals[i] = v.Int
	}
	for _, x := range vals {
		mean += float64(x)
	}
	mean /= float64(n)
	for _, x := range vals {
		sd += (float64(x) - mean) * (float64(x) - mean)
	}
	return mean, math.Sqrt(sd / float64(n)), vals
}

// resolveGen resolves one generator written in YAML.
func resolveGen(t *testing.T, src string) valueGen {
	t.Helper()
	file := "name: g\nparams: {n: 1000}\ntransactions:\n  - name: x\n    steps:\n      - sql: SELECT :v\n        values:\n          v: " + src + "\n"
	f, err := decodeFile("g.yaml", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	w, err := resolve(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	return w.txns[0].stmts[0].locals[0]
}

// TestGeneratorDistributions checks each integer generator's range, mean and spread
// and that a seed reproduces its values.
func TestGeneratorDistributions(t *testing.T) {
	const n = 200_000
	for _, c := range []struct {
		src        string
		lo, hi     int64
		mean, sd   float64
		tolM, tolS float64
		extra      func(vals []int64) string
	}{
		{src: "{uniform: [1, $n]}", lo: 1, hi: 1000, mean: 500.5, sd: 288.7, tolM: 2, tolS: 2},
		{src: "{gaussian: {min: 0, max: 10000, mean: 3000, stddev: 500}}", lo: 0, hi: 10000, mean: 3000, sd: 500, tolM: 5, tolS: 5},
		{src: "{gaussian: [1, 10000]}", lo: 1, hi: 10000, mean: 5000, sd: 833, tolM: 20, tolS: 20},
		// Exponential with mean 100 over a wide range: floor(X) has mean 1/(e^(1/100)-1) ~ 99.5.
		{src: "{exponential: {min: 0, max: 1000000, mean: 100}}", lo: 0, hi: 1000000, mean: 99.5, sd: 100, tolM: 1.5, tolS: 2},
		// Truncated at 99: most of the mass stays, the mean drops.
		{src: "{exponential: {min: 0, max: 99, mean: 100}}", lo: 0, hi: 99, mean: 41.3, sd: 28.7, tolM: 1, tolS: 1},
		{src: "{hotspot: {min: 1, max: 1000, hot_fraction: 0.1, hot_probability: 0.9}}", lo: 1, hi: 1000, extra: func(vals []int64) string {
			hot := 0
			for _, v := range vals {
				if v <= 100 {
					hot++
				}
			}
			if f := float64(hot) / float64(len(vals)); math.Abs(f-0.9) > 0.005 {
				return "hot share " + ftoa(f) + ", want 0.9"
			}
			return ""
		}},
		{src: "{zipfian: {min: 1, max: 1000, exp: 0.99}}", lo: 1, hi: 1000, extra: func(vals []int64) string {
			ones := 0
			for _, v := range vals {
				if v == 1 {
					ones++
				}
			}
			// P(1) = 1 / H(1000, 0.99) ~ 0.1322.
			if f := float64(ones) / float64(len(vals)); math.Abs(f-0.1322) > 0.004 {
				return "P(1) " + ftoa(f) + ", want ~0.132"
			}
			return ""
		}},
		{src: "{zipfian: {min: 1, max: 1000, exp: 0.99, scramble: true}}", lo: 1, hi: 1000, extra: func(vals []int64) string {
			counts := map[int64]int{}
			top, topV := 0, int64(0)
			for _, v := range vals {
				counts[v]++
				if counts[v] > top {
					top, topV = counts[v], v
				}
			}
			if f := float64(top) / float64(len(vals)); math.Abs(f-0.1322) > 0.004 || topV == 1 {
				return "most frequent " + ftoa(float64(topV)) + " at " + ftoa(f) + ", want ~0.132 elsewhere than 1"
			}
			return ""
		}},
		{src: "{special: [1, 100000]}", lo: 1, hi: 100000, mean: 50000, tolM: 300},
		{src: "{choice: [{value: 1, weight: 1}, {value: 10, weight: 3}]}", lo: 1, hi: 10, mean: 7.75, sd: 3.897, tolM: 0.05, tolS: 0.05},
	} {
		t.Run(c.src, func(t *testing.T) {
			g := resolveGen(t, c.src)
			mean, sd, vals := stats(t, g, n)
			for _, v := range vals {
				if v < c.lo || v > c.hi {
					t.Fatalf("%d out of [%d, %d]", v, c.lo, c.hi)
				}
			}
			if c.tolM > 0 && math.Abs(mean-c.mean) > c.tolM {
				t.Errorf("mean %.2f, want %.2f ± %.2f", mean, c.mean, c.tolM)
			}
			if c.tolS > 0 && math.Abs(sd-c.sd) > c.tolS {
				t.Errorf("sd %.2f, want %.2f ± %.2f", sd, c.sd, c.tolS)
			}
			if c.extra != nil {
				if msg := c.extra(vals); msg != "" {
					t.Error(msg)
				}
			}
			_, _, again := stats(t, g, 1000)
			for i := range again {
				if again[i] != vals[i] {
					t.Fatalf("same seed, different value at %d", i)
				}
			}
		})
	}
}

func ftoa(f float64) string { return strings.TrimRight(strings.TrimRight(strconvF(f), "0"), ".") }

func strconvF(f float64) string { return fmtNum(math.Round(f*1e4) / 1e4) }

func TestTextAndOtherGenerators(t *testing.T) {
	d := &drawer{r: gen.New(1, 1)}
	var v target.Value
	g := resolveGen(t, "{string: {min_length: 5, max_length: 8}}")
	seen := map[int]bool{}
	for range 1000 {
		g.draw(d, &v)
		if v.Kind != target.KindText || len(v.Text) < 5 || len(v.Text) > 8 {
			t.Fatalf("string %q", v.Text)
		}
		seen[len(v.Text)] = true
	}
	if len(seen) != 4 {
		t.Errorf("lengths drawn: %v", seen)
	}
	// Values drawn earlier keep their bytes while the buffer grows.
	d.text = d.text[:0]
	g = resolveGen(t, "{string: {pattern: 'ab#-@@*'}}")
	var first target.Value
	g.draw(d, &first)
	keep := string(first.Text)
	for range 1000 {
		g.draw(d, &v)
	}
	if string(first.Text) != keep || len(keep) != 7 || keep[:2] != "ab" || keep[2] < '0' || keep[2] > '9' || keep[3] != '-' || keep[4] < 'a' || keep[4] > 'z' {
		t.Errorf("pattern value %q (was %q)", first.Text, keep)
	}
	g = resolveGen(t, "{timestamp: {min: 2024-01-01, max: 2024-01-02}}")
	for range 100 {
		g.draw(d, &v)
		if v.Kind != target.KindTime || v.Time.Year() != 2024 || v.Time.YearDay() > 2 {
			t.Fatalf("timestamp %v", v.Time)
		}
	}
	g = resolveGen(t, "{timestamp: now}")
	g.draw(d, &v)
	if v.Kind != target.KindTime || v.Time.IsZero() {
		t.Errorf("now %v", v)
	}
	g = resolveGen(t, "{float: [0.5, 1.5]}")
	var sum float64
	for range 10000 {
		g.draw(d, &v)
		if v.Kind != target.KindFloat || v.Float < 0.5 || v.Float >= 1.5 {
			t.Fatalf("float %v", v.Float)
		}
		sum += v.Float
	}
	if m := sum / 10000; math.Abs(m-1) > 0.01 {
		t.Errorf("float mean %v", m)
	}
	for src, want := range map[string]target.Value{
		"7": target.Int64(7), "2.5": target.Float(2.5), "abc": target.Text([]byte("abc")),
		"'7'": target.Text([]byte("7")), "null": target.Null(), "$(n * 2)": target.Int64(2000),
	} {
		resolveGen(t, src).draw(d, &v)
		if v.Kind != want.Kind || v.Int != want.Int || v.Float != want.Float || string(v.Text) != string(want.Text) {
			t.Errorf("constant %s = %+v, want %+v", src, v, want)
		}
	}
}

// TestSequences: a sequence is shared by all workers and unique across them; latest
// favours its last values.
func TestSequences(t *testing.T) {
	file := `
name: s
sequences:
  ids: {start: 10, step: 2}
transactions:
  - name: x
    steps:
      - sql: SELECT :a, :b
        values:
          a: {sequence: ids}
          b: {latest: {sequence: ids, window: 5}}
`
	f, err := decodeFile("s.yaml", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	w, err := resolve(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := w.txns[0].stmts[0]
	d := &drawer{r: gen.New(1, 1)}
	var a, b target.Value
	for i := range 100 {
		st.locals[0].draw(d, &a)
		if a.Int != 10+2*int64(i) {
			t.Fatalf("draw %d: %d", i, a.Int)
		}
		st.locals[1].draw(d, &b)
		if b.Int > a.Int || b.Int < a.Int-8 || b.Int%2 != 0 {
			t.Fatalf("latest %d after %d", b.Int, a.Int)
		}
	}
	w.seqs["ids"].continueAfter(1000)
	st.locals[0].draw(d, &a)
	if a.Int != 1002 {
		t.Errorf("after max 1000: %d", a.Int)
	}
}

// TestNextDrawsOnce: Next lays out the whole transaction (repeats, branches) and does
// not allocate once warmed up.
func TestNextDrawsOnce(t *testing.T) {
	data, file, _ := files.Read("fanout")
	f, _ := decodeFile(file, data)
	w, err := resolve(f, workload.Params{"fanout": "100", "jitter": "10"})
	if err != nil {
		t.Fatal(err)
	}
	k := w.NewGroupWorker(0, 0, 1).(*worker)
	var totalB, totalD int
	const n = 300
	for range n {
		if typ := k.Next(); typ != 0 {
			t.Fatalf("writer drew type %d", typ)
		}
		b := 0
		for _, o := range k.ops {
			switch o.stmt {
			case 1:
				b++
			case 3:
				totalD++
			}
		}
		if b < 90 || b > 110 || len(k.ops) != 1+2*b {
			t.Fatalf("%d ops, %d into fanout_b", len(k.ops), b)
		}
		totalB += b
	}
	if share := float64(totalD) / float64(totalB); math.Abs(share-0.05) > 0.01 {
		t.Errorf("fanout_d share %.3f", share)
	}
	if allocs := testing.AllocsPerRun(200, func() { k.Next() }); allocs != 0 {
		t.Errorf("Next allocates %.1f times per transaction", allocs)
	}
	r := w.NewGroupWorker(1, 1, 1).(*worker)
	seen := map[int]int{}
	for range 1000 {
		seen[r.Next()]++
	}
	if seen[1] < 400 || seen[2] < 400 || len(seen) != 2 {
		t.Errorf("reader types %v", seen)
	}
	if allocs := testing.AllocsPerRun(200, func() { r.Next() }); allocs != 0 {
		t.Errorf("reader Next allocates %.1f times", allocs)
	}
}

func FuzzDecode(f *testing.F) {
	paths, _ := filepath.Glob("testdata/bad/*.yaml")
	for _, p := range paths {
		data, _ := os.ReadFile(p)
		f.Add(data)
	}
	for _, name := range files.Names() {
		data, _, _ := files.Read(name)
		f.Add(data)
	}
	f.Add([]byte("name: x\ntransactions: [{name: t, steps: [{sql: 'SELECT :a', values: {a: {uniform: [1, $(2*3)]}}}]}]"))
	f.Add([]byte("a: &a [*a]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		file, err := decodeFile("fuzz.yaml", data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || len(e.Problems) == 0 {
				t.Fatalf("error is not a problem list: %v", err)
			}
			return
		}
		w, err := resolve(file, nil)
		if err != nil {
			return
		}
		// A valid file draws transactions without panicking (kept small: a valid file
		// may ask for megabytes per transaction).
		if maxOpsAll(w) > 1000 || bytes.Contains(data, []byte("string")) {
			return
		}
		for gi := range w.groups {
			k := w.NewGroupWorker(gi, 0, 1)
			for range 3 {
				k.Next()
			}
		}
	})
}

func maxOpsAll(w *Workload) int64 {
	var m int64
	for _, t := range w.txns {
		m = max(m, maxOps(t.body))
	}
	return m
}

func TestDescribe(t *testing.T) {
	data, file, _ := files.Read("fanout")
	f, _ := decodeFile(file, data)
	w, err := resolve(f, workload.Params{"writers": "36"})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range Dialects() {
		var b strings.Builder
		if err := w.Describe(&b, d); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, want := range []string{"writers = 36", "group writers: 36 clients, closed loop", "readers/read_a", "50.0%", "with probability 0.95:", "repeat uniform [90, 110] times:"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: no %q in\n%s", d, want, out)
			}
		}
		switch d {
		case "postgres":
			if !strings.Contains(out, "INSERT INTO fanout_a (created, payload) VALUES ($1, $2) RETURNING id") || !strings.Contains(out, "bigserial") {
				t.Errorf("postgres:\n%s", out)
			}
		case "mysql":
			if !strings.Contains(out, "VALUES (?, ?)\n") || !strings.Contains(out, "SELECT LAST_INSERT_ID()") || !strings.Contains(out, "AUTO_INCREMENT") {
				t.Errorf("mysql:\n%s", out)
			}
		}
	}
	if err := w.Describe(io.Discard, "oracle"); err == nil {
		t.Error("oracle accepted")
	}
	if s := w.Summary(); s != "4 tables, 3 transactions, 6 statements, 2 client groups, 9 parameters" {
		t.Errorf("summary %q", s)
	}
}

// The example in docs/workload-file.md is testdata/example.yaml, word for word.
func TestDocExample(t *testing.T) {
	readme, err := os.ReadFile("../../../docs/workload-file.md")
	if err != nil {
		t.Fatal(err)
	}
	ex, err := os.ReadFile("testdata/example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(readme, append([]byte("```yaml\n"), ex...)) {
		t.Error("docs/workload-file.md's example differs from testdata/example.yaml")
	}
	if _, err := CheckFile("testdata/example.yaml"); err != nil {
		t.Error(err)
	}
}
