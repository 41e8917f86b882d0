package mysql

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/fathom-lab/fathom/internal/capture"
)

var (
	queryTimeRE = regexp.MustCompile(`Query_time:\s*([0-9.]+).*?Rows_sent:\s*([0-9]+)`)
	timestampRE = regexp.MustCompile(`(?i)^SET\s+timestamp\s*=\s*([0-9]+)`)
	// The session: MariaDB's "# Thread_id: 8", MySQL's "# User@Host: … Id: 8".
	threadRE = regexp.MustCompile(`(?:Thread_id:|\bId:)\s*([0-9]+)`)
)

// readSlowLog reads a MySQL or MariaDB slow query log for `fathom capture --slow-log` (long_query_time=0 logs every
// statement): each entry's statement is normalized as the digests are, its literals
// replaced by ? and kept as its values, with the session (thread) that ran it.
func readSlowLog(path string, src capture.Source) ([]capture.Event, capture.Source, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, src, fmt.Errorf("%w: reading the slow query log: %v", capture.ErrNotAvailable, err)
	}
	defer f.Close()
	src.What, src.Kind = "the slow query log "+path, "mysql"
	var out []capture.Event
	var ms float64
	var rows int64
	session := ""
	var stmt strings.Builder
	flush := func() {
		q := strings.TrimSpace(stmt.String())
		stmt.Reset()
		if q == "" {
			return
		}
		norm, vals := capture.Normalize(q)
		out = append(out, capture.Event{Session: session, SQL: norm, Values: vals, Ms: ms, Rows: rows})
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "#"):
			flush()
			if m := threadRE.FindStringSubmatch(line); m != nil {
				session = m[1]
			}
			if m := queryTimeRE.FindStringSubmatch(line); m != nil {
				sec, _ := strconv.ParseFloat(m[1], 64)
				ms = sec * 1000
				rows, _ = strconv.ParseInt(m[2], 10, 64)
			}
		case timestampRE.MatchString(line):
			m := timestampRE.FindStringSubmatch(line)
			n, _ := strconv.ParseInt(m[1], 10, 64)
			t := time.Unix(n, 0).UTC()
			if src.Since.IsZero() || t.Before(src.Since) {
				src.Since = t
			}
			if t.After(src.Until) || src.Until.IsZero() {
				src.Until = t
			}
		case strings.HasPrefix(strings.ToLower(strings.TrimSpace(line)), "use "):
		case strings.HasSuffix(line, "started with:") || strings.HasPrefix(line, "Tcp port:") || strings.HasPrefix(line, "Time") && strings.Contains(line, "Command"):
			// The header the server writes when it opens the log.
		default:
			stmt.WriteString(line + "\n")
		}
	}
	flush()
	if err := sc.Err(); err != nil {
		return nil, src, fmt.Errorf("reading %s: %v", path, err)
	}
	src.SinceUnknown = src.Since.IsZero()
	return out, src, nil
}
