package spec

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/workload"
	"github.com/fathom-lab/fathom/internal/workload/gen"
	"github.com/fathom-lab/fathom/internal/yamlfile"
)

// Limits that keep a file from asking for the impossible.
const (
	// maxStatements bounds the statements one transaction may send (repeats included).
	maxStatements = 1_000_000
	maxClients    = 100_000
	maxStringLen  = 1 << 20
)

// resolve applies parameter values (the --set options; nil for the defaults) to a
// decoded file and returns the workload ready to prepare or run. Every problem is
// reported at once, with the line it comes from.
func resolve(f *file, p workload.Params) (*Workload, error) {
	r := newResolver(f, p)
	if err := r.p.Err(f.Path); err != nil {
		return nil, err
	}
	return r.w, nil
}

func newResolver(f *file, p workload.Params) *resolver {
	r := &resolver{f: f, w: &Workload{file: f}}
	r.params(p)
	r.sequences()
	r.tables()
	r.txns()
	r.groups()
	return r
}

type resolver struct {
	f *file
	w *Workload
	p problems
}

// params computes the effective parameter values: defaults, then the defaults a
// preset parameter selects, then the values given.
func (r *resolver) params(given workload.Params) {
	w := r.w
	w.opts = map[string]string{}
	byName := map[string]*paramSpec{}
	for _, p := range r.f.Params {
		w.opts[p.Name] = p.Default
		byName[p.Name] = p
		w.optNames = append(w.optNames, p.Name)
	}
	var unknown []string
	for k := range given {
		if byName[k] == nil {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		names := "it has none"
		if len(w.optNames) > 0 {
			names = "parameters: " + strings.Join(w.optNames, ", ")
		}
		r.p.Add(0, "workload %s has no parameter %s (%s)", r.f.Name, strings.Join(unknown, ", "), names)
	}
	for _, p := range r.f.Params {
		if len(p.Presets) == 0 {
			continue
		}
		v, set := given[p.Name]
		if !set {
			v = p.Default
		}
		var chosen *preset
		var names []string
		for i := range p.Presets {
			names = append(names, p.Presets[i].Name)
			if strings.EqualFold(p.Presets[i].Name, strings.TrimSpace(v)) {
				chosen = &p.Presets[i]
			}
		}
		if chosen == nil {
			if set {
				r.p.Add(0, "--set %s=%s: use one of %s", p.Name, v, strings.Join(names, ", "))
			}
			continue
		}
		for _, kv := range chosen.Values {
			if _, ok := w.opts[kv.Name]; ok {
				w.opts[kv.Name] = kv.Value
			}
		}
	}
	for k, v := range given {
		if byName[k] != nil {
			w.opts[k] = v
		}
	}
}

func (r *resolver) lookup(name string) (string, bool) {
	v, ok := r.w.opts[name]
	return v, ok
}

// num evaluates a number node; ok is false (and a problem recorded) when it is not one.
func (r *resolver) num(n *yaml.Node, what string) (float64, bool) {
	if n == nil {
		return 0, false
	}
	v, err := eval(n.Value, r.lookup)
	if err != nil {
		r.p.At(n, "%s: %v", what, err)
		return 0, false
	}
	return v, true
}

// intIn evaluates a whole number in [min, max]; def is used when n is nil.
func (r *resolver) intIn(n *yaml.Node, what string, def, min, max int64) int64 {
	if n == nil {
		return def
	}
	v, ok := r.num(n, what)
	if !ok {
		return def
	}
	if v != math.Trunc(v) || v > math.MaxInt64 || v < math.MinInt64 {
		r.p.At(n, "%s: %s is not a whole number%s", what, fmtNum(v), via(n))
		return def
	}
	i := int64(v)
	if i < min || i > max {
		r.p.At(n, "%s: %d is out of range (%s to %s)%s", what, i, fmtBound(min), fmtBound(max), via(n))
		return def
	}
	return i
}

// floatIn evaluates a number in [min, max].
func (r *resolver) floatIn(n *yaml.Node, what string, def, min, max float64) float64 {
	if n == nil {
		return def
	}
	v, ok := r.num(n, what)
	if !ok {
		return def
	}
	if v < min || v > max {
		if max == math.MaxFloat64 {
			r.p.At(n, "%s: %s must be %s or more%s", what, fmtNum(v), fmtNum(min), via(n))
		} else {
			r.p.At(n, "%s: %s is out of range (%s to %s)%s", what, fmtNum(v), fmtNum(min), fmtNum(max), via(n))
		}
		return def
	}
	return v
}

// via names the expression a value came from, for messages about --set values.
func via(n *yaml.Node) string {
	if strings.HasPrefix(strings.TrimSpace(n.Value), "$") {
		return " (from " + strings.TrimSpace(n.Value) + ")"
	}
	return ""
}

func fmtNum(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func fmtBound(v int64) string {
	switch v {
	case math.MaxInt64:
		return "any"
	case math.MinInt64:
		return "any"
	}
	return strconv.FormatInt(v, 10)
}

func (r *resolver) sequences() {
	r.w.seqs = map[string]*seqState{}
	for _, s := range r.f.Sequences {
		what := "sequence " + s.Name
		start := r.intIn(s.Start, what+" start", 1, math.MinInt64, math.MaxInt64)
		step := r.intIn(s.Step, what+" step", 1, math.MinInt64, math.MaxInt64)
		if step == 0 {
			r.p.At(s.Step, "%s: step must not be 0", what)
			step = 1
		}
		r.checkAfter(s.After, s.AfterLine)
		st := newSeq(s.Name, start, step, s.After)
		r.w.seqs[s.Name] = st
		r.w.seqList = append(r.w.seqList, st)
	}
}

// checkAfter checks that table.column names a declared table and column.
func (r *resolver) checkAfter(after string, line int) {
	if after == "" {
		return
	}
	tn, cn, _ := strings.Cut(after, ".")
	for _, t := range r.f.Tables {
		if strings.EqualFold(t.Name, tn) {
			for _, c := range t.Columns {
				if strings.EqualFold(c.Name, cn) {
					return
				}
			}
			r.p.Add(line, "after: table %s has no column %s", tn, cn)
			return
		}
	}
	r.p.Add(line, "after: table %s is not defined under tables:", tn)
}

// paramRef is a parameter in SQL text: $name.
var paramRef = regexp.MustCompile(`\$([A-Za-z_][A-Za-z0-9_]*)`)

// sqlWord is what a parameter may put into SQL text: one word (an engine, a number, a
// tablespace), never quotes, spaces or punctuation that could change the statement.
var sqlWord = regexp.MustCompile(`^[A-Za-z0-9_.]+$`)

// ddlParams puts the parameters' values into a table's own CREATE TABLE statements
// (ENGINE=$engine): a string parameter where the workload allows it. A $word that
// names no parameter is left as written (PostgreSQL's $tag$ quoting).
func (r *resolver) ddlParams(ft *tableSpec) map[string]string {
	if len(ft.DDL) == 0 {
		return ft.DDL
	}
	out := make(map[string]string, len(ft.DDL))
	for dialect, sql := range ft.DDL {
		out[dialect] = paramRef.ReplaceAllStringFunc(sql, func(ref string) string {
			v, ok := r.lookup(ref[1:])
			if !ok {
				return ref
			}
			if v = strings.TrimSpace(v); !sqlWord.MatchString(v) {
				r.p.Add(ft.Line, "table %s ddl %s: parameter %s is %q: a value in SQL text must be one word of letters, digits, '_' and '.'", ft.Name, dialect, ref[1:], v)
				return ref
			}
			return v
		})
	}
	return out
}

func (r *resolver) tables() {
	for _, ft := range r.f.Tables {
		t := &table{line: ft.Line, ddl: r.ddlParams(ft)}
		t.def.Name = ft.Name
		t.def.PrimaryKey = ft.PrimaryKey
		what := "table " + ft.Name
		cols := map[string]*column{}
		for _, c := range ft.Columns {
			typ := c.Type
			if c.AutoIncrement {
				switch typ {
				case "bigint", "bigserial":
					typ = "bigserial"
				default:
					typ = "serial"
				}
			}
			if isSerialType(typ) && !(len(ft.PrimaryKey) == 1 && strings.EqualFold(ft.PrimaryKey[0], c.Name)) {
				r.p.Add(c.Line, "%s column %s: an auto-increment column must be the table's whole primary key (primary_key: [%s])", what, c.Name, c.Name)
			}
			t.def.Columns = append(t.def.Columns, target.Column{Name: c.Name, Type: typ, NotNull: c.NotNull, Default: c.Default})
			cols[strings.ToLower(c.Name)] = c
		}
		for _, ix := range ft.Indexes {
			t.def.Indexes = append(t.def.Indexes, target.Index{Name: ix.Name, Columns: ix.Columns, Unique: ix.Unique})
		}
		t.rows = r.intIn(ft.Rows, what+" rows", 0, 0, math.MaxInt64)
		loaded := map[string]bool{}
		for _, cg := range ft.Load {
			g := r.gen(cg.Gen, what+" load "+cg.Column, nil)
			if g == nil {
				continue
			}
			t.loadCols = append(t.loadCols, cg.Column)
			t.loadGens = append(t.loadGens, g)
			loaded[strings.ToLower(cg.Column)] = true
		}
		if t.rows > 0 {
			for _, c := range ft.Columns {
				if c.NotNull && c.Default == "" && !c.AutoIncrement && !isSerialType(c.Type) && !loaded[strings.ToLower(c.Name)] {
					r.p.Add(c.Line, "%s loads %d rows but NOT NULL column %s has no default and no load generator", what, t.rows, c.Name)
				}
			}
		}
		r.w.tables = append(r.w.tables, t)
	}
}

func isSerialType(t string) bool { return t == "serial" || t == "bigserial" }

// gen resolves a generator. seqOK is nil except where inline sequences are allowed.
func (r *resolver) gen(g *genDef, what string, _ any) valueGen {
	if g == nil || g.Kind == "" {
		return nil
	}
	switch g.Kind {
	case "const":
		return r.genConst(g, what)
	case "uniform":
		return r.genUniform(g, what)
	case "zipfian":
		return r.genZipfian(g, what)
	case "gaussian":
		return r.genGaussian(g, what)
	case "special":
		return r.genSpecial(g, what)
	case "exponential":
		return r.genExponential(g, what)
	case "hotspot":
		return r.genHotspot(g, what)
	case "sequence":
		return r.genSequence(g, what)
	case "latest":
		return r.genLatest(g, what)
	case "string":
		return r.genString(g, what)
	case "choice":
		return r.genChoice(g, what)
	case "timestamp":
		return r.genTimestamp(g, what)
	case "float":
		return r.genFloat(g, what)
	}
	return nil
}

// lohi resolves a generator's min and max: false when either is missing or wrong
// (reported), or max is below min.
func (r *resolver) lohi(a map[string]*yaml.Node, what string) (int64, int64, bool) {
	n0 := r.p.Len()
	lo := r.intIn(a["min"], what+" min", 0, math.MinInt64, math.MaxInt64)
	hi := r.intIn(a["max"], what+" max", 0, math.MinInt64, math.MaxInt64)
	if a["min"] == nil || a["max"] == nil || r.p.Len() > n0 {
		return 0, 0, false
	}
	if hi < lo {
		r.p.At(a["max"], "%s: max %d is below min %d", what, hi, lo)
		return 0, 0, false
	}
	return lo, hi, true
}

// rangeDesc describes an integer range as [lo, hi].
func rangeDesc(lo, hi int64) string { return fmt.Sprintf("[%d, %d]", lo, hi) }

// genConst resolves a constant: a number, text, null, or a $parameter (a string
// constant when its value is not a number).
func (r *resolver) genConst(g *genDef, what string) valueGen {
	n := g.Const
	if v := strings.TrimSpace(n.Value); strings.HasPrefix(v, "$") && n.Style == 0 {
		// A parameter whose value is not a number is a string constant.
		if s, ok := r.lookup(v[1:]); ok && paramRef.FindString(v) == v {
			if _, err := parseNumber(strings.TrimSpace(s)); err != nil {
				return &constGen{v: target.Text([]byte(s)), desc: strconv.Quote(s)}
			}
		}
		f, ok := r.num(n, what)
		if !ok {
			return nil
		}
		if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return &constGen{v: target.Int64(int64(f)), desc: strconv.FormatInt(int64(f), 10)}
		}
		return &constGen{v: target.Float(f), desc: fmtNum(f)}
	}
	if n.Tag == "!!str" && n.Style != 0 {
		return &constGen{v: target.Text([]byte(n.Value)), desc: strconv.Quote(n.Value)}
	}
	v, desc := constValue(n.Value, n.Tag == "!!null")
	return &constGen{v: v, desc: desc}
}

// genUniform resolves uniform: {min, max}.
func (r *resolver) genUniform(g *genDef, what string) valueGen {
	a := g.Args
	lo, hi, ok := r.lohi(a, what)
	if !ok {
		return nil
	}
	return &intGen{lo: lo, hi: hi, next: func(x *gen.Rand) int64 { return x.Uniform(lo, hi) }, desc: "uniform " + rangeDesc(lo, hi)}
}

// genZipfian resolves zipfian: {min, max, exp, scramble}.
func (r *resolver) genZipfian(g *genDef, what string) valueGen {
	a := g.Args
	lo, hi, ok := r.lohi(a, what)
	exp := r.floatIn(a["exp"], what+" exp", 0.99, 0, 100)
	if !ok {
		return nil
	}
	z := gen.NewZipf(hi-lo+1, exp)
	desc := fmt.Sprintf("zipfian %s exp %g", rangeDesc(lo, hi), exp)
	if g.Scramble {
		return &intGen{lo: lo, hi: hi, desc: desc + " scrambled", next: func(x *gen.Rand) int64 { return gen.Scramble(z.Next(x), lo, hi) }}
	}
	return &intGen{lo: lo, hi: hi, desc: desc, next: func(x *gen.Rand) int64 { return lo + z.Next(x) - 1 }}
}

// genGaussian resolves gaussian: a normal distribution given mean and stddev, or
// sysbench's form (a sum of iter uniform draws).
func (r *resolver) genGaussian(g *genDef, what string) valueGen {
	a := g.Args
	lo, hi, ok := r.lohi(a, what)
	_, hasMean := a["mean"]
	_, hasSD := a["stddev"]
	if hasMean || hasSD {
		if a["iter"] != nil {
			r.p.At(a["iter"], "%s: iter is for the sysbench form (no mean and stddev)", what)
		}
		mean := r.floatIn(a["mean"], what+" mean", float64(lo)/2+float64(hi)/2, -math.MaxFloat64, math.MaxFloat64)
		sd := r.floatIn(a["stddev"], what+" stddev", float64(hi-lo)/6, 0, math.MaxFloat64)
		if !ok {
			return nil
		}
		n, err := gen.NewNormal(lo, hi, mean, sd)
		if err != nil {
			r.p.Add(g.Line, "%s: %v", what, err)
			return nil
		}
		return &intGen{lo: lo, hi: hi, next: n.Next, desc: fmt.Sprintf("gaussian %s mean %g stddev %g", rangeDesc(lo, hi), mean, sd)}
	}
	iter := r.intIn(a["iter"], what+" iter", 12, 1, 1000)
	if !ok {
		return nil
	}
	p := gen.DefaultParams()
	p.Iter = int(iter)
	d, err := gen.NewDistKind(gen.Gaussian, lo, hi, p)
	if err != nil {
		r.p.Add(g.Line, "%s: %v", what, err)
		return nil
	}
	return &intGen{lo: lo, hi: hi, next: d.Next, desc: fmt.Sprintf("gaussian %s (sysbench, %d iterations)", rangeDesc(lo, hi), iter)}
}

// genSpecial resolves special: sysbench's skewed distribution.
func (r *resolver) genSpecial(g *genDef, what string) valueGen {
	a := g.Args
	lo, hi, ok := r.lohi(a, what)
	p := gen.DefaultParams()
	p.SpecialPct = r.floatIn(a["pct"], what+" pct", p.SpecialPct, 0, 100)
	p.SpecialRes = r.floatIn(a["res"], what+" res", p.SpecialRes, 0, 99)
	p.Iter = int(r.intIn(a["iter"], what+" iter", int64(p.Iter), 1, 1000))
	if !ok {
		return nil
	}
	d, err := gen.NewDistKind(gen.Special, lo, hi, p)
	if err != nil {
		r.p.Add(g.Line, "%s: %v", what, err)
		return nil
	}
	return &intGen{lo: lo, hi: hi, next: d.Next, desc: fmt.Sprintf("special %s (%g%% of draws in %g%% of the range)", rangeDesc(lo, hi), p.SpecialRes, p.SpecialPct)}
}

// genExponential resolves exponential: {min, max, mean}.
func (r *resolver) genExponential(g *genDef, what string) valueGen {
	a := g.Args
	lo, hi, ok := r.lohi(a, what)
	mean := r.floatIn(a["mean"], what+" mean", 1, math.SmallestNonzeroFloat64, math.MaxFloat64)
	if !ok || a["mean"] == nil {
		return nil
	}
	e, err := gen.NewExponential(lo, hi, mean)
	if err != nil {
		r.p.Add(g.Line, "%s: %v", what, err)
		return nil
	}
	return &intGen{lo: lo, hi: hi, next: e.Next, desc: fmt.Sprintf("exponential %s mean %g", rangeDesc(lo, hi), mean)}
}

// genHotspot resolves hotspot: {min, max, hot_fraction, hot_probability}.
func (r *resolver) genHotspot(g *genDef, what string) valueGen {
	a := g.Args
	lo, hi, ok := r.lohi(a, what)
	frac := r.floatIn(a["hot_fraction"], what+" hot_fraction", 0.2, 0, 1)
	prob := r.floatIn(a["hot_probability"], what+" hot_probability", 0.8, 0, 1)
	if !ok {
		return nil
	}
	h, err := gen.NewHotSpot(lo, hi, frac, prob)
	if err != nil {
		r.p.Add(g.Line, "%s: %v", what, err)
		return nil
	}
	return &intGen{lo: lo, hi: hi, next: h.Next, desc: fmt.Sprintf("hotspot %s: %g of draws in the first %g", rangeDesc(lo, hi), prob, frac)}
}

// genSequence resolves a sequence: a named one, or the generator's own.
func (r *resolver) genSequence(g *genDef, what string) valueGen {
	a := g.Args
	if g.Sequence != "" {
		if s := r.w.seqs[g.Sequence]; s != nil {
			return &seqGen{s: s}
		}
		return nil // reported by the decoder
	}
	start := r.intIn(a["start"], what+" start", 1, math.MinInt64, math.MaxInt64)
	step := r.intIn(a["step"], what+" step", 1, math.MinInt64, math.MaxInt64)
	if step == 0 {
		r.p.At(a["step"], "%s: step must not be 0", what)
		step = 1
	}
	line := g.Line
	if n := a["after"]; n != nil {
		line = n.Line
	}
	r.checkAfter(g.After, line)
	s := newSeq("", start, step, g.After)
	r.w.seqList = append(r.w.seqList, s)
	return &seqGen{s: s}
}

// genLatest resolves latest: recent values of a sequence, Zipf-weighted.
func (r *resolver) genLatest(g *genDef, what string) valueGen {
	a := g.Args
	window := r.intIn(a["window"], what+" window", 1, 1, math.MaxInt64)
	exp := r.floatIn(a["exp"], what+" exp", 0.99, 0, 100)
	s := r.w.seqs[g.Sequence]
	if s == nil {
		return nil
	}
	return &latestGen{s: s, z: gen.NewZipf(window, exp), window: window, exp: exp}
}

// genString resolves string: a pattern, a length or a range of lengths.
func (r *resolver) genString(g *genDef, what string) valueGen {
	a := g.Args
	if g.Pattern != "" {
		if len(g.Pattern) > maxStringLen {
			r.p.Add(g.Line, "%s: pattern longer than %d", what, maxStringLen)
			return nil
		}
		return &stringGen{pattern: g.Pattern}
	}
	if a["length"] != nil {
		n := r.intIn(a["length"], what+" length", 0, 0, maxStringLen)
		return &stringGen{min: int(n), max: int(n)}
	}
	lo := r.intIn(a["min_length"], what+" min_length", 0, 0, maxStringLen)
	hi := r.intIn(a["max_length"], what+" max_length", 0, 0, maxStringLen)
	if hi < lo {
		r.p.At(a["max_length"], "%s: max_length %d is below min_length %d", what, hi, lo)
		return nil
	}
	return &stringGen{min: int(lo), max: int(hi)}
}

// genChoice resolves choice: weighted constants.
func (r *resolver) genChoice(g *genDef, what string) valueGen {
	c := &choiceGen{}
	var sum float64
	var descs []string
	for _, ch := range g.Choices {
		if ch.Value == nil {
			continue
		}
		w := r.floatIn(ch.Weight, what+" weight", 1, 0, math.MaxFloat64)
		sub := r.gen(&genDef{Kind: "const", Const: yamlfile.Deref(ch.Value), Line: ch.Value.Line}, what, nil)
		if sub == nil {
			continue
		}
		sum += w
		c.vals = append(c.vals, sub.(*constGen).v)
		c.cum = append(c.cum, sum)
		descs = append(descs, fmt.Sprintf("%s (%g)", sub.String(), w))
	}
	if len(c.vals) == 0 {
		return nil
	}
	if !(sum > 0) {
		r.p.Add(g.Line, "%s: the weights add up to 0: give at least one a weight above 0", what)
		return nil
	}
	c.desc = "choice of " + strings.Join(descs, ", ")
	return c
}

// genTimestamp resolves timestamp: now or {min, max}.
func (r *resolver) genTimestamp(g *genDef, what string) valueGen {
	a := g.Args
	if g.Now {
		return &timeGen{now: true}
	}
	lo, ok1 := r.time(a["min"], what+" min")
	hi, ok2 := r.time(a["max"], what+" max")
	if !ok1 || !ok2 {
		return nil
	}
	if hi.Before(lo) {
		r.p.At(a["max"], "%s: max is before min", what)
		return nil
	}
	return &timeGen{lo: lo.UnixMicro(), hi: hi.UnixMicro()}
}

// genFloat resolves float: {min, max}.
func (r *resolver) genFloat(g *genDef, what string) valueGen {
	a := g.Args
	lo, ok1 := r.num(a["min"], what+" min")
	hi, ok2 := r.num(a["max"], what+" max")
	if !ok1 || !ok2 {
		return nil
	}
	if hi < lo {
		r.p.At(a["max"], "%s: max %g is below min %g", what, hi, lo)
		return nil
	}
	return &floatGen{lo: lo, hi: hi}
}

var timeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"}

func (r *resolver) time(n *yaml.Node, what string) (time.Time, bool) {
	if n == nil {
		return time.Time{}, false
	}
	s := strings.TrimSpace(n.Value)
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC(), true
		}
	}
	r.p.At(n, "%s: %q is not a time (use 2024-01-31 or 2024-01-31T12:00:00Z)", what, s)
	return time.Time{}, false
}

func (r *resolver) txns() {
	for _, ft := range r.f.Txns {
		t := &txn{name: ft.Name, autocommit: ft.Autocommit, line: ft.Line}
		what := "transaction " + ft.Name
		t.weight = r.floatIn(ft.Weight, what+" weight", 1, 0, math.MaxFloat64)
		c := &compiler{r: r, t: t, txnVals: map[string]int{}, vars: map[string]int{}, used: map[string]bool{}}
		for _, v := range ft.Values {
			if v.Name == "" {
				continue
			}
			if _, dup := c.txnVals[v.Name]; dup {
				r.p.Add(v.Line, "%s: value %s is defined twice", what, v.Name)
				continue
			}
			g := r.gen(v.Gen, what+" value "+v.Name, nil)
			if g == nil {
				g = &constGen{v: target.Null(), desc: "null"}
			}
			c.txnVals[v.Name] = len(t.values)
			t.values = append(t.values, g)
			t.valueNames = append(t.valueNames, v.Name)
		}
		t.body = c.steps(ft.Steps, what)
		for i, name := range t.valueNames {
			if !c.used[name] {
				r.p.Add(ft.Values[i].Line, "%s: value %s is defined but no statement uses :%s", what, name, name)
			}
		}
		t.nvars = len(c.vars)
		t.varNames = make([]string, t.nvars)
		for n, i := range c.vars {
			t.varNames[i] = n
		}
		if max := maxOps(t.body); max > maxStatements {
			r.p.Add(ft.Line, "%s may send up to %d statements; the limit is %d (lower its repeats)", what, max, maxStatements)
		}
		r.w.txns = append(r.w.txns, t)
	}
}

// maxOps is the largest number of statements a body can send.
func maxOps(body []node) int64 {
	var n int64
	for i := range body {
		nd := &body[i]
		switch nd.kind {
		case nodeStmt:
			n++
		case nodeRepeat:
			_, hi, _ := nd.repeat.intRange()
			n += hi * maxOps(nd.body)
		case nodeBranch:
			var m int64
			for _, a := range nd.arms {
				m = max(m, maxOps(a.body))
			}
			n += m
		}
		if n > maxStatements {
			return n
		}
	}
	return n
}

// compiler turns a transaction's steps into statements and a program.
type compiler struct {
	r       *resolver
	t       *txn
	txnVals map[string]int
	vars    map[string]int // defined by keep / insert_id so far
	used    map[string]bool
}

func (c *compiler) steps(steps []*step, what string) []node {
	var out []node
	for i, s := range steps {
		wh := fmt.Sprintf("%s step %d", what, i+1)
		var nd node
		switch s.Kind {
		case stepSQL:
			nd = node{kind: nodeStmt, stmt: c.stmt(s, wh)}
		case stepBlock:
			nd = node{kind: nodeRepeat, body: c.steps(s.Steps, wh)}
		case stepBranch:
			nd = node{kind: nodeBranch}
			var sum float64
			for j, a := range s.Arms {
				p := c.r.floatIn(a.Probability, fmt.Sprintf("%s branch %d probability", wh, j+1), 0, 0, 1)
				sum += p
				nd.arms = append(nd.arms, arm{cum: sum, body: c.steps(a.Steps, wh)})
			}
			if sum > 1+1e-9 {
				c.r.p.Add(s.Line, "%s: the branch probabilities add up to %.4g, more than 1", wh, sum)
			}
		}
		if s.Repeat != nil {
			g := c.r.gen(s.Repeat, wh+" repeat", nil)
			if g == nil { // reported
				continue
			}
			lo, hi, ok := g.intRange()
			switch {
			case !ok:
				c.r.p.Add(s.Repeat.Line, "%s: repeat must be a whole number or a bounded integer generator (uniform, zipfian, gaussian, exponential, hotspot, special, choice of numbers), not %s", wh, g)
				continue
			case lo < 0:
				c.r.p.Add(s.Repeat.Line, "%s: repeat %s can be negative", wh, g)
				continue
			}
			_ = hi
			if nd.kind != nodeRepeat {
				nd = node{kind: nodeRepeat, body: []node{nd}}
			}
			nd.repeat = g
		} else if nd.kind == nodeRepeat {
			nd.repeat = &constGen{v: target.Int64(1), desc: "1"}
		}
		out = append(out, nd)
	}
	return out
}

// stmt compiles one SQL step and returns its index in the transaction.
func (c *compiler) stmt(s *step, what string) int {
	st := &stmt{line: s.Line, insertID: -1, idColumn: s.IDColumn, label: what, variants: map[string]*variant{}}
	locals := map[string]int{}
	for _, v := range s.Values {
		if v.Name == "" {
			continue
		}
		if _, dup := locals[v.Name]; dup {
			c.r.p.Add(v.Line, "%s: value %s is defined twice", what, v.Name)
			continue
		}
		if _, dup := c.txnVals[v.Name]; dup {
			c.r.p.Add(v.Line, "%s: value %s is already a value of the transaction", what, v.Name)
			continue
		}
		g := c.r.gen(v.Gen, what+" value "+v.Name, nil)
		if g == nil {
			g = &constGen{v: target.Null(), desc: "null"}
		}
		locals[v.Name] = len(st.locals)
		st.locals = append(st.locals, g)
		st.localNames = append(st.localNames, v.Name)
	}
	usedLocal := make([]bool, len(st.locals))
	dialects := make([]string, 0, len(s.SQL))
	for d := range s.SQL {
		dialects = append(dialects, d)
	}
	sort.Strings(dialects)
	for _, d := range dialects {
		text := s.SQL[d]
		if text == "" {
			continue // reported by the decoder
		}
		q, names, err := bindSQL(text)
		if err != nil {
			c.r.p.Add(s.SQLLine, "%s: %v", what, err)
			continue
		}
		v := &variant{sql: q}
		for _, name := range names {
			var src argSrc
			if i, ok := locals[name]; ok {
				src = argSrc{kind: srcLocal, idx: i}
				usedLocal[i] = true
			} else if i, ok := c.txnVals[name]; ok {
				src = argSrc{kind: srcTxn, idx: i}
				c.used[name] = true
			} else if i, ok := c.vars[name]; ok {
				src = argSrc{kind: srcVar, idx: i}
			} else if pv, ok := c.r.w.opts[name]; ok {
				cv, _ := constValue(strings.TrimSpace(pv), false)
				src = argSrc{kind: srcConst, idx: len(st.consts)}
				st.consts = append(st.consts, cv)
			} else {
				c.r.p.Add(s.SQLLine, "%s: :%s is not defined (define it under values, keep or insert_id it in an earlier statement, or add a parameter %s)", what, name, name)
				continue
			}
			v.args = append(v.args, src)
			v.names = append(v.names, name)
		}
		st.variants[d] = v
	}
	for i, ok := range usedLocal {
		if !ok && len(st.variants) > 0 {
			c.r.p.Add(s.Values[i].Line, "%s: value %s is defined but the statement does not use :%s", what, st.localNames[i], st.localNames[i])
		}
	}
	define := func(name string) int {
		if _, ok := locals[name]; ok {
			c.r.p.Add(s.Line, "%s: %s is both a value and a result name", what, name)
		}
		if _, ok := c.txnVals[name]; ok {
			c.r.p.Add(s.Line, "%s: %s is both a value of the transaction and a result name", what, name)
		}
		if i, ok := c.vars[name]; ok {
			return i
		}
		i := len(c.vars)
		c.vars[name] = i
		return i
	}
	for _, k := range s.Keep {
		st.keep = append(st.keep, define(k))
	}
	if s.InsertID != "" {
		st.insertID = define(s.InsertID)
		for d, v := range st.variants {
			if !strings.EqualFold(firstWord(v.sql), "INSERT") {
				c.r.p.Add(s.IDLine, "%s: insert_id needs an INSERT statement (%s sql is %q)", what, orDefault(d), firstWord(v.sql))
			}
		}
	}
	c.t.stmts = append(c.t.stmts, st)
	return len(c.t.stmts) - 1
}

func orDefault(d string) string {
	if d == "" {
		return "default"
	}
	return d
}

func firstWord(sql string) string {
	sql = strings.TrimLeft(sql, " \t\r\n(")
	i := 0
	for i < len(sql) && isNameByte(sql[i]) {
		i++
	}
	return sql[:i]
}

func (r *resolver) groups() {
	w := r.w
	byName := map[string]int{}
	for i, t := range w.txns {
		byName[t.name] = i
	}
	if len(r.f.Groups) == 0 {
		g := &group{clients: 0}
		for i := range w.txns {
			g.txns = append(g.txns, i)
			g.types = append(g.types, i)
			w.types = append(w.types, w.txns[i].name)
		}
		r.weights(g, 0, "the transactions")
		w.groups = []*group{g}
		return
	}
	w.grouped = true
	for _, fg := range r.f.Groups {
		what := "group " + fg.Name
		g := &group{name: fg.Name, line: fg.Line}
		g.clients = int(r.intIn(fg.Clients, what+" clients", 1, 1, maxClients))
		g.rate = r.floatIn(fg.Rate, what+" rate", 0, 0, math.MaxFloat64)
		g.perClient = r.intIn(fg.PerClient, what+" transactions_per_client", 0, 0, math.MaxInt64)
		seen := map[string]bool{}
		for i, name := range fg.Transactions {
			ti, ok := byName[name]
			if !ok {
				continue // reported by the decoder
			}
			if seen[name] {
				r.p.Add(fg.TxnLines[i], "%s runs transaction %s twice", what, name)
				continue
			}
			seen[name] = true
			g.txns = append(g.txns, ti)
			g.types = append(g.types, len(w.types))
			w.types = append(w.types, fg.Name+"/"+name)
		}
		r.weights(g, fg.Line, what)
		w.groups = append(w.groups, g)
	}
}

// weights computes a group's cumulative transaction weights; they must add up to more
// than 0.
func (r *resolver) weights(g *group, line int, what string) {
	var sum float64
	for _, ti := range g.txns {
		sum += r.w.txns[ti].weight
		g.cum = append(g.cum, sum)
	}
	if len(g.txns) > 0 && !(sum > 0) {
		if line == 0 && len(r.f.Txns) > 0 {
			line = r.f.Txns[0].Line
		}
		r.p.Add(line, "the weights of %s add up to 0: give at least one a weight above 0", what)
	}
}
