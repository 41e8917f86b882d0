package collect

import (
	"strings"
	"testing"
)

func TestRedactText(t *testing.T) {
	cases := map[string]string{
		"postgres://app:hunter22@db/x":                                     "hunter22",
		"host=db password=hunter22 dbname=x":                               "hunter22",
		"CREATE USER 'a'@'%' IDENTIFIED BY 'hunter22'":                     "hunter22",
		"ALTER USER a IDENTIFIED WITH mysql_native_password BY 'hunter22'": "hunter22",
		"ALTER ROLE app PASSWORD 'hunter22'":                               "hunter22",
		"CHANGE MASTER TO MASTER_PASSWORD='hunter22', MASTER_HOST='h'":     "hunter22",
		"primary_conninfo\tuser=rep password=hunter22 host=p":              "hunter22",
		"a line with the secret hunter22 in it":                            "hunter22",
	}
	for in, secret := range cases {
		out := redactText(in, []string{"hunter22"})
		if strings.Contains(out, secret) {
			t.Errorf("RedactText(%q) = %q: the password is still there", in, out)
		}
		if !strings.Contains(out, "xxxxx") {
			t.Errorf("RedactText(%q) = %q: nothing masked", in, out)
		}
	}
	// Without the secret given, the patterns alone still mask.
	for in := range cases {
		if strings.HasPrefix(in, "a line") {
			continue
		}
		if out := redactText(in, nil); strings.Contains(out, "hunter22") {
			t.Errorf("RedactText(%q, no secrets) = %q", in, out)
		}
	}
}

func FuzzRedactText(f *testing.F) {
	f.Add("IDENTIFIED BY 'x'", "x")
	f.Add("postgres://u:p@h/d", "p")
	f.Fuzz(func(t *testing.T, s, secret string) {
		out := redactText(s, []string{secret})
		if len(secret) >= 3 && !strings.Contains(secret, "x") && strings.Contains(out, secret) && !strings.Contains("xxxxx", secret) {
			t.Errorf("secret %q survives in %q", secret, out)
		}
	})
}
