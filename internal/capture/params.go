package capture

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/fathom-lab/fathom/internal/target"
)

// token is a piece of a statement: a word or quoted identifier (lower-cased in low),
// a placeholder, or a punctuation mark or operator.
type token struct {
	text, low   string
	placeholder bool
	start, end  int // in the statement
}

// tokenize splits sql; string literals become one token each. Placeholders are $N
// (PostgreSQL) and ? (MySQL).
func tokenize(sql string) []token {
	var out []token
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
			continue
		case c == '\'' || c == '"' || c == '`':
			t := quotedToken(sql, i)
			out = append(out, t)
			i = t.end
		case c == '$' && i+1 < len(sql) && sql[i+1] >= '0' && sql[i+1] <= '9':
			j := i + 1
			for j < len(sql) && sql[j] >= '0' && sql[j] <= '9' {
				j++
			}
			out = append(out, token{text: sql[i:j], placeholder: true, start: i, end: j})
			i = j
		case c == '?':
			out = append(out, token{text: "?", placeholder: true, start: i, end: i + 1})
			i++
		case isWord(c):
			t := wordToken(sql, i)
			out = append(out, t)
			i = t.end
		default:
			t := operatorToken(sql, i)
			out = append(out, t)
			i = t.end
		}
	}
	return out
}

// quotedToken is the string literal or quoted identifier starting at sql[i] (its
// quote), up to its closing quote or the end of sql.
func quotedToken(sql string, i int) token {
	c := sql[i]
	j := i + 1
	for j < len(sql) && sql[j] != c {
		if sql[j] == '\\' && c == '\'' {
			j++
		}
		j++
	}
	j = min(j+1, len(sql))
	t := token{text: sql[i:j], start: i, end: j}
	if c != '\'' { // a quoted identifier
		t.low = strings.ToLower(strings.Trim(t.text, "\"`"))
	}
	return t
}

// wordToken is the word starting at sql[i], with its dots and inner quotes
// (schema.table, `db`.`t`); low has the quotes taken out.
func wordToken(sql string, i int) token {
	j := i
	for j < len(sql) && (isWord(sql[j]) || sql[j] == '.' || sql[j] == '`' || sql[j] == '"') {
		j++
	}
	w := sql[i:j]
	return token{text: w, low: strings.ToLower(strings.NewReplacer("`", "", "\"", "").Replace(w)), start: i, end: j}
}

// operatorToken is the punctuation mark at sql[i], or the two-character operator
// starting there: one of <>!= then one of <>= (<=, <>, !=, >=, ==, <<, …).
func operatorToken(sql string, i int) token {
	j := i + 1
	if j < len(sql) && strings.ContainsRune("<>!=", rune(sql[i])) && strings.ContainsRune("<>=", rune(sql[j])) {
		j++
	}
	return token{text: sql[i:j], low: sql[i:j], start: i, end: j}
}

func isWord(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

var identRE = regexp.MustCompile(`^[a-z_][a-z0-9_$]*$`)

// column strips a qualifier ("a.aid" → "aid"); "" if the token is not an identifier.
func column(t token) string {
	if t.placeholder || t.low == "" {
		return ""
	}
	c := t.low[strings.LastIndexByte(t.low, '.')+1:]
	if !identRE.MatchString(c) || keywords[c] {
		return ""
	}
	return c
}

var keywords = map[string]bool{"select": true, "from": true, "where": true, "and": true, "or": true, "not": true, "in": true,
	"values": true, "set": true, "limit": true, "offset": true, "between": true, "like": true, "is": true, "null": true,
	"order": true, "by": true, "group": true, "having": true, "as": true, "on": true, "join": true, "into": true}

var comparison = map[string]bool{"=": true, "<": true, ">": true, "<=": true, ">=": true, "<>": true, "!=": true,
	"+": true, "-": true, "*": true, "/": true, "like": true}

// param is one placeholder of a statement: the name it gets and the column it is
// compared with or written to ("" when none was found), or LIMIT/OFFSET.
type param struct {
	Name   string
	Column string
	Limit  bool
	Ref    int // which value of a logged call it takes: N of $N, or the ?'s place (from 1)
}

// rewrite replaces the statement's placeholders with named values (:p1 …) and says
// which column each one goes with.
func rewrite(sql string) (string, []param) {
	toks := tokenize(sql)
	var b strings.Builder
	var params []param
	seen := map[string]string{} // $N → name
	last, marks := 0, 0
	for i, t := range toks {
		if !t.placeholder {
			continue
		}
		marks++
		name := ""
		if t.text != "?" {
			name = seen[t.text]
		}
		if name == "" {
			name = "p" + strconv.Itoa(len(params)+1)
			if t.text != "?" {
				seen[t.text] = name
			}
			p := param{Name: name, Column: columnFor(toks, i), Ref: marks}
			if t.text != "?" {
				p.Ref, _ = strconv.Atoi(t.text[1:])
			}
			if i > 0 && (toks[i-1].low == "limit" || toks[i-1].low == "offset") {
				p.Limit = true
			}
			params = append(params, p)
		}
		b.WriteString(sql[last:t.start])
		b.WriteString(":" + name)
		last = t.end
	}
	b.WriteString(sql[last:])
	return b.String(), params
}

// columnFor finds the column the placeholder at i is compared with or written to.
func columnFor(toks []token, i int) string {
	at := func(k int) token {
		if k < 0 || k >= len(toks) {
			return token{}
		}
		return toks[k]
	}
	p := at(i - 1)
	switch {
	case comparison[p.low]:
		if c := column(at(i - 2)); c != "" {
			return c
		}
	case p.low == "between":
		return column(at(i - 2))
	case p.low == "and" && at(i-3).low == "between":
		return column(at(i - 4))
	case p.low == "(" || p.low == ",":
		// Inside parentheses: an IN list, or an INSERT's VALUES.
		depth, pos := 0, 0
		for k := i - 1; k >= 0; k-- {
			switch toks[k].low {
			case ")":
				depth++
			case ",":
				if depth == 0 {
					pos++
				}
			case "(":
				if depth > 0 {
					depth--
					continue
				}
				before := at(k - 1)
				if before.low == "in" {
					return column(at(k - 2))
				}
				if before.low == "values" {
					return insertColumn(toks[:k-1], pos)
				}
				return ""
			}
		}
	}
	if n := at(i + 1); comparison[n.low] {
		return column(at(i + 2))
	}
	return ""
}

// insertColumn is the pos-th column of "INSERT INTO t (c1, c2 …)" in toks.
func insertColumn(toks []token, pos int) string {
	end := len(toks) - 1
	if end < 0 || toks[end].low != ")" {
		return ""
	}
	var cols []string
	for k := end - 1; k >= 0 && toks[k].low != "("; k-- {
		if c := column(toks[k]); c != "" {
			cols = append([]string{c}, cols...)
		}
	}
	if pos < len(cols) {
		return cols[pos]
	}
	return ""
}

var tableRE = regexp.MustCompile("(?i)\\b(?:from|join|update|into)\\s+([A-Za-z_`\"][A-Za-z0-9_.`\"$]*)")

// tables names the tables a statement reads or writes, unqualified and lower-cased.
func tables(sql string) []string {
	var out []string
	for _, m := range tableRE.FindAllStringSubmatch(sql, -1) {
		t := strings.ToLower(strings.NewReplacer("`", "", "\"", "").Replace(m[1]))
		t = t[strings.LastIndexByte(t, '.')+1:]
		if identRE.MatchString(t) && !keywords[t] && !containsStr(out, t) {
			out = append(out, t)
		}
	}
	return out
}

func containsStr(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// mark names capture's own reads, so that a later capture leaves them out (where the
// server keeps comments: pg_stat_statements does, the MySQL digests do not).
const mark = "/* fathom capture */ "

// Generator is an inferred value generator in the workload file's syntax, with a
// comment saying where it came from.
type Generator struct {
	YAML, Comment string
}

// intRange is the range of an integer column found in the data ({uniform: [lo, hi]},
// which only Infer's integer columns get).
func (g Generator) intRange() (lo, hi int64, ok bool) {
	_, err := fmt.Sscanf(g.YAML, "{uniform: [%d, %d]}", &lo, &hi)
	return lo, hi, err == nil
}

// infer builds the generator of each parameter from the data: the range of an
// integer column, the lengths of a text column, the range of a numeric one.
func infer(ctx context.Context, conn target.Conn, r Reader, tables []string, params []param) []Generator {
	out := make([]Generator, len(params))
	for i, p := range params {
		switch {
		case p.Limit:
			out[i] = Generator{"10", "LIMIT/OFFSET: the statistics keep no values; 10 is a guess, edit it"}
		case p.Column == "":
			out[i] = Generator{"1", "no column found to sample: a constant, edit it"}
		default:
			out[i] = inferColumn(ctx, conn, r, tables, p.Column)
		}
	}
	return out
}

func inferColumn(ctx context.Context, conn target.Conn, r Reader, tables []string, col string) Generator {
	schema := "table_schema = ANY (current_schemas(false))"
	length := "length"
	if ct, ok := r.(ColumnTyper); ok {
		schema, length = ct.ColumnQuery()
	}
	for _, tb := range tables {
		rows, err := conn.Query(ctx, fmt.Sprintf(mark+"SELECT data_type FROM information_schema.columns WHERE %s AND table_name = '%s' AND column_name = '%s'", schema, tb, col))
		if err != nil || len(rows) == 0 {
			continue
		}
		typ := strings.ToLower(rows[0][0])
		where := fmt.Sprintf("%s.%s", tb, col)
		switch {
		case strings.Contains(typ, "int") || typ == "serial":
			r, err := conn.Query(ctx, fmt.Sprintf(mark+"SELECT min(%s), max(%s), count(*) FROM %s", col, col, tb))
			if err != nil || len(r) != 1 || r[0][0] == "" {
				return Generator{"1", where + " has no rows to sample: a constant, edit it"}
			}
			return Generator{fmt.Sprintf("{uniform: [%s, %s]}", r[0][0], r[0][1]), fmt.Sprintf("%s: uniform over its range in the data (%s rows)", where, r[0][2])}
		case strings.Contains(typ, "char") || strings.Contains(typ, "text"):
			r, err := conn.Query(ctx, fmt.Sprintf(mark+"SELECT min(%s(%s)), max(%s(%s)) FROM %s", length, col, length, col, tb))
			if err != nil || len(r) != 1 || r[0][0] == "" {
				return Generator{"{string: 10}", where + " has no rows to sample: 10 characters, a guess"}
			}
			lo, hi := r[0][0], r[0][1]
			if lo == hi {
				return Generator{"{string: " + lo + "}", where + ": the length every row has"}
			}
			return Generator{fmt.Sprintf("{string: {min_length: %s, max_length: %s}}", lo, hi), where + ": lengths as in the data"}
		case strings.Contains(typ, "numeric") || strings.Contains(typ, "decimal") || strings.Contains(typ, "double") || strings.Contains(typ, "real") || strings.Contains(typ, "float"):
			r, err := conn.Query(ctx, fmt.Sprintf(mark+"SELECT min(%s), max(%s) FROM %s", col, col, tb))
			if err != nil || len(r) != 1 || r[0][0] == "" {
				return Generator{"0", where + " has no rows to sample: a constant, edit it"}
			}
			return Generator{fmt.Sprintf("{float: [%s, %s]}", r[0][0], r[0][1]), where + ": uniform over its range in the data"}
		case strings.Contains(typ, "time") || strings.Contains(typ, "date"):
			return Generator{"{timestamp: now}", where + ": the time of the call"}
		}
		return Generator{"1", fmt.Sprintf("%s is %s, which capture does not sample: a constant, edit it", where, typ)}
	}
	return Generator{"1", "column " + col + " not found in " + strings.Join(tables, ", ") + ": a constant, edit it"}
}
