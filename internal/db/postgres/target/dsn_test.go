package postgres

import (
	"strconv"
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
	// A raw '@' in the password: pgconn would take the rest as part of the host.
	{"postgres://u:Zeb@Secret-99@127.0.0.1:1/db", false, ""},
	{"postgres://u:Zeb%40Secret-99@127.0.0.1:1/db", true, "postgres://u:xxxxx@127.0.0.1:1/db"},
	// A stray fragment taken as a key=value key.
	{":Secret-99@=0", false, ""},
	{"host=h user:Secret-99=x", false, ""},
	{"postgres://u:Secret-99/x@h/db", false, ""},
	{"host=h port='Secret-99'", false, ""},
	{"host=h sslmode=Secret-99", false, ""},
	{"host=h password=Secret-99 connect_timeout=Secret-99", false, ""},
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
		if err != nil {
			if strings.Contains(dsn, pw) && strings.Contains(err.Error(), pw) {
				t.Errorf("error shows the password: %v", err)
			}
			return
		}
		// Whatever the DSN's shape, the password it was parsed to never shows (unless
		// it is also part of what may show: user, host, port, database, settings).
		shown := tg.pc.User + " " + tg.pc.Host + " " + strconv.Itoa(int(tg.pc.Port)) + " " + tg.pc.Database + " sslmode xxxxx postgres postgresql"
		for k, v := range tg.pc.RuntimeParams {
			shown += " " + k + "=" + v
		}
		for _, fb := range tg.pc.Fallbacks {
			shown += " " + fb.Host + " " + strconv.Itoa(int(fb.Port))
		}
		if p := tg.pc.Password; len(p) >= 3 && strings.Contains(shown, p) {
			return
		}
		if p := tg.pc.Password; len(p) >= 3 && strings.Contains(tg.Redacted(), p) {
			t.Errorf("Redacted() = %q shows the password %q", tg.Redacted(), p)
		}
		if p := tg.pc.Password; len(p) >= 3 && strings.Contains(tg.where, p) {
			t.Errorf("where = %q shows the password %q", tg.where, p)
		}
	})
}
