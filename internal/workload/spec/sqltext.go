package spec

import (
	"fmt"
	"strings"
)

// bindSQL rewrites the named parameters of a statement (:name) to '?' placeholders,
// which each target rewrites for its driver, and returns the names in order. Quoted
// strings and identifiers, comments, PostgreSQL casts (::) and MySQL assignments (:=)
// are left alone. A bare '?' is refused: values are named in workload files.
func bindSQL(sql string) (string, []string, error) {
	var b strings.Builder
	var names []string
	for i := 0; i < len(sql); i++ {
		c := sql[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			j, err := quoteEnd(sql, i)
			if err != nil {
				return "", nil, err
			}
			b.WriteString(sql[i : j+1])
			i = j
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			j := strings.IndexByte(sql[i:], '\n')
			if j < 0 {
				j = len(sql) - i
			}
			b.WriteString(sql[i : i+j])
			i += j - 1
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			j := strings.Index(sql[i+2:], "*/")
			if j < 0 {
				return "", nil, fmt.Errorf("unterminated /* comment")
			}
			b.WriteString(sql[i : i+j+4])
			i += j + 3
		case c == ':' && i+1 < len(sql) && (sql[i+1] == ':' || sql[i+1] == '='):
			b.WriteString(sql[i : i+2])
			i++
		case c == ':' && i+1 < len(sql) && isNameStart(sql[i+1]):
			j := i + 1
			for j < len(sql) && isNameByte(sql[j]) {
				j++
			}
			names = append(names, sql[i+1:j])
			b.WriteByte('?')
			i = j - 1
		case c == '?':
			return "", nil, fmt.Errorf("'?' placeholder at offset %d: name the value instead (:name) and define it under values", i)
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), names, nil
}

// quoteEnd returns the offset of the quote that closes the one at sql[i]. A doubled
// quote stands for itself, and a backslash escapes the next byte in '...' and "..."
// (not in `...`).
func quoteEnd(sql string, i int) (int, error) {
	c := sql[i]
	j := i + 1
	for j < len(sql) {
		if sql[j] == c {
			if j+1 < len(sql) && sql[j+1] == c { // doubled quote
				j += 2
				continue
			}
			return j, nil
		}
		if sql[j] == '\\' && c != '`' && j+1 < len(sql) {
			j++
		}
		j++
	}
	return 0, fmt.Errorf("unterminated %c quote", c)
}
