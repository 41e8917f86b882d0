package cli

import (
	"context"
	"database/sql"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/fathom-lab/fathom/internal/dbtest"
)

// Each user mistake gets one clear line naming the fix, a non-zero exit and no stack
// trace; a password in the DSN never shows.
func TestBadInput(t *testing.T) {
	sqlite := "sqlite:" + filepath.Join(t.TempDir(), "empty.db")
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown command", []string{"frobnicate"}, ExitUsage, "unknown command"},
		{"unknown workload", []string{"run", "--target", sqlite, "--workload", "nope"}, ExitUsage, "nope"},
		{"unknown flag", []string{"run", "--clients-please", "3"}, ExitUsage, "unknown flag"},
		{"unknown workload option", []string{"run", "--target", sqlite, "--set", "bogus=1"}, ExitUsage, "bogus"},
		{"zero clients", []string{"run", "--target", sqlite, "-c", "0"}, ExitUsage, "clients must be at least 1"},
		{"negative rate", []string{"run", "--target", sqlite, "-R", "-5"}, ExitUsage, "rate"},
		{"bad duration", []string{"run", "--target", sqlite, "-T", "soon"}, ExitUsage, "not a duration"},
		{"time and transactions", []string{"run", "--target", sqlite, "-T", "5", "-t", "10"}, ExitUsage, "either --time or --transactions"},
		{"zero max tries", []string{"run", "--target", sqlite, "--max-tries", "0"}, ExitUsage, "max-tries"},
		{"bad scale", []string{"prepare", "--target", sqlite, "--scale", "0"}, ExitUsage, "scale"},
		{"bad label", []string{"run", "--target", sqlite, "--label", "nokey"}, ExitUsage, "key=value"},
		{"malformed DSN", []string{"run", "--target", "postgres://bob:hunter2@[::1/x"}, ExitUsage, "postgres"},
		{"unknown scheme", []string{"run", "--target", "oracle://scott:tiger@db/x"}, ExitUsage, "unknown target"},
		{"tables missing", []string{"run", "--target", sqlite, "--workload", "tpcb"}, ExitFailure, "fathom prepare"},
		{"server not listening", []string{"run", "--target", "postgres://bob:hunter2@127.0.0.1:1/x?connect_timeout=2"}, ExitFailure, "cannot connect"},
		{"mysql not listening", []string{"run", "--target", "mysql://bob:hunter2@127.0.0.1:1/x"}, ExitFailure, "cannot connect"},
		{"no such run", []string{"show", "999"}, ExitUsage, "999"},
		{"bad run id", []string{"show", "abc"}, ExitUsage, "not a run id"},
		{"export format", []string{"export", "1", "--format", "xml"}, ExitUsage, "csv or json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := fathom(t, storeEnv(t), nil, c.args...)
			oneLine(t, r, c.code, c.want)
			for _, secret := range []string{"hunter2", "tiger"} {
				if strings.Contains(r.stdout+r.stderr, secret) {
					t.Errorf("the password %q shows: %q", secret, r.stdout+r.stderr)
				}
			}
		})
	}
}

// A wrong password is one line that names the problem and does not show the password.
func TestWrongPassword(t *testing.T) {
	t.Run("mysql", func(t *testing.T) {
		base := dbtest.MySQLDSN(t)
		u, _ := url.Parse(base)
		cfg := mysql.NewConfig()
		cfg.User, cfg.Net, cfg.Addr = u.User.Username(), "tcp", u.Host
		c, _ := mysql.NewConnector(cfg)
		db := sql.OpenDB(c)
		defer db.Close()
		ctx := context.Background()
		if _, err := db.ExecContext(ctx, "CREATE USER IF NOT EXISTS 'fathom_pw'@'%' IDENTIFIED BY 'right-one'"); err != nil {
			t.Fatal(err)
		}
		defer db.ExecContext(ctx, "DROP USER IF EXISTS 'fathom_pw'@'%'")
		u.User = url.UserPassword("fathom_pw", "Wr0ngPassw0rd")
		r := fathom(t, storeEnv(t), nil, "run", "--target", u.String())
		oneLine(t, r, ExitFailure, "cannot connect")
		if !strings.Contains(r.stderr, "password") || strings.Contains(r.stderr, "Wr0ngPassw0rd") {
			t.Errorf("want a password hint without the password: %q", r.stderr)
		}
	})
}
