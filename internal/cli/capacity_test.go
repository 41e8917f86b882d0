package cli

import (
	"context"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/db"
	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/run"
	"github.com/fathom-lab/fathom/internal/target"
)

// execSQL runs statements on dsn through fathom's own target.
func execSQL(t *testing.T, dsn string, stmts ...string) {
	t.Helper()
	tgt, err := db.Open(dsn, target.Config{ConnectTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer tgt.Close()
	conn, err := tgt.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, s := range stmts {
		if err := conn.Exec(context.Background(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func queryInt(t *testing.T, dsn, q string) int {
	t.Helper()
	tgt, err := db.Open(dsn, target.Config{ConnectTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer tgt.Close()
	conn, err := tgt.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rows, err := conn.Query(context.Background(), q)
	if err != nil || len(rows) != 1 || len(rows[0]) != 1 {
		t.Fatalf("%s: %v %v", q, rows, err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(rows[0][0]))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// More clients than the server accepts are refused before any client connects, with
// the server's numbers (issue 11).
func TestClientsBeyondServerLimit(t *testing.T) {
	for _, c := range []struct{ kind, dsn, maxQ string }{
		{"postgres", dbtest.PostgresDSN(t), "SELECT current_setting('max_connections')"},
		{"mysql", dbtest.MySQLDSN(t), "SELECT @@max_connections"},
	} {
		t.Run(c.kind, func(t *testing.T) {
			max := queryInt(t, c.dsn, c.maxQ)
			r := fathom(t, storeEnv(t), nil, "run", "--target", c.dsn, "-w", "oltp_point_select", "-c", strconv.Itoa(max+1))
			oneLine(t, r, exitUsage, "max_connections is "+strconv.Itoa(max))
			if !strings.Contains(r.stderr, "raise max_connections on the server or use at most -c ") {
				t.Errorf("no fix named: %q", r.stderr)
			}
		})
	}
}

// A client count beyond a per-role or per-account limit is refused before connecting,
// naming that limit; a server that refuses a connection for its limit anyway (53300,
// 1040, 1203) gets the hint to raise the limit or lower -c, never "is the server
// running?".
func TestTooManyClients(t *testing.T) {
	prefix := os.Getenv("FATHOM_TEST_DB_PREFIX") // several checkouts share the servers
	if prefix == "" {
		prefix = "fathom_"
	}
	name := strings.ReplaceAll(prefix+"limited", "-", "_")
	t.Run("postgres role", func(t *testing.T) {
		dsn := dbtest.PostgresDatabase(t, "too_many")
		execSQL(t, dsn, "DROP ROLE IF EXISTS "+name, "CREATE ROLE "+name+" LOGIN CONNECTION LIMIT 2")
		defer execSQL(t, dsn, "DROP ROLE IF EXISTS "+name)
		u, _ := url.Parse(dsn)
		u.User = url.User(name)
		r := fathom(t, storeEnv(t), nil, "run", "--target", u.String(), "-w", "oltp_point_select", "-c", "3")
		oneLine(t, r, exitUsage, "the role's CONNECTION LIMIT is 2 and it has 0 other connections, room for 2): raise the role's limit (ALTER ROLE … CONNECTION LIMIT) or use at most -c 2")
	})
	t.Run("mysql account", func(t *testing.T) {
		dsn := dbtest.MySQLDatabase(t, "too_many")
		db := strings.TrimPrefix(must(url.Parse(dsn)).Path, "/")
		execSQL(t, dsn, "DROP USER IF EXISTS '"+name+"'@'%'", "CREATE USER '"+name+"'@'%' WITH MAX_USER_CONNECTIONS 1",
			"GRANT SELECT ON `"+db+"`.* TO '"+name+"'@'%'")
		defer execSQL(t, dsn, "DROP USER IF EXISTS '"+name+"'@'%'")
		u, _ := url.Parse(dsn)
		u.User = url.User(name)
		r := fathom(t, storeEnv(t), nil, "run", "--target", u.String(), "-w", "oltp_point_select", "-c", "3")
		oneLine(t, r, exitUsage, "the account's max_user_connections is 1, room for 1): raise the account's MAX_USER_CONNECTIONS")
	})
	t.Run("hint", func(t *testing.T) {
		tgt, err := db.Open("postgres://u@127.0.0.1:5432/x", target.Config{})
		if err != nil {
			t.Fatal(err)
		}
		for _, code := range []string{"53300", "1040", "1203"} {
			err := run.ConnectError(tgt, target.Errorf(target.ClassConnection, code, "sorry, too many clients already"))
			if msg := err.Error(); !strings.Contains(msg, "raise max_connections on the server or lower -c") || strings.Contains(msg, "is the server running") {
				t.Errorf("%s: %q", code, msg)
			}
		}
		refused := run.ConnectError(tgt, target.Errorf(target.ClassConnection, "", "connection refused"))
		if !strings.Contains(refused.Error(), "is the server running") {
			t.Errorf("a refused connection lost its hint: %q", refused)
		}
	})
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
