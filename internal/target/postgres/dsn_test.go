package postgres

import (
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/target"
)

var dsnCases = []struct {
	dsn      string
	ok       bool
	redacted string
}{
	{"postgres://u:Secret-99@db.example:5433/app?sslmode=disable", true, "postgres://u:xxxxx@db.example:5433/app?sslmode=disable"},
	{"postgresql://u@localhost/app", true, "postgresql://u@localhost/app"},
	{"host=/var/run/postgresql dbname=test user=u password=Secret-99", true, "host=/var/run/postgresql dbname=test user=u password=xxxxx"},
	{"host=localhost password='Se cret-99' dbname=x", true, "host=localhost password=xxxxx dbname=x"},
	{"postgres://u:Secret-99@db.example:notaport/app", false, ""},
	{"postgres://u:Secret-99@db.example/app?sslmode=bogus", false, ""},
	{"host=localhost port=99999999 password=Secret-99", false, ""},
	{"postgres://u:Sec%zzret@host/db", false, ""},
}

func TestOpenDSN(t *testing.T) {
	for _, c := range dsnCases {
		tg, err := Open(c.dsn, target.Config{})
		if c.ok != (err == nil) {
			t.Errorf("Open(%q): %v, want ok=%v", c.dsn, err, c.ok)
			continue
		}
		if err != nil {
			msg := err.Error()
			if strings.Contains(msg, "Secret-99") || strings.Contains(msg, "Sec%zzret") || strings.ContainsAny(msg, "\n") || !strings.HasPrefix(msg, "invalid PostgreSQL DSN: ") {
				t.Errorf("Open(%q) error %q: not one clean line without the password", c.dsn, msg)
			}
			continue
		}
		if tg.Redacted() != c.redacted {
			t.Errorf("Redacted(%q) = %q, want %q", c.dsn, tg.Redacted(), c.redacted)
		}
	}
}

func FuzzOpenDSN(f *testing.F) {
	for _, c := range dsnCases {
		f.Add(c.dsn)
	}
	f.Fuzz(func(t *testing.T, dsn string) {
		tg, err := Open(dsn, target.Config{})
		const pw = "Secret-99"
		if !strings.Contains(dsn, pw) {
			return
		}
		if err != nil && strings.Contains(err.Error(), pw) {
			t.Errorf("error shows the password: %v", err)
		}
		if err == nil && strings.Contains(tg.Redacted(), pw) && strings.Count(dsn, pw) == 1 && (strings.Contains(dsn, ":"+pw+"@") || strings.Contains(dsn, "password="+pw)) {
			t.Errorf("Redacted() shows the password: %q", tg.Redacted())
		}
	})
}
