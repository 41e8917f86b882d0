package capture

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/fathom-lab/fathom/internal/target"
)

// workload is a captured workload, ready to write.
type workload struct {
	Name       string
	Source     Source
	By         string
	Top        int
	Statements []capturedStatement // the kept statements
	Txns       []capturedTxn       // the transactions written, busiest first
	// Grouped: the transactions come from a log's sessions (not one per statement).
	Grouped    bool
	Unfinished int64 // transactions open at the end of the log, left out
	Other      int64 // calls inside transactions of statements not kept
	LeftOut    int64 // transactions of kinds beyond --top
}

// capturedStatement is one kept statement.
type capturedStatement struct {
	Statement
	Text   string // with named values (:p1 …)
	Params []param
	Share  float64 // of the kept statements' calls
}

// capturedTxn is one transaction of the captured workload.
type capturedTxn struct {
	Name       string
	Count      int64 // times seen (the weight)
	Share      float64
	Autocommit bool
	RolledBack int64
	Steps      []string   // SQL with the transaction's value names
	Stmts      []int      // the kept statement of each step
	Values     []namedGen // the transaction's values, drawn once per run of it
}

// namedGen is a value of a transaction and its generator.
type namedGen struct {
	Name string
	Generator
}

var (
	nonWord = regexp.MustCompile(`[^a-z0-9_]+`)
	pNameRE = regexp.MustCompile(`:p([0-9]+)\b`)
)

// Build rewrites the kept statements' placeholders as named values. Without events
// (statistics only) each statement is its own transaction and its values' generators
// come from the data on conn (nil: constants). With the events of a log the
// statements are grouped into the transactions the sessions ran, values that were the
// same across a transaction's statements become one, and each value's distribution is
// fitted to the values observed, the data's range bounding it.
func Build(ctx context.Context, conn target.Conn, st []Statement, events []Event, src Source, o Options) *workload {
	w := &workload{Name: o.Name, Source: src, By: o.By, Top: o.Top}
	if w.Name == "" {
		w.Name = "captured"
	}
	if w.By == "" {
		w.By = "calls"
	}
	var total int64
	for _, s := range st {
		total += s.Calls
	}
	kept := map[string]int{}
	for i, s := range st {
		text, params := rewrite(s.SQL)
		kept[s.SQL] = i
		w.Statements = append(w.Statements, capturedStatement{Statement: s, Text: text, Params: params, Share: float64(s.Calls) / float64(max(total, 1))})
	}
	infer := func(i int) []Generator {
		if conn == nil {
			gens := make([]Generator, len(w.Statements[i].Params))
			for j := range gens {
				gens[j] = Generator{"1", "no connection to sample the data: a constant, edit it"}
			}
			return gens
		}
		return infer(ctx, conn, o.Reader, tables(w.Statements[i].SQL), w.Statements[i].Params)
	}
	if events == nil {
		for i, s := range w.Statements {
			t := capturedTxn{Name: stmtName(i, s.SQL), Count: s.Calls, Share: s.Share, Autocommit: true, Stmts: []int{i}}
			gens := infer(i)
			t.Steps = []string{s.Text}
			for j, p := range s.Params {
				t.Values = append(t.Values, namedGen{p.Name, gens[j]})
			}
			w.Txns = append(w.Txns, t)
		}
		return w
	}
	w.Grouped = true
	g := group(events, kept)
	w.Unfinished, w.Other = g.unfinished, g.other
	top := o.Top
	if top <= 0 {
		top = 10
	}
	var txTotal int64
	for i, sh := range g.shapes {
		if i < top {
			txTotal += sh.count
		} else {
			w.LeftOut += sh.count
		}
	}
	gens := map[int][]Generator{} // by statement: inferred from the data
	for i, sh := range g.shapes[:min(top, len(g.shapes))] {
		w.Txns = append(w.Txns, w.buildTxn(i, sh, txTotal, func(s int) []Generator {
			if gens[s] == nil {
				gens[s] = infer(s)
			}
			return gens[s]
		}))
	}
	return w
}

// buildTxn makes a shape a transaction: one value per class of parameters that carried
// the same values, named after its column, fitted to the values observed.
func (w *workload) buildTxn(i int, sh *shape, total int64, infer func(int) []Generator) capturedTxn {
	first := w.Statements[sh.steps[0]]
	t := capturedTxn{Name: stmtName(i, first.SQL), Count: sh.count, Share: float64(sh.count) / float64(max(total, 1)),
		Autocommit: !sh.explicit, RolledBack: sh.rolled, Stmts: sh.steps}
	if len(sh.steps) > 1 {
		t.Name = fmt.Sprintf("t%d_%d_statements", i+1, len(sh.steps))
	}
	var pos [][2]int // (step, value index) of every parameter
	var owner [][2]int
	for si, s := range sh.steps {
		for pi, p := range w.Statements[s].Params {
			pos = append(pos, [2]int{si, p.Ref - 1})
			owner = append(owner, [2]int{s, pi})
		}
	}
	rep := sameValues(sh, pos)
	names := make([]string, len(pos))
	used := map[string]bool{}
	for k := range pos {
		if rep[k] != k {
			names[k] = names[rep[k]]
			continue
		}
		p := w.Statements[owner[k][0]].Params[owner[k][1]]
		name := p.Column
		if name == "" || used[name] {
			name = "v" + strconv.Itoa(len(t.Values)+1)
		}
		used[name] = true
		names[k] = name
		var vals []string
		for _, smp := range sh.samples {
			if s := smp[pos[k][0]]; pos[k][1] < len(s) {
				vals = append(vals, s[pos[k][1]])
			}
		}
		data := infer(owner[k][0])[owner[k][1]]
		lo, hi, ok := data.intRange()
		gen := data
		if f := fitValues(vals, lo, hi, ok); f != nil {
			gen = *f
			if ok {
				gen.Comment += fmt.Sprintf("; range from %s", strings.SplitN(data.Comment, ":", 2)[0])
			}
		}
		t.Values = append(t.Values, namedGen{name, gen})
	}
	k := 0
	for _, s := range sh.steps {
		st := w.Statements[s]
		base := k
		t.Steps = append(t.Steps, pNameRE.ReplaceAllStringFunc(st.Text, func(m string) string {
			n, _ := strconv.Atoi(m[2:])
			return ":" + names[base+n-1]
		}))
		k += len(st.Params)
	}
	return t
}

func stmtName(i int, sql string) string {
	tables := tables(sql)
	name := fmt.Sprintf("q%d_%s", i+1, strings.ToLower(strings.Fields(sql)[0]))
	if len(tables) > 0 {
		name += "_" + tables[0]
	}
	return strings.Trim(nonWord.ReplaceAllString(name, "_"), "_")
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05Z") }

// Write writes the workload file.
func (w *workload) Write(out io.Writer) error {
	var b strings.Builder
	s := w.Source
	fmt.Fprintf(&b, "# Captured by fathom capture from %s.\n", s.What)
	switch {
	case s.SinceUnknown && !s.Until.IsZero():
		fmt.Fprintf(&b, "# Window: from the last reset of the statistics (time not kept) until %s.\n", stamp(s.Until))
	case !s.Until.IsZero():
		fmt.Fprintf(&b, "# Window: %s to %s.\n", stamp(s.Since), stamp(s.Until))
	}
	fmt.Fprintf(&b, "# Kept: the top %d statements by %s", len(w.Statements), w.By)
	if s.DroppedByTop > 0 {
		fmt.Fprintf(&b, " (%d more left out by --top)", s.DroppedByTop)
	}
	fmt.Fprintf(&b, "; %d statements that are not the application's DML (BEGIN, COMMIT, SET, DDL, catalog reads) left out.\n", s.Skipped)
	if w.Grouped {
		fmt.Fprintf(&b, "# Transactions: as the sessions ran them (BEGIN … COMMIT; a statement outside one is its\n")
		fmt.Fprintf(&b, "# own autocommit transaction), the %d busiest kinds", len(w.Txns))
		if w.LeftOut > 0 {
			fmt.Fprintf(&b, " (%d transactions of rarer kinds left out by --top)", w.LeftOut)
		}
		fmt.Fprintf(&b, "; weights are how often each kind ran. %d calls of statements not kept ran inside them\n", w.Other)
		fmt.Fprintf(&b, "# and are not replayed; %d transactions still open at the end of the log are left out.\n", w.Unfinished)
		b.WriteString("# Values: fitted to the values the calls ran with (uniform or Zipfian, each with how well it\n")
		b.WriteString("# fits); values equal in 99% or more of a transaction's runs are one value.\n")
	} else {
		b.WriteString("# Each statement is its own transaction (autocommit): the statistics do not say which\n")
		b.WriteString("# statements ran together (a server log does: --slow-log). Weights are the statements'\n")
		b.WriteString("# calls, so the mix is their shares. Values are drawn from the ranges and lengths found\n")
		b.WriteString("# in the data when captured; the statistics keep no values, so no skew is inferred.\n")
	}
	fmt.Fprintf(&b, "name: %s\n", w.Name)
	fmt.Fprintf(&b, "description: %s\n", quote(fmt.Sprintf("captured from %s: top %d %s by %s", s.What, len(w.Txns), map[bool]string{true: "transactions", false: "statements"}[w.Grouped], w.By)))
	b.WriteString("\ntransactions:\n")
	for _, t := range w.Txns {
		if w.Grouped {
			fmt.Fprintf(&b, "  # %.1f%% of the transactions: %d runs", 100*t.Share, t.Count)
			if t.RolledBack > 0 {
				fmt.Fprintf(&b, ", %d ended with ROLLBACK (replayed as COMMIT)", t.RolledBack)
			}
			b.WriteString("\n")
		} else {
			st := w.Statements[t.Stmts[0]]
			mean := st.TotalMs / float64(max(st.Calls, 1))
			fmt.Fprintf(&b, "  # %.1f%% of the kept calls: %d calls, %.3f ms mean, %.1f rows per call\n", 100*st.Share, st.Calls, mean, float64(st.Rows)/float64(max(st.Calls, 1)))
		}
		fmt.Fprintf(&b, "  - name: %s\n    weight: %d\n", t.Name, t.Count)
		if t.Autocommit {
			b.WriteString("    autocommit: true\n")
		}
		if len(t.Values) > 0 {
			b.WriteString("    values:\n")
			for _, v := range t.Values {
				fmt.Fprintf(&b, "      %s: %s  # %s\n", v.Name, v.YAML, v.Comment)
			}
		}
		b.WriteString("    steps:\n")
		for _, sql := range t.Steps {
			fmt.Fprintf(&b, "      - sql: %s\n", quote(sql))
		}
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// quote renders s as a YAML double-quoted scalar (JSON's escapes are YAML's).
func quote(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}
