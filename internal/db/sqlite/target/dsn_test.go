package sqlite

import (
	"errors"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/target"
)

var dsnCases = []struct {
	dsn     string
	path    string
	busy    int32
	begin   string
	pragmas string // name=value, in the order they are set
	err     string // substring of the error, "" for success
}{
	{dsn: "sqlite:fathom-target.db", path: "fathom-target.db", busy: 5000, begin: "auto", pragmas: "journal_mode=WAL synchronous=NORMAL"},
	{dsn: "sqlite:/var/lib/fathom/t.db", path: "/var/lib/fathom/t.db", busy: 5000, begin: "auto", pragmas: "journal_mode=WAL synchronous=NORMAL"},
	{dsn: "sqlite:///var/lib/t.db", path: "/var/lib/t.db", busy: 5000, begin: "auto", pragmas: "journal_mode=WAL synchronous=NORMAL"},
	{dsn: "sqlite:rel/dir/a b.db?busy_timeout=10000", path: "rel/dir/a b.db", busy: 10000, begin: "auto", pragmas: "journal_mode=WAL synchronous=NORMAL"},
	{dsn: "sqlite:t.db?busy_timeout=5000&synchronous=NORMAL&journal_mode=WAL", path: "t.db", busy: 5000, begin: "auto", pragmas: "journal_mode=WAL synchronous=NORMAL"},
	{dsn: "sqlite:t.db?", path: "t.db", busy: 5000, begin: "auto", pragmas: "journal_mode=WAL synchronous=NORMAL"},
	{dsn: "sqlite:x.db?journal_mode=delete&synchronous=full&cache_size=-64000&page_size=8192&mmap_size=0&begin=IMMEDIATE&busy_timeout=0",
		path: "x.db", busy: 0, begin: "immediate", pragmas: "page_size=8192 journal_mode=DELETE synchronous=FULL cache_size=-64000 mmap_size=0"},
	{dsn: "sqlite:x.db?Foreign_Keys=on&temp_store=memory&locking_mode=exclusive&wal_autocheckpoint=0&journal_size_limit=-1&auto_vacuum=incremental&cache_spill=off&synchronous=2",
		path: "x.db", busy: 5000, begin: "auto",
		pragmas: "auto_vacuum=INCREMENTAL journal_mode=WAL synchronous=2 temp_store=MEMORY locking_mode=EXCLUSIVE foreign_keys=ON wal_autocheckpoint=0 journal_size_limit=-1 cache_spill=OFF"},
	{dsn: "sqlite:x.db?begin=deferred&journal_mode=%20truncate%20", path: "x.db", busy: 5000, begin: "deferred", pragmas: "journal_mode=TRUNCATE synchronous=NORMAL"},

	{dsn: "sqlite:", err: "the file path is missing"},
	{dsn: "sqlite:?busy_timeout=1", err: "the file path is missing"},
	{dsn: "postgres://localhost/db", err: "it must start with sqlite:"},
	{dsn: "SQLITE:x.db", err: "it must start with sqlite:"},
	{dsn: "sqlite::memory:", err: "in-memory database"},
	{dsn: "sqlite:file::memory:?cache=shared", err: "in-memory database"},
	{dsn: "sqlite:file:x.db", err: "without file:"},
	{dsn: "sqlite://host/x.db", err: "sqlite://host has a host part; write sqlite:host/x.db"},
	{dsn: "sqlite://x.db", err: "has a host part"},
	{dsn: "sqlite:x.db?busy_timeout=abc", err: "busy_timeout must be a whole number of milliseconds"},
	{dsn: "sqlite:x.db?busy_timeout=-1", err: "busy_timeout must be"},
	{dsn: "sqlite:x.db?busy_timeout=5s", err: "busy_timeout must be"},
	{dsn: "sqlite:x.db?busy_timeout=99999999999", err: "busy_timeout must be"},
	{dsn: "sqlite:x.db?journal_mode=wall", err: "journal_mode must be one of WAL, DELETE, TRUNCATE, PERSIST, MEMORY, OFF"},
	{dsn: "sqlite:x.db?synchronous=2%3BDROP%20TABLE%20x", err: "synchronous must be one of"},
	{dsn: "sqlite:x.db?cache_size=lots", err: "cache_size must be a whole number"},
	{dsn: "sqlite:x.db?page_size=1000", err: "page_size must be a whole number: a power of two"},
	{dsn: "sqlite:x.db?page_size=131072", err: "page_size must be"},
	{dsn: "sqlite:x.db?mmap_size=-1", err: "mmap_size must be"},
	{dsn: "sqlite:x.db?nosuch=1", err: `unknown option "nosuch" (known: auto_vacuum, begin, busy_timeout`},
	{dsn: "sqlite:x.db?_pragma=foreign_keys(1)", err: `unknown option "_pragma"`},
	{dsn: "sqlite:x.db?busy_timeout=1&busy_timeout=2", err: `"busy_timeout" is given more than once`},
	{dsn: "sqlite:x.db?busy_timeout=1&BUSY_TIMEOUT=2", err: "given more than once"},
	{dsn: "sqlite:x.db?a=%zz", err: "the options after '?' are malformed"},
	{dsn: "sqlite:x.db?begin=later", err: "begin must be auto, deferred, immediate or exclusive"},
	{dsn: "sqlite:x\x00y.db", err: "control character"},
	{dsn: "sqlite://\n/x.db", err: "control character"},
}

func TestParseDSN(t *testing.T) {
	for _, c := range dsnCases {
		t.Run(c.dsn, func(t *testing.T) {
			o, err := parseDSN(c.dsn)
			if c.err != "" {
				if err == nil {
					t.Fatalf("no error, want %q", c.err)
				}
				checkDSNError(t, err)
				if !strings.Contains(err.Error(), c.err) {
					t.Errorf("error %q, want it to contain %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var ps []string
			for _, p := range o.pragmas {
				ps = append(ps, p.name+"="+p.value)
			}
			if o.path != c.path || o.busyTimeout != c.busy || o.begin != c.begin || strings.Join(ps, " ") != c.pragmas {
				t.Errorf("got path %q busy %d begin %q pragmas %q, want %q %d %q %q", o.path, o.busyTimeout, o.begin, strings.Join(ps, " "), c.path, c.busy, c.begin, c.pragmas)
			}
			tg, err := Open(c.dsn, target.Config{})
			if err != nil || tg.Redacted() != c.dsn {
				t.Errorf("Open: %v, Redacted %q", err, tg.Redacted())
			}
		})
	}
}

// checkDSNError checks what every DSN error must be: one classified line that says
// what is wrong and shows the form.
func checkDSNError(t *testing.T, err error) {
	t.Helper()
	var te *target.Error
	if !errors.As(err, &te) || te.Class != target.ClassOther {
		t.Fatalf("error %v (%T) is not a ClassOther *target.Error", err, err)
	}
	if !strings.HasPrefix(te.Msg, "invalid SQLite DSN: ") || !strings.HasSuffix(te.Msg, dsnForm) {
		t.Errorf("message %q", te.Msg)
	}
	if strings.ContainsAny(te.Msg, "\r\n\x00") {
		t.Errorf("message is not one clean line: %q", te.Msg)
	}
}

// FuzzParseDSN checks that no DSN panics, that every error is one classified line,
// and that whatever is accepted only sets allowlisted PRAGMAs to validated values.
func FuzzParseDSN(f *testing.F) {
	for _, c := range dsnCases {
		f.Add(c.dsn)
	}
	f.Fuzz(func(t *testing.T, dsn string) {
		o, err := parseDSN(dsn)
		if err != nil {
			checkDSNError(t, err)
			return
		}
		if o.path == "" || strings.ContainsAny(o.path, "?\x00") || !strings.HasPrefix(dsn, "sqlite:") {
			t.Fatalf("%q: path %q", dsn, o.path)
		}
		if o.busyTimeout < 0 {
			t.Fatalf("%q: busy timeout %d", dsn, o.busyTimeout)
		}
		switch o.begin {
		case beginAuto, beginDeferred, beginImmediate, beginExclusive:
		default:
			t.Fatalf("%q: begin %q", dsn, o.begin)
		}
		seen := map[string]bool{}
		for i, p := range o.pragmas {
			spec, ok := knownPragmas[p.name]
			if !ok || seen[p.name] {
				t.Fatalf("%q: pragma %q", dsn, p.name)
			}
			seen[p.name] = true
			if v, ok := spec.check(p.name, p.value); !ok || v != p.value || strings.Trim(p.value, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") != "" {
				t.Fatalf("%q: pragma %s = %q", dsn, p.name, p.value)
			}
			if i > 0 && spec.order < knownPragmas[o.pragmas[i-1].name].order {
				t.Fatalf("%q: pragmas out of order", dsn)
			}
		}
	})
}
