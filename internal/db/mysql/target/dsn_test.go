package mysql

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/target"
)

const myCnf = `# written by the DBA
[mysql]
user = wrong-section

[client]
user = fileuser
password = "p#ss word"   # quoted: the # is part of it
host = filehost
port = 3310
database = filedb
!includedir /etc/mysql/conf.d/
`

type dsnWant struct {
	net, addr, user, pw, db string
	params                  map[string]string
}

var dsnCases = []struct {
	name  string
	dsn   string
	env   map[string]string
	files map[string]string // name -> contents; "home" is $HOME/.my.cnf
	want  dsnWant
	err   string // substring of the error, "" for success
}{
	{name: "url", dsn: "mysql://bob:s3cr%40t@db.example:3307/app",
		want: dsnWant{net: "tcp", addr: "db.example:3307", user: "bob", pw: "s3cr@t", db: "app"}},
	{name: "mariadb scheme and defaults", dsn: "mariadb://bob@db",
		want: dsnWant{net: "tcp", addr: "db:3306", user: "bob"}},
	{name: "empty host", dsn: "mysql:///app", env: map[string]string{"USER": "alice"},
		want: dsnWant{net: "tcp", addr: "127.0.0.1:3306", user: "alice", db: "app"}},
	{name: "ipv6", dsn: "mysql://u@[::1]:3308/",
		want: dsnWant{net: "tcp", addr: "[::1]:3308", user: "u"}},
	{name: "socket", dsn: "mysql://root@/test?socket=/run/mysqld/mysqld.sock",
		want: dsnWant{net: "unix", addr: "/run/mysqld/mysqld.sock", user: "root", db: "test"}},
	{name: "socket beats host", dsn: "mysql://root@dbhost:3307/test?socket=/tmp/my.sock",
		want: dsnWant{net: "unix", addr: "/tmp/my.sock", user: "root", db: "test"}},
	{name: "session variables", dsn: "mysql://u@h/d?innodb_lock_wait_timeout=5&transaction_isolation='READ-COMMITTED'",
		want: dsnWant{net: "tcp", addr: "h:3306", user: "u", db: "d", params: map[string]string{"innodb_lock_wait_timeout": "5", "transaction_isolation": "'READ-COMMITTED'"}}},
	{name: "MYSQL_PWD", dsn: "mysql://u@h/d", env: map[string]string{"MYSQL_PWD": "envpw"},
		want: dsnWant{net: "tcp", addr: "h:3306", user: "u", pw: "envpw", db: "d"}},
	{name: "empty DSN password beats MYSQL_PWD", dsn: "mysql://u:@h/d", env: map[string]string{"MYSQL_PWD": "envpw"},
		want: dsnWant{net: "tcp", addr: "h:3306", user: "u", db: "d"}},

	{name: "my.cnf fills in", dsn: "mysql://", files: map[string]string{"home": myCnf}, env: map[string]string{"MYSQL_PWD": "envpw"},
		want: dsnWant{net: "tcp", addr: "filehost:3310", user: "fileuser", pw: "p#ss word", db: "filedb"}},
	{name: "DSN beats my.cnf field by field", dsn: "mysql://dsnuser:dsnpw@dsnhost/dsndb", files: map[string]string{"home": myCnf},
		want: dsnWant{net: "tcp", addr: "dsnhost:3310", user: "dsnuser", pw: "dsnpw", db: "dsndb"}},
	{name: "DSN user, my.cnf password", dsn: "mysql://dsnuser@dsnhost:3306/", files: map[string]string{"home": myCnf},
		want: dsnWant{net: "tcp", addr: "dsnhost:3306", user: "dsnuser", pw: "p#ss word", db: "filedb"}},
	{name: "my.cnf socket for local connections", dsn: "mysql:///d",
		files: map[string]string{"home": "[client]\nsocket=/var/run/mysqld/mysqld.sock\nuser=root\n"},
		want:  dsnWant{net: "unix", addr: "/var/run/mysqld/mysqld.sock", user: "root", db: "d"}},
	{name: "my.cnf socket, DSN host", dsn: "mysql://db2/d",
		files: map[string]string{"home": "[client]\nsocket=/var/run/mysqld/mysqld.sock\nuser=root\n"},
		want:  dsnWant{net: "tcp", addr: "db2:3306", user: "root", db: "d"}},
	{name: "my.cnf syntax", dsn: "mysql://h/d",
		files: map[string]string{"home": "; comment\n[client]\nuser=u # trailing comment\npassword = 'it\\'s #x'\n\n[client-other]\nuser=x\n"},
		want:  dsnWant{net: "tcp", addr: "h:3306", user: "u", pw: "it's #x", db: "d"}},
	{name: "my.cnf escapes", dsn: "mysql://h/d",
		files: map[string]string{"home": "[client]\npassword=a\\sb\\\\c\\#d\n"},
		want:  dsnWant{net: "tcp", addr: "h:3306", pw: "a b\\c\\", db: "d"}},
	{name: "my.cnf password without value asks, so it is ignored", dsn: "mysql://u@h/d", env: map[string]string{"MYSQL_PWD": "envpw"},
		files: map[string]string{"home": "[client]\npassword\n"},
		want:  dsnWant{net: "tcp", addr: "h:3306", user: "u", pw: "envpw", db: "d"}},
	{name: "defaults-file", dsn: "mysql://h/d?defaults-file=FILE:other.cnf",
		files: map[string]string{"home": myCnf, "other.cnf": "[client]\nuser=other\npassword=otherpw\n"},
		want:  dsnWant{net: "tcp", addr: "h:3306", user: "other", pw: "otherpw", db: "d"}},
	{name: "unreadable defaults-file", dsn: "mysql://h/d?defaults-file=/nonexistent/my.cnf", err: "cannot read MySQL option file /nonexistent/my.cnf"},
	{name: "bad my.cnf port", dsn: "mysql://h/d", files: map[string]string{"home": "[client]\nport=http\n"}, err: "invalid port"},

	{name: "scheme", dsn: "postgres://u:hunter2@h/d", err: "scheme must be mysql://"},
	{name: "opaque", dsn: "mysql:hunter2@h", err: "missing //"},
	{name: "port", dsn: "mysql://u:hunter2@h:99999/d", err: "port must be a number"},
	{name: "empty port", dsn: "mysql://u:hunter2@h:/d", err: "empty port"},
	{name: "unescaped hash", dsn: "mysql://u:hun#ter2@h/d", err: "unexpected '#'"},
	{name: "unescaped slash", dsn: "mysql://u:hun/ter2@h/d", err: "cannot parse"},
	{name: "bad escape", dsn: "mysql://u:hun%zzter2@h/d", err: "cannot parse"},
	{name: "password parameter", dsn: "mysql://u@h/d?password=hunter2", err: "not in query parameters"},
	{name: "bad parameter name", dsn: "mysql://u:hunter2@h/d?x!y=1", err: "not a valid variable name"},
	{name: "bad tls", dsn: "mysql://u:hunter2@h/d?tls=maybe", err: "tls= must be"},
	{name: "slash in database", dsn: "mysql://u:hunter2@h/d/e", err: "cannot contain '/'"},
}

func TestParseDSN(t *testing.T) {
	for _, c := range dsnCases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			env := map[string]string{"HOME": filepath.Join(dir, "home")}
			if err := os.Mkdir(env["HOME"], 0o700); err != nil {
				t.Fatal(err)
			}
			for k, v := range c.env {
				env[k] = v
			}
			dsn := c.dsn
			for name, body := range c.files {
				path := filepath.Join(dir, name)
				if name == "home" {
					path = filepath.Join(env["HOME"], ".my.cnf")
				}
				if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
					t.Fatal(err)
				}
				dsn = strings.ReplaceAll(dsn, "FILE:"+name, url.QueryEscape(path))
			}
			tg, err := open(dsn, target.Config{}, func(k string) string { return env[k] })
			if c.err != "" {
				if err == nil {
					t.Fatalf("no error, want %q", c.err)
				}
				if !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "\n") {
					t.Fatalf("error %q, want one line with %q and no password", err, c.err)
				}
				if target.ClassOf(err) != target.ClassOther {
					t.Errorf("class %v", target.ClassOf(err))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			mc := tg.mc
			got := dsnWant{net: mc.Net, addr: mc.Addr, user: mc.User, pw: mc.Passwd, db: mc.DBName}
			w := c.want
			if got.net != w.net || got.addr != w.addr || got.user != w.user || got.pw != w.pw || got.db != w.db {
				t.Errorf("got  %+v\nwant %+v", got, w)
			}
			if len(mc.Params) != len(w.params) {
				t.Errorf("params %v, want %v", mc.Params, w.params)
			}
			for k, v := range w.params {
				if mc.Params[k] != v {
					t.Errorf("param %s = %q, want %q", k, mc.Params[k], v)
				}
			}
			if mc.ParseTime || mc.InterpolateParams || mc.Timeout != 10*time.Second || mc.ConnectionAttributes != "program_name:fathom" {
				t.Errorf("driver settings: parseTime %v interpolate %v timeout %v attrs %q", mc.ParseTime, mc.InterpolateParams, mc.Timeout, mc.ConnectionAttributes)
			}
			if w.pw != "" && len(w.pw) > 3 && strings.Contains(tg.Redacted(), url.UserPassword("", w.pw).String()[1:]) {
				t.Errorf("Redacted() = %q holds the password", tg.Redacted())
			}
		})
	}
}

func TestConfigOptions(t *testing.T) {
	none := func(string) string { return "" }
	tg, err := open("mysql://u@h/d", target.Config{Unprepared: true, ConnectTimeout: 3 * time.Second, AppName: "bench,1:x"}, none)
	if err != nil {
		t.Fatal(err)
	}
	if !tg.mc.InterpolateParams || tg.mc.Timeout != 3*time.Second || tg.mc.ConnectionAttributes != "program_name:bench_1_x" {
		t.Errorf("interpolate %v timeout %v attrs %q", tg.mc.InterpolateParams, tg.mc.Timeout, tg.mc.ConnectionAttributes)
	}
	if tg.Kind() != "mysql" || tg.Dialect().Dollar {
		t.Errorf("kind %q dialect %+v", tg.Kind(), tg.Dialect())
	}
}

var redactCases = []struct{ in, want string }{
	{"mysql://root:s3cret@127.0.0.1:3306/test", "mysql://root:xxxxx@127.0.0.1:3306/test"},
	{"mysql://root:p%40ss%2Fw@h/d?socket=/tmp/s.sock", "mysql://root:xxxxx@h/d?socket=/tmp/s.sock"},
	{"mysql://root@127.0.0.1:3306/test", "mysql://root@127.0.0.1:3306/test"},
	{"mysql://root:@h/d", "mysql://root:xxxxx@h/d"},
	{"mysql:///test?socket=/run/mysqld/mysqld.sock", "mysql:///test?socket=/run/mysqld/mysqld.sock"},
}

func TestRedacted(t *testing.T) {
	for _, c := range redactCases {
		tg, err := open(c.in, target.Config{}, func(string) string { return "" })
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if got := tg.Redacted(); got != c.want {
			t.Errorf("Redacted(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzParseDSN feeds arbitrary text around a password written into the DSN as is:
// parsing must not panic, and neither an error nor Redacted may show the password.
func FuzzParseDSN(f *testing.F) {
	for _, c := range dsnCases {
		if c.files == nil {
			f.Add(c.dsn, "hunter2x", "/d")
		}
	}
	for _, c := range redactCases {
		f.Add(c.in, "s3cret12", "")
	}
	f.Add("mysql://u", "12?abcdefg", "@h/d")
	f.Add("mysql://u", "12/abcdefg", "@h")
	f.Fuzz(func(t *testing.T, head, pw, tail string) {
		none := func(string) string { return "" }
		_, _ = open(head+tail, target.Config{}, none) // must not panic
		if !strings.HasPrefix(head, "mysql://") || strings.ContainsAny(head[8:], ":/@?#") || len(pw) < 6 ||
			strings.ContainsAny(pw, "@ \t\r\n") || strings.Contains(head+tail+dsnForm+"xxxxx", pw) ||
			strings.Contains(head+":xxxxx@"+tail, pw) { // the password is part of what may show
			return
		}
		dsn := head + ":" + pw + "@" + tail
		tg, err := open(dsn, target.Config{}, none)
		if err != nil {
			if strings.Contains(err.Error(), pw) {
				t.Fatalf("error for %q shows the password: %v", dsn, err)
			}
			return
		}
		if strings.Contains(tg.Redacted(), pw) {
			t.Fatalf("Redacted(%q) = %q", dsn, tg.Redacted())
		}
	})
}

// FuzzRedact checks that any user and password, percent-encoded in the DSN, round-trip
// to the driver and never appear in Redacted.
func FuzzRedact(f *testing.F) {
	f.Add("root", "s3cret")
	f.Add("bob", "p@ss/w:rd#?&=%")
	f.Add("", "xxxxxx")
	f.Add("u", "ü日本🎉")
	f.Fuzz(func(t *testing.T, user, pw string) {
		u := url.URL{Scheme: "mysql", User: url.UserPassword(user, pw), Host: "db:3306", Path: "/app"}
		dsn := u.String()
		tg, err := open(dsn, target.Config{}, func(string) string { return "" })
		if err != nil {
			t.Fatalf("%q: %v", dsn, err)
		}
		if user != "" && tg.mc.User != user || tg.mc.Passwd != pw {
			t.Fatalf("%q: user %q password %q", dsn, tg.mc.User, tg.mc.Passwd)
		}
		red := tg.Redacted()
		fixed := "mysql://" + url.User(user).String() + ":xxxxx@db:3306/app"
		if red != fixed {
			t.Fatalf("Redacted(%q) = %q, want %q", dsn, red, fixed)
		}
	})
}
