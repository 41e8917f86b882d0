package target

import (
	"strings"
	"testing"
)

var redactCases = []struct{ in, secret string }{
	{"postgres://bob:s3cret@db:5432/x", "s3cret"},
	{"mysql://root:p%40ss@127.0.0.1/test?socket=/tmp/s", "p%40ss"},
	{"host=db user=bob password=hunter2 dbname=x", "hunter2"},
	{"host=db password='a b c' dbname=x", "a b c"},
	{"postgres://db/x?password=topsecret&sslmode=disable", "topsecret"},
	{"--target=postgres://u:pw1234@h/d", "pw1234"},
}

func TestRedactString(t *testing.T) {
	for _, c := range redactCases {
		got := RedactString(c.in)
		if strings.Contains(got, c.secret) {
			t.Errorf("RedactString(%q) = %q still holds the password", c.in, got)
		}
		if !strings.Contains(got, "xxxxx") {
			t.Errorf("RedactString(%q) = %q: no mask", c.in, got)
		}
		if u := RedactURL(c.in); strings.Contains(u, c.secret) {
			t.Errorf("RedactURL(%q) = %q still holds the password", c.in, u)
		}
	}
	if got := RedactString("sqlite:fathom-target.db"); got != "sqlite:fathom-target.db" {
		t.Errorf("changed a DSN without password: %q", got)
	}
}

func FuzzRedactString(f *testing.F) {
	for _, c := range redactCases {
		f.Add("bob", c.secret)
	}
	f.Fuzz(func(t *testing.T, user, pw string) {
		if len(pw) < 4 || !plain(pw) || !plain(user) || strings.Contains("postgres://:@h/d user= password= host=h xxxxx"+user, pw) {
			return
		}
		for _, s := range []string{"postgres://" + user + ":" + pw + "@h/d", "user=" + user + " password=" + pw + " host=h"} {
			if got := RedactString(s); strings.Contains(got, pw) {
				t.Fatalf("RedactString(%q) = %q", s, got)
			}
		}
	})
}

// plain reports whether s could appear unescaped as a URL user or password.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || strings.IndexByte("@/'\\&?#:%=", c) >= 0 {
			return false
		}
	}
	return true
}
