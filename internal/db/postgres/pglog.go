package postgres

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
	// PostgreSQL's log with log_min_duration_statement = 0: a line prefix holding the
	// process id in brackets (%p, as in Debian's default '%m [%p] %q%u@%d '), then the
	// message.
	pgLineRE   = regexp.MustCompile(`^(\S+ \S+(?: \S+)?) \[(\d+)\](?: \S*@(\S*))? (LOG|DETAIL|STATEMENT|ERROR|WARNING|NOTICE|FATAL|HINT|CONTEXT):  (.*)$`)
	pgDurRE    = regexp.MustCompile(`^duration: ([0-9.]+) ms  (?:statement|execute [^:]*): (.*)$`)
	pgSpaceRE  = regexp.MustCompile(`\s+`)
	pgParamsRE = regexp.MustCompile(`\$(\d+) = (NULL|'(?:[^']|'')*')`)
)

// readPGLog reads a PostgreSQL server log written with log_min_duration_statement = 0:
// every statement of the simple protocol and every execution of the extended one, by
// process (a session), with the parameters of executions. When the line prefix names
// the database (%d), other databases' lines are left out.
func readPGLog(path string, src capture.Source) ([]capture.Event, capture.Source, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, src, fmt.Errorf("%w: reading the server log: %v", capture.ErrNotAvailable, err)
	}
	defer f.Close()
	src.What, src.Kind = "the server log "+path+" (database "+src.Database+")", "postgres"
	var out []capture.Event
	last := -1 // the event a DETAIL or continuation line belongs to
	cont := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		m := pgLineRE.FindStringSubmatch(line)
		if m == nil {
			if cont && last >= 0 && strings.HasPrefix(line, "\t") {
				out[last].SQL += " " + strings.TrimSpace(line)
			}
			continue
		}
		cont = false
		if src.Database != "" && m[3] != "" && m[3] != src.Database {
			last = -1
			continue
		}
		switch m[4] {
		case "LOG":
			d := pgDurRE.FindStringSubmatch(m[5])
			if d == nil { // parse, bind and other messages: not calls
				last = -1
				continue
			}
			ms, _ := strconv.ParseFloat(d[1], 64)
			out = append(out, capture.Event{Session: m[2], SQL: d[2], Ms: ms})
			last, cont = len(out)-1, true
			if t, err := time.Parse("2006-01-02 15:04:05.000 MST", m[1]); err == nil {
				if src.Since.IsZero() || t.Before(src.Since) {
					src.Since = t
				}
				if t.After(src.Until) {
					src.Until = t
				}
			}
		case "DETAIL":
			if last >= 0 && out[last].Session == m[2] && strings.HasPrefix(strings.ToLower(m[5]), "parameters:") {
				for _, p := range pgParamsRE.FindAllStringSubmatch(m[5], -1) {
					v := "\x00"
					if p[2] != "NULL" {
						v = capture.Unquote(p[2])
					}
					out[last].Values = append(out[last].Values, v)
				}
			}
			last = -1
		default:
			last = -1
		}
	}
	if err := sc.Err(); err != nil {
		return nil, src, fmt.Errorf("reading %s: %v", path, err)
	}
	// Statements of the simple protocol carry their values as literals.
	for i := range out {
		if out[i].Values == nil && !strings.Contains(out[i].SQL, "$1") {
			out[i].SQL, out[i].Values = capture.Normalize(out[i].SQL)
		} else {
			out[i].SQL = pgSpaceRE.ReplaceAllString(strings.TrimSuffix(strings.TrimSpace(out[i].SQL), ";"), " ")
		}
	}
	src.SinceUnknown = src.Since.IsZero()
	return out, src, nil
}
