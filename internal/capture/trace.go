package capture

import (
	"regexp"
	"strings"
)

// Event is one statement a session ran, read from a server log: its text normalized
// (placeholders for the literals, as the statistics show it) and the values it ran
// with, in placeholder order.
type Event struct {
	Session string
	SQL     string
	Values  []string // nil: NULL is "\x00"
	Ms      float64
	Rows    int64
}

// statementsOf counts the events by normalized text, in order of first appearance.
func statementsOf(events []Event) []Statement {
	byText := map[string]int{}
	var out []Statement
	for _, e := range events {
		i, ok := byText[e.SQL]
		if !ok {
			i = len(out)
			byText[e.SQL] = i
			out = append(out, Statement{SQL: e.SQL})
		}
		out[i].Calls++
		out[i].TotalMs += e.Ms
		out[i].Rows += e.Rows
	}
	return out
}

var (
	// A literal: a quoted string with its charset introducer (_binary'…', as clients
	// write binary values) or prefix (X'…', N'…', E'…'), or a number.
	literalRE = regexp.MustCompile(`(?i)(?:\b_[a-z0-9]+\s*|\b[xbne])?'(?:[^'\\]|\\.|'')*'|\b[0-9]+(?:\.[0-9]+)?\b`)
	spaceRE   = regexp.MustCompile(`\s+`)
)

// Normalize replaces the literals of a statement by ? and returns them as values, as
// the kinds' log parsers do with statements logged with their literals.
func Normalize(q string) (string, []string) {
	q = strings.TrimSuffix(strings.TrimSpace(q), ";")
	var vals []string
	norm := literalRE.ReplaceAllStringFunc(q, func(lit string) string {
		vals = append(vals, Unquote(lit))
		return "?"
	})
	return spaceRE.ReplaceAllString(norm, " "), vals
}

// Unquote turns a literal into its value: a quoted string without its quotes (a doubled
// single quote inside stands for one), _binary'x' → x, 42 → 42.
func Unquote(lit string) string {
	i := strings.IndexByte(lit, '\'')
	if i < 0 {
		return lit
	}
	s := lit[i+1 : len(lit)-1]
	return strings.NewReplacer("''", "'", `\'`, "'", `\\`, `\`).Replace(s)
}
