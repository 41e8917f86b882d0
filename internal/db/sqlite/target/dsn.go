package sqlite

import (
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/fathom-lab/fathom/internal/target"
)

// dsnForm is what every DSN error message shows the user, so that one line names the fix.
const dsnForm = "want sqlite:PATH[?busy_timeout=5000&journal_mode=WAL&synchronous=NORMAL…], e.g. sqlite:fathom-target.db or sqlite:/var/lib/fathom/t.db"

// Begin modes: what Conn.Begin starts (see the package comment).
const (
	beginAuto      = "auto"
	beginDeferred  = "deferred"
	beginImmediate = "immediate"
	beginExclusive = "exclusive"
)

// options is a parsed DSN.
type options struct {
	path        string
	busyTimeout int32 // milliseconds
	begin       string
	// pragmas are set on every connection, in this order: the ones that only take
	// effect on an empty database (page_size, auto_vacuum) before journal_mode.
	pragmas []pragma
}

type pragma struct{ name, value string }

// pragmaSpec describes one PRAGMA the DSN may set: its allowed words (upper case), or
// the integer range it takes when words is nil.
type pragmaSpec struct {
	order    int // position in the order pragmas are set
	words    []string
	min, max int64
	hint     string // what a valid value looks like, for the error message
}

// knownPragmas is the allowlist of PRAGMAs a DSN may set. Anything else is rejected:
// a typo must not silently leave a default in place, and the value is put into SQL.
var knownPragmas = map[string]pragmaSpec{
	"page_size":          {order: 0, min: 512, max: 65536, hint: "a power of two from 512 to 65536"},
	"auto_vacuum":        {order: 1, words: []string{"NONE", "FULL", "INCREMENTAL", "0", "1", "2"}},
	"journal_mode":       {order: 2, words: []string{"WAL", "DELETE", "TRUNCATE", "PERSIST", "MEMORY", "OFF"}},
	"synchronous":        {order: 3, words: []string{"OFF", "NORMAL", "FULL", "EXTRA", "0", "1", "2", "3"}},
	"cache_size":         {order: 4, min: -1 << 40, max: 1 << 40, hint: "pages, or negative KiB (e.g. cache_size=-64000)"},
	"mmap_size":          {order: 5, min: 0, max: 1 << 50, hint: "bytes (e.g. mmap_size=268435456)"},
	"temp_store":         {order: 6, words: []string{"DEFAULT", "FILE", "MEMORY", "0", "1", "2"}},
	"locking_mode":       {order: 7, words: []string{"NORMAL", "EXCLUSIVE"}},
	"foreign_keys":       {order: 8, words: []string{"ON", "OFF", "TRUE", "FALSE", "YES", "NO", "1", "0"}},
	"wal_autocheckpoint": {order: 9, min: 0, max: 1 << 31, hint: "pages (e.g. wal_autocheckpoint=1000)"},
	"journal_size_limit": {order: 10, min: -1, max: 1 << 50, hint: "bytes, -1 for no limit"},
	"cache_spill":        {order: 11, words: []string{"ON", "OFF", "TRUE", "FALSE", "YES", "NO", "1", "0"}},
}

// defaults are set unless the DSN says otherwise.
var defaultPragmas = map[string]string{"journal_mode": "WAL", "synchronous": "NORMAL"}

const defaultBusyTimeout = 5000

// parseDSN parses sqlite:PATH[?options]. PATH is a file name, relative to the working
// directory or absolute; sqlite:///abs/path is accepted for /abs/path. PATH is used as
// written (no percent-decoding) and cannot contain '?'. Errors are one line.
func parseDSN(dsn string) (*options, error) {
	bad := func(why string) error {
		return target.Errorf(target.ClassOther, "", "invalid SQLite DSN: %s; %s", why, dsnForm)
	}
	if strings.ContainsFunc(dsn, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return nil, bad("it contains a control character")
	}
	rest, ok := strings.CutPrefix(dsn, "sqlite:")
	if !ok {
		return nil, bad("it must start with sqlite:")
	}
	path, query, _ := strings.Cut(rest, "?")
	if p, ok := strings.CutPrefix(path, "//"); ok {
		if !strings.HasPrefix(p, "/") {
			return nil, bad("sqlite://" + firstPart(p) + " has a host part; write sqlite:" + p + " for a relative path or sqlite:/" + p + " for an absolute one")
		}
		path = p
	}
	switch {
	case path == "":
		return nil, bad("the file path is missing")
	case path == ":memory:" || strings.HasPrefix(path, "file:") && strings.Contains(path, "memory"):
		return nil, bad("an in-memory database lives in one connection and would be gone between prepare and run; use a file (on tmpfs for a RAM-backed one, e.g. sqlite:/dev/shm/fathom.db)")
	case strings.HasPrefix(path, "file:"):
		return nil, bad("give the path without file: (URI file names are not supported)")
	}
	o := &options{path: path, busyTimeout: defaultBusyTimeout, begin: beginAuto}
	q, err := url.ParseQuery(query)
	if err != nil {
		return nil, bad("the options after '?' are malformed (write name=value pairs joined by &)")
	}
	set := map[string]string{}
	for k, vs := range q {
		name := strings.ToLower(strings.TrimSpace(k))
		if len(vs) > 1 {
			return nil, bad("option " + strconv.Quote(name) + " is given more than once")
		}
		v := strings.TrimSpace(vs[0])
		if _, dup := set[name]; dup {
			return nil, bad("option " + strconv.Quote(name) + " is given more than once")
		}
		set[name] = v
		switch name {
		case "busy_timeout":
			n, err := strconv.ParseInt(v, 10, 32)
			if err != nil || n < 0 {
				return nil, bad("busy_timeout must be a whole number of milliseconds, e.g. busy_timeout=5000 (got " + strconv.Quote(v) + ")")
			}
			o.busyTimeout = int32(n)
			continue
		case "begin":
			switch lv := strings.ToLower(v); lv {
			case beginAuto, beginDeferred, beginImmediate, beginExclusive:
				o.begin = lv
			default:
				return nil, bad("begin must be auto, deferred, immediate or exclusive (got " + strconv.Quote(v) + ")")
			}
			continue
		}
		spec, ok := knownPragmas[name]
		if !ok {
			return nil, bad("unknown option " + strconv.Quote(name) + " (known: " + strings.Join(optionNames(), ", ") + ")")
		}
		val, ok := spec.check(name, v)
		if !ok {
			return nil, bad(name + " must be " + spec.want() + " (got " + strconv.Quote(v) + ")")
		}
		set[name] = val
	}
	for name, v := range defaultPragmas {
		if _, ok := set[name]; !ok {
			set[name] = v
		}
	}
	for name, v := range set {
		if _, ok := knownPragmas[name]; ok {
			o.pragmas = append(o.pragmas, pragma{name, v})
		}
	}
	sort.Slice(o.pragmas, func(i, j int) bool {
		return knownPragmas[o.pragmas[i].name].order < knownPragmas[o.pragmas[j].name].order
	})
	return o, nil
}

// check validates v and returns it as it goes into the PRAGMA statement.
func (s pragmaSpec) check(name, v string) (string, bool) {
	if s.words != nil {
		u := strings.ToUpper(v)
		for _, w := range s.words {
			if u == w {
				return u, true
			}
		}
		return "", false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < s.min || n > s.max {
		return "", false
	}
	if name == "page_size" && n&(n-1) != 0 {
		return "", false
	}
	return strconv.FormatInt(n, 10), true
}

func (s pragmaSpec) want() string {
	if s.words != nil {
		var names []string
		for _, w := range s.words {
			if w[0] < '0' || w[0] > '9' {
				names = append(names, w)
			}
		}
		return "one of " + strings.Join(names, ", ")
	}
	return "a whole number: " + s.hint
}

// optionNames lists every DSN option, sorted.
func optionNames() []string {
	names := []string{"begin", "busy_timeout"}
	for k := range knownPragmas {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// firstPart is s up to its first '/'.
func firstPart(s string) string {
	if i := strings.IndexByte(s, '/'); i >= 0 {
		return s[:i]
	}
	return s
}
