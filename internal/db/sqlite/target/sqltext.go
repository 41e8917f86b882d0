package sqlite

import "strings"

// What the target needs to know about a statement from its text: whether it returns
// rows, whether it writes, how many '?' it has, and which tables it names. A small
// tokenizer that knows SQLite's quoting ('…' strings, "…", `…` and […] identifiers,
// -- and /* */ comments; backslash is not an escape) is enough.

type tokKind uint8

const (
	tokWord   tokKind = iota // keyword or bare identifier
	tokQuoted                // "…", `…` or […] identifier, unquoted in text
	tokString                // '…' literal
	tokParam                 // ?, ?NNN, :name, @name, $name
	tokPunct                 // any other character
)

type token struct {
	kind tokKind
	text string
}

// tokenize splits sql into tokens, dropping white space and comments. An unterminated
// quote or comment ends the statement.
func tokenize(sql string) []token {
	var toks []token
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			end := strings.Index(sql[i+2:], "*/")
			if end < 0 {
				return toks
			}
			i += 2 + end + 2
		case c == '\'' || c == '"' || c == '`' || c == '[':
			t, next, ok := quotedToken(sql, i)
			if !ok {
				return toks
			}
			toks = append(toks, t)
			i = next
		default:
			t := plainToken(sql, i)
			toks = append(toks, t)
			i += len(t.text)
		}
	}
	return toks
}

// quotedToken reads the '…' string or "…", `…` or […] identifier whose opening quote
// is sql[i], unquoted (a doubled quote is one), and the index after its closing
// quote; ok is false when it has none.
func quotedToken(sql string, i int) (t token, next int, ok bool) {
	c := sql[i]
	closer := c
	if c == '[' {
		closer = ']'
	}
	var b strings.Builder
	j := i + 1
	for {
		if j >= len(sql) {
			return token{}, 0, false
		}
		if sql[j] == closer {
			if closer != ']' && j+1 < len(sql) && sql[j+1] == closer {
				b.WriteByte(closer) // doubled quote
				j += 2
				continue
			}
			break
		}
		b.WriteByte(sql[j])
		j++
	}
	kind := tokQuoted
	if c == '\'' {
		kind = tokString
	}
	return token{kind, b.String()}, j + 1, true
}

// plainToken reads the placeholder, word or punctuation character starting at
// sql[i]; its text is that part of sql.
func plainToken(sql string, i int) token {
	c := sql[i]
	switch {
	case c == '?':
		j := i + 1
		for j < len(sql) && sql[j] >= '0' && sql[j] <= '9' {
			j++
		}
		return token{tokParam, sql[i:j]}
	case (c == ':' || c == '@' || c == '$') && i+1 < len(sql) && isWordByte(sql[i+1]):
		return token{tokParam, sql[i : i+1+wordLen(sql[i+1:])]}
	case isWordByte(c):
		return token{tokWord, sql[i : i+wordLen(sql[i:])]}
	}
	return token{tokPunct, sql[i : i+1]}
}

// wordLen is the length of the word (word bytes and '$') that s starts with.
func wordLen(s string) int {
	j := 0
	for j < len(s) && (isWordByte(s[j]) || s[j] == '$') {
		j++
	}
	return j
}

// isWordByte reports bytes of bare identifiers and keywords; bytes >= 0x80 (UTF-8)
// count, as in SQLite.
func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func (t token) is(word string) bool { return t.kind == tokWord && strings.EqualFold(t.text, word) }

// firstWord is the statement's first keyword, upper case, after any opening
// parentheses.
func firstWord(toks []token) (string, []token) {
	for i, t := range toks {
		if t.kind == tokPunct && t.text == "(" {
			continue
		}
		if t.kind == tokWord {
			return strings.ToUpper(t.text), toks[i+1:]
		}
		return "", nil
	}
	return "", nil
}

func hasWord(toks []token, words ...string) bool {
	for _, t := range toks {
		for _, w := range words {
			if t.is(w) {
				return true
			}
		}
	}
	return false
}

// returnsRows reports whether a statement produces a result set: queries, PRAGMA and
// EXPLAIN, and writes with a RETURNING clause.
func returnsRows(sql string) bool {
	word, rest := firstWord(tokenize(sql))
	switch word {
	case "SELECT", "VALUES", "EXPLAIN", "PRAGMA":
		return true
	case "WITH":
		if hasWord(rest, "INSERT", "UPDATE", "DELETE", "REPLACE") {
			return hasWord(rest, "RETURNING")
		}
		return true
	case "INSERT", "REPLACE", "UPDATE", "DELETE":
		return hasWord(rest, "RETURNING")
	}
	return false
}

// writes reports whether a statement may write: everything but queries, EXPLAIN and
// PRAGMA. It decides how a begin=auto transaction starts.
func writes(sql string) bool {
	word, rest := firstWord(tokenize(sql))
	switch word {
	case "SELECT", "VALUES", "EXPLAIN", "PRAGMA":
		return false
	case "WITH":
		return hasWord(rest, "INSERT", "UPDATE", "DELETE", "REPLACE")
	}
	return true
}

// countParams counts the '?' placeholders, or returns -1 when the statement uses
// numbered or named ones (?NNN, :name, @name, $name), whose count the text does not
// tell simply.
func countParams(sql string) int {
	n := 0
	for _, t := range tokenize(sql) {
		if t.kind != tokParam {
			continue
		}
		if t.text != "?" {
			return -1
		}
		n++
	}
	return n
}

// tableName is a table a statement names, with its schema if qualified.
type tableName struct{ schema, table string }

// notAlias are the keywords that may follow a table name in a FROM list.
var notAlias = map[string]bool{
	"WHERE": true, "JOIN": true, "INNER": true, "LEFT": true, "RIGHT": true, "FULL": true,
	"CROSS": true, "NATURAL": true, "ON": true, "USING": true, "GROUP": true, "ORDER": true,
	"LIMIT": true, "HAVING": true, "WINDOW": true, "UNION": true, "EXCEPT": true,
	"INTERSECT": true, "SET": true, "VALUES": true, "RETURNING": true, "INDEXED": true,
	"NOT": true, "DEFAULT": true, "SELECT": true, "AS": true, "OUTER": true,
}

// referencedTables lists the tables named after FROM (and in its comma list), JOIN,
// INTO and UPDATE, except common table expressions, table-valued functions and
// SQLite's own sqlite_ and pragma_ tables. It is used only after SQLite rejected the
// statement with SQLITE_ERROR, to check whether a named table is missing.
func referencedTables(sql string) []tableName {
	r := &tableRefs{toks: tokenize(sql)}
	r.ctes = r.cteNames()
	toks := r.toks
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.is("JOIN"):
			r.name(i+1, true)
		case t.is("INTO"):
			r.name(i+1, false)
		case t.is("UPDATE"):
			j := i + 1
			if j+1 < len(toks) && toks[j].is("OR") {
				j += 2
			}
			r.name(j, false)
		case t.is("FROM"):
			r.fromList(i + 1)
		}
	}
	return r.out
}

// tableRefs collects the tables a statement's tokens name.
type tableRefs struct {
	toks []token
	ctes map[string]bool // common table expressions' names, lower case
	out  []tableName
}

func (r *tableRefs) ident(i int) bool {
	return i < len(r.toks) && (r.toks[i].kind == tokWord || r.toks[i].kind == tokQuoted)
}

func (r *tableRefs) punct(i int, p string) bool {
	return i < len(r.toks) && r.toks[i].kind == tokPunct && r.toks[i].text == p
}

// cteNames are the names followed by AS ( (or by (columns) AS ( ), lower case: the
// statement's common table expressions.
func (r *tableRefs) cteNames() map[string]bool {
	toks := r.toks
	ctes := map[string]bool{}
	for i := range toks {
		if !r.ident(i) {
			continue
		}
		j := i + 1
		if r.punct(j, "(") { // name(columns) AS (…)
			for j < len(toks) && !r.punct(j, ")") {
				j++
			}
			j++
		}
		if j+1 < len(toks) && toks[j].is("AS") && r.punct(j+1, "(") {
			ctes[strings.ToLower(toks[i].text)] = true
		}
	}
	return ctes
}

// name reads a possibly qualified table name at i; it returns the index after it.
// In FROM and JOIN a name followed by '(' is a table-valued function.
func (r *tableRefs) name(i int, from bool) int {
	toks := r.toks
	if !r.ident(i) {
		return i
	}
	n := tableName{table: toks[i].text}
	i++
	if r.punct(i, ".") && r.ident(i+1) {
		n = tableName{schema: n.table, table: toks[i+1].text}
		i += 2
	}
	if from && r.punct(i, "(") {
		return i
	}
	lower := strings.ToLower(n.table)
	if (n.schema != "" || !r.ctes[lower]) && !strings.HasPrefix(lower, "sqlite_") && !strings.HasPrefix(lower, "pragma_") {
		r.out = append(r.out, n)
	}
	return i
}

// fromList reads FROM's comma list of tables, each with an optional alias, from i.
func (r *tableRefs) fromList(i int) {
	toks := r.toks
	j := r.name(i, true)
	for {
		if j < len(toks) && toks[j].is("AS") {
			j++
		}
		if j < len(toks) && toks[j].kind != tokPunct && r.ident(j) && !notAlias[strings.ToUpper(toks[j].text)] {
			j++ // alias
		}
		if !r.punct(j, ",") {
			break
		}
		j = r.name(j+1, true)
	}
}
