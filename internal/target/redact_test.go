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

var maskCases = []struct{ in, keep string }{
	{"MYSQL_PWD=Hunter2pw mysql -uroot -e 'select 1'", "mysql -uroot -e 'select 1'"},
	{"REDISCLI_AUTH=Hunter2pw redis-cli -s /tmp/r.sock BGSAVE", "redis-cli -s /tmp/r.sock BGSAVE"},
	{"PGPASSWORD='Hunter2pw' psql -h db", "psql -h db"},
	{`export DB_PASSWORD="Hunter2pw"; ./migrate`, "./migrate"},
	{"mysql -uroot -pHunter2pw -h 127.0.0.1", "-uroot"},
	{"mysqladmin --password=Hunter2pw shutdown", "shutdown"},
	{"mysqldump --password 'Hunter2pw' db", "db"},
	{"pgbench -p5433 -U bench", "-p5433"},
	{"psql 'host=db password=Hunter2pw dbname=x'", "dbname=x"},
	{"curl https://admin:Hunter2pw@example.com/x", "example.com/x"},
	{"CREATE USER bench IDENTIFIED BY 'Hunter2pw'", "CREATE USER bench"},
	{"ALTER ROLE bench WITH ENCRYPTED PASSWORD 'Hunter2pw'", "ALTER ROLE bench"},
	{"SET PASSWORD FOR bench = PASSWORD('Hunter2pw')", "SET PASSWORD FOR bench"},
	{"CHANGE MASTER TO MASTER_PASSWORD='Hunter2pw'", "CHANGE MASTER TO"},
	{"connect pwd=Hunter2pw;server=x", "server=x"},
	{"PGPASSFILE=/tmp/i/pgpass psql", "PGPASSFILE=/tmp/i/pgpass psql"},
	{"echo the password is Hunter2pw", "echo the password is"}, // a known secret
	// curl and HTTP credentials: -u user:pw in its forms, Authorization and API-key
	// headers (in the command and in what curl -v prints).
	{"curl -u admin:Hunter2pw http://h/", "curl -u admin:"},
	{"curl -sS --user 'admin:Hunter2pw' h", "--user 'admin:"},
	{"curl --user=admin:Hunter2pw h", "--user=admin:"},
	{"curl --proxy-user p:Hunter2pw h", "--proxy-user p:"},
	{"curl -uadmin:Hunter2pw h", "-uadmin:"},
	{"curl -H 'Authorization: Bearer Hunter2pw.x' h", "Authorization: Bearer xxxxx"},
	{"> Authorization: Basic Hunter2pw=", "Authorization: Basic"},
	{"curl -H 'X-Api-Key: Hunter2pw' h", "X-Api-Key: xxxxx"},
}

// A header name or key repeated before its value: the value is still the secret.
func TestMaskSecretsRepeatedHeader(t *testing.T) {
	for _, in := range []string{"00000000 Authorization: Authorization: Basic Zq7Hunter2pw", "Authorization:Proxy-Authorization: Bearer Zq7Hunter2pw x", "Authorization: Bearer Authorization: Basic Zq7Hunter2pw",
		"X-Api-Key: X-Api-Key: Zq7Hunter2pw", "token: token: Zq7Hunter2pw", "password= token: Zq7Hunter2pw", "Authorization: Basic dXNlcjpwZA= Authorization: Basic Zq7Hunter2pw", "--password --password Zq7Hunter2pw"} {
		if got := MaskSecrets(in); strings.Contains(got, "Zq7Hunter2pw") {
			t.Errorf("MaskSecrets(%q) = %q", in, got)
		}
	}
}

func TestMaskSecrets(t *testing.T) {
	for _, c := range maskCases {
		got := MaskSecrets(c.in, "Hunter2pw-not-this", "Hunter2pw")
		if strings.Contains(got, "Hunter2pw") || !strings.Contains(got, c.keep) {
			t.Errorf("MaskSecrets(%q) = %q: want no secret and %q kept", c.in, got, c.keep)
		}
	}
	if got := MaskSecrets("pgbench -c 8 -T 60 -p 5432 bench"); got != "pgbench -c 8 -T 60 -p 5432 bench" {
		t.Errorf("changed a command without secrets: %q", got)
	}
	if got := SecretsIn("MYSQL_PWD=abcd1234 mysql -pefgh5678 -p5433 PGPASSFILE=/x/y"); strings.Join(got, ",") != "abcd1234,efgh5678" {
		t.Errorf("SecretsIn = %q", got)
	}
	// What curl sends and prints for -u user:pw is masked where the output echoes it.
	known := SecretsIn("curl -v -u uuser:Hunter2pw http://h/")
	if got := MaskSecrets("> Authorization: Basic dXVzZXI6SHVudGVyMnB3\n< 200 OK dXVzZXI6SHVudGVyMnB3", known...); strings.Contains(got, "dXVzZXI6SHVudGVyMnB3") {
		t.Errorf("curl -v output with the credentials in base64: %q (known %q)", got, known)
	}
	for _, keep := range []string{"mysql -uroot -e 'select 1'", "psql -U postgres -c 'select 1'", "ssh -p 2222 user@host"} {
		if got := MaskSecrets(keep); got != keep {
			t.Errorf("changed a command without secrets: %q -> %q", keep, got)
		}
	}
	if got := EnvSecrets([]string{"PGPASSWORD=a1b2c3", "MYSQL_PWD=d4e5f6", "PWD=/home/x", "PATH=/bin", "REDISCLI_AUTH=g7h8i9"}); len(got) != 3 || got[0] != "a1b2c3" || got[1] != "d4e5f6" || got[2] != "g7h8i9" {
		t.Errorf("EnvSecrets = %q", got)
	}
}

func FuzzMaskSecrets(f *testing.F) {
	for _, c := range maskCases {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		// The shapes a secret takes in a command: whatever surrounds them, the
		// secret never survives.
		const pw = "Zq7Hunter2pw"
		for _, shape := range []string{"curl -u admin:" + pw, "--user=u:" + pw, "Authorization: Basic " + pw, "X-Api-Key: " + pw, "token: " + pw, "MYSQL_PWD=" + pw, "PGPASSWORD=" + pw, " -p" + pw, "--password=" + pw, "password=" + pw, "IDENTIFIED BY '" + pw + "'", "PASSWORD '" + pw + "'", "postgres://u:" + pw + "@h/db"} {
			for _, in := range []string{shape + " " + s, s + " " + shape} {
				if strings.Contains(s, pw[:4]) || strings.ContainsAny(s, "'\"\\") {
					continue
				}
				if got := MaskSecrets(in); strings.Contains(got, pw) {
					t.Fatalf("MaskSecrets(%q) = %q", in, got)
				}
			}
		}
	})
}
