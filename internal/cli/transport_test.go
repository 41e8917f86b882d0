package cli

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fathom-lab/fathom/internal/dbtest"
)

// TestTransportShown: a run records how its connections reached the server — TCP or
// the server's Unix-domain socket, and without TLS here — and `fathom show` says so,
// in its text and in its JSON (host.transport), for the same database on each.
func TestTransportShown(t *testing.T) {
	for _, kind := range []string{"postgres", "mysql"} {
		t.Run(kind, func(t *testing.T) {
			var tcp, unix string
			if kind == "postgres" {
				tcp = dbtest.PostgresDatabase(t, "transport")
				unix = pgSocketDSN(t, tcp)
			} else {
				tcp = dbtest.MySQLDatabase(t, "transport")
				unix = mySocketDSN(t, tcp)
			}
			env := storeEnv(t)
			if r := fathom(t, env, nil, "prepare", "--target", tcp, "--workload", "oltp_point_select", "--table-size", "500"); r.code != 0 {
				t.Fatalf("prepare: %s", r.stderr)
			}
			for _, tc := range []struct{ dsn, want string }{{tcp, "tcp"}, {unix, "unix"}} {
				r := fathom(t, env, nil, "run", "--target", tc.dsn, "--workload", "oltp_point_select", "-c", "2", "-T", "1s", "-P", "250ms", "--json")
				if r.code != 0 {
					t.Fatalf("run on %s: exit %d: %s", tc.want, r.code, r.stderr)
				}
				s := summary(t, r)
				if s.Transactions == 0 {
					t.Errorf("%s: no transactions", tc.want)
				}
				id := fmt.Sprint(s.RunID)
				text := fathom(t, env, nil, "show", id)
				if text.code != 0 || !strings.Contains(text.stdout, "transport: "+tc.want+" without TLS,") {
					t.Errorf("%s: fathom show (exit %d) does not say \"transport: %s without TLS\":\n%s%s", tc.want, text.code, tc.want, text.stdout, text.stderr)
				}
				js := fathom(t, env, nil, "show", "--json", id)
				var d struct {
					Run struct {
						Host struct {
							Transport string `json:"transport"`
						} `json:"host"`
					} `json:"run"`
				}
				if err := json.Unmarshal([]byte(js.stdout), &d); err != nil || d.Run.Host.Transport != tc.want {
					t.Errorf("%s: fathom show --json host.transport = %q (%v), want %q", tc.want, d.Run.Host.Transport, err, tc.want)
				}
			}
		})
	}
}

// pgSocketDSN is dsn's database on the server's Unix-domain socket, in key=value form;
// the test is skipped when the socket is not on this machine (a remote test server).
func pgSocketDSN(t *testing.T, dsn string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgconn.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	res := c.ExecParams(ctx, "SELECT current_setting('unix_socket_directories')", nil, nil, nil, nil).Read()
	if res.Err != nil || len(res.Rows) != 1 {
		t.Fatalf("unix_socket_directories: %v", res.Err)
	}
	dir, _, _ := strings.Cut(string(res.Rows[0][0]), ",")
	dir = strings.TrimSpace(dir)
	u, _ := url.Parse(dsn)
	if _, err := os.Stat(filepath.Join(dir, ".s.PGSQL."+u.Port())); err != nil {
		t.Skipf("the server's socket is not on this machine: %v", err)
	}
	return fmt.Sprintf("host=%s port=%s dbname=%s user=%s", dir, u.Port(), strings.TrimPrefix(u.Path, "/"), u.User.Username())
}

// mySocketDSN is dsn on the server's socket (@@socket), skipped as pgSocketDSN.
func mySocketDSN(t *testing.T, dsn string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg := mysql.NewConfig()
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	cfg.Net, cfg.Addr = "tcp", u.Host
	if !strings.Contains(u.Host, ":") {
		cfg.Addr += ":3306"
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	var sock string
	if err := db.QueryRow("SELECT @@socket").Scan(&sock); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sock); err != nil {
		t.Skipf("the server's socket is not on this machine: %v", err)
	}
	q := u.Query()
	q.Set("socket", sock)
	u.RawQuery = q.Encode()
	return u.String()
}
