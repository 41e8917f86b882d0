package spec

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/fathom-lab/fathom/internal/target"
)

// Describe writes the resolved workload as a dialect would receive it: parameter
// values, the DDL, what is loaded, the groups and every transaction's statements with
// the generators of their values. It is `fathom workload show`.
func (w *Workload) Describe(out io.Writer, dialect string) error {
	d := target.DialectNamed(dialect)
	if d == nil {
		return fmt.Errorf("unknown dialect %q (use %s)", dialect, strings.Join(Dialects(), ", "))
	}
	b := &strings.Builder{}
	f := w.file
	fmt.Fprintf(b, "workload %s (%s, as sent to %s)\n", f.Name, f.Path, dialect)
	if f.Description != "" {
		fmt.Fprintf(b, "  %s\n", f.Description)
	}
	if len(w.optNames) > 0 {
		b.WriteString("\nparameters (--set name=value):\n")
		width := 0
		for _, n := range w.optNames {
			width = max(width, len(n)+len(w.opts[n])+3)
		}
		for _, p := range f.Params {
			kv := p.Name + " = " + w.opts[p.Name]
			fmt.Fprintf(b, "  %-*s  %s\n", width, kv, p.Help)
		}
	}
	if len(f.Sequences) > 0 {
		b.WriteString("\nsequences:\n")
		for _, s := range w.seqList {
			if s.name != "" {
				fmt.Fprintf(b, "  %s: %s\n", s.name, s)
			}
		}
	}
	if len(w.tables) > 0 {
		b.WriteString("\ntables:\n")
	}
	for _, t := range w.tables {
		sql := ddlFor(t.ddl, d)
		if sql == "" {
			var err error
			if sql, err = d.CreateTable(t.def, false); err != nil {
				fmt.Fprintf(b, "  %s: %v\n", t.def.Name, err)
				continue
			}
			if pk := d.AddPrimaryKey(t.def); pk != "" {
				sql += ";\n  " + pk
			}
		}
		fmt.Fprintf(b, "  %s;\n", sql)
		for _, ix := range d.CreateIndexes(t.def) {
			fmt.Fprintf(b, "  %s;\n", ix)
		}
		if t.rows > 0 {
			fmt.Fprintf(b, "    load %d rows:\n", t.rows)
			for i, c := range t.loadCols {
				fmt.Fprintf(b, "      %s: %s\n", c, t.loadGens[i])
			}
		}
	}
	b.WriteString("\n")
	for _, g := range w.groups {
		var total float64
		if len(g.cum) > 0 {
			total = g.cum[len(g.cum)-1]
		}
		if w.grouped {
			fmt.Fprintf(b, "group %s: %d client%s", g.name, g.clients, plural(g.clients))
			if g.rate > 0 {
				fmt.Fprintf(b, ", %g transactions/s in all (open loop)", g.rate)
			} else {
				b.WriteString(", closed loop")
			}
			if g.perClient > 0 {
				fmt.Fprintf(b, ", %d transactions each", g.perClient)
			}
			b.WriteString("\n")
		} else {
			b.WriteString("transactions (the run's -c clients draw from all of them):\n")
		}
		prev := 0.0
		for i := range g.txns {
			share := 0.0
			if total > 0 {
				share = (g.cum[i] - prev) / total * 100
			}
			prev = g.cum[i]
			fmt.Fprintf(b, "  %-20s %5.1f%%\n", w.types[g.types[i]], share)
		}
	}
	for _, t := range w.txns {
		mode := "in a transaction (BEGIN … COMMIT)"
		if t.autocommit {
			mode = "autocommit"
		}
		fmt.Fprintf(b, "\ntransaction %s (weight %g, %s):\n", t.name, t.weight, mode)
		for i, g := range t.values {
			fmt.Fprintf(b, "  :%s = %s (once per transaction)\n", t.valueNames[i], g)
		}
		w.describeBody(b, d, t, t.body, "  ")
	}
	_, err := io.WriteString(out, b.String())
	return err
}

func (w *Workload) describeBody(b *strings.Builder, d *target.Dialect, t *txn, body []node, indent string) {
	for _, nd := range body {
		switch nd.kind {
		case nodeStmt:
			st := t.stmts[nd.stmt]
			v := pickVariant(st, d.Name)
			sql := v.sql
			id := insertIDOf(d.Name)
			if st.insertID >= 0 && id.returning {
				sql += " RETURNING " + st.idColumn
			}
			fmt.Fprintf(b, "%s%s\n", indent, d.Rebind(sql))
			if len(v.names) > 0 {
				fmt.Fprintf(b, "%s  arguments: :%s\n", indent, strings.Join(v.names, ", :"))
			}
			for i, g := range st.locals {
				fmt.Fprintf(b, "%s  :%s = %s\n", indent, st.localNames[i], g)
			}
			for i, slot := range st.keep {
				fmt.Fprintf(b, "%s  keep column %d as :%s\n", indent, i+1, t.varNames[slot])
			}
			if st.insertID >= 0 {
				how := "RETURNING"
				if !id.returning {
					how = id.query
				}
				fmt.Fprintf(b, "%s  the generated %s as :%s (%s)\n", indent, st.idColumn, t.varNames[st.insertID], how)
			}
		case nodeRepeat:
			fmt.Fprintf(b, "%srepeat %s times:\n", indent, nd.repeat)
			w.describeBody(b, d, t, nd.body, indent+"  ")
		case nodeBranch:
			prev := 0.0
			for _, a := range nd.arms {
				fmt.Fprintf(b, "%swith probability %g:\n", indent, round4(a.cum-prev))
				prev = a.cum
				w.describeBody(b, d, t, a.body, indent+"  ")
			}
			if prev < 1-1e-9 {
				fmt.Fprintf(b, "%sotherwise (probability %g): nothing\n", indent, round4(1-prev))
			}
		}
	}
}

func round4(f float64) float64 {
	return float64(int64(f*10000+0.5)) / 10000
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Summary is one line about a valid file, for `fathom workload check`.
func (w *Workload) Summary() string {
	stmts := 0
	for _, t := range w.txns {
		stmts += len(t.stmts)
	}
	parts := []string{
		count(len(w.tables), "table"),
		count(len(w.txns), "transaction"),
		count(stmts, "statement"),
	}
	if w.grouped {
		parts = append(parts, count(len(w.groups), "client group"))
	}
	if len(w.optNames) > 0 {
		names := append([]string(nil), w.optNames...)
		sort.Strings(names)
		parts = append(parts, count(len(names), "parameter"))
	}
	return strings.Join(parts, ", ")
}

func count(n int, what string) string { return fmt.Sprintf("%d %s%s", n, what, plural(n)) }
